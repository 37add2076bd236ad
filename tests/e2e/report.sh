# The report on real recorded streams: a function reached through three
# callers (work, from solve/exchange/checkpoint at 70/20/10 %) is attributed to
# each path; `sonde diff` of two runs where one phase was made twice as slow
# puts that phase at the top with the ratio of the CPU time the two runs say
# that phase took (within 10 %); --jobs gives the same report as one job.
. "$(dirname "$0")/lib.sh"
P="$B/tests/bin/phases"
WL_CPU=1 profile a "$P" -i 8 -u 3 -I || fail "run a: exit $?"
"$SONDE" report --view callers work --format csv a >callers.csv || fail "callers view failed"
for pair in solve:70 exchange:20 checkpoint:10; do
	fn=${pair%:*} want=${pair#*:}
	got=$(awk -F, -v f="$fn" '$1 == f {print $3}' callers.csv)
	within "${got:-0}" "$want" 3 || fail "callers of work: $fn ${got:-?} %, expected $want ± 3: $(tr '\n' ' ' <callers.csv)"
done
pass "callers of work: solve/exchange/checkpoint $(awk -F, 'NR > 1 {printf "%s ", $3}' callers.csv)%"

WL_CPU=1 profile b "$P" -i 8 -u 3 -I -S 2 || fail "run b: exit $?"
"$SONDE" diff --group-by phase --absolute --format csv a b >diff.csv || fail "diff failed"
top=$(awk -F, 'NR == 2 {print $1}' diff.csv)
ratio=$(awk -F, 'NR == 2 {print $NF}' diff.csv)
[ "$top" = solve ] || fail "diff: top row is '$top', expected solve: $(tr '\n' ' ' <diff.csv)"
read -r ua ca < <(cpu_of a.out phase=solve)
read -r ub cb < <(cpu_of b.out phase=solve)
want=$(awk -v a="$ca" -v b="$cb" 'BEGIN { printf "%.3f", b / a }')
within "$ratio" "$want" "$(awk -v w="$want" 'BEGIN { print 0.1 * w }')" ||
	fail "diff: solve ratio $ratio, expected $want ± 10 % (solve took $ca ms CPU in a, $cb ms in b)"
pass "diff: solve at the top, ratio $ratio (CPU: $ca ms and $cb ms, ratio $want)"

"$SONDE" report --jobs 1 --format csv a b >j1.csv && "$SONDE" report --jobs 2 --format csv a b >j2.csv ||
	fail "report --jobs failed"
cmp -s j1.csv j2.csv || fail "--jobs 2 gives another report than --jobs 1"
pass "--jobs 2 gives the same report as --jobs 1"

# rank and host keys from the stream headers.
PMI_RANK=0 WL_CPU=1 profile r0 "$B/tests/bin/lifecycle" spin 0.05 || fail "rank 0 run"
PMI_RANK=1 WL_CPU=1 profile r1 "$B/tests/bin/lifecycle" spin 0.1 || fail "rank 1 run"
"$SONDE" report --group-by rank,host --format csv r0 r1 >rank.csv || fail "group-by rank,host failed"
[ "$(awk -F, 'NR > 1 {print $1}' rank.csv | sort | tr '\n' ' ')" = "0 1 " ] || fail "ranks: $(tr '\n' ' ' <rank.csv)"
[ "$(awk -F, 'NR > 1 {print $2}' rank.csv | sort -u)" = "$(hostname)" ] || fail "host: $(tr '\n' ' ' <rank.csv)"
n0=$(awk -F, '$1 == 0 {print $3}' rank.csv) n1=$(awk -F, '$1 == 1 {print $3}' rank.csv)
# each rank's samples follow the CPU time its program used (spin_work is
# nearly all of it; 15 %: these are short runs, tens of samples)
read -r u0 c0 < <(cpu_of r0.out spin_work)
read -r u1 c1 < <(cpu_of r1.out spin_work)
expect_samples "rank 0" "$n0" "$u0" "$c0" 0.15
expect_samples "rank 1" "$n1" "$u1" "$c1" 0.15
pass "group-by rank,host: ranks 0 and 1 on $(hostname), $n0 and $n1 samples for $c0 and $c1 ms of CPU"

# vDSO frames are named from the analyzer's own vDSO when the build-ids match (the
# same kernel): a program that spends its time in clock_gettime shows
# "[vdso] __vdso_clock_gettime" (or the kernel's name of it), no [vdso]+0x... frames.
profile vd "$B/tests/bin/vdsoloop" 0.3 || fail "vdsoloop: exit $?"
"$SONDE" report --format csv vd >vd.csv 2>vd.err || fail "vdso report: $(cat vd.err)"
grep -q '^\[vdso\]+0x' vd.csv && fail "unnamed vDSO frames: $(grep '^\[vdso\]' vd.csv | head -3)"
top=$(awk -F, 'NR == 2 {print $1}' vd.csv)
case $top in
"[vdso] "*clock_gettime*) ;;
*) fail "vdso: the top function is '$top', not the vDSO's clock_gettime: $(head -4 vd.csv)" ;;
esac
# the vDSO's symbol cache serves the next report: it is not rewritten
SONDE_CACHE=$PWD/vdcache "$SONDE" report --format csv vd >/dev/null 2>&1 || fail "vdso: cold report"
ls -i vdcache | sort >vd.inodes1
SONDE_CACHE=$PWD/vdcache "$SONDE" report --format csv vd >vd2.csv 2>&1 || fail "vdso: warm report"
ls -i vdcache | sort >vd.inodes2
cmp -s vd.inodes1 vd.inodes2 || fail "the warm report rewrote the vDSO's symbol cache: $(diff vd.inodes1 vd.inodes2)"
pass "vDSO frames named: $top has $(awk -F, 'NR == 2 {print $3}' vd.csv) % of the samples; its symbol cache is reused"
