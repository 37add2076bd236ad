# Many short processes stay readable (issue 9 item 8): a shell script run under
# `sonde run` starts a CPU workload in the background, /bin/true and an inner
# `sh -c`; the forked shells that exec at once leave no stream unless sampled first (one row per
# process, not two); `--view processes` names each image NAME[PID] with the pids the script
# printed ($$, $!), the workload's CPU time within tolerance of what it measured
# itself (WL_CPU=1), and `--group-by process` labels the rows the same way.
. "$(dirname "$0")/lib.sh"
W="$B/tests/bin/wl_split"
cat >script.sh <<EOF
echo "script \$\$"
WL_CPU=1 "$W" 0.3 >split.out &
echo "split \$!"
wait \$!
/bin/true &
echo "true \$!"
wait \$!
sh -c 'echo "inner \$\$"'
EOF
"$SONDE" run -o p -- /bin/sh script.sh >run.out 2>run.err || fail "sonde run: exit $?: $(cat run.err)"
pid_of() { awk -v w="$1" '$1 == w { print $2 }' run.out; }
S=$(pid_of script) C1=$(pid_of split) C2=$(pid_of true) C3=$(pid_of inner)
[ -n "$S" ] && [ -n "$C1" ] && [ -n "$C2" ] && [ -n "$C3" ] || fail "script output: $(cat run.out)"
read -r user_ms cpu_ms < <(cpu_of split.out main)

"$SONDE" report --view processes --format json p >proc.json 2>proc.err || fail "report --view processes: $(cat proc.err)"
python3 - proc.json "$S" "$C1" "$C2" "$C3" "$cpu_ms" <<'EOF' || fail "processes view: $(cat proc.json)"
import json, sys
d = json.load(open(sys.argv[1]))
S, C1, C2, C3 = (int(x) for x in sys.argv[2:6])
cpu = float(sys.argv[6])
rows = d["processes"]
by = {}
for r in rows:
    by.setdefault(r["process"], []).append(r)
def one(label):
    assert label in by, (label, sorted(by))
    return by[label][0]
sh = one("sh[%d]" % S)
assert sh["command"] == "/bin/sh script.sh" and sh["end"] in ("exit", "_exit"), sh  # dash leaves by _exit
# the background job: a fork of the script's shell that exec'd wl_split at once
# leaves no stream of its own unless it was sampled before the exec (docs/FORMAT.md,
# Files: its first period is drawn at random, so a child of T ms of CPU holds a
# sample with probability T/P): then its row says exec, holds that sample and
# the few milliseconds of CPU it really used
def forked(pid):
    for r in by.get("sh[%d]" % pid, []):
        assert r["end"] == "exec" and r["samples"] >= 1 and r["cpu_ms"] < 30, r
forked(C1)
wl = one("wl_split[%d]" % C1)
assert wl["ppid"] == S and wl["end"] == "exit" and wl["samples"] > 0, wl
assert wl["command"].endswith("wl_split 0.3") and wl["exe"].endswith("/wl_split"), wl
# its CPU time (the kernel's, all its threads) holds the part it measured itself
# around its work, plus its start and exit: at least that, at most 10 % + 30 ms more
assert wl["cpu_ms"] is not None and cpu - 1 <= wl["cpu_ms"] <= cpu * 1.1 + 30, (wl["cpu_ms"], cpu)
# the busiest process comes first
assert rows[0]["process"] == "wl_split[%d]" % C1, rows[0]
t = one("true[%d]" % C2)
assert t["end"] == "exit" and t["ppid"] == S and t["command"] == "/bin/true", t
forked(C2)
inner = one("sh[%d]" % C3)
assert inner["command"].startswith("sh -c ") and inner["ppid"] == S, inner
print("wl_split[%d]: cpu %.1f ms (measured %.1f), %d samples; %d process images" %
      (C1, wl["cpu_ms"], cpu, wl["samples"], len(rows)))
EOF
pass "processes view: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(r["process"] for r in d["processes"]))' proc.json)"

# text: the workload's row leads, named; --top 1 keeps only it
"$SONDE" report --view processes --top 1 p >proc.txt 2>/dev/null || fail "report --view processes (text)"
grep -q "^wl_split\[$C1\] " proc.txt || fail "text view: $(cat proc.txt)"
[ "$(grep -c '\[[0-9]*\] ' proc.txt)" -eq 1 ] || fail "--top 1: $(cat proc.txt)"

# --group-by process: the same labels; the workload holds the samples
"$SONDE" report --group-by process --format csv p >grp.csv 2>/dev/null || fail "report --group-by process"
[ "$(sed -n 2p grp.csv | cut -d, -f1)" = "wl_split[$C1]" ] || fail "group-by process: $(cat grp.csv)"
"$SONDE" report --group-by process p >grp.txt 2>/dev/null || fail "report --group-by process (text)"
grep -q "^wl_split\[$C1\] " grp.txt || fail "group-by process text: $(cat grp.txt)"
pass "group-by process: $(tr '\n' ' ' <grp.csv)"
