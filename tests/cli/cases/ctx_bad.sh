# analyze.cli.ctx_bad: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	for sc in "ctx_noattr:CONTEXT attribute is not defined" \
		  "ctx_parent:CONTEXT parent is not an earlier node" \
		  "ctx_skip:CONTEXT node id out of order" \
		  "ctx_value:CONTEXT value is not a string or a number"; do
		off=$("$MK" "${sc%%:*}" x.sonde) || fail "mkstream $sc"
		run "$SONDE" report --group-by phase x.sonde
		expect_rc 4 "${sc%%:*}"
		expect_err_line "sonde: x.sonde: corrupt record at byte $off (${sc#*:})"
	done
	# hostile: a SAMPLE naming undefined contexts is corrupt; an ATTRIBUTE id that
	# skips ahead is corrupt; a REGION field of the wrong type is corrupt; a deep
	# context chain and many unended begins stay bounded and fast
	python3 - <<'EOF' || fail "python"
import struct
def u(v):
    if v < 128: return bytes([v])
    return b"\xcf" + struct.pack(">Q", v)
def s(x): x = x.encode(); return bytes([0xa0 | len(x)]) + x
def arr(*els): return bytes([0x90 | len(els)]) + b"".join(els)
hdr = arr(u(1), s("sonde"), u(1), b"\x82" + s("pid") + u(7) + s("sources") + arr(b"\x81" + s("name") + s("cpu-time")))
base = hdr + arr(u(4), u(1), u(7), u(0), s("main")) + arr(u(11), u(1), s("phase"), s("string"), s("thread"))
open("undef.sonde", "wb").write(base + arr(u(7), u(1), u(1), u(0), u(0), u(1), u(0), u(2**63), u(99)))
open("attrskip.sonde", "wb").write(base + arr(u(11), u(5), s("x"), s("int"), s("thread")))
open("regtype.sonde", "wb").write(base + arr(u(13), u(1), s("t"), u(1), u(1)))
deep = base + b"".join(arr(u(12), u(i), u(i - 1), u(1), s("v%d" % (i % 7))) for i in range(1, 3001))
deep += arr(u(7), u(1), u(1), u(0), u(0), u(1), u(0), u(3000), u(0))
deep += b"".join(arr(u(13), u(1), u(i), u(1 + i % 3000), u(1)) for i in range(20000))
open("deep.sonde", "wb").write(deep)
EOF
	run "$SONDE" report --group-by phase --format csv undef.sonde
	expect_rc 4 "undefined contexts"
	grep -q '(SAMPLE names a CONTEXT node that no CONTEXT record defined before it)' "$T/err" ||
		fail "undefined context message"
	run "$SONDE" report attrskip.sonde
	expect_rc 4 "attribute id skip"
	grep -q '(ATTRIBUTE id out of order)' "$T/err" || fail "attribute skip message"
	run "$SONDE" report regtype.sonde
	expect_rc 4 "REGION field type"
	grep -q '(REGION t is not an unsigned integer)' "$T/err" || fail "region type message"
	run "$SONDE" report --group-by phase --format csv deep.sonde
	expect_rc 0 "deep context"
	[ "$(sed -n 2p "$T/out")" = "v4,1,100.00" ] || fail "deep context value: $(cat "$T/out")"
	run "$SONDE" report --view regions --format csv --top 1 deep.sonde
	expect_rc 0 "many open regions"
	[ "$(wc -l <"$T/out")" -eq 2 ] || fail "regions of deep stream"
	run "$SONDE" report --view tree --format folded deep.sonde
	expect_rc 0 "deep tree"
