# Short-lived threads are sampled from their first period (issue 18, item 1):
# tests/fixtures/programs/shortthreads.c, whose ground truth is each thread's exact CPU
# clock (CLOCK_THREAD_CPUTIME_ID) and the process's getrusage.
#   serial N MS: N threads of MS ms of CPU each, one after the other, then the
#     same work in main: short_work's share of the samples within 3 points of
#     its share of the CPU (before: 13.7 % for 50 %, a thread's first period
#     went unsampled).
#   together N MS: N threads alive at once: every thread is counted once (601
#     threads, not 1088 with some taken for raw clones), none is left
#     unsampled, and the samples stand for at least 97 % of the process's user
#     time (getrusage's tick-based split, so within three of its standard
#     errors).
. "$(dirname "$0")/lib.sh"
P="$B/tests/bin/shortthreads"

# share LEAF DIR: percent of all samples with LEAF on the stack (total%).
total_pct() {
	"$SONDE" report --format csv "$2" 2>/dev/null | awk -F, -v f="$1" '$1 == f { print $5 }'
}

for spec in "serial 300 2" "serial 60 10"; do
	set -- $spec
	d="s$2x$3"
	profile "$d" "$P" "$@" || fail "$spec: exited $?: $(head -c 400 "$d.err")"
	tw=$(awk '$1 == "cpu" && $2 == "short_work" { print $4 / 1e6 }' "$d.out")
	mw=$(awk '$1 == "cpu" && $2 == "main_work" { print $4 / 1e6 }' "$d.out")
	[ -n "$tw" ] && [ -n "$mw" ] || fail "$spec: no CPU lines: $(cat "$d.out")"
	truth=$(awk -v a="$tw" -v b="$mw" 'BEGIN { printf "%.2f", 100 * a / (a + b) }')
	got=$(total_pct short_work "$d")
	gotm=$(total_pct main_work "$d")
	[ -n "$got" ] && [ -n "$gotm" ] || fail "$spec: short_work or main_work missing from the report"
	within "$got" "$truth" 3 ||
		fail "$spec: short_work has $got % of the samples, its threads used $truth % of the CPU (main_work $gotm %)"
	within "$gotm" "$(awk -v t="$truth" 'BEGIN { print 100 - t }')" 3 ||
		fail "$spec: main_work has $gotm % of the samples for $(awk -v t="$truth" 'BEGIN { print 100 - t }') % of the CPU"
	pass "$spec: short_work $got % (truth $truth %), main_work $gotm %"
done

for spec in "together 600 3.5" "together 1000 2"; do
	set -- $spec
	d="t$2x$3"
	profile "$d" "$P" "$@" || fail "$spec: exited $?: $(head -c 400 "$d.err")"
	grep -q 'raw clone' "$d.err" && fail "$spec: threads taken for raw clones: $(grep -m1 'raw clone' "$d.err")"
	n=$("$SONDE" report --view threads --format csv "$d" 2>/dev/null | tail -n +2 | grep -c .)
	[ "$n" = $(($2 + 1)) ] || fail "$spec: $n threads in the profile, the program ran $(($2 + 1))"
	"$SONDE" report --view coverage --format csv "$d" 2>/dev/null >cov.csv
	# the workers (the main thread mostly makes threads: its user time is a
	# tick or two of the kernel's estimate, and it may have no sample)
	ns=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "not_sampled_ms") c = i; next }
		$2 != "" && $1 != $2 && $c > 0 { n++ } END { print n + 0 }' cov.csv)
	# (a rare worker, about 1 in 5000, still ends with no sample on this VM and
	# nothing said: issue 18 stays open for it; more than 1 in 200 fails)
	[ $((ns * 200)) -le "$2" ] || fail "$spec: $ns threads with CPU time not sampled: $(awk -F, '$2 != "" && $1 != $2' cov.csv | head -3)"
	samples=$("$SONDE" report --metric time --format csv "$d" 2>/dev/null | awk -F, '$1 == "short_work" { printf "%d", $4 }')
	read -r user sys < <(awk '$1 == "rusage" { print $3 / 1e6, $5 / 1e6 }' "$d.out")
	# getrusage's split: ticks of 4 ms (250 Hz) or less; its standard error in ms
	awk -v s="$samples" -v u="$user" -v k="$sys" 'BEGIN {
		n = (u + k) / 4; p = k / (u + k); se = 4 * sqrt(n * p * (1 - p));
		exit !(s >= 0.97 * u - 3 * se) }' ||
		fail "$spec: samples stand for $samples ms, the process's user time was $user ms (sys $sys ms)"
	pass "$spec: $n threads, $ns unsampled, samples $samples ms for $user ms of user time (sys $sys ms)"
done
