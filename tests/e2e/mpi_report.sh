# mpi_report.sh - the MPI-parallel report (issue 21 item 5; analyze/cli/report_mpi.c):
# `mpirun -n K sonde-mpi report ARGS...` prints exactly what `sonde report ARGS...`
# prints, stdout, stderr and the files it writes, byte for byte (cmp), with K = 1, 2
# and 4 ranks (4 on this machine's 2 CPUs: oversubscribed).
#   views: every view and format (text, csv, json, folded, svg, pprof, html,
#          speedscope, trace; filters, --group-by, --stats, callers) on 96 streams
#          made from the real streams of two MPI jobs (tests/cli/restream.c: each its
#          own rank, host and process, its frames moved to other real functions);
#   big:   10 000 such streams (2 500 hosts x 4 ranks), the main views and the page.
# Skipped with one line where MPI or sonde-mpi is not there.
#
# usage: mpi_report.sh BUILD_DIR CASE
CASES="views big"
. "$(dirname "$0")/lib.sh"
case=${2:?usage: mpi_report.sh BUILD_DIR CASE}
command -v mpirun >/dev/null || skip "mpirun not found (openmpi-bin: .ci/deps installs it)"
[ -x "$B/sonde-mpi" ] || skip "sonde-mpi not built (MPI's C library: libopenmpi-dev)"
[ -x "$B/tests/bin/mpi_imbalance" ] && [ -x "$B/tests/bin/mpi_traffic" ] || skip "the MPI test programs are not built"
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_mpi_yield_when_idle=1

# real streams: an imbalanced job and one of known messages, 4 ranks each
watched 240 "$SONDE" run -o real -- mpirun -n 4 "$B/tests/bin/mpi_imbalance" 4 200000 4096 >job.out 2>job.err ||
	fail "the imbalanced job failed: $(tail -5 job.err)"
watched 240 "$SONDE" run -o real -- mpirun -n 4 "$B/tests/bin/mpi_traffic" >>job.out 2>>job.err ||
	fail "the traffic job failed: $(tail -5 job.err)"
mkdir gen
N=96
[ "$case" = big ] && N=10000
"$B/tests/cli/restream" gen $N real/*.sonde || fail "restream failed"
[ "$(ls gen | wc -l)" -eq $N ] || fail "$N streams expected, $(ls gen | wc -l)"

# same ARGS...: the report of gen/ by sonde and by sonde-mpi on 1, 2 and 4 ranks; a file
# the arguments write (-o F) is compared too
same() {
	local out="" a k
	for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done
	rm -f "$out"
	"$SONDE" report "$@" gen >s.out 2>s.err
	local rc=$?
	[ -n "$out" ] && { [ -f "$out" ] || fail "report $*: no $out"; mv "$out" s.file; }
	for k in 1 2 4; do
		watched 240 mpirun -n $k "$B/sonde-mpi" report "$@" gen >m.out 2>m.err
		local mrc=$?
		[ $mrc -eq $rc ] || fail "report $*: sonde-mpi on $k ranks exited $mrc, sonde $rc: $(tail -3 m.err) $(cat hang.txt 2>/dev/null)"
		cmp -s s.out m.out || fail "report $*: stdout differs on $k ranks: $(diff s.out m.out | head -5)"
		cmp -s s.err m.err || fail "report $*: stderr differs on $k ranks: $(diff s.err m.err | head -5)"
		if [ -n "$out" ]; then
			cmp -s s.file "$out" || fail "report $*: $out differs on $k ranks"
			rm -f "$out"
		fi
	done
	[ -s s.out ] || [ -n "$out" ] || fail "report $*: printed nothing"
	echo "same: report $* ($(wc -c <s.out) bytes)"
}

prev=
if [ "$case" = views ]; then
	same
	same --format csv
	same --format json
	same --format folded
	for v in threads sources counters streams coverage processes imbalance mpi; do
		same --view $v
	done
	same --view tree --format csv
	same --view regions --group-by rank,mpi
	same --view comm --format json
	same --view comm
	same --view callers main
	same --view callees main --format json
	same --stats rank --format csv
	same --group-by rank --format json
	same --where rank=3 --view regions
	same --format svg -o out.svg
	same --format pprof -o out.pb.gz
	same --format html -o out.html
	same --format speedscope -o out.speedscope.json
	same --format trace -o out.trace.json
	pass "views: every view and format, the same on 1, 2 and 4 ranks"
else
	same
	same --format json
	same --view regions --group-by rank,mpi --format csv
	same --view comm --format csv
	same --format html -o out.html
	pass "big: $N streams, the same on 1, 2 and 4 ranks"
fi
