# analyze.cli.nonregular: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# Inputs that are not regular files are refused with one line, never read and never
	# waited on: a FIFO without a writer (open() used to block forever), /dev/zero (read
	# whole, it grew to 24 GB), /dev/null, and a directory whose .sonde entry is a symlink
	# to /dev/zero. Each command runs under an address-space limit, so that reading such
	# a file into memory fails at once instead of filling the machine, and under timeout,
	# so that a hang fails instead of stalling the suite (neither is a timing assertion).
	mk flat a.sonde
	mkfifo fifo.sonde
	mkdir zdir && ln -s /dev/zero zdir/z.sonde
	LIM=(prlimit --as=$((1 << 30)))
	# sanitizer builds reserve terabytes of address space: there the limit is left out
	"${LIM[@]}" "$SONDE" --help >/dev/null 2>&1 ||
		{ echo "note: sonde does not start under prlimit --as (sanitizer build): no limit"; LIM=(); }
	guard() { run timeout 60 "${LIM[@]}" "$SONDE" "$@"; [ "$rc" -ne 124 ] || fail "hung: sonde $*"; }
	NOTREG="give .sonde files written by 'sonde run', or their directory; to read a stream from a pipe, save it to a file first"
	for cmd in report dump diff; do
		for f in fifo.sonde /dev/zero /dev/null zdir; do
			case $f in
			fifo.sonde) line="sonde: $f: not a regular file (a FIFO; $NOTREG)" ;;
			zdir) line="sonde: zdir/z.sonde: not a regular file (a character device; $NOTREG)" ;;
			*) line="sonde: $f: not a regular file (a character device; $NOTREG)" ;;
			esac
			[ "$cmd" = dump ] && [ "$f" = zdir ] && continue # dump reads one file
			if [ "$cmd" = diff ]; then guard diff "$f" a.sonde; else guard "$cmd" "$f"; fi
			expect_rc 4 "$cmd $f"
			expect_err_line "$line"
			[ ! -s "$T/out" ] || fail "$cmd $f printed $(head -c 200 "$T/out")"
		done
	done
	guard report zdir
	expect_err_line "sonde: zdir: none of its .sonde entries is a regular file (nothing to read; see the lines above)"
	guard dump zdir/z.sonde
	expect_rc 4 "dump through a symlink to /dev/zero"
	expect_err_line "sonde: zdir/z.sonde: not a regular file (a character device; $NOTREG)"
	# among good inputs a bad one is named and skipped; the report is made of the rest
	cp a.sonde zdir/a.sonde
	guard report fifo.sonde /dev/zero zdir
	expect_rc 0 "bad inputs beside a good one"
	expect_err_line "sonde: fifo.sonde: not a regular file (a FIFO; $NOTREG)"
	expect_err_line "sonde: /dev/zero: not a regular file (a character device; $NOTREG)"
	expect_err_line "sonde: zdir/z.sonde: not a regular file (a character device; $NOTREG)"
	[ "$(wc -l <"$T/err")" -eq 3 ] || { cat "$T/err" >&2; fail "one line per bad input"; }
	grep -qx 'samples: 90 (100 periods)  streams: 1 (3 more unreadable, left out)  processes: 1  threads: 2' "$T/out" ||
		fail "good stream reported, the 3 bad ones counted: $(head -1 "$T/out")"
	guard diff zdir a.sonde
	expect_rc 0 "diff of a directory with a bad entry"
	expect_err_line "sonde: zdir/z.sonde: not a regular file (a character device; $NOTREG)"
	# --strict makes a bad PATH fatal, as any other bad file
	guard report --strict /dev/null a.sonde
	expect_rc 4 "--strict"
	# a FIFO with a writer holding it open is refused just the same, without reading it
	sleep 120 >fifo.sonde &
	wpid=$!
	guard report fifo.sonde a.sonde
	kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null
	expect_rc 0 "FIFO with a writer"
	expect_err_line "sonde: fifo.sonde: not a regular file (a FIFO; $NOTREG)"
