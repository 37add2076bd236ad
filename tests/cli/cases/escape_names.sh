# analyze.cli.escape_names: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# Issue 19 item 14: names from a stream (a thread name, argv[0], an annotation value)
	# holding escape sequences, a newline, bytes that are not UTF-8 and a C1 control
	# were printed raw: the text report set the terminal's title, cleared the screen and
	# broke rows. Text (every view, header lines, folded) shows them escaped as \n, \\,
	# \xNN; csv and json stay well-formed UTF-8, svg well-formed XML.
	EVIL=$'\e]0;pwned\a\e[2J\nnext\xff\xc2\x9bend\\'
	SHOWN='\x1b]0;pwned\x07\x1b[2J\nnext\xff\xc2\x9bend\\'
	mk flat f.sonde --evil "$EVIL" --argv0 "$EVIL"
	mk flat fs.sonde --evil SAFE --argv0 SAFE
	mk ctx c.sonde --evil "$EVIL"
	mk ctx cs.sonde --evil SAFE
	# clean FILE: valid UTF-8, no control character but newline, no C1
	clean() {
		python3 - "$1" <<'PY'
import sys
t = open(sys.argv[1], 'rb').read().decode('utf-8')  # strict: fails on bytes not UTF-8
bad = [c for c in t if (ord(c) < 0x20 and c != '\n') or 0x7f <= ord(c) <= 0x9f]
sys.exit('control characters: %r' % bad[:5] if bad else 0)
PY
	}
	# text: each output clean, with the escaped name, and as many lines as with a plain one
	for args in "--view threads" "--group-by thread" "--view processes" "--view streams" \
		    "--view flat"; do
		run "$SONDE" report $args fs.sonde
		safe=$(wc -l <"$T/out")
		run "$SONDE" report $args f.sonde
		expect_rc 0 "$args"
		clean "$T/out" || fail "$args: raw bytes in the text report"
		[ "$(wc -l <"$T/out")" = "$safe" ] || { cat "$T/out"; fail "$args: a name broke a row"; }
		case $args in *flat*|*streams*) ;; *)
			grep -qF -- "$SHOWN" "$T/out" || { cat "$T/out"; fail "$args: name not shown escaped"; } ;;
		esac
	done
	for args in "--group-by phase" "--view tree --min-percent 0" "--view tree --format folded" \
		    "--view regions"; do
		run "$SONDE" report $args cs.sonde
		safe=$(wc -l <"$T/out")
		run "$SONDE" report $args c.sonde
		expect_rc 0 "$args"
		clean "$T/out" || fail "$args: raw bytes in the text report"
		[ "$(wc -l <"$T/out")" = "$safe" ] || { cat "$T/out"; fail "$args: a name broke a row"; }
		[ "$args" = "--view regions" ] ||
			grep -qF -- "$SHOWN" "$T/out" || { cat "$T/out"; fail "$args: name not shown escaped"; }
	done
	run "$SONDE" report --view tree --format folded c.sonde
	grep -qxF -- "run=big;phase=$SHOWN;iteration=1;mk_main;mk_alpha;mk_beta 30" "$T/out" || { cat "$T/out"; fail "folded line"; }
	# csv: valid UTF-8 (U+FFFD for the byte that is not), the rows of the plain names
	for args in "--view threads" "--view processes" "--group-by phase"; do
		[ "$args" = "--group-by phase" ] && s=c.sonde && ss=cs.sonde || { s=f.sonde; ss=fs.sonde; }
		run "$SONDE" report --format csv $args $s
		expect_rc 0 "csv $args"
		python3 - "$T/out" "$EVIL" <<'PY' || fail "csv $args"
import csv, io, sys
t = open(sys.argv[1], 'rb').read().decode('utf-8')
rows = list(csv.reader(io.StringIO(t, newline='')))
want = sys.argv[2].encode('utf-8', 'surrogateescape').decode('utf-8', 'replace')
assert any(want in c for r in rows for c in r), rows
assert len(set(len(r) for r in rows)) == 1, rows
PY
	done
	# json: valid, the name with U+FFFD for the byte that is not UTF-8
	for args in "--view threads" "--view processes" "--group-by phase" "--view tree"; do
		case $args in *phase*|*tree*) s=c.sonde ;; *) s=f.sonde ;; esac
		run "$SONDE" report --format json $args $s
		expect_rc 0 "json $args"
		python3 - "$T/out" "$EVIL" <<'PY' || fail "json $args"
import json, sys
t = open(sys.argv[1], 'rb').read().decode('utf-8')
want = sys.argv[2].encode('utf-8', 'surrogateescape').decode('utf-8', 'replace')
def strs(v):
    if isinstance(v, str): yield v
    elif isinstance(v, dict):
        for k, x in v.items(): yield k; yield from strs(x)
    elif isinstance(v, list):
        for x in v: yield from strs(x)
assert any(want in x for x in strs(json.loads(t))), t[:300]
PY
	done
	# svg: well-formed XML whatever the names hold
	run "$SONDE" report --format svg --view tree c.sonde
	expect_rc 0 "svg"
	clean "$T/out" || fail "svg: raw bytes"
	if command -v xmllint >/dev/null; then xmllint --noout "$T/out" || fail "svg: not XML"; fi
	run "$SONDE" report --format html -o page.html c.sonde
	expect_rc 0 "html"
	clean page.html || fail "html: raw bytes"
