# analyze.cli.malformed: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# issue 11: records naming what the stream never defined, and HEADER/END/REGION
	# fields of the wrong type, are corrupt: file and offset, exit 4 (skipped beside
	# a good file)
	mk flat good.sonde
	for sc in "sample_thread:SAMPLE names a thread that no THREAD record defined before it" \
		  "sample_thread0:SAMPLE names a thread that no THREAD record defined before it" \
		  "sample_source:SAMPLE names a source that the HEADER does not list" \
		  "sample_node:SAMPLE names a FRAME node that no FRAME record defined before it" \
		  "sample_context:SAMPLE names a CONTEXT node that no CONTEXT record defined before it" \
		  "region_thread:REGION names a thread that no THREAD record defined before it" \
		  "region_node:REGION names a CONTEXT node that no CONTEXT record defined before it" \
		  "region_t:REGION t is not an unsigned integer" \
		  "region_event:REGION event is not an unsigned integer" \
		  "end_t:END t is not an unsigned integer" \
		  "end_reason:END reason is not a string" \
		  "end_stats:END stats is not a map" \
		  "end_signal:END stats \`signal\` is not an unsigned integer" \
		  "header_info:HEADER info is not a map" \
		  "header_pid:HEADER \`pid\` is not an unsigned integer" \
		  "header_sources:HEADER \`sources\` is not an array" \
		  "header_period:HEADER sources[0] \`period\` is not an unsigned integer"; do
		name=${sc%%:*}
		off=$("$MK" "bad_$name" x.sonde) || fail "mkstream bad_$name"
		run "$SONDE" report x.sonde
		expect_rc 4 "$name"
		expect_err_line "sonde: x.sonde: corrupt record at byte $off (${sc#*:})"
		run "$SONDE" report --format csv x.sonde good.sonde
		expect_rc 0 "$name beside a good file"
		expect_err_line "sonde: x.sonde: corrupt record at byte $off (${sc#*:})"
		[ "$(sed -n 2p "$T/out")" = "mk_beta,60,60.00,60,60.00,mkstream" ] || fail "$name: good file not reported"
	done
