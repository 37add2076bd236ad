# Counts that mean what they say (issue 18 items 5 and 6).
#
# 1. Throttled samples: at cpu-time@50us the sampler raises the period of a
#    thread that falls behind and weights its later samples 2, 4, ... A program
#    that runs heavy_work then light_work (lifecycle phased: 75/25 of CPU in time
#    order) has its early samples unweighted and its late ones weighted, so a
#    count of samples overstates heavy_work (78-86 % for 75). The default of every
#    view (flat, folded, pprof's default sample type) must give the split the
#    program measured (within 3 points), and the report must say the period was
#    raised (text header, json "throttled").
# 2. Two sources: cpu-time@1ms and wall-time@10ms measure different clocks. No
#    view adds them: the default shows one source (cpu-time) and says so; the
#    default total is that source's; spin_work's time is its CPU time (10 %).
. "$(dirname "$0")/lib.sh"

# ---- 1. throttled samples ----------------------------------------------------
SONDE_SAMPLE=cpu-time@50us WL_CPU=1 profile p "$B/tests/bin/lifecycle" phased || fail "phased: exit $?"
grep -qx 'phased done' p.out || fail "phased: output: $(cat p.out)"
f=$(ls p/*.sonde)
valid_stream "$f"
read -r _ heavy_ms < <(cpu_of p.out heavy_work)
read -r _ light_ms < <(cpu_of p.out light_work)
want=$(awk -v h="$heavy_ms" -v l="$light_ms" 'BEGIN { printf "%.2f", 100 * h / (h + l) }')
maxw=$(grep '"kind":"SAMPLE"' "$T/dump.json" | grep -o '"weight":[0-9]*' | cut -d: -f2 | sort -n | tail -n 1)
[ "${maxw:-1}" -gt 1 ] ||
	skip "no sample was throttled at cpu-time@50us on this machine (every weight 1): nothing to check"
nsamples=$(grep -c '"kind":"SAMPLE"' "$T/dump.json")
# share of heavy_work among the two functions, from folded lines (their paths)
share() { awk '{ n = $NF; if ($1 ~ /;heavy_work;/) h += n; if ($1 ~ /;light_work;/) l += n }
	END { if (h + l == 0) print "0"; else printf "%.2f\n", 100 * h / (h + l) }'; }
got=$("$SONDE" report --format folded p | share)
within "$got" "$want" 3 ||
	fail "folded: heavy_work $got % of heavy+light, it took $want % of their CPU ($nsamples samples, weights up to $maxw)"
pass "folded: heavy_work $got % for $want % of the CPU (weights up to $maxw)"
raw=$("$SONDE" report --metric samples --format folded p | share)
pass "(--metric samples, a count of samples: heavy_work $raw %)"
# flat view csv: the total of each
flat=$("$SONDE" report --format csv p 2>/dev/null | awk -F, '$1 == "heavy_work" { h = $4 } $1 == "light_work" { l = $4 }
	END { if (h + l == 0) print "0"; else printf "%.2f\n", 100 * h / (h + l) }')
within "$flat" "$want" 3 || fail "flat: heavy_work $flat % of heavy+light, it took $want %"
pass "flat: heavy_work $flat %"
# the text header says the period was raised, json says it too
"$SONDE" report p >text.out 2>&1 || fail "report failed: $(cat text.out)"
grep -q '^sonde: note: cpu-time@50us was throttled: ' text.out ||
	fail "the text header does not say the period was raised: $(head -n 12 text.out)"
pass "$(grep 'was throttled' text.out)"
"$SONDE" report --format json p 2>/dev/null >j.json || fail "report --format json failed"
python3 - j.json "$maxw" <<'EOF' || fail "json: throttled field wrong: $(head -c 600 j.json)"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["throttled"]
assert len(t) == 1 and t[0]["source"] == "cpu-time@50us", t
assert t[0]["threads"] >= 1 and t[0]["max_multiple"] == int(sys.argv[2]), t
assert d["metric"] == "periods", d["metric"]
EOF
pass "json: throttled $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["throttled"])' j.json)"
# pprof: the default sample type (what go tool pprof -top shows)
if command -v go >/dev/null 2>&1; then
	"$SONDE" report --format pprof -o p.pb.gz p >/dev/null || fail "pprof export failed"
	go tool pprof -top -cum p.pb.gz >top.txt 2>top.err || fail "go tool pprof: $(cat top.err)"
	pp=$(awk '$NF == "heavy_work" { h = $4 } $NF == "light_work" { l = $4 }
		END { if (h + l == 0) print "0"; else printf "%.2f\n", 100 * h / (h + l) }' top.txt)
	within "$pp" "$want" 3 || fail "pprof default sample type: heavy_work $pp %, it took $want %: $(head -n 12 top.txt)"
	pass "pprof default sample type ($(grep -o 'Type: [a-z]*' top.txt)): heavy_work $pp %"
else
	echo "note: go not installed: pprof's default sample type not checked"
fi

# ---- 2. two sources, two clocks ----------------------------------------------
rm -rf q
SONDE_SAMPLE=cpu-time@1ms,wall-time@10ms WL_CPU=1 profile q "$B/tests/bin/lifecycle" wall || fail "wall: exit $?"
read -r user_ms cpu_ms < <(cpu_of q.out spin_work)
srcsum() { "$SONDE" report --source "$1" --metric time --format csv q 2>/dev/null |
	awk -F, 'NR > 1 { s += $2 } END { printf "%.3f\n", s }'; }
cpu_total=$(srcsum cpu-time) wall_total=$(srcsum wall-time)
all=$("$SONDE" report --metric time --format csv q 2>/dev/null | awk -F, 'NR > 1 { s += $2 } END { printf "%.3f\n", s }')
within "$all" "$cpu_total" 0.01 ||
	fail "--metric time: total $all ms, cpu-time alone $cpu_total ms, wall-time $wall_total ms (two clocks added?)"
pass "--metric time: total $all ms = cpu-time's (wall-time alone: $wall_total ms)"
spin=$("$SONDE" report --metric time --format csv q 2>/dev/null | awk -F, '$1 == "spin_work" { print $4 }')
awk -v s="${spin:-0}" -v u="$user_ms" -v c="$cpu_ms" 'BEGIN { exit !(s >= 0.9 * u && s <= 1.1 * c) }' ||
	fail "--metric time: spin_work ${spin:-0} ms for $user_ms ms user / $cpu_ms ms CPU"
pass "--metric time: spin_work $spin ms for $user_ms ms user / $cpu_ms ms CPU"
"$SONDE" report --metric time q >t2.out 2>&1 || fail "report failed"
grep -q 'showing source cpu-time' t2.out || fail "the report does not say which source it shows: $(head -n 12 t2.out)"
pass "$(grep 'showing source' t2.out)"
# every view's default total is one source's
n_cpu=$("$SONDE" report --source cpu-time --format folded q | awk '{ s += $NF } END { print s + 0 }')
for v in "--format folded" "--view tree --format folded"; do
	n=$("$SONDE" report $v q 2>/dev/null | awk '{ s += $NF } END { print s + 0 }')
	[ "$n" = "$n_cpu" ] || fail "$v: total $n, cpu-time alone $n_cpu"
done
n=$("$SONDE" report --group-by source --format csv q 2>/dev/null | awk -F, 'NR > 1 { s += $2; k++ } END { print s + 0, k + 0 }')
[ "$n" = "$n_cpu 1" ] || fail "--group-by source: $n (total, rows), cpu-time alone $n_cpu"
n=$("$SONDE" report --view threads --format csv q 2>/dev/null | awk -F, 'NR > 1 { s += $5 } END { print s + 0 }')
[ "$n" = "$n_cpu" ] || fail "--view threads: $n periods, cpu-time alone $n_cpu"
pass "folded, tree, group-by source, threads: $n_cpu, cpu-time's total"
# --source wall-time still shows wall-time; --view sources lists both
n_wall=$("$SONDE" report --source wall-time --format folded q | awk '{ s += $NF } END { print s + 0 }')
[ "$n_wall" -gt 0 ] || fail "--source wall-time: no samples"
"$SONDE" report --view sources --format csv q | grep -q '^wall-time,' || fail "--view sources lost wall-time"
pass "--source wall-time: $n_wall; --view sources lists both"
