#!/bin/bash
# buildtree.sh BUILD_DIR - the top of the build tree holds the product (sonde, sonde-mpi,
# libsonde*.so, the example programs heat and adapt); the tests' programs and libraries
# are built into tests/bin, the benchmarks' into bench/bin (issue 22 item 2). A file at
# the top with the name of one in tests/bin or bench/bin but older than it is a leftover
# of a build tree made before they moved: said, not a failure.
set -u
cd "${1:?usage: buildtree.sh BUILD_DIR}" || exit 1
[ -x tests/bin/hostile ] && [ -x tests/bin/blocker ] && [ -f tests/bin/libsonde_fault.so ] ||
	{ echo "FAIL: the test programs are not in tests/bin"; exit 1; }
[ -x bench/bin/runcpu ] && [ -x bench/bin/sigcost ] ||
	{ echo "FAIL: the benchmarks' programs are not in bench/bin"; exit 1; }
bad= old=
for f in $(find . -maxdepth 1 -type f -perm -u+x -printf '%f\n' | sort); do
	case $f in
	sonde | sonde-mpi | heat | adapt | libsonde.so | libsonde_mpi.so | libsonde_caliper.so) continue ;;
	esac
	twin=
	[ -e "tests/bin/$f" ] && twin=tests/bin/$f
	[ -e "bench/bin/$f" ] && twin=bench/bin/$f
	if [ -n "$twin" ] && [ "$f" -ot "$twin" ]; then
		old="$old $f"
	else
		bad="$bad $f"
	fi
done
[ -z "$old" ] || echo "note: left over from an earlier layout (older than tests/bin's and bench/bin's):$old"
[ -z "$bad" ] || { echo "FAIL: beside sonde:$bad"; exit 1; }
echo "PASS: the top of the build tree holds the product; tests/bin and bench/bin the rest"
