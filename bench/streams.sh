#!/bin/bash
# streams.sh - `sonde report` over many streams: wall time, peak memory and peak open
# descriptors, with --jobs 1, 2 and 4 (issue 21: a report of 10 000 streams must hold a
# fixed small number of descriptors whatever --jobs is, and memory by the merged profile).
#
# usage: bench/streams.sh BUILD_DIR      env: N=10000 streams; MK=path of the generator
# The streams are written by the tests' generator (BUILD_DIR/tests/cli/mkstream flat: two
# threads and 100 samples each, a distinct pid each). Peak descriptors: the largest count
# of /proc/PID/fd seen, polled every 10 ms while the report runs; peak memory: the
# report's maximum resident set (GNU time's %M, else getrusage through python3).
# A benchmark: it prints figures, it never fails on time.
set -u
die() { echo "streams.sh: $*" >&2; exit 1; }
[ $# -eq 1 ] && [ -d "$1" ] || { sed -n '2,12p' "$0" >&2; exit 2; }
B=$(cd "$1" && pwd)
N=${N:-10000}
MK=${MK:-$B/tests/cli/mkstream}
[ -x "$MK" ] || die "$MK missing (cmake --build $B)"
[ -x "$B/sonde" ] || die "$B/sonde missing"
OUT=$(mktemp -d /tmp/sonde-streams.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
mkdir "$OUT/s"
for i in $(seq 1 "$N"); do "$MK" flat "$OUT/s/s$i.sonde" --pid $((100000 + i)) >/dev/null; done
echo "# sonde report over $N streams ($(du -sm "$OUT/s" | cut -f1) MB), $(nproc) CPUs"
printf '%-10s %8s %10s %10s %12s\n' jobs wall_s peak_MB peak_fds streams_read
for j in 1 2 4; do
	start=$(date +%s.%N)
	python3 - "$B/sonde" "$j" "$OUT/s" "$OUT/r$j" <<'PY' &
import os, resource, subprocess, sys, time
sonde, jobs, d, out = sys.argv[1:]
p = subprocess.Popen([sonde, "report", "--jobs", jobs, d], stdout=open(out, "w"),
                     stderr=subprocess.DEVNULL)
peak = 0
while p.poll() is None:
    try:
        peak = max(peak, len(os.listdir(f"/proc/{p.pid}/fd")))
    except OSError:
        pass
    time.sleep(0.01)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
open(out + ".m", "w").write(f"{ru.ru_maxrss / 1024:.0f} {peak}\n")
PY
	wait $!
	end=$(date +%s.%N)
	read -r mb fds <"$OUT/r$j.m"
	read_n=$(head -1 "$OUT/r$j" | sed -n 's/.*streams: \([0-9]*\).*/\1/p')
	printf '%-10s %8.2f %10s %10s %12s\n' "$j" "$(echo "$end - $start" | bc)" "$mb" "$fds" "$read_n"
done
