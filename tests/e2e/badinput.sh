# Bad configuration never changes what the program does: one line naming the
# bad value and what is accepted, then the program runs to completion with
# its own output and exit status (profiled where possible).
. "$(dirname "$0")/lib.sh"
L="$B/tests/bin/lifecycle"
# the program's own account of its CPU time ("cpu ..." lines, WL_CPU=1) is
# left out of the comparisons: it differs from run to run
export WL_CPU=1
"$L" spin 0.05 >plain.all 2>plain.err; plain_st=$?
grep -v '^cpu ' plain.all >plain.out
[ $plain_st -eq 0 ] || fail "plain run exited $plain_st"

# expect NAME STATUS_WANT STDERR_WANT env...: run the program with the
# environment, compare stdout with the plain run, status, and stderr exactly.
expect() {
	local name=$1 want_err=$2; shift 2
	env LD_PRELOAD="$LIB" SONDE_OUTPUT="$T/$name" "$@" "$L" spin 0.05 >"$name.out" 2>"$name.err"
	local st=$?
	[ $st -eq $plain_st ] || fail "$name: status $st, expected $plain_st"
	grep -v '^cpu ' "$name.out" | cmp -s plain.out - || fail "$name: stdout changed: $(cat "$name.out")"
	printf '%s\n' "$want_err" >"$name.want"
	cmp -s "$name.want" "$name.err" || fail "$name: stderr was
$(cat "$name.err")
expected
$want_err"
	pass "$name"
}

expect unknown-source \
"sonde: SONDE_SAMPLE: 'cpu-tme@1ms': unknown sampling source (use cpu-time@PERIOD, wall-time@PERIOD or a PAPI event NAME@COUNT; see 'sonde events')
sonde: SONDE_SAMPLE: no valid source left (sampling with cpu-time@1ms)" SONDE_SAMPLE=cpu-tme@1ms
read -r user_ms cpu_ms < <(cpu_of unknown-source.out spin_work)
expect_samples "unknown-source: spin_work under the default source" \
	"$("$SONDE" report --format csv unknown-source | awk -F, '$1 == "spin_work" {print $4}')" "$user_ms" "$cpu_ms" 0.15

expect bad-period \
"sonde: SONDE_SAMPLE: 'cpu-time@fast': unparseable period (use a period like 1ms, 250us, 100000ns, 1s or 1000hz, from 10us to 60s)" \
	SONDE_SAMPLE=cpu-time@fast,wall-time@5ms
grep -q '"name":"wall-time"' <("$SONDE" dump bad-period/*.sonde | head -n 1) ||
	fail "bad-period: the valid token was not kept"

expect zero-period \
"sonde: SONDE_SAMPLE: 'cpu-time@0ms': unparseable period (use a period like 1ms, 250us, 100000ns, 1s or 1000hz, from 10us to 60s)
sonde: SONDE_SAMPLE: no valid source left (sampling with cpu-time@1ms)" SONDE_SAMPLE=cpu-time@0ms

expect tiny-period \
"sonde: SONDE_SAMPLE: 'cpu-time@1ns': out-of-range period (use a period like 1ms, 250us, 100000ns, 1s or 1000hz, from 10us to 60s)
sonde: SONDE_SAMPLE: no valid source left (sampling with cpu-time@1ms)" SONDE_SAMPLE=cpu-time@1ns

expect bad-depth \
"sonde: SONDE_MAX_DEPTH: 'deep' is not an integer from 1 to 1024 (keeping 1024)" SONDE_MAX_DEPTH=deep

expect bad-unwind \
"sonde: SONDE_UNWIND: 'dwarf' is not an unwinder (use libunwind, fp or none; keeping libunwind)" SONDE_UNWIND=dwarf

# An output directory that cannot be created: the run goes on unprofiled.
touch not-a-dir
expect bad-output \
"sonde: SONDE_OUTPUT: cannot create directory 'not-a-dir/sub': Not a directory (set SONDE_OUTPUT to a writable directory; this run is not profiled)" \
	SONDE_OUTPUT=not-a-dir/sub
# (expect's own SONDE_OUTPUT is overridden by the later assignment in env)

env LD_PRELOAD="$LIB" SONDE_ENABLE=0 SONDE_OUTPUT=disabled "$L" spin 0.05 >disabled.out 2>disabled.err || fail "SONDE_ENABLE=0: status $?"
grep -v '^cpu ' disabled.out | cmp -s plain.out - && [ ! -s disabled.err ] || fail "SONDE_ENABLE=0: output changed"
[ -e disabled ] && fail "SONDE_ENABLE=0 still wrote a profile"

# sonde run: an unknown option, and a command that does not exist.
"$SONDE" run -x -- "$L" spin 0.01 >run.out 2>run.err; st=$?
[ $st -eq 2 ] || fail "run -x: status $st, expected 2"
grep -qx "sonde: run: unknown option '-x' (usage: sonde run \[-e SPEC\]... \[-F HZ\] \[-o DIR\] -- CMD \[ARGS\])" run.err ||
	fail "run -x: stderr $(cat run.err)"
[ -s run.out ] && fail "run -x: the command ran"
pass "sonde run -x"
"$SONDE" run -o r -- "$L" _exit >run2.out 2>run2.err; st=$?
[ $st -eq 5 ] || fail "sonde run: status $st, expected the command's 5"
grep -qx "sonde: profile written to r (sonde report r)" run2.err || fail "sonde run: stderr $(cat run2.err)"
pass "sonde run returns the command's status"
