# analyze.cli.incomplete: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# issue 8: a stream without END (killed, ENOSPC, still running) is said, in the text
	# header, as json keys, on stderr for csv and in --view streams; exit 0 but --strict
	mk flat a.sonde --no-end
	INC='sonde: a.sonde: incomplete stream: no END record (the process ended without an exit sonde saw, such as SIGKILL or a raw exit_group system call, or is still running; samples after its last flush are lost)'
	run "$SONDE" report a.sonde
	expect_rc 0 "incomplete"
	expect_file "$T/out" <<EOF
samples: 90 (100 periods)  streams: 1  processes: 1  threads: 2
source cpu-time: 90 samples (cpu-time@1ms, period 1000000 ns, perf_event:task-clock)
source wall-time: not shown (wall-time@10ms, period 10000000 ns, posix-timer:monotonic)
$INC
$DROPS
$PICKED
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)

$FLAT_TABLE
EOF
	run "$SONDE" report --format csv a.sonde
	expect_rc 0 "incomplete csv"
	expect_err_line "$INC"
	head -n 1 "$T/out" | grep -qx 'function,self,self_pct,total,total_pct,module' || fail "csv rows stay csv"
	run "$SONDE" report --format json a.sonde
	expect_rc 0 "incomplete json"
	python3 - "$T/out" "$INC" <<'EOF' || fail "incomplete json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["incomplete_streams"] == 1, d
assert d["warnings"][0] == sys.argv[2], d["warnings"]
EOF
	for args in "--view threads" "--view sources" "--view counters" "--group-by thread" \
		    "--view tree" "--view callers mk_beta" "--view streams"; do
		run "$SONDE" report $args a.sonde
		expect_rc 0 "$args"
		[ "$(head -n 1 "$T/out")" = "$INC" ] || fail "$args: the note is not the first line: $(head -n 2 "$T/out")"
	done
	run "$SONDE" report --strict a.sonde
	expect_rc 4 "incomplete --strict"
	expect_err_line "sonde: a.sonde: incomplete stream: no END record (the process ended without an exit sonde saw, such as SIGKILL or a raw exit_group system call, or is still running; --strict refuses it)"
	[ ! -s "$T/out" ] || fail "--strict printed a report"
	# a complete stream beside it: one note, for the one without END
	mk flat b.sonde
	run "$SONDE" report --view streams --format csv b.sonde a.sonde
	expect_rc 0 "streams view"
	expect_file "$T/out" <<'EOF'
file,pid,rank,host,end,signal,truncated,samples,samples_dropped,region_events,region_events_dropped
b.sonde,4242,,testhost,exit,,0,100,4,0,0
a.sonde,4242,,testhost,none,,0,100,4,0,0
EOF
	[ "$(grep -c 'incomplete stream' "$T/err")" -eq 1 ] || fail "one incomplete note: $(cat "$T/err")"
	run "$SONDE" report --view streams --format json b.sonde a.sonde
	python3 - "$T/out" <<'EOF' || fail "streams json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["incomplete_streams"] == 1
assert [(s["file"], s["end"], s["samples"]) for s in d["streams"]] == [("b.sonde", "exit", 100), ("a.sonde", None, 100)], d
EOF
	# records after an END (a failed exec) and no END after them: incomplete
	python3 - b.sonde c.sonde <<'EOF' || fail python
import sys
b = open(sys.argv[1], "rb").read()
# after b's END, one more SAMPLE [7, 1, 1000000, 0, 3, 1] (thread 1, node 3: defined)
open(sys.argv[2], "wb").write(b + bytes([0x96, 7, 1, 0xce, 0, 0x0f, 0x42, 0x40, 0, 3, 1]))
EOF
	"$SONDE" dump c.sonde | tail -n 1 | grep -q '"kind":"SAMPLE"' || fail "c.sonde: a SAMPLE after END"
	run "$SONDE" report c.sonde
	grep -qxF 'sonde: c.sonde: incomplete stream: no END record (the process ended without an exit sonde saw, such as SIGKILL or a raw exit_group system call, or is still running; samples after its last flush are lost)' "$T/out" ||
		fail "records after END: not said"
