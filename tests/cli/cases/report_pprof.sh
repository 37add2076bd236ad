# analyze.cli.report_pprof: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# --format pprof read by the real consumer, go tool pprof (.ci/deps installs
	# golang-go): per function the same self samples as sonde's own csv, the
	# annotation values as tags with sonde's --group-by counts, the time sample
	# type in ns, and the usage errors.
	command -v go >/dev/null || fail "go not installed (.ci/deps installs golang-go)"
	mk ctx c.sonde
	run "$SONDE" report --format pprof -o c.pb.gz c.sonde
	expect_rc 0 "pprof"
	grep -qx "sonde: pprof profile written to c.pb.gz (go tool pprof -top c.pb.gz)" "$T/out" || fail "pprof: $(cat "$T/out")"
	[ "$(head -c 2 c.pb.gz | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "pprof: not gzip"
	# the default sample type is time (every source of c.sonde counts ns), as pprof users
	# read first; periods, the report's own default metric, is one -sample_index away
	go tool pprof -top c.pb.gz 2>/dev/null | grep -qx "Type: time" ||
		fail "pprof default type: $(go tool pprof -top c.pb.gz 2>&1 | head -5)"
	go tool pprof -sample_index=periods -top -nodecount=100 c.pb.gz 2>/dev/null |
		awk 'f && NF >= 6 {print $6 "," $1} /flat  flat%/ {f = 1}' | sort >go.top
	"$SONDE" report --format csv c.sonde | awk -F, 'NR > 1 && $2 > 0 {print $1 "," $2}' | sort >sonde.top
	[ -s go.top ] && cmp -s go.top sonde.top || fail "pprof -top: $(tr '\n' ' ' <go.top) against sonde's $(tr '\n' ' ' <sonde.top)"
	# mappings: the streams' modules with their build-ids (the first is the program)
	bid=$("$SONDE" dump c.sonde | grep '"kind":"MODULE"' | head -n 1 | sed 's/.*"build_id":"\([0-9a-f]*\)".*/\1/')
	go tool pprof -top c.pb.gz 2>/dev/null | head -n 2 >go.head
	[ "$(cat go.head)" = "File: mkstream
Build ID: $bid" ] || fail "pprof mapping: $(cat go.head), expected mkstream and $bid"
	# mappings with the module's run-time range (MODULE lo, hi) and locations at the
	# run-time address of their function (MODULE bias + its ELF address; mkstream's
	# frames are its functions' entries): go tool pprof -raw
	go tool pprof -raw c.pb.gz 2>/dev/null >raw.txt
	mod=$("$SONDE" dump c.sonde | grep '"kind":"MODULE"' | head -n 1)
	lo=$(printf '%x' "$(echo "$mod" | sed 's/.*"lo":\([0-9]*\).*/\1/')")
	hi=$(printf '%x' "$(echo "$mod" | sed 's/.*"hi":\([0-9]*\).*/\1/')")
	bias=$(echo "$mod" | sed 's/.*"bias":\([0-9]*\).*/\1/')
	grep -qE "^1: 0x$lo/0x$hi/0x0 " raw.txt || fail "pprof mapping range: $(grep -A2 '^Mappings' raw.txt), MODULE 0x$lo-0x$hi"
	for f in mk_main mk_alpha mk_beta mk_gamma; do
		want=$(printf '%x' $((bias + 0x$(nm "$MK" | awk -v f=$f '$3 == f {print $1}'))))
		grep -qE "^ +[0-9]+: 0x$want M=1 $f " raw.txt || fail "pprof location of $f: $(grep " $f " raw.txt | head -2), expected 0x$want"
	done
	# -lines: the innermost frames at their source lines, as sonde's own --lines
	go tool pprof -sample_index=periods -lines -top -nodecount=100 c.pb.gz 2>/dev/null |
		awk 'f && NF >= 7 && $1 > 0 {n = split($7, a, "/"); print $6 " " a[n] "," $1} /flat  flat%/ {f = 1}' |
		sort >go.lines
	"$SONDE" report --lines --format csv c.sonde | awk -F, 'NR > 1 && $2 > 0 {print $1 "," $2}' | sort >sonde.lines
	[ -s go.lines ] && cmp -s go.lines sonde.lines || fail "pprof -lines: $(tr '\n' ' ' <go.lines) against sonde's $(tr '\n' ' ' <sonde.lines)"
	go tool pprof -sample_index=periods -tags c.pb.gz 2>/dev/null >go.tags
	for v in solve exchange inner; do
		want=$("$SONDE" report --group-by phase --format csv c.sonde | awk -F, -v v=$v '$1 == v {print $2}')
		grep -qE "^ +$want\.0 \([ 0-9.]+%\): $v\$" go.tags || fail "pprof -tags phase=$v: want $want: $(cat go.tags)"
	done
	grep -qE '^ +65\.0 \(65\.00%\): 4242$' go.tags || fail "pprof -tags thread: $(cat go.tags)"
	go tool pprof -sample_index=time -top c.pb.gz 2>/dev/null | grep -q "^Showing nodes accounting for 100ms, 100% of 100ms total" ||
		fail "pprof time sample type: $(go tool pprof -sample_index=time -top c.pb.gz 2>&1 | head -5)"
	run "$SONDE" report --format pprof c.sonde
	expect_rc 2 "pprof without -o"
	expect_err_line "sonde: report: --format pprof writes a file of the whole profile (give -o FILE, without --view or with --view tree)"
	run "$SONDE" report --format pprof -o /nonexistent/dir/x.pb.gz c.sonde
	expect_rc 3 "pprof: unwritable"
	expect_err_line "sonde: /nonexistent/dir/x.pb.gz: cannot write: No such file or directory (check the path and its directory)"
	# --view tree: the tree view's paths, annotation levels as frames; go tool pprof
	# -traces gives back exactly the folded tree
	run "$SONDE" report --view tree --format pprof -o t.pb.gz c.sonde
	expect_rc 0 "pprof --view tree"
	go tool pprof -traces t.pb.gz 2>/dev/null | awk '
		/^-+\+-+$/ { if (n) { s = f[n]; for (k = n - 1; k >= 1; k--) s = s ";" f[k]; print s " " v } n = 0; next }
		n == 0 && NF == 2 && $1 ~ /^[0-9]+$/ { v = $1; f[++n] = $2; next }
		n > 0 && NF == 1 { f[++n] = $1 }' | sort >go.tree
	"$SONDE" report --view tree --format folded c.sonde 2>/dev/null | sort >sonde.tree
	[ -s go.tree ] && cmp -s go.tree sonde.tree || fail "pprof --view tree: $(tr '\n' '|' <go.tree) against $(tr '\n' '|' <sonde.tree)"
	run "$SONDE" report --view threads --format pprof -o x.pb.gz c.sonde
	expect_rc 2 "pprof --view threads"
