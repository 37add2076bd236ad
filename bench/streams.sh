#!/bin/bash
# streams.sh - `sonde report` over many streams (issue 21): wall time, peak memory and
# peak open descriptors of `sonde report --jobs 1|2|4` and of the MPI-parallel report
# `mpirun -n 1|2|4 sonde-mpi report`, and whether each printed the same as the first.
#
# usage: bench/streams.sh BUILD_DIR      env: N=10000 streams; KIND=real|flat|big
# KIND=real (the default): N streams made by BUILD_DIR/tests/cli/restream from the real
# streams of two 4-rank MPI jobs (tests' mpi_imbalance and mpi_traffic; each stream its
# own rank, host and process, its frames moved to other real functions, so the merged
# profile grows with N); KIND=flat: the tests' generator's small synthetic stream
# (mkstream flat: two threads, 100 samples, a distinct pid each); KIND=big: N (default 8)
# real streams each replayed (BUILD_DIR/replay) to SAMPLES samples (default 4 000 000),
# where parsing, not merging, is the work.
# Peak descriptors: the largest count of /proc/PID/fd over the report's processes (the
# ranks', for sonde-mpi), polled every 10 ms; peak memory: the largest maximum resident
# set of one process (getrusage of the children: the report, or the biggest rank).
# A benchmark: it prints figures, it never fails on time.
set -u
die() { echo "streams.sh: $*" >&2; exit 1; }
[ $# -eq 1 ] && [ -d "$1" ] || { sed -n '2,15p' "$0" >&2; exit 2; }
B=$(cd "$1" && pwd)
KIND=${KIND:-real}
N=${N:-$([ "$KIND" = big ] && echo 8 || echo 10000)}
SAMPLES=${SAMPLES:-4000000}
[ -x "$B/sonde" ] || die "$B/sonde missing"
OUT=$(mktemp -d /tmp/sonde-streams.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
mkdir "$OUT/s"
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
if [ "$KIND" = real ] || [ "$KIND" = big ]; then
	[ -x "$B/tests/cli/restream" ] && [ -x "$B/tests/bin/mpi_imbalance" ] && [ -x "$B/tests/bin/mpi_traffic" ] ||
		die "KIND=real needs restream and the MPI test programs (cmake --build $B; libopenmpi-dev)"
	"$B/sonde" run -o "$OUT/real" -- mpirun -n 4 "$B/tests/bin/mpi_imbalance" 4 200000 4096 >/dev/null 2>&1 &&
		"$B/sonde" run -o "$OUT/real" -- mpirun -n 4 "$B/tests/bin/mpi_traffic" >/dev/null 2>&1 ||
		die "the MPI jobs failed"
	"$B/tests/cli/restream" "$OUT/s" "$N" "$OUT"/real/*.sonde || die "restream failed"
	if [ "$KIND" = big ]; then
		[ -x "$B/bench/bin/replay" ] || die "$B/bench/bin/replay missing"
		for f in "$OUT"/s/*.sonde; do
			"$B/bench/bin/replay" "$f" "$f.big" "$SAMPLES" >/dev/null && mv "$f.big" "$f" || die "replay failed"
		done
	fi
else
	for i in $(seq 1 "$N"); do "$B/tests/cli/mkstream" flat "$OUT/s/s$i.sonde" --pid $((100000 + i)) >/dev/null; done
fi
echo "# sonde report over $N $KIND streams ($(du -sm "$OUT/s" | cut -f1) MB), $(nproc) CPUs"
printf '%-22s %8s %10s %10s %8s\n' how wall_s peak_MB peak_fds same

# run NAME CMD...: the report's figures, and whether its stdout is the first run's
run() {
	local name=$1; shift
	python3 - "$OUT/$name" "$@" <<'PY'
import os, resource, subprocess, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.monotonic()
p = subprocess.Popen(cmd, stdout=open(out, "w"), stderr=subprocess.DEVNULL)
peak = 0
def procs():
    # the report and its descendants (mpirun's ranks)
    kids, todo = [], [p.pid]
    while todo:
        q = todo.pop()
        kids.append(q)
        try:
            for t in os.listdir(f"/proc/{q}/task"):
                with open(f"/proc/{q}/task/{t}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return kids
while p.poll() is None:
    for q in procs():
        try:
            if "sonde" in os.readlink(f"/proc/{q}/exe"):
                peak = max(peak, len(os.listdir(f"/proc/{q}/fd")))
        except OSError:
            pass
    time.sleep(0.01)
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
open(out + ".m", "w").write(f"{wall:.2f} {ru.ru_maxrss / 1024:.0f} {peak}\n")
PY
	read -r wall mb fds <"$OUT/$name.m"
	local same=first
	[ -f "$OUT/first" ] && { cmp -s "$OUT/first" "$OUT/$name" && same=yes || same=NO; }
	[ -f "$OUT/first" ] || cp "$OUT/$name" "$OUT/first"
	printf '%-22s %8s %10s %10s %8s\n' "$name" "$wall" "$mb" "$fds" "$same"
}

for j in 1 2 4; do
	run "report--jobs-$j" "$B/sonde" report --jobs "$j" "$OUT/s"
done
if [ -x "$B/sonde-mpi" ] && command -v mpirun >/dev/null; then
	for k in 1 2 4; do
		run "mpirun-n-$k-sonde-mpi" mpirun -n "$k" "$B/sonde-mpi" report "$OUT/s"
	done
else
	echo "# sonde-mpi or mpirun missing: no MPI-parallel report"
fi
head -1 "$OUT/first"
