#!/bin/bash
# Which files the symbolizer reads, and the symbol cache (docs/REPORT.md, "Symbols" and
# "Symbol cache"): hostile module paths (devices, a FIFO, /proc/self/mem, non-ELF files)
# are never read and the report ends at once; a relative module path is taken against
# HEADER cwd; a cache gives the same report as no cache, is never used for a changed
# file, survives corruption and concurrent reports, and lives only in a private
# directory.
# usage: test_symcache.sh CASE SONDE MKSTREAM LIBSONDE BINDIR
set -u
CASE=$1 SONDE=$2 MK=$3 LIB=$4 BIN=$5
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
unset XDG_CACHE_HOME
export SONDE_CACHE="$T/cache"

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }
skip() { echo "SKIP [$CASE]: $*" >&2; exit 77; }
# report ARGS...: sonde report under a time limit (a hang fails); stdout -> $T/out,
# stderr -> $T/err less the notes on the samples the streams dropped and on the source
# shown of the flat stream's two, status -> $rc
report() {
	timeout 60 "$SONDE" report "$@" >"$T/out" 2>"$T/err.all"
	rc=$?
	grep -vE '^sonde: warning: ([0-9]+ of [0-9]+ samples dropped|samples of sources with different periods)|^sonde: note: showing source ' "$T/err.all" >"$T/err"
}
expect_rc() { [ "$rc" -eq "$1" ] || { cat "$T/err" >&2; fail "exit status $rc, expected $1 ($2)"; }; }
expect_err_line() { grep -qxF -- "$1" "$T/err" || { cat "$T/err" >&2; fail "missing stderr line: $1"; }; }
expect_err_empty() { [ ! -s "$T/err" ] || { cat "$T/err" >&2; fail "unexpected stderr ($1)"; }; }
expect_same() { cmp -s "$1" "$2" || { diff "$1" "$2" | head -n 20 >&2; fail "$3"; }; }
mk() { "$MK" "$@" >/dev/null || fail "mkstream $*"; }
# the flat scenario's call paths (tests/cli/mkstream.c)
FLAT='mk_main;mk_alpha 20
mk_main;mk_alpha;mk_beta 50
mk_main;mk_gamma 20
mk_main;mk_recurse;mk_recurse;mk_beta 10'
# profile: sym_inline (DWARF, inlined frames) under the runtime into p/
profile() {
	env LD_PRELOAD="$LIB" ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 \
		SONDE_OUTPUT="$T/p" "$BIN/sym_inline" 0.3 >prog.out 2>prog.err ||
		fail "sym_inline failed: $(cat prog.err)"
	ls p/*.sonde >/dev/null 2>&1 || fail "no stream written by sym_inline"
}
mode() { stat -c %a "$1"; }

case $CASE in
sym_hostile_modules)
	# devices, /proc/self/mem, a FIFO nobody writes, a non-ELF file, a directory: each
	# one line, frames module+offset, and no read that could block
	mkfifo fifo || fail "mkfifo"
	echo "not an object file" >notelf
	mkdir adir
	mk modpaths h.sonde --module /dev/zero --module /proc/self/mem --module "$T/fifo" \
		--module "$T/notelf" --module /dev/tty --module "$T/adir" --module /dev/urandom
	report --format folded h.sonde
	expect_rc 0 "hostile modules"
	sort "$T/out" >got
	sort >want <<'EOF'
zero+0x1000 1
mem+0x1010 1
fifo+0x1020 1
notelf+0x1030 1
tty+0x1040 1
adir+0x1050 1
urandom+0x1060 1
EOF
	expect_same want got "frames of unreadable modules"
	expect_err_line "sonde: /dev/zero: not a regular file (cannot symbolize; showing zero+0xADDR)"
	expect_err_line "sonde: /proc/self/mem: a file of /proc or /sys, not an object file (cannot symbolize; showing mem+0xADDR)"
	expect_err_line "sonde: $T/fifo: not a regular file (cannot symbolize; showing fifo+0xADDR)"
	expect_err_line "sonde: $T/notelf: not an ELF file (cannot symbolize; showing notelf+0xADDR)"
	expect_err_line "sonde: $T/adir: not a regular file (cannot symbolize; showing adir+0xADDR)"
	expect_err_line "sonde: /dev/urandom: not a regular file (cannot symbolize; showing urandom+0xADDR)"
	[ "$(wc -l <"$T/err")" -eq 7 ] || { cat "$T/err" >&2; fail "not one line per module"; }
	# a FIFO with a writer that never writes: still not read
	sleep 30 >fifo &
	w=$!
	report --format folded h.sonde
	kill "$w" 2>/dev/null
	expect_rc 0 "FIFO with a writer"
	expect_err_line "sonde: $T/fifo: not a regular file (cannot symbolize; showing fifo+0xADDR)"
	;;
sym_relative)
	# libmkdup.so under a relative path: resolved against HEADER cwd, else one warning
	export SONDE_ARCHIVE=off # the fallback without the build-id archive (e2e.archive)
	dir=$(dirname "$BIN/libmkdup.so")
	mk modpaths rel.sonde --cwd "$dir" --dup-path ./libmkdup.so
	report --format folded rel.sonde
	expect_rc 0 "relative with cwd"
	expect_err_empty "relative with cwd"
	[ "$(cat "$T/out")" = "mk_alpha 3" ] || fail "relative path with cwd: $(cat "$T/out")"
	mk modpaths rel2.sonde --cwd "$(dirname "$dir")" --dup-path "$(basename "$dir")/libmkdup.so"
	report --format folded rel2.sonde
	[ "$(cat "$T/out")" = "mk_alpha 3" ] || fail "relative path with a directory: $(cat "$T/out")"
	mk modpaths norel.sonde --dup-path ./libmkdup.so
	report --format folded norel.sonde
	expect_rc 0 "relative without cwd"
	grep -qx 'libmkdup.so+0x[0-9a-f]* 3' "$T/out" || fail "no cwd: $(cat "$T/out")"
	expect_err_line "sonde: ./libmkdup.so: relative module path and no working directory in the stream (the runtime that wrote it did not record \`cwd\`; showing libmkdup.so+0xADDR)"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "more than one warning: $(cat "$T/err")"
	# cwd where the file is not: the ordinary missing-file line, with the full path
	mk modpaths gone.sonde --cwd /nonexistent --dup-path ./libmkdup.so
	report --format folded gone.sonde
	expect_err_line "sonde: /nonexistent/libmkdup.so: No such file or directory (cannot symbolize; showing libmkdup.so+0xADDR)"
	;;
symcache_warm)
	# cold (empty cache) and warm reports are the same, for every symbol option; the
	# warm one adds nothing to the cache (its file is not rewritten)
	profile
	mk flat a.sonde
	for opts in "" "--lines" "--no-inline" "--no-demangle" "--group-by line"; do
		rm -rf "$SONDE_CACHE"
		SONDE_CACHE=off "$SONDE" report --format csv $opts p a.sonde >nocache.csv 2>nocache.err ||
			fail "report without cache ($opts)"
		report --format csv $opts p a.sonde
		expect_rc 0 "cold ($opts)"
		expect_same nocache.csv "$T/out" "cold cache differs from no cache ($opts)"
		ls "$SONDE_CACHE"/*.sym >/dev/null 2>&1 || fail "no cache file written ($opts)"
		ls -i "$SONDE_CACHE" | sort >inodes.before
		report --format csv $opts p a.sonde
		expect_rc 0 "warm ($opts)"
		expect_same nocache.csv "$T/out" "warm cache differs from no cache ($opts)"
		expect_same nocache.err "$T/err.all" "warm cache: other messages ($opts)"
		ls -i "$SONDE_CACHE" | sort >inodes.after
		expect_same inodes.before inodes.after "the warm report rewrote the cache ($opts)"
	done
	# a cache made with --no-inline serves a report with inlined frames all the same
	rm -rf "$SONDE_CACHE"
	report --format folded --no-inline p
	report --format folded p
	SONDE_CACHE=off "$SONDE" report --format folded p >nocache.folded 2>/dev/null
	expect_same nocache.folded "$T/out" "cache made by --no-inline, report with inlining"
	grep -q ';sym_driver;sym_kernel [0-9]*$' "$T/out" || fail "no inlined frame"
	;;
symcache_changed)
	# a stream of a program at $T/bin/mk, cached; then the file changes under it
	export SONDE_ARCHIVE=off # the cache alone; the build-id archive: e2e.archive
	mkdir bin && cp "$MK" bin/mk || fail "copy mkstream"
	bin/mk flat a.sonde >/dev/null || fail "bin/mk flat"
	report --format folded a.sonde
	expect_rc 0 "cold"
	[ "$(cat "$T/out")" = "$FLAT" ] || fail "cold: $(cat "$T/out")"
	# rebuilt: another program at the same path (another build-id)
	cp "$BIN/sym_inline" bin/mk.new && mv bin/mk.new bin/mk
	report --format folded a.sonde
	expect_rc 0 "rebuilt"
	expect_err_line "sonde: $T/bin/mk: build-id differs from the profiled file (it was rebuilt or replaced since the run; showing mk+0xADDR)"
	grep -q '^mk+0x' "$T/out" && ! grep -q 'mk_' "$T/out" ||
		fail "served from the cache after a rebuild: $(cat "$T/out")"
	# stripped: same build-id, no symbols (and another size): not served either
	objcopy --strip-all "$MK" bin/mk || skip "no objcopy"
	report --format folded a.sonde
	expect_err_line "sonde: $T/bin/mk: no symbols (stripped?; showing mk+0xENTRY, each function by the entry of its unwind table's range)"
	grep -q 'mk_' "$T/out" && fail "stripped file served from the cache: $(cat "$T/out")"
	# the same file again, as a new inode: the build-id is read again, the cache serves
	cp "$MK" bin/mk.new && mv bin/mk.new bin/mk
	report --format folded a.sonde
	expect_rc 0 "restored"
	expect_err_empty "restored"
	[ "$(cat "$T/out")" = "$FLAT" ] || fail "restored: $(cat "$T/out")"
	# a cache entry for the stream's build-id never names a module of another one
	mk flat b.sonde --bad-build-id
	report --format folded b.sonde
	grep -q 'build-id differs' "$T/err" || fail "bad build-id: $(cat "$T/err")"
	;;
symcache_corrupt)
	# every kind of damage: the same report, one line, then the file is rewritten
	mk flat a.sonde
	report --format folded a.sonde
	[ "$(cat "$T/out")" = "$FLAT" ] || fail "cold: $(cat "$T/out")"
	f=$(ls "$SONDE_CACHE"/*.sym | head -n 1)
	name=$(basename "$f")
	cp "$f" good.sym
	size=$(stat -c %s good.sym)
	damage() { # how
		cp good.sym "$f"
		case $1 in
		truncate) truncate -s $((size / 2)) "$f" ;;
		short) truncate -s 20 "$f" ;;
		empty) : >"$f" ;;
		flip) printf '\xff' | dd of="$f" bs=1 seek=$((size - 9)) conv=notrunc status=none ;;
		magic) printf 'X' | dd of="$f" bs=1 seek=0 conv=notrunc status=none ;;
		grow) head -c 1000 /dev/urandom >>"$f" ;;
		random) head -c "$size" /dev/urandom >"$f" ;;
		esac
	}
	for how in truncate short empty flip magic grow random; do
		damage $how
		report --format folded a.sonde
		expect_rc 0 "$how"
		[ "$(cat "$T/out")" = "$FLAT" ] || fail "$how: $(cat "$T/out")"
		expect_err_line "sonde: $SONDE_CACHE/$name: not a valid symbol cache file (ignored; it will be rewritten)"
		[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$how: more than one line: $(cat "$T/err")"
		report --format folded a.sonde
		expect_err_empty "after $how: rewritten"
	done
	# a cache file of another format version (an older sonde's, a newer one's) is
	# replaced without a word: nothing is wrong with it (bytes 8..11: the version)
	for v in '\x01' '\x02' '\x63'; do
		damage none
		printf "$v" | dd of="$f" bs=1 seek=8 conv=notrunc status=none
		report --format folded a.sonde
		expect_rc 0 "version $v"
		[ "$(cat "$T/out")" = "$FLAT" ] || fail "version $v: $(cat "$T/out")"
		expect_err_empty "cache file of version $v"
		cmp -s "$f" good.sym || fail "version $v: the cache file was not rewritten"
	done
	# offsets out of bounds behind a valid checksum (what only the bounds checks catch)
	if command -v python3 >/dev/null; then
		for field in sym ninl addr; do
			python3 - "$f" "$field" <<'PY' || fail "python: forge $field"
import struct, sys
p, field = sys.argv[1], sys.argv[2]
b = bytearray(open(p, 'rb').read())
hdr = 8 + 4 * 4 + 64 + 8 * 3 + 8 * 4          # magic .. ctime_ns
nstr, nwords, nent = struct.unpack_from('<III', b, hdr)
sumoff = hdr + 16
spad = (nstr + 3) & ~3
w0 = sumoff + 8 + spad
if field == 'sym':
    struct.pack_into('<I', b, w0 + 8, 0x7fffffff)   # the first entry's name offset
elif field == 'ninl':
    struct.pack_into('<I', b, w0 + 24, 1000)        # its inlined-call count
else:
    struct.pack_into('<III', b, hdr, nstr, nwords, nent + 1)  # one more entry than there is
h = 0xcbf29ce484222325
for c in bytes(b[sumoff + 8:]):
    h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
struct.pack_into('<Q', b, sumoff, h)
open(p, 'wb').write(b)
PY
			report --format folded a.sonde
			expect_rc 0 "forged $field"
			[ "$(cat "$T/out")" = "$FLAT" ] || fail "forged $field: $(cat "$T/out")"
			expect_err_line "sonde: $SONDE_CACHE/$name: not a valid symbol cache file (ignored; it will be rewritten)"
		done
	fi
	# a cache file that is a symlink or a directory is not followed
	rm -f "$f" && ln -s "$T/good.sym" "$f"
	report --format folded a.sonde
	[ "$(cat "$T/out")" = "$FLAT" ] || fail "symlinked cache file: $(cat "$T/out")"
	[ -L "$f" ] && fail "symlinked cache file was kept"
	;;
symcache_dir)
	mk flat a.sonde
	# made 0700, files 0600
	report --format folded a.sonde
	expect_rc 0 "new dir"
	expect_err_empty "new dir"
	[ "$(mode "$SONDE_CACHE")" = 700 ] || fail "cache dir mode $(mode "$SONDE_CACHE")"
	for f in "$SONDE_CACHE"/* "$SONDE_CACHE"/build-id/*; do # build-id/: the archive
		[ "$(mode "$f")" = "$([ -d "$f" ] && echo 700 || echo 600)" ] || fail "$f mode $(mode "$f")"
	done
	# one open to others is made private
	chmod 755 "$SONDE_CACHE"
	report --format folded a.sonde
	[ "$(mode "$SONDE_CACHE")" = 700 ] || fail "cache dir left at $(mode "$SONDE_CACHE")"
	# a symlink to a directory is refused, and the report is the same without a cache
	ln -s "$SONDE_CACHE" link
	SONDE_CACHE=$T/link report --format folded a.sonde
	expect_rc 0 "symlink"
	[ "$(cat "$T/out")" = "$FLAT" ] || fail "symlink: $(cat "$T/out")"
	expect_err_line "sonde: $T/link: symbol cache not used: a symlink or not a directory (set SONDE_CACHE to another directory, or to off)"
	# another user's directory is refused
	if [ "$(id -u)" = 0 ]; then
		mkdir other && chmod 700 other && chown nobody other
		SONDE_CACHE=$T/other report --format folded a.sonde
		expect_rc 0 "other owner"
		expect_err_line "sonde: $T/other: symbol cache not used: owned by uid $(id -u nobody), not by you (set SONDE_CACHE to another directory, or to off)"
		[ -z "$(ls other)" ] || fail "wrote into another user's directory"
	fi
	# off: nothing written anywhere; the defaults: XDG_CACHE_HOME, else HOME
	HOME=$T/home SONDE_CACHE=off report --format folded a.sonde
	expect_err_empty "off"
	[ -e home ] && fail "SONDE_CACHE=off wrote $(find home)"
	HOME=$T/home SONDE_CACHE= report --format folded a.sonde
	expect_err_empty "default"
	ls home/.cache/sonde/*.sym >/dev/null 2>&1 || fail "nothing in ~/.cache/sonde"
	HOME=$T/home XDG_CACHE_HOME=$T/xdg SONDE_CACHE= report --format folded a.sonde
	ls xdg/sonde/*.sym >/dev/null 2>&1 || fail "nothing in \$XDG_CACHE_HOME/sonde"
	# no home to put it in: quietly none
	HOME=/nonexistent SONDE_CACHE= report --format folded a.sonde
	expect_rc 0 "no home"
	expect_err_empty "no home"
	[ "$(cat "$T/out")" = "$FLAT" ] || fail "no home: $(cat "$T/out")"
	;;
symcache_concurrent)
	# reports racing on one empty cache all succeed with the same output, and leave a
	# valid cache
	profile
	mk flat a.sonde
	SONDE_CACHE=off "$SONDE" report --format folded p a.sonde >want 2>/dev/null || fail "reference"
	for round in 1 2 3 4 5; do
		rm -rf "$SONDE_CACHE"
		pids=()
		for k in 1 2 3; do
			timeout 60 "$SONDE" report --format folded p a.sonde >got.$k 2>err.$k &
			pids+=($!)
		done
		for k in 1 2 3; do
			wait "${pids[$((k - 1))]}" || fail "round $round: report $k failed: $(cat err.$k)"
			expect_same want got.$k "round $round: report $k"
			! grep -vE 'samples dropped|different periods|showing source' err.$k || fail "round $round: report $k warned"
		done
		report --format folded p a.sonde
		expect_err_empty "after round $round"
		expect_same want "$T/out" "after round $round"
		ls -a "$SONDE_CACHE" | grep -q '\.tmp$' && fail "temporary files left: $(ls -a "$SONDE_CACHE")"
	done
	;;
*)
	fail "unknown case $CASE"
	;;
esac
echo "ok [$CASE]"
