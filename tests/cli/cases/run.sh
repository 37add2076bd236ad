# analyze.cli.run: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	unset SONDE_OUTPUT SONDE_SAMPLE SONDE_LIB
	run "$SONDE" run -x true
	expect_rc 2 "unknown run option"
	expect_err_line "sonde: run: unknown option '-x' (usage: sonde run [-e SPEC]... [-F HZ] [-o DIR] -- CMD [ARGS])"
	run "$SONDE" run -e
	expect_rc 2 "missing value"
	# a spec the runtime would refuse is refused before the program starts, in its words
	run "$SONDE" run -e cpu-time@1ms -e bogus@1ms -o never -- sh -c 'echo started'
	expect_rc 2 "bad -e"
	expect_err_line "sonde: run: -e 'bogus@1ms': unknown sampling source (use cpu-time@PERIOD, wall-time@PERIOD or a PAPI event NAME@COUNT; see 'sonde events')"
	[ ! -s "$T/out" ] && [ ! -e never ] || fail "bad -e: the program ran or a directory was made"
	run "$SONDE" run -e cpu-time@5ns -o never -- true
	expect_rc 2 "bad -e period"
	expect_err_line "sonde: run: -e 'cpu-time@5ns': out-of-range period (use a period like 1ms, 250us, 100000ns, 1s or 1000hz, from 10us to 60s)"
	export SONDE_LIB=$STUB
	run "$SONDE" run -o prof0 -- ./no-such-command-here
	expect_rc 127 "nonexistent command"
	expect_err_line "sonde: run: ./no-such-command-here: No such file or directory (check the command name and PATH)"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "one line on exec failure"
	# environment, exit status and the closing line, with a harmless library as SONDE_LIB
	LD_PRELOAD= run "$SONDE" run -e cpu-time@1ms --sample wall-time@10ms -o prof -- \
		sh -c ': >"$SONDE_OUTPUT/x.sonde"; echo "$SONDE_SAMPLE|$SONDE_OUTPUT|$LD_PRELOAD"; exit 3'
	expect_rc 3 "child status"
	# SONDE_OUTPUT is the directory's absolute path (children may run elsewhere)
	expect_file "$T/out" <<EOF
cpu-time@1ms,wall-time@10ms|$(pwd -P)/prof|$(readlink -f "$STUB")
EOF
	expect_file "$T/err" <<'EOF'
sonde: profile written to prof (sonde report prof)
EOF
	SONDE_OUTPUT=elsewhere run "$SONDE" run sh -c ': >"$SONDE_OUTPUT/x.sonde"; kill -TERM $$'
	expect_rc 143 "killed by SIGTERM"
	expect_err_line "sonde: profile written to ./sonde-sh (sonde report ./sonde-sh)"
	[ -d sonde-sh ] && [ ! -e elsewhere ] || fail "default output directory"
	echo 'echo hi' >noexec.sh
	run "$SONDE" run ./noexec.sh
	expect_rc 127 "not executable"
	expect_err_line "sonde: run: ./noexec.sh: Permission denied (check the command name and PATH)"
	# the directory is made (private) before the command starts; no new stream in it
	# afterwards is said as such
	run "$SONDE" run -o empty -- sh -c 'stat -c %a "$SONDE_OUTPUT"'
	expect_rc 0 "no stream written"
	expect_file "$T/out" <<'EOF'
700
EOF
	expect_file "$T/err" <<'EOF'
sonde: empty: no profile was written (is sh static, setuid or setgid, or does it clear LD_PRELOAD?)
EOF
	LD_PRELOAD=/keep/me.so run "$SONDE" run -o p2 -- sh -c 'echo "$LD_PRELOAD"'
	expect_file "$T/out" <<EOF
$(readlink -f "$STUB"):/keep/me.so
EOF
	unset SONDE_LIB
	mkdir bin && cp "$SONDE" bin/sonde
	run bin/sonde run true
	expect_rc 3 "no libsonde.so"
	expect_err_line "sonde: libsonde.so: not found next to $T/bin/sonde nor in $T/bin/../lib/sonde (build it, install it with cmake --install, or set SONDE_LIB)"
