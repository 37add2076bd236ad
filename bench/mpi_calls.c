/* mpi_calls.c - ns per MPI call, for bench/mpi.sh: every rank makes CALLS
 * calls of each kind (MPI_Barrier; MPI_Sendrecv of 4 bytes with its ring
 * neighbours; MPI_Allreduce of one double), REPS times, timed with
 * CLOCK_MONOTONIC; rank 0 prints the median per kind:
 *   barrier NS sendrecv NS allreduce NS
 * usage: bench_mpi_calls [CALLS [REPS]] (defaults 20000, 5) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int calls = argc > 1 ? atoi(argv[1]) : 20000, reps = argc > 2 ? atoi(argv[2]) : 5;
	if (reps > 64)
		reps = 64;
	double t[3][64], in = rank, out;
	int sbuf = rank, rbuf;
	for (int r = 0; r < reps; r++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = now();
		for (int i = 0; i < calls; i++)
			MPI_Barrier(MPI_COMM_WORLD);
		t[0][r] = (now() - t0) / calls;
		t0 = now();
		for (int i = 0; i < calls; i++)
			MPI_Sendrecv(&sbuf, 1, MPI_INT, (rank + 1) % size, 1, &rbuf, 1, MPI_INT,
				     (rank + size - 1) % size, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		t[1][r] = (now() - t0) / calls;
		t0 = now();
		for (int i = 0; i < calls; i++)
			MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		t[2][r] = (now() - t0) / calls;
	}
	for (int k = 0; k < 3; k++)
		qsort(t[k], (size_t)reps, sizeof t[k][0], cmp);
	if (!rank)
		printf("barrier %.0f sendrecv %.0f allreduce %.0f\n", t[0][reps / 2], t[1][reps / 2],
		       t[2][reps / 2]);
	MPI_Finalize();
	return 0;
}
