# analyze.cli.demangle_bomb: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# Issue 19 item 12: a C++ name whose demangling is exponential (libmkdup.so's
	# mk_exp_name: 263 bytes mangled, 870 MB demangled). __cxa_demangle built the whole
	# string (gigabytes, tens of seconds) and the report printed it on one line. Names
	# are demangled into at most 64 KiB (beyond, the demangler is stopped): this one is
	# shown mangled, and said. Bounds on peak RSS and output size under a memory limit
	# (a regression fails fast); never on time.
	[ -x /usr/bin/time ] || { echo "SKIP: no /usr/bin/time (GNU time) to measure peak RSS"; exit 77; }
	LIM=(prlimit --as=$((1 << 30)))
	"${LIM[@]}" "$SONDE" --help >/dev/null 2>&1 ||
		{ echo "note: sonde does not start under prlimit --as (sanitizer build): no limit"; LIM=(); }
	mk bomb b.sonde
	NAME=$(nm -D "$(dirname "$MK")/libmkdup.so" | sed -n 's/^[0-9a-f]* T \(_Z1f1bI1aS0_E.*\)$/\1/p')
	[ ${#NAME} -eq 263 ] || fail "libmkdup.so: no mk_exp_name symbol (${#NAME})"
	WARN="sonde: libmkdup.so: ${NAME:0:60}...: not demangled: its demangled form is longer than 65536 bytes (shown mangled)"
	for fmt in csv text json folded svg; do
		timeout 120 /usr/bin/time -f %M -o rss.txt "${LIM[@]}" "$SONDE" report --format $fmt \
			b.sonde >"$T/out" 2>"$T/err"
		rc=$?
		kb=$(tail -n 1 rss.txt) bytes=$(stat -c %s "$T/out")
		echo "report --format $fmt: exit $rc, peak RSS $kb kB, $bytes bytes"
		expect_rc 0 "$fmt"
		[ "$kb" -lt $((100 * 1024)) ] || fail "$fmt: peak RSS $kb kB"
		[ "$bytes" -lt $((256 << 10)) ] || fail "$fmt: $bytes bytes written"
		grep -qxF -- "$WARN" "$T/err" || { cat "$T/err"; fail "$fmt: the name left mangled is not said"; }
		[ "$(grep -c 'not demangled' "$T/err")" -eq 1 ] || fail "$fmt: said more than once"
	done
	run "$SONDE" report --format csv b.sonde
	expect_file "$T/out" <<EOF2
function,self,self_pct,total,total_pct,module
mk_alpha,3,60.00,3,60.00,mkstream
$NAME,2,40.00,2,40.00,libmkdup.so
mk_main,0,0.00,5,100.00,mkstream
EOF2
	# --no-demangle: every name as in the symbol table, nothing to say
	run "$SONDE" report --format csv --no-demangle b.sonde
	expect_rc 0 "--no-demangle"
	grep -q 'not demangled' "$T/err" && fail "--no-demangle: warned"
	grep -qxF "$NAME,2,40.00,2,40.00,libmkdup.so" "$T/out" || fail "--no-demangle: row"
