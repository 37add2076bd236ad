# analyze_mixed_periods: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# Sources of different periods counted as equals are said once, with what to count
	# instead; not when one source is counted, when the metric weighs samples by their
	# period, or in views that do not count samples.
	mk flat a.sonde
	for args in "" "--view tree --format folded" "--group-by thread --format csv" \
		"--view callers mk_beta --format csv" "--view threads --format csv"; do
		# shellcheck disable=SC2086
		run "$SONDE" report $args a.sonde
		expect_rc 0 "$args"
		n=$( (cat "$T/out" "$T/err") | grep -cxF "$MIXED")
		[ "$n" -eq 1 ] || fail "report $args: the mixed-periods line $n times"
	done
	for args in "--source cpu-time" "--source wall-time --format csv" "--metric time" \
		"--metric weight --format csv" "--view sources" "--view streams --format csv"; do
		# shellcheck disable=SC2086
		run "$SONDE" report $args a.sonde
		expect_rc 0 "$args"
		! grep -q 'different periods' "$T/out" "$T/err" || fail "report $args: mixed-periods line: $(grep -h 'different periods' "$T/out" "$T/err")"
	done
	# json: among the warnings
	run "$SONDE" report --format json a.sonde
	python3 -c 'import json, sys; w = json.load(open(sys.argv[1]))["warnings"]; sys.exit(sys.argv[2] not in w)' "$T/out" "$MIXED" ||
		fail "json warnings: $(head -c 600 "$T/out")"
