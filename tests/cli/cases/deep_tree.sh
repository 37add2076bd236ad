# analyze.cli.deep_tree: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# Issue 19 item 11: one call chain 10000 frames deep (a 120 KB stream) in the tree
	# view. Indenting two spaces a level wrote 100 MB of text (650 MB of memory), and
	# csv/json paths of every name above a node 550 MB (json: 1.7 GB of memory). Output
	# and memory stay proportional to the nodes: past 64 levels the text stops indenting
	# and names their depth, csv/json paths of more than 32 names keep their first and
	# last 16, and the report says so. Bounds on peak RSS (/usr/bin/time) and bytes written, under a
	# memory limit so that a regression fails fast; never on time.
	[ -x /usr/bin/time ] || { echo "SKIP: no /usr/bin/time (GNU time) to measure peak RSS"; exit 77; }
	LIM=(prlimit --as=$((1 << 30)))
	"${LIM[@]}" "$SONDE" --help >/dev/null 2>&1 ||
		{ echo "note: sonde does not start under prlimit --as (sanitizer build): no limit"; LIM=(); }
	mk deep d.sonde --count 10000
	for fmt in text csv json folded; do
		timeout 120 /usr/bin/time -f %M -o rss.txt "${LIM[@]}" "$SONDE" report --view tree \
			--format $fmt d.sonde >"$T/out" 2>"$T/err"
		rc=$?
		kb=$(tail -n 1 rss.txt) bytes=$(stat -c %s "$T/out")
		echo "tree $fmt: exit $rc, peak RSS $kb kB, $bytes bytes"
		expect_rc 0 "tree $fmt"
		[ "$kb" -lt $((100 * 1024)) ] || fail "tree $fmt: peak RSS $kb kB"
		[ "$bytes" -lt $((8 << 20)) ] || fail "tree $fmt: $bytes bytes written"
	done
	NOTE='sonde: note: the tree is 10000 levels deep (past level 64 names are not indented further and show their depth as [depth N])'
	CNOTE='sonde: note: the tree is 10000 levels deep (paths of more than 32 names keep their first and last 16 around "..."; depth gives the level)'
	# text: every node is a row; the note, the last indented row and the deepest row
	run "$SONDE" report --view tree d.sonde
	expect_rc 0 "tree text"
	grep -qxF -- "$NOTE" "$T/out" || fail "tree text: no note on depth"
	[ "$(grep -c 'mk_recurse$' "$T/out")" -eq 9999 ] || fail "tree text: not every level shown"
	ind=$(printf '%*s' 126 '')
	grep -qx "         1  50.00%          0   0.00%  ${ind}mk_recurse" "$T/out" || fail "tree text: level 63"
	grep -qx "         1  50.00%          0   0.00%  ${ind}  \[depth 64\] mk_recurse" "$T/out" || fail "tree text: level 64"
	grep -qx "         1  50.00%          1  50.00%  ${ind}  \[depth 9999\] mk_recurse" "$T/out" || fail "tree text: leaf"
	# csv: the true depth, paths cut in their middle; the note on stderr
	run "$SONDE" report --view tree --format csv d.sonde
	expect_rc 0 "tree csv"
	expect_err_line "$CNOTE"
	first=$(printf 'mk_main'; for i in $(seq 15); do printf ';mk_recurse'; done)
	last=$(for i in $(seq 16); do printf ';mk_recurse'; done)
	grep -qxF "31,${first}${last},mk_recurse,1,50.00,0,0.00" "$T/out" || fail "tree csv: level 31 path"
	grep -qxF "32,${first};...${last},mk_recurse,1,50.00,0,0.00" "$T/out" || fail "tree csv: level 32 path"
	grep -qxF "9999,${first};...${last},mk_recurse,1,50.00,1,50.00" "$T/out" || fail "tree csv: leaf path"
	[ "$(wc -l <"$T/out")" -eq 10001 ] || fail "tree csv: rows"
	run "$SONDE" report --view tree --format json d.sonde
	expect_rc 0 "tree json"
	expect_err_line "$CNOTE"
	python3 - "$T/out" <<'PY' || fail "tree json"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert len(rows) == 10000, len(rows)
assert [r["depth"] for r in rows] == list(range(10000))
assert all(len(r["path"].split(";")) == (r["depth"] + 1 if r["depth"] < 32 else 33) for r in rows)
PY
	# a tree of 32 levels is printed whole, without the note
	mk deep s.sonde --count 32
	run "$SONDE" report --view tree --format csv s.sonde
	expect_rc 0 "shallow tree"
	grep -q 'sonde: note: the tree is' "$T/err" && fail "shallow tree: note"
	grep -qxF "31,${first}${last},mk_recurse,1,50.00,1,50.00" "$T/out" || fail "shallow tree: leaf"
