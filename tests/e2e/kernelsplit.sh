# "unexplained" in the coverage account only for what is truly unknown (issue 18
# item 8). The bundled heat example makes ~10 000 context switches a second
# through its barrier; the kernel splits each thread's exact CPU time into
# user and sys by its scheduler ticks, which rarely land on the kernel work
# around a switch, and counts that work as user time. Before, the account
# said "unexplained 72-88 ms" (30-57 ms per worker thread). Now the part that
# the thread's context switches explain (up to SD_COV_SWITCH_KERNEL_NS each) is
# named "kernel counted as user":
#   - where perf works, perf record -e task-clock:u -e task-clock on the same run
#     counts the same user-mode samples per worker thread as sonde (within 5 %
#     + 5): samples, not the kernel's tick-based split, measure user time;
#   - so what the split counted as user beyond the samples is kernel time: over
#     both worker threads, what is left unexplained (the positive part) is
#     within the sampling error (2 sigma of binomial counts of cpu/period timer
#     firings, plus 2 periods). A negative rest (the split counted user time
#     as sys) is shown as "over", not hidden.
. "$(dirname "$0")/lib.sh"
HEAT="$B/heat"
[ -x "$HEAT" ] || skip "no heat example in $B"
use_perf=0
if command -v perf >/dev/null 2>&1 &&
	perf record -q -e task-clock:u -e task-clock -c 1000000 -o probe.perf -- true >/dev/null 2>&1; then
	use_perf=1
fi
if [ $use_perf = 1 ]; then
	perf record -q -e task-clock:u -e task-clock -c 1000000 -o heat.perf -- \
		env LD_PRELOAD="$LIB" SONDE_OUTPUT=p SONDE_SAMPLE=cpu-time@1ms "$HEAT" >heat.out 2>heat.err ||
		fail "perf record + sonde: exit $?: $(tail -3 heat.err)"
	perf script -i heat.perf -F tid,event 2>/dev/null |
		awk '{ n[$1 " " $2]++ } END { for (k in n) print k, n[k] }' >perf.counts
else
	SONDE_SAMPLE=cpu-time@1ms profile p "$HEAT" || fail "heat: exit $?: $(tail -3 p.err)"
fi
"$SONDE" report --view coverage --format json p >cov.json 2>cov.err || fail "report: $(cat cov.err)"
"$SONDE" report p >cov.txt 2>&1 || fail "report text: $(cat cov.txt)"
python3 - cov.json perf.counts $use_perf <<'EOF' >check.out || fail "$(cat check.out) $(grep -E '^(coverage|  thread)' cov.txt)"
import json, math, sys
d = json.load(open(sys.argv[1]))
use_perf = sys.argv[3] == "1"
perf = {}
if use_perf:
    for line in open(sys.argv[2]):
        tid, ev, n = line.split()
        perf.setdefault(int(tid), {})[ev.rstrip(":")] = int(n)
P = 1.0  # ms, cpu-time@1ms
out = []
workers = [t for t in d["coverage"]["threads"] if t["name"].startswith("heat-")]
assert len(workers) == 2, [t["name"] for t in d["coverage"]["threads"]]
var = 0.0
un_sum = 0.0
for t in workers:
    cpu, sampled = t["cpu_ms"], t["sampled_ms"]
    g = t["gaps_ms"]
    p = min(max(sampled / cpu, 0.01), 0.99)
    var += (cpu / P) * p * (1 - p) * P * P
    un = t["unexplained_ms"]
    un_sum += un
    assert t["context_switches"] > 1000, t
    line = "%s: cpu %.0f sampled %.0f kernel %.0f + as user %.0f, unexplained %.1f, %d switches" % (t["name"], cpu, sampled, g["kernel"], g["kernel_as_user"], un, t["context_switches"])
    if use_perf:
        c = perf[t["tid"]]
        pu, pall = c["task-clock:u"] * P, c["task-clock"] * P
        assert abs(sampled - pu) <= 0.05 * pu + 5, "%s: sonde sampled %.0f ms of user mode, perf %.0f" % (t["name"], sampled, pu)
        line += " (perf: user %.0f of %.0f)" % (pu, pall)
    out.append(line)
noise = 2 * math.sqrt(var) + 2 * P
assert un_sum <= noise, "unexplained %.1f ms over the worker threads, beyond the sampling error %.1f ms: %s" % (un_sum, noise, out)
out.append("unexplained %.1f <= %.1f" % (un_sum, noise))
print("; ".join(out))
EOF
grep -q "kernel counted as user [0-9.]* ms (around [0-9]* context switches" cov.txt ||
	fail "the header does not name the cause: $(grep coverage cov.txt)"
pass "$(cat check.out)"
