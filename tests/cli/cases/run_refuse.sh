# analyze.cli.run_refuse: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# issue 22 item 3: a program LD_PRELOAD cannot reach is refused before it starts, in
	# one line that says why and what to do (before: it ran, and "no profile was written
	# (is it static, setuid or setgid...?)")
	unset SONDE_OUTPUT SONDE_SAMPLE SONDE_LIB
	printf 'int main(void) { return 3; }\n' >s.c
	if cc -static -o s_static s.c 2>/dev/null; then
		run "$SONDE" run -o never -- ./s_static
		expect_rc 4 "static"
		expect_err_line "sonde: run: ./s_static: it is a static executable (no PT_INTERP: no dynamic loader runs, and nothing reads LD_PRELOAD), so sonde cannot be loaded into it (link it dynamically, or profile it with perf record)"
		[ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -e never ] || fail "static: more than the line, or a directory made"
		# a script run by a static interpreter: the interpreter is named
		printf '#!%s/s_static\n' "$(pwd)" >scr.sh && chmod +x scr.sh
		run "$SONDE" run -o never -- ./scr.sh
		expect_rc 4 "static interpreter"
		expect_err_line "sonde: run: ./scr.sh: its interpreter $(pwd)/s_static is a static executable (no PT_INTERP: no dynamic loader runs, and nothing reads LD_PRELOAD), so sonde cannot be loaded into it (link it dynamically, or profile it with perf record)"
	else
		echo "note: cc -static failed (no libc.a): the static case is not checked"
	fi
	# a dynamic program and a script of a dynamic shell run as ever
	cc -o s_dyn s.c || fail "cc"
	run "$SONDE" run -o dyn -- ./s_dyn
	expect_rc 3 "dynamic"
	printf '#!/bin/sh\nexit 5\n' >ok.sh && chmod +x ok.sh
	run "$SONDE" run -o sh -- ./ok.sh
	expect_rc 5 "script"
	if [ "$(id -u)" -eq 0 ]; then
		# set-user-ID to another user, set-group-ID to another group: secure execution
		cp s_dyn s_suid && chown nobody s_suid && chmod 4755 s_suid
		run "$SONDE" run -o never -- ./s_suid
		expect_rc 4 "setuid"
		expect_err_line "sonde: run: ./s_suid: it is set-user-ID (the loader ignores LD_PRELOAD for it), so sonde cannot be loaded into it (profile a copy without the set-user-ID bit, or run it as its owner)"
		cp s_dyn s_sgid && chgrp nogroup s_sgid && chmod 2755 s_sgid
		run "$SONDE" run -o never -- ./s_sgid
		expect_rc 4 "setgid"
		expect_err_line "sonde: run: ./s_sgid: it is set-group-ID (the loader ignores LD_PRELOAD for it), so sonde cannot be loaded into it (profile a copy without the set-group-ID bit, or run it in its group)"
		# set-user-ID to oneself is no secure execution: it runs, profiled
		cp s_dyn s_self && chmod 4755 s_self
		run "$SONDE" run -o self -- ./s_self
		expect_rc 3 "setuid to oneself"
		expect_err_line "sonde: profile written to self (sonde report self)"
	else
		echo "note: not root: the set-user-ID cases need a file of another user"
	fi
