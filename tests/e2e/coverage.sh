# The coverage account (docs/REPORT.md, "Coverage") of real runs of
# tests/fixtures/programs/hostile.c under cpu-time@1ms, against what the programs measured
# themselves (their stderr): cpu_ms (getrusage of the process) and, for the modes
# that block signals, blocked_cpu_ms (the blocked thread's own CPU clock).
#   loop 0.5         one thread burns: coverage of its user time >= 90 %
#   sigblock 0.4     burns 0.4 s with signals blocked: the queued samples are charged
#                    to [signals blocked] when it unblocks, so they are sampled time
#   blockthread 0.4  a thread that never unblocks: its sources are paused and its CPU
#                    time charged to [signals blocked] from its clock: sampled time,
#                    about blocked_cpu_ms, no signals_blocked gap
# Each: the kernel's CPU time of the threads matches the program's within 5 % (the
# process also runs sonde's writer thread), and sampled + gaps + unexplained = cpu.
# Usage: coverage.sh BUILD_DIR
. "$(dirname "$0")/lib.sh"
H="$B/tests/bin/hostile"
[ -x "$H" ] || skip "no hostile program in $B"

check() { # check NAME MODE ARG: profile, then assert on --view coverage --format json
	local name=$1
	shift
	SONDE_SAMPLE=cpu-time@1ms profile "$name" "$H" "$@" || fail "$name: exit status $?: $(head -3 "$name.err")"
	local f
	f=$(ls "$name"/*.sonde 2>/dev/null | head -n 1)
	[ -n "$f" ] || fail "$name: no stream"
	valid_stream "$f"
	"$SONDE" report "$name" >"$name.txt" 2>&1 || fail "$name: report: $(cat "$name.txt")"
	grep -q '^coverage: cpu [0-9.]* ms measured by the kernel' "$name.txt" ||
		fail "$name: no coverage block in the text header: $(head -8 "$name.txt")"
	"$SONDE" report --view coverage --format json "$name" >"$name.json" 2>"$name.rerr" ||
		fail "$name: report json: $(cat "$name.rerr")"
	python3 - "$name" "$name.json" "$name.err" <<'EOF' || fail "$name: coverage account (above); the stream's threads: $(grep -E '"kind":"(THREAD|THREAD_END|THREAD_CPU|NOTE|UNSAMPLED)"' "$T/dump.json" | cut -c1-300)"
import json, sys
name, js, err = sys.argv[1:4]
said = {}
for line in open(err):
    k, _, v = line.strip().partition(" ")
    if k in ("cpu_ms", "blocked_cpu_ms"):
        said[k] = float(v)
c = json.load(open(js))["coverage"]
t = c["total"]
print(f"{name}: program {said}; total cpu {t['cpu_ms']} ms (from {t['cpu_from']}), "
      f"sampled {t['sampled_ms']} ms = {t['coverage_pct']}% of {t['coverage_of']}, "
      f"gaps { {k: v for k, v in t['gaps_ms'].items() if v} }, unexplained {t['unexplained_ms']}")
assert c["computed"] and t["cpu_from"] == "thread_end", c
def adds_up(r):  # exact to the rounding of each value to the microsecond
    s = r["sampled_ms"] + sum(r["gaps_ms"].values()) + r["unexplained_ms"]
    return abs(s - r["cpu_ms"]) < 0.02
for r in c["threads"] + [t]:
    assert r["cpu_ms"] is not None and adds_up(r), ("does not add up", r)
    # user/sys recorded; used unless the kernel's tick split was implausible (said)
    assert r["coverage_of"] == "user" or r.get("split_rejected"), ("user/sys split expected", r)
# the kernel's CPU time of the program's threads against the process's own getrusage
cpu = said["cpu_ms"]
assert abs(t["cpu_ms"] - cpu) <= max(0.05 * cpu, 10), ("cpu_ms", t["cpu_ms"], cpu)
if name == "loop":
    assert t["coverage_pct"] >= 90, ("loop coverage", t["coverage_pct"])
if name == "sigblock":
    # the blocked burn is sampled time ([signals blocked]), not a gap
    assert t["coverage_pct"] >= 90, ("sigblock coverage", t["coverage_pct"])
    assert t["gaps_ms"]["signals_blocked"] == 0, t
if name == "blockthread":
    b = said["blocked_cpu_ms"]
    th = max(c["threads"], key=lambda r: r["cpu_ms"])
    assert abs(th["cpu_ms"] - b) <= max(0.05 * b, 10), ("blocked thread cpu", th["cpu_ms"], b)
    assert th["gaps_ms"]["signals_blocked"] <= 0.05 * b, ("signals_blocked gap", th)
    assert abs(th["sampled_ms"] - b) <= 0.1 * b, ("the blocked thread's time", th["sampled_ms"], b)
    assert abs(th["unexplained_ms"]) <= 0.1 * b, ("blocked thread unexplained", th)
EOF
	pass "$name: $(grep '^coverage: cpu' "$name.txt")"
}

check loop loop 0.5
check sigblock sigblock 0.4
check blockthread blockthread 0.4
