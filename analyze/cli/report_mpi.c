/*
 * report_mpi.c: `sonde-mpi`, the sonde CLI as an MPI program, for reports that outgrow one
 * process: `mpirun -n K sonde-mpi report [OPTIONS] PATH...` prints what `sonde report`
 * prints for the same arguments, byte for byte. Ranks 1..K-1 each parse a share of the
 * streams (file i goes to rank 1 + i % (K-1)) and send each parsed stream (the load of
 * profile/wire.c) to rank 0, which merges them in file order as the local loader does,
 * symbolizes and prints. MPI carries the data; the parsing and merging are the
 * analyzer's own (profile/load.c's remote loader).
 *
 * Ranks other than 0 print nothing (their stdout and stderr are /dev/null) and end after
 * their last stream. Each rank calls the loader's agreement once: in the load, or after
 * the command when it never loaded (a usage error, another command), so that no rank
 * waits for another that is gone. Commands other than report run in rank 0 alone.
 * A parsed stream goes as one message (MPI_Ssend: a parsing rank is at most one stream
 * ahead of rank 0, so memory stays bounded by the merge's window).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/cli/cli.h"
#include "analyze/profile/profile.h"

#undef main /* this file is compiled with main=sd_cli_main, for cli/main.c's */
int sd_cli_main(int argc, char **argv);

enum { TAG_LOAD = 21 };

struct mpi_ctx { int agreed; };

static int agree(void *arg, uint64_t n, uint64_t names)
{
	struct mpi_ctx *c = arg;
	/* max of each value and of its complement: all equal when max == ~max(~v) */
	uint64_t v[4] = { n, names, ~n, ~names }, m[4];
	c->agreed = 1;
	if (MPI_Allreduce(v, m, 4, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
		return 0;
	return n != UINT64_MAX && m[0] == ~m[2] && m[1] == ~m[3];
}

static int send_load(void *arg, const uint8_t *buf, size_t len)
{
	(void)arg;
	if (len > INT_MAX)
		return -E2BIG;
	return MPI_Ssend(buf, (int)len, MPI_BYTE, 0, TAG_LOAD, MPI_COMM_WORLD) == MPI_SUCCESS
		       ? 0 : -EIO;
}

static int recv_load(void *arg, int from, uint8_t **buf, size_t *len)
{
	MPI_Status st;
	int n = 0;
	(void)arg;
	if (MPI_Probe(from, TAG_LOAD, MPI_COMM_WORLD, &st) != MPI_SUCCESS ||
	    MPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS || n < 0)
		return -EIO;
	if (!(*buf = malloc((size_t)n + 1)))
		return -ENOMEM;
	*len = (size_t)n;
	return MPI_Recv(*buf, n, MPI_BYTE, from, TAG_LOAD, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
			       MPI_SUCCESS ? 0 : -EIO;
}

static void finished(void *arg)
{
	(void)arg;
	MPI_Finalize();
	exit(0);
}

int main(int argc, char **argv)
{
	struct mpi_ctx ctx = { 0 };
	int me = 0, nprocs = 1;
	if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
		return 3;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	int report = argc > 1 && !strcmp(argv[1], "report");
	if (me != 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
			close(null);
		}
		if (!report || nprocs < 2)
			finished(NULL);
	}
	struct sd_load_remote r = { &ctx, me, nprocs, agree, send_load, recv_load, finished };
	if (report && nprocs > 1)
		sd_load_set_remote(&r);
	sd_cli_no_terminal(); /* a rank's stdout is a pty wherever the job's output goes */
	int rc = sd_cli_main(argc, argv);
	if (report && nprocs > 1 && !ctx.agreed)
		agree(&ctx, UINT64_MAX, 0); /* it never loaded: the others must not wait */
	if (me != 0)
		finished(NULL);
	MPI_Finalize();
	return rc;
}
