# analyze.cli.habits: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# issue 22 item 9: habits of perf and pprof users
	unset SONDE_OUTPUT SONDE_SAMPLE SONDE_LIB
	# sonde help CMD is sonde CMD --help
	"$SONDE" dump --help >want.txt 2>&1
	run "$SONDE" help dump
	expect_rc 0 "help dump"
	cmp -s want.txt "$T/out" || fail "sonde help dump differs from sonde dump --help: $(cat "$T/out")"
	run "$SONDE" help nope
	expect_rc 2 "help of no command"
	expect_err_line "sonde: help: nope: no such command (see 'sonde --help')"
	run "$SONDE" --version
	grep -Eqx 'sonde [0-9]+\.[0-9]+ \(stream format 1\)' "$T/out" || fail "--version: $(cat "$T/out")"
	# run -F HZ as perf record -F: cpu-time@HZhz; -a is refused (perf's is system-wide)
	export SONDE_LIB=$STUB
	run "$SONDE" run -F 250 -o pf -- sh -c 'echo "$SONDE_SAMPLE"'
	expect_rc 0 "-F"
	[ "$(head -1 "$T/out")" = cpu-time@250hz ] || fail "-F 250 set SONDE_SAMPLE=$(head -1 "$T/out")"
	run "$SONDE" run -F abc -o never -- true
	expect_rc 2 "-F abc"
	expect_err_line "sonde: run: -F 'abc': not a frequency in Hz (e.g. -F 999; from 1 to 100000)"
	run "$SONDE" run -a -o never -- true
	expect_rc 2 "-a"
	expect_err_line "sonde: run: '-a': no such option (--append adds to the streams DIR holds; sonde profiles CMD and its children, not the whole system as perf's -a does)"
	[ ! -e never ] || fail "a refused run made its directory"
	unset SONDE_LIB
	# sonde report with no PATH: the newest ./sonde-* directory, said; a DIR.old is not one
	mkdir here && cd here || fail "mkdir"
	run "$SONDE" report
	expect_rc 2 "no ./sonde-*"
	expect_err_line "sonde: report: no PATH given, and no ./sonde-* directory here (sonde run writes ./sonde-CMD by default; give the streams' files or directories; see 'sonde report --help')"
	mkdir sonde-old sonde-new sonde-new.old
	mk flat sonde-old/a.sonde --pid 11
	mk flat sonde-new/b.sonde --pid 22
	mk flat sonde-new.old/c.sonde --pid 33
	touch -d '2 hours ago' sonde-old
	touch -d '1 hour ago' sonde-new
	run "$SONDE" report --view processes --format csv
	expect_rc 0 "report without PATH"
	expect_err_line "sonde: report: reading ./sonde-new (the newest ./sonde-* directory here; give a PATH to read another)"
	grep -q ',22,' "$T/out" && ! grep -q ',11,\|,33,' "$T/out" || fail "report without PATH read: $(cat "$T/out")"
	cd .. || fail "cd"
	# -o -: standard output (before: a file named '-'); pprof's bytes there, nothing else
	mk flat o.sonde
	run "$SONDE" report --format pprof -o - o.sonde
	expect_rc 0 "pprof -o -"
	[ ! -e ./- ] || fail "-o - made a file named '-'"
	[ "$(head -c 2 "$T/out" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "pprof -o -: not gzip bytes on stdout"
	if command -v go >/dev/null; then
		cp "$T/out" o.pb.gz
		go tool pprof -top o.pb.gz 2>/dev/null | grep -q mk_beta || fail "go tool pprof cannot read pprof -o -"
	fi
	run "$SONDE" report --format html -o - o.sonde
	expect_rc 0 "html -o -"
	head -1 "$T/out" | grep -q '^<!DOCTYPE html>' || fail "html -o -: $(head -2 "$T/out")"
	[ ! -s "$T/err" ] && [ ! -e ./- ] || fail "html -o -: $(cat "$T/err")"
	run "$SONDE" report -o - o.sonde
	expect_rc 0 "text -o -"
	# the names other tools give formats
	run "$SONDE" report --format flamegraph o.sonde
	expect_rc 2 "flamegraph"
	expect_err_line "sonde: report: --format: unknown value 'flamegraph' (--format svg makes an interactive flame graph; see 'sonde report --help')"
	# each --help explains every option its synopsis names (issue 22 item 9): an option
	# of the usage lines is the first word of a line of the options list, with its text
	for cmd in report diff run archive events; do
		"$SONDE" $cmd --help >help.txt 2>&1 || fail "$cmd --help"
		sed -n '1,/^$/p' help.txt | grep -E '^(usage:| +\[)' |
			grep -oE -- '\[--?[a-zA-Z][-a-zA-Z]*|\[--\[no-\]([a-z-]+)|^ *-[a-zA-Z]' |
			sed -E 's/^\[--\[no-\]/--/; s/^[[ ]*//' | sort -u >named.txt
		[ -s named.txt ] || fail "$cmd: no options in the synopsis: $(head -5 help.txt)"
		while read -r opt; do
			grep -qE -- "^  (-[a-zA-Z], )?$opt( [^ ]+)? +[^ ]" help.txt ||
				grep -qE -- "^  -[a-zA-Z], $opt( [^ ]+)? +[^ ]" help.txt ||
				grep -qE -- "^  $opt, --[a-z-]+( [^ ]+)? +[^ ]" help.txt ||
				fail "$cmd --help does not explain $opt"
		done <named.txt
	done
	# the bash completion offers every option each command's --help explains
	comp=$DOCS/../cmake/sonde.bash-completion
	[ -f "$comp" ] || fail "no $comp"
	for cmd in run report diff archive events; do
		"$SONDE" $cmd --help 2>&1 | grep -oE -- '^  (-[a-zA-Z], )?--?[a-zA-Z][-a-zA-Z]*' |
			tr -d ',' | tr ' ' '\n' | grep -- '^-' | sort -u >opts.txt
		while read -r opt; do
			grep -qE -- "[\" ]$opt[\" ]" "$comp" || fail "the bash completion lacks $cmd's $opt"
		done <opts.txt
	done
