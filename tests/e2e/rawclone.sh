# Tasks not made by pthread_create (issue 8 item 6): a raw clone(CLONE_THREAD)
# thread without TLS of its own that spins ~0.5 s of CPU (measured by
# itself), and a clone(CLONE_VM) child process that spins ~0.3 s. Output and
# status unchanged, no hang; the thread's samples match its measured CPU time
# (what sonde did not sample, before it found the thread, is accounted as
# UNSAMPLED not_sampled), with its call path; the child process's CPU time is
# listed as UNSAMPLED clone_vm_process.
. "$(dirname "$0")/lib.sh"
P="$B/tests/bin/rawclone"

timeout 60 "$P" >plain.out 2>plain.err; want=$?
[ $want -eq 0 ] || fail "the program fails without sonde ($want): $(cat plain.out plain.err)"
timeout 60 env LD_PRELOAD="$LIB" SONDE_OUTPUT=p "$P" >p.out 2>p.err; st=$?
[ $st -eq 124 ] && fail "hung under sonde"
[ $st -eq $want ] || fail "exit $st under sonde, $want without: $(cat p.out p.err)"
cmp -s plain.out p.out || fail "output changed: $(cat p.out)"
f=$(ls p/*.sonde)
valid_stream "$f"
grep -q '^sonde: thread [0-9]* (rawclone): made without pthread_create (a raw clone): sampled from its tid' p.err ||
	fail "no line about the clone thread: $(cat p.err)"
grep -q '^sonde: process [0-9]* (rawclone): a child sharing the program.s memory (clone with CLONE_VM, not a thread): not sampled' p.err ||
	fail "no line about the CLONE_VM child: $(cat p.err)"
[ "$(grep -c '^sonde: ' p.err)" -eq 2 ] || fail "expected two sonde: lines: $(cat p.err)"

m=$(grep '^measured ' p.err)
thread_ns=$(echo "$m" | sed 's/.*clone_thread_ns=\([0-9]*\).*/\1/')
vm_ns=$(echo "$m" | sed 's/.*clone_vm_ns=\([0-9]*\).*/\1/')
[ "${thread_ns:-0}" -gt 400000000 ] || fail "the clone thread measured ${thread_ns:-?} ns"

# The clone thread: samples (1 ms each) under clone_thread_work, plus the
# CPU time it ran before sonde found it, within 10 % of what it measured.
n=$("$SONDE" report --format folded p 2>/dev/null | awk '/clone_thread_work/ { s += $NF } END { print s + 0 }')
tid=$(grep -o 'thread [0-9]* (rawclone): made without' p.err | cut -d' ' -f2)
th=$(grep '"kind":"THREAD",' "$T/dump.json" | grep "\"tid\":$tid," | sed 's/.*"thread":\([0-9]*\),.*/\1/')
before=$(grep '"kind":"UNSAMPLED"' "$T/dump.json" | grep "\"thread\":$th," | grep '"not_sampled"' |
	tail -n 1 | sed 's/.*"cpu_ns":\([0-9]*\).*/\1/')
awk -v n="$n" -v b="${before:-0}" -v m="$thread_ns" 'BEGIN { x = n * 1e6 + b; exit !(x >= 0.9 * m && x <= 1.1 * m) }' ||
	fail "clone thread: $n samples + ${before:-0} ns unsampled for $thread_ns ns measured"
pass "clone thread: $n samples + $((${before:-0} / 1000000)) ms before it was found, for $((thread_ns / 1000000)) ms measured"

# The CLONE_VM child: its CPU time, listed as unsampled with the reason.
got=$(grep '"kind":"UNSAMPLED"' "$T/dump.json" | grep '"clone_vm_process"' | tail -n 1 |
	sed 's/.*"cpu_ns":\([0-9]*\).*/\1/')
awk -v g="${got:-0}" -v m="$vm_ns" 'BEGIN { exit !(g >= 0.8 * m && g <= 1.1 * m) }' ||
	fail "CLONE_VM child: ${got:-0} ns listed unsampled for $vm_ns ns measured"
"$SONDE" report --format folded p 2>/dev/null | grep -q clone_vm_work && fail "CLONE_VM child was sampled"
pass "CLONE_VM child: $((got / 1000000)) ms listed as unsampled for $((vm_ns / 1000000)) ms measured"

# The report's coverage account says it too: the CLONE_VM child's whole CPU
# time as not sampled, the clone thread's CPU time against what it measured.
"$SONDE" report --view coverage --format json p >cov.json 2>/dev/null || fail "report --view coverage"
python3 - cov.json "$vm_ns" "$thread_ns" "$tid" <<'PY' || fail "coverage account (above)"
import json, sys
c = json.load(open(sys.argv[1]))["coverage"]
vm, th, tid = float(sys.argv[2]) / 1e6, float(sys.argv[3]) / 1e6, int(sys.argv[4])
rows = c["threads"]
child = [r for r in rows if r["sampled_ms"] == 0 and r["gaps_ms"]["not_sampled"] > 0]
assert child and abs(child[0]["gaps_ms"]["not_sampled"] - vm) <= 0.2 * vm, ("CLONE_VM child", child, vm)
clone = [r for r in rows if r["tid"] == tid]
assert clone and abs(clone[0]["cpu_ms"] - th) <= 0.25 * th, ("clone thread cpu", clone, th)
print(f"coverage: CLONE_VM child not sampled {child[0]['gaps_ms']['not_sampled']} ms for {vm:.1f}; "
      f"clone thread cpu {clone[0]['cpu_ms']} ms for {th:.1f}")
PY
pass "coverage account names the CLONE_VM child's time and the clone thread's CPU"
