# analyze.cli.mixed_periods: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# Samples of two sources (two clocks) are never added: the views that add samples
	# show one (cpu-time) and say so once, with how to show the other; not when --source
	# picks one, with a counter metric, or in the views of the run's account.
	mk flat a.sonde
	for args in "" "--view tree --format folded" "--group-by thread --format csv" \
		"--view callers mk_beta --format csv" "--view threads --format csv" "--metric time" \
		"--metric samples --format csv"; do
		# shellcheck disable=SC2086
		run "$SONDE" report $args a.sonde
		expect_rc 0 "$args"
		n=$( (cat "$T/out" "$T/err") | grep -cxF "$PICKED")
		[ "$n" -eq 1 ] || fail "report $args: the picked-source line $n times"
		! grep -q 'different periods' "$T/out" "$T/err" || fail "report $args: mixed-periods line"
	done
	for args in "--source cpu-time" "--source wall-time --format csv" "--view sources" \
		"--view streams --format csv" "--metric page-faults"; do
		# shellcheck disable=SC2086
		run "$SONDE" report $args a.sonde
		! grep -q 'showing source\|different periods' "$T/out" "$T/err" ||
			fail "report $args: $(grep -h 'showing source\|different periods' "$T/out" "$T/err")"
	done
	# the default total is cpu-time's alone: 100 periods (90 samples, 10 of them of weight 2)
	run "$SONDE" report --format folded a.sonde
	n=$(awk '{ s += $NF } END { print s }' "$T/out")
	[ "$n" = 100 ] || fail "folded total $n, cpu-time's is 100"
	run "$SONDE" report --metric time --format csv a.sonde
	awk -F, '$1 == "mk_main" { exit !($4 == "100.000") }' "$T/out" || fail "--metric time: $(cat "$T/out")"
	# json: among the warnings, and the source shown
	run "$SONDE" report --format json a.sonde
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(sys.argv[2] not in d["warnings"] or d["source_shown"] != "cpu-time")' "$T/out" "$PICKED" ||
		fail "json warnings: $(head -c 600 "$T/out")"
