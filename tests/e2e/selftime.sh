# sonde's own time is shown as its own (issue 18 item 7): the thread's clock
# counts the signal handler's time as the program's, and the next sample lands
# in the program's code. Now, each time the handlers of a thread have used the
# time one sample stands for, that sample is charged to [sonde] (alone, at the
# root of its path) instead: the program's functions stand for the program's
# time. Before, [sonde] did not exist and the handler's time was spread over
# the program's functions.
#
# Ground truth where perf works: perf record -e task-clock:u on the same run;
# its user-mode samples in sonde's handler code (libsonde.so, libunwind, the
# vDSO clock reads, libc) are a share of all its user-mode samples that
# [sonde]'s share of sonde's time must match within a factor of 4: both are
# counts of a few dozen samples (the noise of each is 15-20 %), perf's libc
# share also holds the program's own libc calls, and sonde measures its
# handler's elapsed time, system calls included (rt_sigpending at short
# periods), capped (docs/ENV.md): 0.48-0.76 % for perf's 0.32-0.45 % here.
# perf samples every 99991 ns of user time, not 100000: on the same clock as
# sonde's 100 us it kept one phase against sonde's handler for the whole run,
# so its share swung with that phase (0.08 to 0.79 % between runs, failing
# either way); off by 9 ns a period the phases drift and the two agree
# (0.42/0.41, 0.63/0.61, 0.70/0.71 %).
. "$(dirname "$0")/lib.sh"
W="$B/tests/bin/wl_split"
use_perf=0
if command -v perf >/dev/null 2>&1 &&
	perf record -q -e task-clock:u -c 100000 -o probe.perf -- true >/dev/null 2>&1; then
	use_perf=1
fi
run() {
	if [ $use_perf = 1 ]; then
		perf record -q -e task-clock:u -c 99991 -o w.perf -- \
			env LD_PRELOAD="$LIB" SONDE_OUTPUT=p SONDE_SAMPLE=cpu-time@100us "$W" 1.0 \
			>p.out 2>p.err || fail "perf record + sonde: exit $?: $(tail -3 p.err)"
	else
		SONDE_SAMPLE=cpu-time@100us profile p "$W" 1.0 || fail "wl_split: exit $?: $(tail -3 p.err)"
	fi
}
# measure: one run, its [sonde] share into s (and perf's into p)
measure() {
	rm -rf p
	run
	"$SONDE" report --metric time --format csv p >flat.csv 2>flat.err || fail "report: $(cat flat.err)"
	"$SONDE" report --format folded p >f.txt 2>/dev/null || fail "report folded"
	grep -q '^\[sonde\] [0-9]*$' f.txt || fail "no [sonde] path at the root: $(grep sonde f.txt | head -3)"
	grep -q ';\[sonde\]' f.txt && fail "[sonde] under a stack: $(grep ';\[sonde\]' f.txt | head -3)"
	s=$(awk -F, '$1 == "[sonde]" { print $3 }' flat.csv)
	[ -n "$s" ] || fail "no [sonde] row: $(head -5 flat.csv)"
	p=
	[ $use_perf = 1 ] && p=$(perf report -i w.perf --stdio --sort dso 2>/dev/null |
		awk '$2 ~ /^(libsonde\.so|libunwind.*|\[vdso\]|libc\.so.*)$/ { sub("%", "", $1); s += $1 } END { printf "%.2f", s }')
}
agree() { awk -v s="$1" -v p="$2" 'BEGIN { exit !(p > 0 && s >= p / 4 && s <= p * 4) }'; }
measure
msg="[sonde] ${s} % of the sampled time at cpu-time@100us"
if [ $use_perf = 1 ]; then
	# perf's share of a few dozen samples swings (0.12 to 1.33 % seen here for sonde's
	# 0.55-0.97 %): a run outside the band is measured again and the two runs' shares
	# are judged together (twice the samples)
	if ! agree "$s" "$p"; then
		s1=$s p1=$p
		measure
		s=$(awk -v a="$s1" -v b="$s" 'BEGIN { printf "%.2f", (a + b) / 2 }')
		p=$(awk -v a="$p1" -v b="$p" 'BEGIN { printf "%.2f", (a + b) / 2 }')
		msg="[sonde] ${s} % of the sampled time at cpu-time@100us (two runs: ${s1} % with perf's ${p1} %, then another)"
	fi
	agree "$s" "$p" ||
		fail "[sonde] ${s} % of sonde's samples; perf's user-mode samples in sonde's handler code: ${p} %"
	msg="$msg; perf: ${p} % of user-mode samples in libsonde, libunwind, vdso and libc"
fi
pass "$msg"
