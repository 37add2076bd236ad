# Every process sonde saw start is known to the report (issue 19 item 8).
#
# kill: a program forks 10 children one after the other, each burning CPU until
# the parent kills it with SIGKILL 30 to 50 ms later; most die before their
# first flush (SONDE_FLUSH_MS) and leave no stream. The parent's stream records
# each child it forked (CHILD, docs/FORMAT.md) and how it ended when the parent
# reaped it, so `--view processes` (json and text) lists the parent and all 10
# pids the program printed, says which have no stream and why (killed by
# signal 9, as the program printed), and the text says how many.
#
# chroot (root only): a child chroot()s into an empty directory, burns CPU and
# exits 0. Its stream is in the real output directory with its samples,
# nothing is made inside the jail, and the report shows 2 processes.
. "$(dirname "$0")/lib.sh"
C="$B/tests/bin/children"
# The cases (one ctest entry each, e2e.children.CASE, registered from this line).
CASES="kill chroot"
CASE=${2:-all}
streams() { ls "$1"/*.sonde 2>/dev/null; }

case_kill() {
	profile k "$C" kill 10 || fail "kill: exit $?: $(cat k.err)"
	local P
	P=$(awk '$1 == "parent" { print $2 }' k.out)
	[ -n "$P" ] && [ "$(grep -c '^child [0-9]* killed 9$' k.out)" -eq 10 ] ||
		fail "kill: program output: $(cat k.out)"
	local nstreams
	nstreams=$(streams k | wc -l)
	"$SONDE" report --view processes --format json k >k.json 2>k.rerr ||
		fail "kill: report: $(cat k.rerr)"
	python3 - k.json k.out "$P" <<'EOF' || fail "kill: processes view: $(cat k.json)"
import json, sys
d = json.load(open(sys.argv[1]))
P = int(sys.argv[3])
killed = {}
for line in open(sys.argv[2]):
    w = line.split()
    if w[0] == "child":
        killed[int(w[1])] = int(w[3])
rows = d["processes"]
pids = [r["pid"] for r in rows]
assert sorted(pids) == sorted([P] + list(killed)), (sorted(pids), P, sorted(killed))
par = [r for r in rows if r["pid"] == P][0]
assert par["end"] == "exit" and par["stream"], par
for r in rows:
    if r["pid"] == P:
        continue
    assert r["ppid"] == P, r
    if r["stream"]:
        assert r["end"] in ("incomplete", "signal"), r
        continue
    # no stream: the row says so, with how the parent saw it end
    assert r["end"] == "no_stream" and r["file"] is None and r["samples"] == 0, r
    assert r["signal"] == killed[r["pid"]] == 9, r
    assert "SIGKILL" in r["no_stream"], r
missing = [r["pid"] for r in rows if not r["stream"]]
print("%d children, %d without a stream: %s" % (len(killed), len(missing), missing))
EOF
	local nmiss
	nmiss=$(python3 -c 'import json,sys; print(sum(1 for r in json.load(open(sys.argv[1]))["processes"] if not r["stream"]))' k.json)
	[ "$nmiss" -eq $((11 - nstreams)) ] || fail "kill: $nmiss rows without a stream for $nstreams streams"
	"$SONDE" report --view processes k >k.txt 2>/dev/null || fail "kill: text report"
	for pid in $(awk '$1 == "child" { print $2 }' k.out); do
		grep -q "^[^ ]*\[$pid\] " k.txt || fail "kill: text view lacks child $pid: $(cat k.txt)"
	done
	if [ "$nmiss" -gt 0 ]; then
		grep -q "^$nmiss of 10 children .*no stream" k.txt || fail "kill: text view: $(cat k.txt)"
	fi
	"$SONDE" report k >k.flat 2>/dev/null || fail "kill: flat report"
	grep -q "processes: 11" k.flat || fail "kill: header: $(head -n 3 k.flat)"
	pass "kill: 10 children SIGKILLed, $nstreams streams, all 11 processes in the report ($nmiss without a stream)"
}

case_chroot() {
	[ "$(id -u)" -eq 0 ] || skip "chroot: needs root"
	mkdir jail
	WL_CPU=1 LD_PRELOAD="$LIB" SONDE_OUTPUT="$T/c" "$C" chroot "$T/jail" >c.out 2>c.err ||
		fail "chroot: exit $?: $(cat c.err)"
	local P K
	P=$(awk '$1 == "parent" { print $2 }' c.out)
	K=$(awk '$1 == "child" && $3 == "exit" && $4 == 0 { print $2 }' c.out)
	[ -n "$P" ] && [ -n "$K" ] || fail "chroot: program output: $(cat c.out)"
	[ -z "$(find jail -mindepth 1 | head -n 1)" ] || fail "chroot: made inside the jail: $(find jail)"
	[ "$(streams c | wc -l)" -eq 2 ] || fail "chroot: streams: $(streams c)"
	local ks
	ks=$(ls c/*."$K".sonde 2>/dev/null)
	[ -n "$ks" ] || fail "chroot: no stream of child $K in the output directory: $(streams c)"
	"$SONDE" dump "$ks" | grep -q '"kind":"END"' || fail "chroot: child stream has no END"
	"$SONDE" report --view processes --format json c >c.json 2>c.rerr || fail "chroot: report: $(cat c.rerr)"
	python3 - c.json "$P" "$K" <<'EOF' || fail "chroot: processes view: $(cat c.json)"
import json, sys
d = json.load(open(sys.argv[1]))
P, K = int(sys.argv[2]), int(sys.argv[3])
rows = d["processes"]
assert sorted(r["pid"] for r in rows) == sorted([P, K]), rows
k = [r for r in rows if r["pid"] == K][0]
assert k["end"] == "exit" and k["ppid"] == P and k["samples"] > 0, k
EOF
	read -r user_ms cpu_ms < <(cpu_of c.out jailed_work)
	local n
	n=$("$SONDE" report --format folded c 2>/dev/null | awk '/jailed_work/ { n += $NF } END { print n + 0 }')
	expect_samples "chroot: jailed_work" "$n" "$user_ms" "$cpu_ms" 0.25
	grep -q "processes: 2" <("$SONDE" report c 2>/dev/null) || fail "chroot: header"
	pass "chroot: the jailed child's stream ($n samples for $cpu_ms ms) is in the output directory, nothing in the jail"
}

case $CASE in
kill) case_kill ;;
chroot) case_chroot ;;
all) case_kill; case_chroot ;;
*) fail "unknown case $CASE" ;;
esac
