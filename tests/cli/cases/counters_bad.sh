# analyze.cli.counters_bad: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	for sc in "cnt_long:SAMPLE deltas does not have one value per header counter" \
		  "cnt_short:SAMPLE deltas does not have one value per header counter" \
		  "cnt_type:SAMPLE deltas holds a value that is not an unsigned integer" \
		  "cnt_flag8:SAMPLE has both deltas and flag 8, counters unreadable" \
		  "cnt_region:REGION counts does not have one value per header counter"; do
		off=$("$MK" "${sc%%:*}" x.sonde) || fail "mkstream $sc"
		run "$SONDE" report x.sonde
		expect_rc 4 "${sc%%:*}"
		expect_err_line "sonde: x.sonde: corrupt record at byte $off (${sc#*:})"
		run "$SONDE" report --view counters --strict x.sonde
		expect_rc 4 "${sc%%:*} strict"
	done
