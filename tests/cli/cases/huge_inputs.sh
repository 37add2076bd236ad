# analyze.cli.huge_inputs: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# Regular files that are huge or garbage: a clear line and bounded memory (peak RSS
	# from /usr/bin/time; a memory bound, not a timing one). The reader goes through a
	# window and refuses records past 16 MiB or 2^20 values (docs/FORMAT.md, "Size").
	[ -x /usr/bin/time ] || { echo "SKIP: no /usr/bin/time (GNU time) to measure peak RSS"; exit 77; }
	LIM=(prlimit --as=$((1 << 30)))
	"${LIM[@]}" "$SONDE" --help >/dev/null 2>&1 ||
		{ echo "note: sonde does not start under prlimit --as (sanitizer build): no limit"; LIM=(); }
	MAXKB=$((200 * 1024))
	# rss CMD...: run under the limits; $rc, $T/out, $T/err; fails above MAXKB
	rss() {
		timeout 120 /usr/bin/time -f %M -o rss.txt "${LIM[@]}" "$SONDE" "$@" >"$T/out" 2>"$T/err"
		rc=$?
		[ "$rc" -ne 124 ] || fail "hung: sonde $*"
		kb=$(tail -n 1 rss.txt)
		echo "sonde $*: exit $rc, peak RSS $kb kB"
		[ "$kb" -lt "$MAXKB" ] || fail "sonde $*: peak RSS $kb kB, above $MAXKB kB"
	}
	mk flat a.sonde
	size=$(stat -c %s a.sonde)
	truncate -s 50G sparse.sonde
	# a valid stream, then 50 GB of zeros: the first zero is not a record
	cp a.sonde zeros.sonde && truncate -s 50G zeros.sonde
	# a valid stream, then a str32 that says it is 4 GiB long (the file holds 50 GB)
	cp a.sonde longrec.sonde && printf '\x91\xdb\xff\xff\xff\xff' >>longrec.sonde && truncate -s 50G longrec.sonde
	# a valid stream, then an array32 of 2^32 - 1 elements
	cp a.sonde manyvals.sonde && printf '\xdd\xff\xff\xff\xff' >>manyvals.sonde && truncate -s 50G manyvals.sonde
	# 64 MiB of (seeded) random bytes, alone and after a valid stream
	python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(9).randbytes(64 << 20))' >rand.sonde
	cat a.sonde rand.sonde >tailrand.sonde
	for cmd in report dump; do
		rss "$cmd" sparse.sonde
		expect_rc 4 "$cmd sparse"
		expect_err_line "sonde: sparse.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)"
		rss "$cmd" rand.sonde
		expect_rc 4 "$cmd random"
		expect_err_line "sonde: rand.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)"
		rss "$cmd" zeros.sonde
		expect_rc 4 "$cmd zeros"
		expect_err_line "sonde: zeros.sonde: corrupt record at byte $size (not an array starting with a record kind)"
		rss "$cmd" longrec.sonde
		expect_rc 4 "$cmd long record"
		expect_err_line "sonde: longrec.sonde: corrupt record at byte $size (a record longer than 16 MiB: the reader's limit, docs/FORMAT.md)"
		rss "$cmd" manyvals.sonde
		expect_rc 4 "$cmd many values"
		expect_err_line "sonde: manyvals.sonde: corrupt record at byte $size (a record declares more than 1048576 values: the reader's limit, docs/FORMAT.md)"
		# random bytes after good records: whatever they decode to, one line names the
		# file, and the process neither crashes nor grows
		rss "$cmd" tailrand.sonde
		[ "$rc" -eq 0 ] || [ "$rc" -eq 4 ] || fail "$cmd random tail: exit $rc"
		grep -q "^sonde: tailrand.sonde: " "$T/err" || { cat "$T/err" >&2; fail "$cmd random tail: no message"; }
	done
	rss diff sparse.sonde a.sonde
	expect_rc 4 "diff sparse"
	expect_err_line "sonde: sparse.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)"
	# the limits are not what refuses: records up to them are read. A stream with a 3 MiB
	# NOTE (longer than the 1 MiB window) and a NOTE of exactly 2^20 values (one with an
	# extra array; the array itself counts, then each element) loads
	python3 - a.sonde <<'PY' >near.sonde
import struct, sys
data = open(sys.argv[1], 'rb').read()
note = b'\x93\x0a\x00\xdb' + struct.pack('>I', 3 << 20) + b'n' * (3 << 20)
# [10, 0, "x", [0] * (2^20 - 5)]: the record, its 4 elements, 2^20 - 5 more
n = (1 << 20) - 5
vals = b'\x94\x0a\x00\xa1x\xdd' + struct.pack('>I', n) + b'\x00' * n
sys.stdout.buffer.write(data + note + vals)
PY
	rss report near.sonde
	expect_rc 0 "records near the limits"
	grep -qx 'samples: 90 (100 periods)  streams: 1  processes: 1  threads: 2' "$T/out" || fail "near-limit stream reported"
