# example.adapt: the adaptive example picks the implementation sonde measured
# faster. With one made clearly slower (-s NAME: 4 times its work) it keeps the
# other, both ways; without sonde it says it has no measurement; the checksum
# is the same in every run. Usage: adapt_test.sh BUILD_DIR
set -u
B=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
want=$("$B/adapt" -n 384 | tail -n 1)
"$B/adapt" -n 384 | grep -q '^adapt: no measurement' || fail "without sonde: $("$B/adapt" -n 384 | head -n 1)"
for slow in rows blocks; do
	other=$([ $slow = rows ] && echo blocks || echo rows)
	out=$(SONDE_REGIONS=on SONDE_OUTPUT="$T/$slow" LD_PRELOAD="$B/libsonde.so" "$B/adapt" -n 384 -s $slow) ||
		fail "-s $slow: exit $?"
	echo "$out" | head -n 1
	echo "$out" | head -n 1 | grep -q ": keeping $other\$" || fail "-s $slow: $(echo "$out" | head -n 1)"
	[ "$(echo "$out" | tail -n 1)" = "$want" ] || fail "-s $slow: checksum $(echo "$out" | tail -n 1), expected $want"
done
echo "ok: the slowed implementation is dropped both ways; without sonde: no measurement"
