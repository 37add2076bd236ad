/* p2p.c - the wrapped MPI calls of start-up and of point-to-point messages,
 * which wrap.c's generic wrapper cannot serve: MPI_Init tells sonde the
 * world's size, the sends count their bytes and peer (the communication
 * matrix), the receives the bytes their status says arrived (a status is
 * supplied when the caller passed MPI_STATUS_IGNORE). Each MPI_X is an alias
 * of PMPI_X, as in wrap.c. A non-blocking receive's bytes are not known
 * when it is posted and are not counted (its sender's are).
 */
#define _GNU_SOURCE
#include <mpi.h>

#include "mpi/mpi_wrap.h"

#define ALIAS(NAME, PARAMS) int MPI_##NAME PARAMS __attribute__((alias("PMPI_" #NAME)));

static int (*real_Init)(int *, char ***);
int PMPI_Init(int *ac, char ***av)
{
	SD_MPI_OPEN(Init, (ac, av));
	int rc = real_Init(ac, av);
	sd_mpi_inited(rc);
	sd_mpi_leave(outer);
	return rc;
}
ALIAS(Init, (int *ac, char ***av))

static int (*real_Init_thread)(int *, char ***, int, int *);
int PMPI_Init_thread(int *ac, char ***av, int req, int *got)
{
	SD_MPI_OPEN(Init_thread, (ac, av, req, got));
	int rc = real_Init_thread(ac, av, req, got);
	sd_mpi_inited(rc);
	sd_mpi_leave(outer);
	return rc;
}
ALIAS(Init_thread, (int *ac, char ***av, int req, int *got))

/* Send, Ssend, Bsend, Rsend and their non-blocking forms (q: the request). */
#define SEND(NAME, PARAMS, ARGS)                                                      \
	static int(*real_##NAME) PARAMS;                                              \
	int PMPI_##NAME PARAMS                                                        \
	{                                                                             \
		SD_MPI_OPEN(NAME, ARGS);                                              \
		int rc = real_##NAME ARGS;                                            \
		uint64_t bytes = 0;                                                   \
		if (rc == MPI_SUCCESS && d != MPI_PROC_NULL && sd_mpi_counting()) {    \
			bytes = sd_mpi_bytes(n, t);                                   \
			sd_mpi_sent(c, d, bytes);                                     \
		}                                                                     \
		sd_mpi_leave_tx(outer, bytes, 0);                                     \
		return rc;                                                            \
	}                                                                             \
	ALIAS(NAME, PARAMS)

#define SEND_PARAMS (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c)
#define ISEND_PARAMS                                                                  \
	(const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *q)
SEND(Send, SEND_PARAMS, (b, n, t, d, g, c))
SEND(Ssend, SEND_PARAMS, (b, n, t, d, g, c))
SEND(Bsend, SEND_PARAMS, (b, n, t, d, g, c))
SEND(Rsend, SEND_PARAMS, (b, n, t, d, g, c))
SEND(Isend, ISEND_PARAMS, (b, n, t, d, g, c, q))
SEND(Issend, ISEND_PARAMS, (b, n, t, d, g, c, q))
SEND(Ibsend, ISEND_PARAMS, (b, n, t, d, g, c, q))
SEND(Irsend, ISEND_PARAMS, (b, n, t, d, g, c, q))

static int (*real_Recv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
int PMPI_Recv(void *b, int n, MPI_Datatype t, int s, int g, MPI_Comm c, MPI_Status *st)
{
	MPI_Status own;
	SD_MPI_OPEN(Recv, (b, n, t, s, g, c, st));
	int counting = sd_mpi_counting();
	MPI_Status *use = st == MPI_STATUS_IGNORE && counting ? &own : st;
	int rc = real_Recv(b, n, t, s, g, c, use);
	sd_mpi_leave_tx(outer, 0, rc == MPI_SUCCESS && counting ? sd_mpi_status_bytes(use) : 0);
	return rc;
}
ALIAS(Recv, (void *b, int n, MPI_Datatype t, int s, int g, MPI_Comm c, MPI_Status *st))

static int (*real_Mrecv)(void *, int, MPI_Datatype, MPI_Message *, MPI_Status *);
int PMPI_Mrecv(void *b, int n, MPI_Datatype t, MPI_Message *m, MPI_Status *st)
{
	MPI_Status own;
	SD_MPI_OPEN(Mrecv, (b, n, t, m, st));
	int counting = sd_mpi_counting();
	MPI_Status *use = st == MPI_STATUS_IGNORE && counting ? &own : st;
	int rc = real_Mrecv(b, n, t, m, use);
	sd_mpi_leave_tx(outer, 0, rc == MPI_SUCCESS && counting ? sd_mpi_status_bytes(use) : 0);
	return rc;
}
ALIAS(Mrecv, (void *b, int n, MPI_Datatype t, MPI_Message *m, MPI_Status *st))

#define SENDRECV_PARAMS                                                               \
	(const void *sb, int sn, MPI_Datatype stt, int d, int sg, void *rb, int rn,    \
	 MPI_Datatype rt, int s, int rg, MPI_Comm c, MPI_Status *st)
static int(*real_Sendrecv) SENDRECV_PARAMS;
int PMPI_Sendrecv SENDRECV_PARAMS
{
	MPI_Status own;
	SD_MPI_OPEN(Sendrecv, (sb, sn, stt, d, sg, rb, rn, rt, s, rg, c, st));
	int counting = sd_mpi_counting();
	MPI_Status *use = st == MPI_STATUS_IGNORE && counting ? &own : st;
	int rc = real_Sendrecv(sb, sn, stt, d, sg, rb, rn, rt, s, rg, c, use);
	uint64_t sent = rc == MPI_SUCCESS && d != MPI_PROC_NULL && counting ? sd_mpi_bytes(sn, stt) : 0;
	if (sent)
		sd_mpi_sent(c, d, sent);
	sd_mpi_leave_tx(outer, sent, rc == MPI_SUCCESS && counting ? sd_mpi_status_bytes(use) : 0);
	return rc;
}
ALIAS(Sendrecv, SENDRECV_PARAMS)

#define REPLACE_PARAMS                                                                \
	(void *b, int n, MPI_Datatype t, int d, int sg, int s, int rg, MPI_Comm c,     \
	 MPI_Status *st)
static int(*real_Sendrecv_replace) REPLACE_PARAMS;
int PMPI_Sendrecv_replace REPLACE_PARAMS
{
	MPI_Status own;
	SD_MPI_OPEN(Sendrecv_replace, (b, n, t, d, sg, s, rg, c, st));
	int counting = sd_mpi_counting();
	MPI_Status *use = st == MPI_STATUS_IGNORE && counting ? &own : st;
	int rc = real_Sendrecv_replace(b, n, t, d, sg, s, rg, c, use);
	uint64_t sent = rc == MPI_SUCCESS && d != MPI_PROC_NULL && counting ? sd_mpi_bytes(n, t) : 0;
	if (sent)
		sd_mpi_sent(c, d, sent);
	sd_mpi_leave_tx(outer, sent, rc == MPI_SUCCESS && counting ? sd_mpi_status_bytes(use) : 0);
	return rc;
}
ALIAS(Sendrecv_replace, REPLACE_PARAMS)
