# analyze.cli.events_nobody: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to switch to nobody"; exit 77; }
	command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; exit 77; }
	cp "$SONDE" ./sonde && chmod 755 . ./sonde
	run setpriv --reuid=nobody --regid=nogroup --clear-groups ./sonde events --format csv
	expect_rc 0 "events as nobody"
	grep -qE '^source,cpu-time,(available|fallback),' "$T/out" || fail "cpu-time as nobody"
	grep -qx 'source,wall-time,available,posix-timer:monotonic,POSIX timer' "$T/out" || fail "wall-time as nobody"
	# as root (the events case): available, or refused with the disabled component's reason
	if grep -q "^papi,perf_event component,unavailable,papi,PAPI's perf_event component is disabled: " "$T/out"; then
		grep -qE "^papi-native,perf::TASK-CLOCK,unavailable,,PAPI's perf_event component is disabled: " "$T/out" ||
			fail "TASK-CLOCK as nobody: $(grep TASK-CLOCK "$T/out")"
	else
		grep -qx 'papi-native,perf::TASK-CLOCK,available,papi,event set started and stopped' "$T/out" || fail "TASK-CLOCK as nobody"
	fi
	p=$(cat /proc/sys/kernel/perf_event_paranoid)
	if [ "$p" -ge 2 ]; then
		grep -q '^counter,context-switches,available,getrusage:ru_nvcsw+ru_nivcsw,' "$T/out" ||
			fail "context-switches as nobody: $(grep context-switches "$T/out")"
		grep -qE "^counter,cpu-migrations,unavailable,,.*perf_event_paranoid=$p.*kernel.perf_event_paranoid=1" "$T/out" ||
			fail "cpu-migrations as nobody: $(grep cpu-migrations "$T/out")"
	else
		echo "note: perf_event_paranoid is $p; the getrusage fallback is not exercised"
	fi
	run setpriv --reuid=nobody --regid=nogroup --clear-groups ./sonde events
	expect_rc 0 "events text as nobody"
	grep -qE '^sonde events: uid 65534, perf_event_paranoid' "$T/out" || fail "nobody header"
	if [ "$p" -ge 2 ]; then
		grep -qE "^  context-switches +getrusage \(RUSAGE_THREAD: exact, per thread, no descriptor\)" "$T/out" || fail "text: context-switches"
		grep -qE "^  cpu-migrations +unavailable \(perf_event_paranoid=$p" "$T/out" || fail "text: cpu-migrations"
	fi
