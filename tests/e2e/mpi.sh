# mpi.sh - MPI jobs under sonde (issue 21; docs/ENV.md "MPI programs"): the
# imbalanced job (tests/fixtures/programs/mpi_imbalance.c and its Fortran twin)
# at 4 ranks on this node, launched both ways: `sonde run -- mpirun ...`
# (outer) and `mpirun ... sonde run -- ...` (inner). Every rank prints its own
# MPI and compute times; sonde's must agree:
#   - every rank's stream is there, with its rank; the outer launcher's stream
#     has no rank, though SLURM_PROCID=0 is in its environment (a batch script's); the ranks' streams are named .r<rank>.; one "profile written"
#     line for the job;
#   - each rank's calls of MPI_Sendrecv, MPI_Allreduce and MPI_Barrier (the
#     regions view by rank and mpi) are counted exactly and their time is the
#     program's around the calls, within 5 % + 1 ms;
#   - --view mpi splits each rank's wall time: its compute (wall - MPI) is the
#     program's own compute time and a little more (start, exit: 5 % + 40 ms);
#   - each rank's share of the compute samples is its share of the compute
#     CPU time the ranks measured (binomial tolerance, share_tol);
#   - --stats rank and --view imbalance count the 4 ranks (not the launcher)
#     and name the ranks that compute least and most;
#   - --where rank=2 keeps rank 2's rows only, and a rank no stream has is said;
#   - each call's bytes sent and received are the program's (Sendrecv, Allreduce), and
#     --view comm is the ring: STEPS messages of BYTES from each rank to the next;
#   - the MPI calls are named MPI_* (not PMPI_*), sonde's wrapper frames are
#     left out: in C, MPI_Sendrecv's caller is exchange().
# Skipped with one line where MPI is not installed or the programs are not built.
#
# usage: mpi.sh BUILD_DIR CASE
CASES="c_outer c_inner fortran_outer fortran_inner traffic"
. "$(dirname "$0")/lib.sh"
case=${2:?usage: mpi.sh BUILD_DIR CASE}
case $case in
c_*) PROG=$B/tests/bin/mpi_imbalance ;;
fortran_*) PROG=$B/tests/bin/mpi_imbalance_f ;;
traffic) PROG=$B/tests/bin/mpi_traffic ;;
*) fail "unknown case $case (one of: $CASES)" ;;
esac
command -v mpirun >/dev/null || skip "mpirun not found (openmpi-bin: .ci/deps installs it)"
[ -f "$B/libsonde_mpi.so" ] || skip "libsonde_mpi.so not built (MPI's headers: libopenmpi-dev)"
[ -x "$PROG" ] || skip "$PROG not built (MPI's compiler wrappers: libopenmpi-dev, gfortran)"
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# shared memory between the ranks, no network; ranks may outnumber the CPUs
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_hwloc_base_binding_policy=none
# a unit of compute is 20 ms of CPU wherever it runs (the programs calibrate it: -MS),
# sampled every 250 us: about 6400 samples of compute, enough to check each rank's share
# within 3 points (four standard deviations of a binomial share at most 3 points from
# 4270 samples: beside a CPU hog the sampler's throttling left 4008 of 4800 with 15 ms)
STEPS=8 ITERS=-20 BYTES=65536 PERIOD=cpu-time@250us
MPIRUN=(mpirun -n 4)

# traffic: messages of known sizes and partners (world, a split communicator with ranks
# reversed, non-blocking, synchronous, MPI_PROC_NULL, collectives); each rank prints its
# own ledger, which --view comm and the regions' byte columns must equal exactly
if [ "$case" = traffic ]; then
	watched 240 "$SONDE" run -o prof -- "${MPIRUN[@]}" "$PROG" >out 2>err ||
		fail "the job failed: $(tail -5 err) $(cat hang.txt 2>/dev/null)"
	"$SONDE" report --view comm --format csv prof >comm.csv 2>comm.err || fail "--view comm: $(cat comm.err)"
	awk '$1 == "ledger" { print $2 "," $4 "," $6 "," $8 }' out | sort >want.csv
	tail -n +2 comm.csv | cut -d, -f1-4 | sort >got.csv
	[ -s want.csv ] && cmp -s want.csv got.csv ||
		fail "--view comm: $(tr '\n' ' ' <got.csv), the ranks' ledgers: $(tr '\n' ' ' <want.csv)"
	"$SONDE" report --view regions --group-by rank,mpi --format csv prof >regions.csv 2>regions.err ||
		fail "report --view regions: $(cat regions.err)"
	awk '$1 == "call" { print "rank=" $2 "/mpi=" $3 "," $5 "," $7 }' out | sort >want.csv
	awk -F, 'NR > 1 { print $1 "," $10 "," $11 }' regions.csv | sort >all.csv
	# the calls the ledger names (a call a rank did not make: no row, 0 bytes)
	while IFS=, read -r path s r; do
		got=$(awk -F, -v p="$path" '$1 == p { print $2 "," $3 }' all.csv)
		[ "${got:-0,0}" = "$s,$r" ] || fail "$path: sonde says sent,received ${got:-none}, the program $s,$r"
	done <want.csv
	# nothing sent to MPI_PROC_NULL, yet the call is a call
	n=$(awk -F, '$1 == "rank=0/mpi=MPI_Send" { print $2 }' regions.csv)
	[ "$n" = 2 ] || fail "rank 0: MPI_Send called ${n:-0} times, 2 expected (one to MPI_PROC_NULL)"
	# the page's heat map: a cell per pair, its numbers in its title
	"$SONDE" report --format html -o page.html prof >/dev/null 2>&1 || fail "report --format html"
	[ "$(grep -c '<rect class="pair"' page.html)" -eq "$(wc -l <got.csv)" ] ||
		fail "the page: $(grep -c '<rect class="pair"' page.html) heat map cells, $(wc -l <got.csv) pairs"
	while IFS=, read -r s d m by; do
		grep -q "<title>rank $s to rank $d: $by bytes in $m messages</title>" page.html ||
			fail "the page: no cell of rank $s to rank $d ($by bytes in $m messages)"
	done <got.csv
	echo "ok: traffic: --view comm and the calls' bytes equal the ranks' ledgers ($(wc -l <got.csv) pairs)"
	exit 0
fi
if [ "${case#*_}" = outer ]; then
	# as in a batch script: SLURM_PROCID=0 reaches the launcher too, which is no rank
	SLURM_PROCID=0 watched 240 "$SONDE" run -e $PERIOD -o prof -- "${MPIRUN[@]}" "$PROG" $STEPS $ITERS $BYTES >out 2>err
else
	watched 240 "${MPIRUN[@]}" "$SONDE" run -e $PERIOD -o prof -- "$PROG" $STEPS $ITERS $BYTES >out 2>err
fi
rc=$?
[ $rc -eq 0 ] || fail "the job failed (status $rc): $(tail -5 err) $(cat out) $(cat hang.txt 2>/dev/null)"
[ "$(grep -c '^rank ' out)" -eq 4 ] || fail "4 ranks expected to report: $(cat out)"
# one "profile written" line for the job, however it was launched
[ "$(grep -c '^sonde: profile written to' err)" -eq 1 ] || fail "one 'profile written' line expected: $(cat err)"

# the ranks' streams are named with their rank
for r in 0 1 2 3; do
	ls prof | grep -q "^$(basename "$PROG")\..*\.r$r\.[0-9]*\.sonde\$" ||
		fail "no stream named with rank $r: $(ls prof)"
done

# the launcher (outer) has no rank, whatever its environment said
if [ "${case#*_}" = outer ]; then
	"$SONDE" report --group-by rank,process --format csv prof >rp.csv 2>/dev/null
	grep -q '^(none),\(mpirun\|orterun\)\[' rp.csv || fail "the launcher's samples are not rankless: $(cat rp.csv)"
	grep -q '^[0-9]*,\(mpirun\|orterun\)\[' rp.csv && fail "the launcher has a rank: $(cat rp.csv)"
fi

# per rank and call: calls and inclusive ms
"$SONDE" report --view regions --group-by rank,mpi --format csv prof >regions.csv 2>regions.err ||
	fail "report --view regions: $(cat regions.err)"
for r in 0 1 2 3; do
	for c in MPI_Init MPI_Finalize; do
		n=$(awk -F, -v p="rank=$r/mpi=$c" '$1 == p { print $2 }' regions.csv)
		[ "$n" = 1 ] || fail "rank $r: $c called ${n:-0} times, 1 expected: $(cat regions.csv)"
	done
	for c in MPI_Sendrecv MPI_Allreduce MPI_Barrier; do
		n=$(awk -F, -v p="rank=$r/mpi=$c" '$1 == p { print $2 }' regions.csv)
		[ "$n" = $STEPS ] || fail "rank $r: $c called ${n:-0} times, $STEPS expected: $(cat regions.csv)"
	done
	ms=$(awk -F, -v r="rank=$r/" 'index($1, r) == 1 && $1 ~ /MPI_(Sendrecv|Allreduce|Barrier)$/ { s += $3 }
		END { printf "%.3f", s }' regions.csv)
	want=$(awk -v r=$r '$1 == "rank" && $2 == r { printf "%.3f", $6 / 1e6 }' out)
	awk -v a="$ms" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b * 0.05 + 1) }' ||
		fail "rank $r: sonde's MPI time $ms ms, the program measured $want ms around the calls"
	echo "rank $r: MPI $ms ms (program: $want ms)"
done
grep -q '^rank=(none)/' regions.csv && fail "a region without a rank: $(cat regions.csv)"

# bytes per call, as the program passed them: MPI_Sendrecv sends and receives BYTES a
# step, MPI_Allreduce one double each way, MPI_Barrier nothing
head -1 regions.csv | grep -q ',bytes_sent,bytes_recv$' || fail "no byte columns: $(head -1 regions.csv)"
for r in 0 1 2 3; do
	for c in "MPI_Sendrecv $((STEPS * BYTES))" "MPI_Allreduce $((STEPS * 8))"; do
		set -- $c
		got=$(awk -F, -v p="rank=$r/mpi=$1" '$1 == p { print $10 "," $11 }' regions.csv)
		[ "$got" = "$2,$2" ] || fail "rank $r: $1 sent,received ${got:-none} bytes, $2,$2 expected: $(cat regions.csv)"
	done
	got=$(awk -F, -v p="rank=$r/mpi=MPI_Barrier" '$1 == p { print $10 "," $11 }' regions.csv)
	[ "$got" = "0,0" ] || fail "rank $r: MPI_Barrier moved $got bytes"
done

# --view comm: the ring, rank r to rank r+1, STEPS messages of BYTES each, nothing else
"$SONDE" report --view comm --format csv prof >comm.csv 2>comm.err || fail "--view comm: $(cat comm.err)"
printf 'src,dst,messages,bytes,mean_bytes\n' >comm.want
for r in 0 1 2 3; do
	echo "$r,$(((r + 1) % 4)),$STEPS,$((STEPS * BYTES)),$BYTES" >>comm.want
done
sort -t, -k1,1n comm.want | cmp -s - <(sort -t, -k1,1n comm.csv) ||
	fail "--view comm: $(cat comm.csv), expected: $(cat comm.want)"
"$SONDE" report --view comm prof >comm.txt 2>/dev/null
grep -q "^$((STEPS * 4)) messages, .* between 4 pairs of 4 ranks" comm.txt || fail "--view comm text: $(cat comm.txt)"

# --view mpi: each rank's wall time split, its compute (wall - MPI) the program's own
# compute time (with rank 0's calibration of a unit) and what runs outside both (loading MPI's libraries before MPI_Init, exit):
# not below the program's (less 1 %), not above it by more than 5 % + 40 ms
"$SONDE" report --view mpi --format csv prof >mpiv.csv 2>mpiv.err || fail "--view mpi: $(cat mpiv.err)"
[ "$(tail -n +2 mpiv.csv | wc -l)" -eq 4 ] || fail "--view mpi: 4 ranks expected: $(cat mpiv.csv)"
for r in 0 1 2 3; do
	got=$(awk -F, -v r=$r 'NR > 1 && $1 == r { print $6 }' mpiv.csv)
	want=$(awk -v r=$r '$1 == "rank" && $2 == r { printf "%.3f", ($4 + $16) / 1e6 }' out)
	awk -v a="${got:-0}" -v b="$want" 'BEGIN { exit !(a >= b * 0.99 && a <= b * 1.05 + 40) }' ||
		fail "rank $r: --view mpi compute ${got:-?} ms, the program measured $want ms: $(cat mpiv.csv)"
	echo "rank $r: compute $got ms (program: $want ms)"
done

# --group-by rank: each rank's wall, MPI and compute time beside its samples, those of
# --view mpi
"$SONDE" report --group-by rank --format csv prof >gr.csv 2>/dev/null
head -1 gr.csv | grep -q ',wall_ms,mpi_ms,compute_ms$' || fail "--group-by rank: no MPI columns: $(head -1 gr.csv)"
for r in 0 1 2 3; do
	a=$(awk -F, -v r=$r '$1 == r { print $4 "," $5 "," $6 }' gr.csv)
	b=$(awk -F, -v r=$r 'NR > 1 && $1 == r { print $4 "," $5 "," $6 }' mpiv.csv)
	[ -n "$a" ] && [ "$a" = "$b" ] || fail "rank $r: --group-by rank says $a, --view mpi $b"
done

# the streams: 4 ranks, and the launcher (outer) apart, with no rank
"$SONDE" report --view regions --group-by rank,process --format csv prof >procs.csv 2>/dev/null
nr=$(cut -d, -f1 procs.csv | grep -o '^rank=[0-9]*' | sort -u | wc -l)
[ "$nr" -eq 4 ] || fail "4 ranks expected among the regions, $nr: $(cat procs.csv)"

# compute: each rank's share of the samples in compute_units against its share of the
# compute CPU time the ranks measured
"$SONDE" report --group-by rank --where "function~compute_units" --format csv prof >comp.csv 2>comp.err ||
	fail "report --group-by rank: $(cat comp.err)"
total=$(awk -F, 'NR > 1 { s += $2 } END { print s + 0 }' comp.csv)
[ "$total" -gt 0 ] || fail "no compute samples: $(cat comp.csv)"
for r in 0 1 2 3; do
	got=$(awk -F, -v r=$r 'NR > 1 && $1 == r { printf "%.2f", $3 }' comp.csv)
	want=$(awk -v r=$r '$1 == "rank" { c[$2] = $14; s += $14 } END { printf "%.2f", 100 * c[r] / s }' out)
	tol=$(share_tol "$total" "$want")
	[ "$tol" = 3.00 ] || fail "rank $r: $total compute samples give a tolerance of $tol points: too few to check 3"
	within "${got:-0}" "$want" "$tol" ||
		fail "rank $r: ${got:-0}% of the compute samples, its share of the compute CPU time $want% (tolerance $tol points, $total samples)"
	echo "rank $r: compute ${got}% of $total samples (program: $want%, tolerance $tol)"
done

# --stats rank: the 4 ranks only (the launcher's stream has no rank: in no unit), and the
# rank that computes least (0) and most (3) named
"$SONDE" report --stats rank --format csv prof >stats.csv 2>/dev/null
read -r n lo hi < <(awk -F, '$1 ~ /compute_units/ { print $11, $12, $13; exit }' stats.csv)
[ "$n" = 4 ] && [ "$lo" = 0 ] && [ "$hi" = 3 ] ||
	fail "--stats rank: compute_units over n=$n ranks, least in rank $lo, most in $hi (4, 0, 3 expected): $(head -3 stats.csv)"

# --view imbalance: compute_units slowest in rank 3, least in rank 0; every MPI call a row
# over the 4 ranks
"$SONDE" report --view imbalance --format csv prof >imb.csv 2>/dev/null
read -r n lo hi < <(awk -F, '$1 == "function" && $10 ~ /compute_units/ { print $9, $7, $8; exit }' imb.csv)
[ "$n" = 4 ] && [ "$lo" = 0 ] && [ "$hi" = 3 ] ||
	fail "--view imbalance: compute_units over n=$n, least in $lo, most in $hi (4, 0, 3 expected): $(head -12 imb.csv)"
for c in MPI_Sendrecv MPI_Allreduce MPI_Barrier; do
	grep -q "^region,ms,.*,4,mpi=$c\$" imb.csv || fail "--view imbalance: no row of $c over 4 ranks: $(head -12 imb.csv)"
done

# the page: a bar per rank, compute then MPI, rank 3's compute the longest, rank 0's the
# shortest; the mpi and imbalance tables
"$SONDE" report --format html -o page.html prof >/dev/null 2>&1 || fail "report --format html"
grep -q '<section id="ranks">' page.html || fail "the page has no ranks section"
[ "$(grep -o '<rect class="mpi"' page.html | wc -l)" -eq 4 ] || fail "the page: 4 MPI bars expected"
grep -o '<rect class="compute"[^>]*width="[0-9.]*"' page.html | sed 's/.*width="//; s/"//' >bars.txt
awk 'NR == 1 { a = $1 } NR == 4 { d = $1 } END { exit !(NR == 4 && d > a) }' bars.txt ||
	fail "the page's compute bars (rank order): $(tr '\n' ' ' <bars.txt)"
grep -q 'Imbalance across ranks' page.html || fail "the page has no imbalance table"

# --where rank=2: rank 2's rows only; a rank of no stream is said
"$SONDE" report --view regions --group-by rank,mpi --where rank=2 --format csv prof >r2.csv 2>/dev/null
[ "$(tail -n +2 r2.csv | grep -vc '^rank=2/')" -eq 0 ] && [ "$(tail -n +2 r2.csv | wc -l)" -ge 5 ] ||
	fail "--where rank=2: $(cat r2.csv)"
"$SONDE" report --where rank=9 prof >r9.out 2>r9.err || fail "--where rank=9 failed: $(cat r9.err)"
grep -q '^sonde: report: --where: no sample or region of the streams matches' r9.err ||
	fail "--where rank=9 was not said: $(cat r9.err)"

# names: MPI_*, never PMPI_* nor sonde's wrapper module
"$SONDE" report --top 0 --format csv prof >flat.csv 2>/dev/null
grep -q 'PMPI_\|libsonde_mpi' flat.csv && fail "PMPI_ or libsonde_mpi frames shown: $(grep 'PMPI_\|libsonde_mpi' flat.csv | head -3)"
if [ "${case%%_*}" = c ]; then
	# cpu-time may take no sample in MPI_Sendrecv (a rank that waits yields its CPU to
	# the others on a loaded machine); wall-time samples its waits, so a short run with
	# it has MPI_Sendrecv for certain (rank 0 waits there for ranks 1 to 3 every step)
	watched 240 "$SONDE" run -e wall-time@1ms -o wprof -- "${MPIRUN[@]}" "$PROG" 3 $ITERS \
		>wout 2>werr || fail "the wall-time job failed: $(tail -5 werr) $(cat hang.txt 2>/dev/null)"
	"$SONDE" report --view callers MPI_Sendrecv wprof >callers.out 2>callers.err ||
		fail "--view callers MPI_Sendrecv: $(cat callers.err)"
	grep -q ' exchange$' callers.out || fail "MPI_Sendrecv's caller is not exchange: $(cat callers.out)"
	"$SONDE" report --top 0 --format csv wprof >wflat.csv 2>/dev/null
	grep -q 'PMPI_\|libsonde_mpi' wflat.csv && fail "PMPI_ or libsonde_mpi frames shown: $(grep 'PMPI_\|libsonde_mpi' wflat.csv | head -3)"
fi
pass "$case: 4 ranks, MPI calls counted and timed per rank, compute shares, --where rank"
