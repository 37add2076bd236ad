#!/bin/bash
# relplug.sh - a plugin dlopen()ed by a relative path ("./libplug.so", from the
# directory the program runs in) is symbolized: the stream names the module
# "./libplug.so" and its HEADER `cwd` says where that was, so the report names
# plug_leaf (not libplug.so+0x...) for the ~280 ms the program spends in it.
# A stream without `cwd` (a runtime that does not record it yet) must say so in
# one line and show libplug.so+0x... frames; the test then skips.
. "$(dirname "$0")/lib.sh"
[ -x "$B/tests/bin/dlrel" ] && [ -f "$B/tests/bin/libplug.so" ] || fail "dlrel or libplug.so not built"
mkdir -p "$T/plugdir" && cp "$B/tests/bin/libplug.so" "$T/plugdir/" || fail "copy libplug.so"
(cd "$T/plugdir" && LD_PRELOAD="$LIB" SONDE_OUTPUT="$T/p" \
	ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0:detect_leaks=0} "$B/tests/bin/dlrel" ./libplug.so 10000 \
	>"$T/p.out" 2>"$T/p.err") || fail "dlrel: $(cat "$T/p.out" "$T/p.err")"
grep -q '^plug ' "$T/p.out" || fail "dlrel printed: $(cat "$T/p.out")"
f=$(ls "$T"/p/*.sonde | head -n 1)
valid_stream "$f"
grep '"kind":"MODULE"' "$T/dump.json" | grep -q '"path":"./libplug.so"' ||
	fail "no MODULE ./libplug.so in the stream"
export SONDE_CACHE="$T/cache"
"$SONDE" report --format folded "$T/p" >"$T/r.folded" 2>"$T/r.err" || fail "report: $(cat "$T/r.err")"
total=$(awk '{s += $NF} END {print s + 0}' "$T/r.folded")
[ "$total" -ge 100 ] || fail "only $total samples"
if ! head -n 1 "$T/dump.json" | grep -q '"cwd":"'; then
	grep -qxF "sonde: ./libplug.so: relative module path and no working directory in the stream (the runtime that wrote it did not record \`cwd\`; showing libplug.so+0xADDR)" "$T/r.err" ||
		fail "no warning about the relative path: $(cat "$T/r.err")"
	grep -q ';libplug.so+0x[0-9a-f]* [0-9]*$' "$T/r.folded" || fail "no libplug.so+0x frames"
	skip "the HEADER has no cwd (the runtime does not record it yet): warning checked"
fi
grep -q 'libplug' "$T/r.err" && fail "warned about libplug.so: $(cat "$T/r.err")"
grep -q 'libplug.so+0x' "$T/r.folded" && fail "libplug.so frames not symbolized: $(grep libplug "$T/r.folded" | head -n 3)"
# the program's time is nearly all in the plugin: at least half of the samples
plug=$(awk '$1 ~ /;plug_work;plug_leaf$/ || $1 ~ /;plug_work;plug_leaf;/ {s += $NF} END {print s + 0}' "$T/r.folded")
[ $((2 * plug)) -ge "$total" ] || fail "plug_leaf has $plug of $total samples: $(cat "$T/r.folded")"
pass "relative plugin path resolved against cwd: plug_leaf $plug of $total samples"
