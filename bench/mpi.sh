#!/bin/bash
# mpi.sh - what libsonde_mpi.so adds to an MPI call (issue 21): ns per call of
# MPI_Barrier, MPI_Sendrecv (4 bytes) and MPI_Allreduce (one double) at 2
# ranks on this node, in four setups run interleaved, ROUNDS times each:
#   plain     no preload
#   wrap      LD_PRELOAD=libsonde_mpi.so alone: the wrapper with sonde absent
#             (the annotation calls are a load and a branch)
#   sonde     LD_PRELOAD=libsonde.so, SONDE_REGIONS=on: sampling, MPI not timed
#   sonde+mpi libsonde.so and libsonde_mpi.so, SONDE_REGIONS=on: what
#             `sonde run` does for an MPI program (every call a region)
# Prints each setup's median per kind over the rounds (each round's figure is
# itself the median of bench_mpi_calls' REPS loops), and the cost of timing
# MPI: sonde+mpi minus sonde, per call.
#
# usage: bench/mpi.sh BUILD_DIR      env: CALLS=20000 ROUNDS=5 RANKS=2
# Not a ctest test: it prints figures and never fails on time.
set -u
die() { echo "mpi.sh: $*" >&2; exit 1; }
[ $# -eq 1 ] && [ -d "$1" ] || { sed -n '2,19p' "$0" >&2; exit 2; }
B=$(cd "$1" && pwd)
CALLS=${CALLS:-20000} ROUNDS=${ROUNDS:-5} RANKS=${RANKS:-2}
[ -x "$B/bench/bin/bench_mpi_calls" ] || die "$B/bench/bin/bench_mpi_calls missing (MPI headers at build time: libopenmpi-dev)"
[ -f "$B/libsonde_mpi.so" ] || die "$B/libsonde_mpi.so missing"
command -v mpirun >/dev/null || die "mpirun missing (openmpi-bin)"
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
OUT=$(mktemp -d /tmp/sonde-mpi.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

run() { # SETUP PRELOAD
	local pre=()
	[ -n "$2" ] && pre=(-x LD_PRELOAD="$2" -x SONDE_REGIONS=on -x SONDE_OUTPUT="$OUT/p")
	mpirun -n "$RANKS" --bind-to none "${pre[@]}" "$B/bench/bin/bench_mpi_calls" "$CALLS" 5 \
		2>>"$OUT/err" | sed "s/^/$1 /" >>"$OUT/all"
}
for r in $(seq "$ROUNDS"); do
	run plain ""
	run wrap "$B/libsonde_mpi.so"
	run sonde "$B/libsonde.so"
	run sonde+mpi "$B/libsonde.so:$B/libsonde_mpi.so"
done
[ -s "$OUT/all" ] || { cat "$OUT/err" >&2; die "no figures"; }
echo "ns per call, median of $ROUNDS rounds ($RANKS ranks, $CALLS calls a loop):"
python3 - "$OUT/all" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) != 7:
        continue
    d = rows.setdefault(p[0], {})
    for k, v in zip(p[1::2], p[2::2]):
        d.setdefault(k, []).append(float(v))
kinds = ["barrier", "sendrecv", "allreduce"]
print(f"{'setup':10} " + " ".join(f"{k:>10}" for k in kinds))
med = {s: {k: statistics.median(v[k]) for k in kinds} for s, v in rows.items()}
for s in ["plain", "wrap", "sonde", "sonde+mpi"]:
    if s in med:
        print(f"{s:10} " + " ".join(f"{med[s][k]:10.0f}" for k in kinds))
if "sonde" in med and "sonde+mpi" in med:
    print(f"{'timing MPI':10} " + " ".join(f"{med['sonde+mpi'][k] - med['sonde'][k]:10.0f}"
                                           for k in kinds) + "   (sonde+mpi - sonde)")
if "plain" in med and "wrap" in med:
    print(f"{'wrapper':10} " + " ".join(f"{med['wrap'][k] - med['plain'][k]:10.0f}"
                                        for k in kinds) + "   (wrap - plain, sonde absent)")
PY
