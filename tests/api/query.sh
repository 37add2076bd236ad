# The query API (include/sonde.h: sonde_query, sonde_profile_top, sonde_flush)
# from a program that measures the same regions itself (tests/api/query.c):
#   plain run (no sonde): every query SONDE_UNAVAILABLE, the program unchanged;
#   preloaded, regions off: region queries unavailable, the profile and the
#     flush work;
#   preloaded, SONDE_REGIONS=on: calls exact (20 in the thread, 30 in the
#     process), total, mean and stddev of the inclusive time within 1 % of the
#     program's own clock (stddev within 5 % + 0.05 ms: a second moment), a
#     value never opened SONDE_NONE, an enclosing level by attribute, burn as
#     the top function, and a stream on disk after the flush, before exit.
# Usage: query.sh BUILD_DIR
set -u
B=$1
Q=$B/tests/bin/api_query
LIB=$B/libsonde.so
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
pass() { echo "ok: $*"; }
val() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }

"$Q" >plain.out 2>plain.err || fail "plain run: exit $?"
[ -s plain.err ] && fail "plain run: stderr: $(cat plain.err)"
for k in thread process never phase; do
	[ "$(val $k plain.out)" = unavailable ] || fail "plain: $k is '$(val $k plain.out)', expected unavailable"
done
grep -qx 'top unavailable' plain.out || fail "plain: $(grep top plain.out)"
[ "$(val flush plain.out)" = unavailable ] || fail "plain: flush $(val flush plain.out)"
pass "without sonde every query says unavailable"

LD_PRELOAD=$LIB SONDE_OUTPUT=off "$Q" >off.out 2>off.err || fail "regions off: exit $?"
[ "$(val thread off.out)" = unavailable ] || fail "regions off: thread query $(val thread off.out)"
read -r _ n name samples < <(grep '^top ' off.out)
[ "$n" -ge 1 ] && [ "$name" = burn ] || fail "regions off: top function: $(grep '^top ' off.out)"
[ "$(val flush off.out)" = ok ] && [ "$(val flushed_bytes off.out)" -gt 0 ] ||
	fail "regions off: flush $(val flush off.out), $(val flushed_bytes off.out) bytes on disk"
pass "regions off: region queries unavailable; top function $name ($samples samples); flush wrote $(val flushed_bytes off.out) bytes"

LD_PRELOAD=$LIB SONDE_OUTPUT=on SONDE_REGIONS=on "$Q" >on.out 2>on.err || fail "regions on: exit $?"
[ -s on.err ] && fail "regions on: stderr: $(cat on.err)"
[ "$(val thread on.out)" = ok ] && [ "$(val thread_calls on.out)" = 20 ] ||
	fail "thread scope: $(val thread on.out), $(val thread_calls on.out) calls (expected 20)"
[ "$(val process_calls on.out)" = 30 ] || fail "process scope: $(val process_calls on.out) calls (expected 30)"
[ "$(val never on.out)" = none ] || fail "a region never opened: $(val never on.out)"
[ "$(val phase_calls on.out)" = 1 ] || fail "phase=work in the thread: $(val phase_calls on.out) calls (expected 1)"
close() { # close A B REL ABS_NS: |A - B| <= REL * B + ABS_NS
	awk -v a="$1" -v b="$2" -v r="$3" -v s="$4" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= r * b + s) }'
}
for k in total mean; do
	close "$(val thread_${k}_ns on.out)" "$(val own_${k}_ns on.out)" 0.01 0 ||
		fail "thread $k: sonde $(val thread_${k}_ns on.out) ns, the program $(val own_${k}_ns on.out) ns"
done
close "$(val thread_stddev_ns on.out)" "$(val own_stddev_ns on.out)" 0.05 50000 ||
	fail "thread stddev: sonde $(val thread_stddev_ns on.out) ns, the program $(val own_stddev_ns on.out) ns"
read -r _ n name samples < <(grep '^top ' on.out)
[ "$name" = burn ] || fail "regions on: top function: $(grep '^top ' on.out)"
[ "$(val flushed_bytes on.out)" -gt 0 ] || fail "regions on: nothing on disk after the flush"
pass "regions on: 20 calls in the thread, 30 in the process; total $(val thread_total_ns on.out) ns against $(val own_total_ns on.out), stddev $(val thread_stddev_ns on.out) against $(val own_stddev_ns on.out); top $name"

# Fortran (module sonde): the same query through include/sonde.f90.
if [ -x "$B/tests/bin/api_f" ]; then
	LD_PRELOAD=$LIB SONDE_OUTPUT=f SONDE_REGIONS=on "$B/tests/bin/api_f" 4 >f.out 2>f.err || fail "api_f: exit $?"
	grep -qx 'query: solve 4 calls' f.out || fail "api_f with regions on: $(tail -n 1 f.out)"
	pass "Fortran: sonde_query_region(\"solve\") = 4 calls in 4 iterations"
else
	echo "note: no api_f (no Fortran compiler): the Fortran query is not checked"
fi
