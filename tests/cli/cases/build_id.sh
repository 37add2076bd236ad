# analyze.cli.build_id: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
export SONDE_ARCHIVE=off # the fallbacks without the build-id archive (e2e.archive tests it)
	mk flat a.sonde --bad-build-id
	run "$SONDE" report --format folded a.sonde
	expect_rc 0 "build-id mismatch"
	[ "$(grep -c 'build-id differs' "$T/err")" -eq 1 ] || fail "one build-id warning"
	expect_err_line "sonde: $(readlink -f "$MK"): build-id differs from the profiled file (it was rebuilt or replaced since the run; showing mkstream+0xADDR)"
	grep -qE '^mkstream\+0x[0-9a-f]+;mkstream\+0x[0-9a-f]+;mkstream\+0x[0-9a-f]+ 50$' "$T/out" || fail "module+offset names"
	# a MODULE without a build-id, of a file that has one (the fuzzer's crash: a NULL
	# build-id copied into the file's identity; UBSan builds stop there)
	mk flat n.sonde --no-build-id
	run "$SONDE" report --format folded n.sonde
	expect_rc 0 "module without build-id"
	# nothing to check the file against: it is trusted, and symbolized
	grep -qx 'mk_main;mk_alpha;mk_beta 50' "$T/out" || fail "no build-id: $(cat "$T/out")"
	! grep -q 'build-id' "$T/err" || fail "no build-id: $(cat "$T/err")"
	mk flat m.sonde --missing-module
	run "$SONDE" report --format folded m.sonde
	expect_rc 0 "missing module"
	expect_err_line "sonde: /nonexistent/dir/libgone.so: No such file or directory (cannot symbolize; showing libgone.so+0xADDR)"
	grep -qE '^libgone\.so\+0x[0-9a-f]+;libgone\.so\+0x[0-9a-f]+ 20$' "$T/out" || fail "libgone.so+offset"
