# analyze.cli.fuzz: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	FUZZ=$5 MODE=$6
	mkdir seeds
	mk flat seeds/flat.sonde
	mk edge seeds/edge.sonde
	mk dup seeds/dup.sonde
	mk ctx seeds/ctx.sonde
	mk counters seeds/counters.sonde
	mk papi seeds/papi.sonde
	mk stats seeds/stats.sonde --rank 3 --count 20
	mk coverage seeds/coverage.sonde
	mk timeline seeds/timeline.sonde
	if [ "$MODE" = libfuzzer ]; then
		"$FUZZ" -runs=20000 -seed=1 -max_len=4096 seeds >fuzz.log 2>&1 ||
			{ tail -50 fuzz.log >&2; fail "fuzzer found a crash"; }
	else
		"$FUZZ" seeds/flat.sonde seeds/edge.sonde seeds/dup.sonde seeds/ctx.sonde \
			seeds/counters.sonde seeds/papi.sonde seeds/stats.sonde seeds/coverage.sonde \
			seeds/timeline.sonde 2>fuzz.log ||
			{ tail -50 fuzz.log >&2; fail "fuzz driver crashed"; }
		grep -qx 'fuzz_stream: 9 files, 2000 mutations, 0 crashes' fuzz.log ||
			{ tail -5 fuzz.log >&2; fail "fuzz driver did not run all inputs"; }
	fi
