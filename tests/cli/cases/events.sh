# analyze.cli.events: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	run "$SONDE" events --format csv
	expect_rc 0 "events csv"
	expect_err_empty
	head -1 "$T/out" | grep -qx 'kind,name,status,source,reason' || fail "events csv header"
	grep -qE '^source,cpu-time,(available,perf_event:task-clock|fallback,posix-timer:thread-cputime),' "$T/out" || fail "cpu-time row"
	grep -qx 'source,wall-time,available,posix-timer:monotonic,POSIX timer' "$T/out" || fail "wall-time row"
	# Two kinds of machine: PAPI's perf_event component up (then perf::TASK-CLOCK
	# works, and on a VM without a PMU presets are unavailable with the reason),
	# or disabled (libpfm4 finds no default PMU): then every PAPI event gives
	# the component's reason, the same one the component row gives.
	comp=$(grep '^papi,perf_event component,' "$T/out") || fail "no perf_event component row"
	case $comp in
	"papi,perf_event component,available,papi,PAPI_library_init ok")
		grep -qx 'papi-native,perf::TASK-CLOCK,available,papi,event set started and stopped' "$T/out" || fail "perf::TASK-CLOCK"
		if [ -e /sys/bus/event_source/devices/cpu ]; then
			echo "note: this machine has a CPU PMU; the no-PMU checks are skipped"
		else
			grep -qx 'papi-preset,PAPI_TOT_CYC,unavailable,,no hardware counter for it on this CPU; this VM has no PMU' "$T/out" ||
				fail "PAPI_TOT_CYC: $(grep PAPI_TOT_CYC "$T/out")"
			grep -qE '^papi-native,perf::CYCLES,unavailable,,PAPI_add_named_event: .*no PMU' "$T/out" || fail "perf::CYCLES"
		fi
		;;
	"papi,perf_event component,unavailable,papi,PAPI's perf_event component is disabled: "*"; PAPI overflow sampling cannot work here (sample with cpu-time@1ms)")
		why=${comp#papi,perf_event component,unavailable,papi,}
		why=${why%; PAPI overflow sampling*}
		echo "note: $why"
		grep -qxF "papi-native,perf::TASK-CLOCK,unavailable,,$why" "$T/out" || fail "perf::TASK-CLOCK: $(grep TASK-CLOCK "$T/out")"
		grep -qxF "papi-preset,PAPI_TOT_CYC,unavailable,,$why" "$T/out" || fail "PAPI_TOT_CYC: $(grep PAPI_TOT_CYC "$T/out")"
		;;
	*) fail "perf_event component: $comp" ;;
	esac
	# context switches: perf_event or getrusage, consistent with a real probe of
	# context switches come from getrusage (per thread, no descriptor) for every user
	cs=$(grep '^counter,context-switches,' "$T/out") || fail "no context-switches row"
	[ "$cs" = 'counter,context-switches,available,getrusage:ru_nvcsw+ru_nivcsw,"RUSAGE_THREAD: exact, per thread, no descriptor"' ] ||
		fail "context-switches: $cs"
	run "$SONDE" events
	expect_rc 0 "events text"
	for s in 'sources:' 'counters:' 'papi presets:' 'papi native:'; do
		grep -qx "$s" "$T/out" || fail "section $s"
	done
	grep -qE '^sonde events: uid [0-9]+, perf_event_paranoid -?[0-9]+$' "$T/out" || fail "header line"
	grep -qE '^  cpu-time +(available \(perf_event task clock\)|fallback: POSIX CPU-time timer \(.*\))$' "$T/out" || fail "cpu-time text"
	grep -qE '^  wall-time +available \(POSIX timer\)$' "$T/out" || fail "wall-time text"
	# the runtime's table of source kinds (sampler/source_kinds.c): each spec, its unit, default
	grep -qE '^  cpu-time@PERIOD +.*\(unit ns, default cpu-time@1ms\)$' "$T/out" || fail "cpu-time spec"
	grep -qE '^  wall-time@PERIOD +.*\(unit ns, default wall-time@10ms\)$' "$T/out" || fail "wall-time spec"
	grep -qE '^  NAME@COUNT +a PAPI event .*\(unit events\)$' "$T/out" || fail "PAPI spec"
	grep -qE '^  PERIOD +a period like 1ms, .* from 10us to 60s$' "$T/out" || fail "PERIOD forms"
	case $comp in
	*available,papi,PAPI_library_init*) grep -qE '^  perf::TASK-CLOCK +available' "$T/out" || fail "TASK-CLOCK text" ;;
	*) grep -qxF "  perf::TASK-CLOCK        unavailable ($why)" "$T/out" || fail "TASK-CLOCK text (disabled)"
	   grep -qF " unavailable, all: $why; --all lists them)" "$T/out" || fail "preset summary (disabled)" ;;
	esac
	if [ ! -e /sys/bus/event_source/devices/cpu ] && [ -z "${why:-}" ]; then
		grep -qE '^  \([0-9]+ unavailable, all: no hardware counter for it on this CPU; this VM has no PMU; --all lists them\)$' "$T/out" || fail "preset summary"
		! grep -q '^  PAPI_TOT_CYC' "$T/out" || fail "unavailable presets listed without --all"
		run "$SONDE" events --all
		grep -qE '^  PAPI_TOT_CYC +unavailable \(no hardware counter for it on this CPU; this VM has no PMU\)$' "$T/out" || fail "--all"
	fi
	run "$SONDE" events --format json
	python3 - "$T/out" <<'EOF' || fail "events json"
import json, sys
d = json.load(open(sys.argv[1]))
names = {(e["kind"], e["name"]): e for e in d["events"]}
assert set(d["events"][0]) == {"kind", "name", "status", "source", "reason"}, d["events"][0]
assert names[("source", "wall-time")]["status"] == "available"
assert isinstance(d["perf_event_paranoid"], int) and isinstance(d["uid"], int)
EOF
	run "$SONDE" events --format xml
	expect_rc 2 "bad format"
	expect_err_line "sonde: events: unknown format 'xml' (usage: sonde events [--all] [--format text|csv|json])"
	run "$SONDE" --help
	grep -qE '^  sonde events ' "$T/out" || fail "events in --help"
