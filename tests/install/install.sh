# install.sh - sonde installed (issue 22 item 1): `cmake --install BUILD --prefix P` into
# a temporary prefix, then, from there only:
#   - every file of cmake/install.cmake's layout is there (the MPI and Fortran parts
#     where they were built);
#   - `sonde --version` names the version and the stream format;
#   - `sonde run --caliper` preloads the installed libsonde_caliper.so first;
#   - the README's job: the installed sonde profiles build/heat and reports it, and
#     still does once the prefix is moved elsewhere (it finds its runtime from its
#     own place);
#   - a C program with a region, built against the installed header through pkg-config,
#     and a C++ one through CMake's find_package(sonde) (sonde::api), each run under the
#     installed sonde: their regions are in the report; a Fortran one through
#     pkg-config sonde-fortran where the binding was built;
#   - the manual pages open with man, the bash completion completes `sonde rep`;
#   - `cpack -G DEB` makes a package whose `dpkg-deb --contents` holds the same files.
# usage: install.sh BUILD_DIR
set -u
B=$(cd "$1" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/sonde-install.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }
P=$T/prefix
cmake --install "$B" --prefix "$P" >install.log 2>&1 || fail "cmake --install: $(tail -3 install.log)"
LIBDIR=$(cd "$P" && ls -d lib*/sonde | head -1 | xargs dirname)
[ -n "$LIBDIR" ] || fail "no LIBDIR/sonde under $P: $(cd "$P" && find . | head -30)"
for f in bin/sonde $LIBDIR/sonde/libsonde.so include/sonde.h include/sonde.hpp include/sonde.f90 \
	$LIBDIR/sonde/libsonde_caliper.so \
	$LIBDIR/pkgconfig/sonde.pc $LIBDIR/cmake/sonde/sondeConfig.cmake \
	$LIBDIR/cmake/sonde/sondeConfigVersion.cmake share/man/man1/sonde.1 \
	share/man/man1/sonde-report.1 share/man/man1/sonde-run.1 \
	share/bash-completion/completions/sonde share/doc/sonde/README.md share/doc/sonde/REPORT.md; do
	[ -e "$P/$f" ] || fail "not installed: $f"
done
[ -f "$B/libsonde_mpi.so" ] && { [ -e "$P/$LIBDIR/sonde/libsonde_mpi.so" ] || fail "libsonde_mpi.so not installed"; }
[ -x "$B/sonde-mpi" ] && { [ -x "$P/bin/sonde-mpi" ] || fail "sonde-mpi not installed"; }
FORTRAN=0
[ -f "$B/annotate/fortran/libsonde_fortran.a" ] && FORTRAN=1
if [ $FORTRAN = 1 ]; then
	for f in $LIBDIR/libsonde_fortran.a include/sonde/sonde.mod $LIBDIR/pkgconfig/sonde-fortran.pc; do
		[ -e "$P/$f" ] || fail "not installed: $f"
	done
fi

v=$("$P/bin/sonde" --version) || fail "sonde --version"
echo "$v" | grep -Eq '^sonde [0-9]+\.[0-9]+ \(stream format 1\)$' || fail "sonde --version: $v"

# the README's job, from the prefix; then from the prefix moved
job() {
	local prefix=$1 out=$2
	mkdir -p "$out.data"
	"$prefix/bin/sonde" run -o "$out" -- "$B/heat" -o "$out.data" >"$out.run" 2>&1 ||
		fail "installed sonde run: $(tail -3 "$out.run")"
	"$prefix/bin/sonde" report "$out" >"$out.txt" 2>"$out.err" || fail "installed sonde report: $(cat "$out.err")"
	grep -q heat_compute "$out.txt" || fail "the report of heat has no heat_compute: $(head -20 "$out.txt")"
}
job "$P" prof1
mv "$P" "$T/moved"
job "$T/moved" prof2
mv "$T/moved" "$P"
# the CLI alone, without its runtime beside or below it: said in one line
mkdir lone && cp "$P/bin/sonde" lone/
lone/sonde run -- /bin/true >lone.out 2>lone.err && fail "sonde run without its runtime succeeded"
grep -q '^sonde: libsonde.so: not found next to ' lone.err || fail "without its runtime: $(cat lone.err)"
# sonde run --caliper preloads the installed libsonde_caliper.so first
"$P/bin/sonde" run --caliper -o cali -- sh -c 'echo "$LD_PRELOAD"' >cali.out 2>&1 </dev/null ||
	fail "installed sonde run --caliper: $(cat cali.out)"
[ "$(head -1 cali.out | cut -d: -f1)" = "$(realpath "$P/$LIBDIR/sonde/libsonde_caliper.so")" ] ||
	fail "installed sonde run --caliper: LD_PRELOAD $(head -1 cali.out)"

# a C program through pkg-config
cat >app.c <<'C'
#include <sonde.h>
#include <stdio.h>
static volatile double x;
int main(void)
{
	sonde_region_begin("installed");
	for (long i = 0; i < 30000000; i++)
		x = x * 1.0000001 + 1e-9;
	sonde_region_end("installed");
	printf("%d\n", sonde_active());
	return 0;
}
C
export PKG_CONFIG_PATH=$P/$LIBDIR/pkgconfig
cflags=$(pkg-config --cflags sonde) || fail "pkg-config --cflags sonde"
inc=$(echo "$cflags" | sed -n 's/.*-I\([^ ]*\).*/\1/p')
[ "$(realpath "$inc")" = "$P/include" ] || fail "pkg-config sonde: $cflags"
cc $cflags -o app app.c || fail "cc against the installed header"
[ "$(./app)" = 0 ] || fail "the app without sonde: sonde_active() is not 0"
SONDE_REGIONS=on "$P/bin/sonde" run -o prof3 -- ./app >app.out 2>&1 || fail "app under sonde: $(cat app.out)"
[ "$(head -1 app.out)" = 1 ] || fail "the app under sonde: sonde_active() is not 1: $(cat app.out)"
"$P/bin/sonde" report --view regions --format csv prof3 >r3.csv 2>/dev/null
grep -q '^region=installed,1,' r3.csv || fail "the app's region: $(cat r3.csv)"

# a C++ program through find_package(sonde)
if command -v c++ >/dev/null; then
	mkdir cm && cat >cm/CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.18)
project(uses_sonde CXX)
find_package(sonde 0 REQUIRED)
add_executable(app2 app2.cpp)
target_link_libraries(app2 PRIVATE sonde::api)
CM
	cat >cm/app2.cpp <<'CPP'
#include <sonde.hpp>
#include <cstdio>
static volatile double x;
int main()
{
	{
		sonde::region r("cxx_installed");
		for (long i = 0; i < 30000000; i++)
			x = x * 1.0000001 + 1e-9;
	}
	std::printf("%d\n", sonde_active());
	return 0;
}
CPP
	cmake -S cm -B cm/b -DCMAKE_PREFIX_PATH="$P" >cm.log 2>&1 || fail "find_package(sonde): $(tail -5 cm.log)"
	cmake --build cm/b >>cm.log 2>&1 || fail "building with sonde::api: $(tail -5 cm.log)"
	SONDE_REGIONS=on "$P/bin/sonde" run -o prof4 -- cm/b/app2 >app2.out 2>&1 || fail "app2: $(cat app2.out)"
	"$P/bin/sonde" report --view regions --format csv prof4 >r4.csv 2>/dev/null
	grep -q '^region=cxx_installed,1,' r4.csv || fail "the C++ app's region: $(cat r4.csv)"
else
	echo "note: no C++ compiler: find_package(sonde) not tried"
fi

# Fortran through pkg-config sonde-fortran
if [ $FORTRAN = 1 ] && command -v gfortran >/dev/null; then
	cat >app3.f90 <<'F'
program app3
  use sonde
  implicit none
  real(8) :: x
  integer :: i
  x = 1.0d0
  call sonde_region_begin("f_installed")
  do i = 1, 30000000
    x = x * 1.0000001d0 + 1.0d-9
  end do
  call sonde_region_end("f_installed")
  print *, x > 0
end program app3
F
	# a sanitizer build's libsonde_fortran.a is instrumented: the program links the runtime
	san=$(sed -n 's/^SONDE_SANITIZE:STRING=\(..*\)$/-fsanitize=\1/p' "$B/CMakeCache.txt" 2>/dev/null)
	gfortran $san $(pkg-config --cflags sonde-fortran) -o app3 app3.f90 $(pkg-config --libs sonde-fortran) 2>f.log ||
		fail "gfortran with pkg-config sonde-fortran: $(cat f.log)"
	SONDE_REGIONS=on "$P/bin/sonde" run -o prof5 -- ./app3 >app3.out 2>&1 || fail "app3: $(cat app3.out)"
	"$P/bin/sonde" report --view regions --format csv prof5 >r5.csv 2>/dev/null
	grep -q '^region=f_installed,1,' r5.csv || fail "the Fortran app's region: $(cat r5.csv)"
fi

# the manual and the completion
if command -v man >/dev/null; then
	man -l "$P/share/man/man1/sonde-report.1" 2>/dev/null | grep -q -- '--view' || fail "man sonde-report has no --view"
fi
c=$(bash -c ". '$P/share/bash-completion/completions/sonde'; COMP_WORDS=(sonde rep); COMP_CWORD=1; _sonde; echo \${COMPREPLY[*]}")
[ "$c" = report ] || fail "bash completion of 'sonde rep': '$c'"

# the Debian package
if command -v cpack >/dev/null && command -v dpkg-deb >/dev/null; then
	(cd "$B" && cpack -G DEB -B "$T/pkg" >"$T/cpack.log" 2>&1) || fail "cpack: $(tail -5 cpack.log)"
	deb=$(ls "$T"/pkg/*.deb 2>/dev/null | head -1)
	[ -n "$deb" ] || fail "cpack made no .deb: $(tail -5 cpack.log)"
	dpkg-deb --contents "$deb" >contents.txt || fail "dpkg-deb --contents"
	for f in ./usr/bin/sonde "./usr/$LIBDIR/sonde/libsonde.so" ./usr/include/sonde.h \
		"./usr/$LIBDIR/pkgconfig/sonde.pc" ./usr/share/man/man1/sonde.1; do
		grep -q " $f\$" contents.txt || fail "the package has no $f: $(awk '{print $6}' contents.txt | head -40)"
	done
	dpkg-deb --field "$deb" Package Version | tr '\n' ' ' | grep -q '^Package: sonde Version: ' ||
		fail "the package's fields: $(dpkg-deb --field "$deb")"
else
	echo "note: cpack or dpkg-deb missing: no package made"
fi
echo "ok: installed into a prefix, moved, built against, packaged"
