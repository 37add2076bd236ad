# archive.sh - profiles stay readable (issue 22 item 4; docs/REPORT.md, "Build-id
# archive" and "Packs"; docs/FORMAT.md, MODULE size and mtime).
#   rebuilt: a program built here with a build-id is profiled, then rebuilt with another
#            function layout: the old profile's report is the one made before the rebuild,
#            byte for byte (the hot function by its name), one note names the build-id
#            archive as the source; with SONDE_ARCHIVE=off the hot function is no row
#            (what the report said before the archive).
#   deleted: the same with the binary deleted.
#   pack:    sonde archive DIR -> the pack copied to a fresh directory, a fresh HOME and
#            SONDE_CACHE, the binary deleted: sonde report PACK is the report made before,
#            byte for byte, and so is the report of the directory tar xf makes of it.
#   noid:    a program built with --build-id=none, replaced after the run by another
#            program: the report says the file changed and names no frame of the
#            program from the new file (module+0xADDR only).
#   hostile: packs that name ../ and absolute paths, hold a symlink, a hard link, a
#            device, claim sizes past their end, end inside an entry, have a bad
#            checksum: nothing is made outside the private directory, each is one line
#            and a non-zero exit (or its hostile entries left out, said), never a crash.
#   diff:    sonde diff of a profile before and after a rebuild compares names with
#            names: the hot function is one row with samples on both sides.
CASES="rebuilt deleted pack noid hostile diff"
. "$(dirname "$0")/lib.sh"
case=${2:?usage: archive.sh BUILD_DIR CASE}

# a private cache: the archive is $HOME/.cache/sonde/build-id
export HOME="$T/home"
mkdir -p "$HOME"
unset SONDE_CACHE SONDE_ARCHIVE SONDE_ARCHIVE_MAX XDG_CACHE_HOME
command -v cc >/dev/null || skip "no C compiler"

# prog.c: hot() holds nearly all the time; -DALT puts other code before it
cat >prog.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#ifdef ALT
volatile double pad;
__attribute__((noinline)) void padding(int n) { for (int i = 0; i < n; i++) pad += i * 0.25; }
__attribute__((noinline)) void padding2(int n) { for (int i = 0; i < n; i++) pad -= i * 0.5; }
#endif
__attribute__((noinline)) double hot(long n)
{
	double s = 0;
	for (long i = 0; i < n; i++)
		s += i * 0.5 / (i + 1);
	return s;
}
int main(int argc, char **argv)
{
	printf("%f\n", hot(argc > 1 ? atol(argv[1]) : 150000000));
	return 0;
}
EOF
build() { cc -g -O1 "$@" || fail "cc $*"; }
# the csv flat profile (stdout only)
flat() { "$SONDE" report --format csv "$@" 2>report.err; }
# the address of symbol $2 in ELF file $1
addr_of() { nm "$1" | awk -v s="$2" '$3 == s { print $1 }'; }

profile_prog() { # DIR: ./prog run under sonde run into DIR
	"$SONDE" run -o "$1" -- ./prog >"$1.out" 2>"$1.err" || fail "sonde run: $(cat "$1.err")"
}

case $case in
rebuilt|deleted)
	build -Wl,--build-id -o prog prog.c
	old=$(addr_of prog hot)
	profile_prog prof
	ls "$HOME/.cache/sonde/build-id/"*.sym >/dev/null 2>&1 ||
		fail "sonde run left no build-id archive in $HOME/.cache/sonde/build-id"
	flat prof >before.csv
	top=$(sed -n 2p before.csv | cut -d, -f1)
	[ "$top" = hot ] || fail "the live report's top row is '$top', not hot: $(head -3 before.csv)"
	if [ $case = rebuilt ]; then
		build -DALT -Wl,--build-id -o prog prog.c
		new=$(addr_of prog hot)
		[ "$old" != "$new" ] || fail "the rebuild did not move hot ($old)"
		why="rebuilt or replaced since the run"
	else
		rm prog
		why="No such file or directory"
	fi
	flat prof >after.csv
	cmp -s before.csv after.csv || fail "the report changed: $(diff before.csv after.csv | head)"
	grep -q "^sonde: note: 1 module named from the build-id archive $HOME/.cache/sonde/build-id, not from its file (prog: $why)\$" report.err ||
		fail "no note naming the archive: $(cat report.err)"
	# without the archive: the hot function is an address (what the archive is for)
	SONDE_ARCHIVE=off flat prof >off.csv
	grep -q '^hot,' off.csv && fail "SONDE_ARCHIVE=off still names hot: the test proves nothing"
	grep -q '^prog+0x' off.csv || fail "SONDE_ARCHIVE=off: no prog+0x row: $(head -3 off.csv)"
	pass "$case: hot $(sed -n 2p after.csv | cut -d, -f2) samples by name, from the archive (hot moved $old -> ${new:-deleted})"
	;;
pack)
	build -Wl,--build-id -o prog prog.c
	profile_prog prof
	flat prof >before.csv
	"$SONDE" archive prof -o prof.tar >archive.out 2>archive.err || fail "sonde archive: $(cat archive.err)"
	grep -q "^sonde: pack written to prof.tar: 1 stream, 0 JIT maps, symbols of" archive.out ||
		fail "sonde archive said: $(cat archive.out archive.err)"
	tar tf prof.tar | grep -q '^prof/build-id/[0-9a-f]*\.sym$' || fail "no symbols in the pack: $(tar tf prof.tar)"
	rm prog
	rm -rf "$HOME/.cache"
	mkdir -p fresh/home
	cp prof.tar fresh/
	(
		cd fresh || exit 1
		export HOME=$PWD/home SONDE_CACHE=$PWD/cache
		"$SONDE" report --format csv prof.tar >pack.csv 2>pack.err || exit 1
		tar xf prof.tar && "$SONDE" report --format csv prof >dir.csv 2>dir.err
	) || fail "report of the pack: $(cat fresh/pack.err fresh/dir.err 2>/dev/null)"
	cmp -s before.csv fresh/pack.csv || fail "report PACK differs: $(diff before.csv fresh/pack.csv | head)"
	cmp -s before.csv fresh/dir.csv || fail "report of the unpacked pack differs: $(diff before.csv fresh/dir.csv | head)"
	grep -q "^sonde: note: 1 module named from the pack prof.tar, not from its file (prog: No such file or directory)\$" fresh/pack.err ||
		fail "no note naming the pack: $(cat fresh/pack.err)"
	grep -q "named from the profile's archive prof/build-id" fresh/dir.err ||
		fail "no note naming the unpacked archive: $(cat fresh/dir.err)"
	ls /tmp/sonde-pack-* >/dev/null 2>&1 && [ -n "$(find /tmp -maxdepth 1 -name 'sonde-pack-*' -newer prof.tar)" ] &&
		fail "the unpacked pack was left in /tmp"
	pass "pack: $(stat -c %s prof.tar) bytes; report PACK = report before ($(sed -n 2p before.csv))"
	;;
noid)
	build -Wl,--build-id=none -o prog prog.c
	profile_prog prof
	flat prof >before.csv
	grep -q '^hot,' before.csv || fail "the live report has no hot row: $(head -3 before.csv)"
	cat >other.c <<'EOF'
#include <stdio.h>
__attribute__((noinline)) int other_a(int x) { return x * 3; }
__attribute__((noinline)) int other_b(int x) { return x + other_a(x); }
int main(void) { printf("%d\n", other_b(3)); return 0; }
EOF
	sleep 0.01
	build -Wl,--build-id=none -o prog other.c
	flat prof >after.csv
	grep -q "^sonde: $T/prog: changed since the run (size [0-9]* then, $(stat -c %s prog) now; modified .* later) and it has no build-id" report.err ||
		fail "the change is not said: $(cat report.err)"
	bad=$(awk -F, 'NR > 1 && $6 == "prog" && $1 !~ /^prog\+0x/' after.csv)
	[ -z "$bad" ] || fail "frames of prog named from the new file: $bad"
	n=$(awk -F, 'NR > 1 && $6 == "prog"' after.csv | grep -c .)
	[ "$n" -gt 0 ] || fail "no prog+0x row: $(head -5 after.csv)"
	pass "noid: $n rows of prog as prog+0xADDR, the change said"
	;;
hostile)
	build -Wl,--build-id -o prog prog.c
	profile_prog prof
	s=$(ls "$T"/prof/*.sonde)
	mkdir -p pk && cd pk || fail cd
	export TMPDIR="$T/tmp" && mkdir -p "$TMPDIR"
	python3 - "$s" <<'EOF' || fail "python3 could not make the packs"
import io, sys, tarfile
data = open(sys.argv[1], 'rb').read()
def pack(name, entries, mangle=None):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode='w', format=tarfile.USTAR_FORMAT) as t:
        for n, kind, payload in entries:
            i = tarfile.TarInfo(n)
            if kind == 'file':
                i.size = len(payload); t.addfile(i, io.BytesIO(payload))
            elif kind == 'sym':
                i.type = tarfile.SYMTYPE; i.linkname = payload; t.addfile(i)
            elif kind == 'link':
                i.type = tarfile.LNKTYPE; i.linkname = payload; t.addfile(i)
            elif kind == 'dev':
                i.type = tarfile.CHRTYPE; i.devmajor = 1; i.devminor = 3; t.addfile(i)
    raw = bytearray(b.getvalue())
    if mangle: raw = mangle(raw)
    open(name, 'wb').write(bytes(raw))
good = ('prof/a.sonde', 'file', data)
pack('escape.tar', [good, ('../escaped.sonde', 'file', data), ('/tmp/abs.sonde', 'file', data),
                    ('prof/build-id/../../up.sonde', 'file', data), ('other/x.sonde', 'file', data),
                    ('prof/.hidden.sonde', 'file', data), ('prof/sub/y.sonde', 'file', data)])
pack('links.tar', [good, ('prof/l.sonde', 'sym', '/etc/passwd'), ('prof/h.sonde', 'link', '/etc/passwd'),
                   ('prof/d.sonde', 'dev', ''), ('prof/build-id/ab.sym', 'sym', '/etc/shadow')])
pack('only_bad.tar', [('../x.sonde', 'file', data), ('prof/l.sonde', 'sym', '/etc/passwd')])
def huge(raw):  # the first file's size field claims 8 GiB
    raw[124:136] = b'77777777777\0'
    s = sum(raw[0:148]) + 8 * 32 + sum(raw[156:512]); raw[148:156] = b'%06o\0 ' % s
    return raw
pack('huge.tar', [good], huge)
pack('trunc.tar', [good], lambda r: r[:512 + len(data) // 2])
def badsum(raw):
    raw[0] ^= 1; return raw
pack('badsum.tar', [good], badsum)
pack('trunc_hdr.tar', [good, ('prof/b.sonde', 'file', data)], lambda r: r[:512 + ((len(data) + 511) // 512) * 512 + 100])
EOF
	for p in escape links; do
		"$SONDE" report --format csv $p.tar >$p.csv 2>$p.err; rc=$?
		[ $rc -eq 0 ] || fail "$p.tar: exit $rc: $(cat $p.err)"
		grep -q "^sonde: report: $p.tar: [0-9]* entr\(y\|ies\) left out" $p.err || fail "$p.tar: not said: $(cat $p.err)"
		grep -q '^hot,' $p.csv || fail "$p.tar: its good stream not reported: $(head -3 $p.csv)"
	done
	for p in only_bad huge trunc badsum trunc_hdr; do
		"$SONDE" report $p.tar >$p.out 2>$p.err; rc=$?
		[ $rc -eq 4 ] || fail "$p.tar: exit $rc, not 4: $(cat $p.err)"
		[ "$(grep -c . $p.err)" -le 2 ] || fail "$p.tar: more than two lines: $(cat $p.err)"
		grep -q "^sonde: report: $p.tar: \(not a sonde pack\|a pack without streams\)" $p.err ||
			fail "$p.tar: $(cat $p.err)"
	done
	for f in "$T/escaped.sonde" /tmp/abs.sonde "$T/up.sonde" "$T/pk/escaped.sonde"; do
		[ -e "$f" ] && fail "a hostile pack made $f"
	done
	[ -z "$(ls -A "$TMPDIR")" ] || fail "unpacked directories left: $(ls -A "$TMPDIR")"
	pass "hostile: 2 packs' bad entries left out, 5 refused with exit 4, nothing made outside"
	;;
diff)
	build -Wl,--build-id -o prog prog.c
	profile_prog a
	build -DALT -Wl,--build-id -o prog prog.c
	profile_prog b
	"$SONDE" diff --format csv a b >diff.csv 2>diff.err || fail "sonde diff: $(cat diff.err)"
	row=$(grep '^hot,' diff.csv) || fail "no hot row: $(head -3 diff.csv)"
	echo "$row" | awk -F, '$2 > 0 && $4 > 0 { ok = 1 } END { exit !ok }' || fail "hot is not on both sides: $row"
	grep -q '^prog+0x' diff.csv && fail "addresses of prog in the diff: $(grep '^prog+0x' diff.csv)"
	grep -q "named from the build-id archive" diff.err || fail "no note: $(cat diff.err)"
	pass "diff: $row"
	;;
*) fail "unknown case $case" ;;
esac
