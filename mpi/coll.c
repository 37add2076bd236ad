/* coll.c - the wrapped collective and one-sided MPI calls that move data:
 * each call's region is charged the bytes this process contributed (sent)
 * and the bytes it got (received), counted as MPI counts them (count times
 * the datatype's size; a root's share of a gather or scatter included, an
 * MPI_IN_PLACE operand not), whatever algorithm the library runs. A
 * non-blocking collective is counted when it is posted. Collectives are not
 * in the communication matrix (its messages are the point-to-point ones:
 * p2p.c). MPI_Barrier and MPI_Ibarrier move nothing and stay in wrap.c.
 */
#define _GNU_SOURCE
#include <mpi.h>

#include "mpi/mpi_wrap.h"

#define ALIAS(NAME, PARAMS) int MPI_##NAME PARAMS __attribute__((alias("PMPI_" #NAME)));

/* A wrapper whose bytes, once the call returned MPI_SUCCESS, are SENT and RECV. */
#define COLL(NAME, PARAMS, ARGS, SENT, RECV)                                          \
	static int(*real_##NAME) PARAMS;                                              \
	int PMPI_##NAME PARAMS                                                        \
	{                                                                             \
		SD_MPI_OPEN(NAME, ARGS);                                              \
		int rc = real_##NAME ARGS;                                            \
		uint64_t sent = 0, recv = 0;                                          \
		if (rc == MPI_SUCCESS && sd_mpi_counting()) {                          \
			sent = (SENT);                                                \
			recv = (RECV);                                                \
		}                                                                     \
		sd_mpi_leave_tx(outer, sent, recv);                                   \
		return rc;                                                            \
	}                                                                             \
	ALIAS(NAME, PARAMS)

#define IN_PLACE(p) ((const void *)(p) == MPI_IN_PLACE)
/* This process is the root: MPI_ROOT in an intercommunicator's root group. */
static int is_root(int root, MPI_Comm c)
{
	return root == MPI_ROOT || (root >= 0 && sd_mpi_comm_rank(c) == root);
}
static uint64_t size_of(MPI_Comm c)
{
	int n = sd_mpi_comm_size(c);
	return n > 0 ? (uint64_t)n : 0;
}
static uint64_t own(const int *counts, MPI_Datatype t, MPI_Comm c)
{
	int me = sd_mpi_comm_rank(c);
	return counts && me >= 0 ? sd_mpi_bytes(counts[me], t) : 0;
}
static uint64_t per_type(const int *counts, const MPI_Datatype *t, MPI_Comm c)
{
	uint64_t sum = 0, n = size_of(c);
	for (uint64_t i = 0; counts && t && i < n; i++)
		sum += sd_mpi_bytes(counts[i], t[i]);
	return sum;
}
#define NP(c) ((int)size_of(c))

COLL(Bcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c), (b, n, t, root, c),
     is_root(root, c) ? sd_mpi_bytes(n, t) : 0,
     is_root(root, c) || root == MPI_PROC_NULL ? 0 : sd_mpi_bytes(n, t))
COLL(Ibcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *q),
     (b, n, t, root, c, q), is_root(root, c) ? sd_mpi_bytes(n, t) : 0,
     is_root(root, c) || root == MPI_PROC_NULL ? 0 : sd_mpi_bytes(n, t))
COLL(Reduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c),
     (s, r, n, t, o, root, c), root == MPI_PROC_NULL ? 0 : sd_mpi_bytes(n, t),
     is_root(root, c) ? sd_mpi_bytes(n, t) : 0)
COLL(Ireduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c,
	       MPI_Request *q), (s, r, n, t, o, root, c, q),
     root == MPI_PROC_NULL ? 0 : sd_mpi_bytes(n, t), is_root(root, c) ? sd_mpi_bytes(n, t) : 0)
COLL(Allreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c),
     (s, r, n, t, o, c), sd_mpi_bytes(n, t), sd_mpi_bytes(n, t))
COLL(Iallreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c,
		  MPI_Request *q), (s, r, n, t, o, c, q), sd_mpi_bytes(n, t), sd_mpi_bytes(n, t))
COLL(Scan, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c),
     (s, r, n, t, o, c), sd_mpi_bytes(n, t), sd_mpi_bytes(n, t))
COLL(Exscan, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c),
     (s, r, n, t, o, c), sd_mpi_bytes(n, t), sd_mpi_bytes(n, t))
COLL(Reduce_scatter, (const void *s, void *r, const int rn[], MPI_Datatype t, MPI_Op o,
		      MPI_Comm c), (s, r, rn, t, o, c), sd_mpi_bytes_v(rn, NP(c), t), own(rn, t, c))
COLL(Reduce_scatter_block, (const void *s, void *r, int rn, MPI_Datatype t, MPI_Op o,
			    MPI_Comm c), (s, r, rn, t, o, c),
     sd_mpi_bytes(rn, t) * size_of(c), sd_mpi_bytes(rn, t))
COLL(Gather, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
	      int root, MPI_Comm c), (s, sn, st, r, rn, rt, root, c),
     IN_PLACE(s) || root == MPI_PROC_NULL || root == MPI_ROOT ? 0 : sd_mpi_bytes(sn, st),
     is_root(root, c) ? sd_mpi_bytes(rn, rt) * size_of(c) : 0)
COLL(Gatherv, (const void *s, int sn, MPI_Datatype st, void *r, const int rn[], const int d[],
	       MPI_Datatype rt, int root, MPI_Comm c), (s, sn, st, r, rn, d, rt, root, c),
     IN_PLACE(s) || root == MPI_PROC_NULL || root == MPI_ROOT ? 0 : sd_mpi_bytes(sn, st),
     is_root(root, c) ? sd_mpi_bytes_v(rn, NP(c), rt) : 0)
COLL(Scatter, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
	       int root, MPI_Comm c), (s, sn, st, r, rn, rt, root, c),
     is_root(root, c) ? sd_mpi_bytes(sn, st) * size_of(c) : 0,
     IN_PLACE(r) || root == MPI_PROC_NULL || root == MPI_ROOT ? 0 : sd_mpi_bytes(rn, rt))
COLL(Scatterv, (const void *s, const int sn[], const int d[], MPI_Datatype st, void *r, int rn,
		MPI_Datatype rt, int root, MPI_Comm c), (s, sn, d, st, r, rn, rt, root, c),
     is_root(root, c) ? sd_mpi_bytes_v(sn, NP(c), st) : 0,
     IN_PLACE(r) || root == MPI_PROC_NULL || root == MPI_ROOT ? 0 : sd_mpi_bytes(rn, rt))
COLL(Allgather, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
		 MPI_Comm c), (s, sn, st, r, rn, rt, c),
     IN_PLACE(s) ? sd_mpi_bytes(rn, rt) : sd_mpi_bytes(sn, st), sd_mpi_bytes(rn, rt) * size_of(c))
COLL(Iallgather, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
		  MPI_Comm c, MPI_Request *q), (s, sn, st, r, rn, rt, c, q),
     IN_PLACE(s) ? sd_mpi_bytes(rn, rt) : sd_mpi_bytes(sn, st), sd_mpi_bytes(rn, rt) * size_of(c))
COLL(Allgatherv, (const void *s, int sn, MPI_Datatype st, void *r, const int rn[],
		  const int d[], MPI_Datatype rt, MPI_Comm c), (s, sn, st, r, rn, d, rt, c),
     IN_PLACE(s) ? own(rn, rt, c) : sd_mpi_bytes(sn, st), sd_mpi_bytes_v(rn, NP(c), rt))
COLL(Alltoall, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
		MPI_Comm c), (s, sn, st, r, rn, rt, c),
     (IN_PLACE(s) ? sd_mpi_bytes(rn, rt) : sd_mpi_bytes(sn, st)) * size_of(c),
     sd_mpi_bytes(rn, rt) * size_of(c))
COLL(Ialltoall, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
		 MPI_Comm c, MPI_Request *q), (s, sn, st, r, rn, rt, c, q),
     (IN_PLACE(s) ? sd_mpi_bytes(rn, rt) : sd_mpi_bytes(sn, st)) * size_of(c),
     sd_mpi_bytes(rn, rt) * size_of(c))
COLL(Alltoallv, (const void *s, const int sn[], const int sd[], MPI_Datatype st, void *r,
		 const int rn[], const int rd[], MPI_Datatype rt, MPI_Comm c),
     (s, sn, sd, st, r, rn, rd, rt, c),
     IN_PLACE(s) ? sd_mpi_bytes_v(rn, NP(c), rt) : sd_mpi_bytes_v(sn, NP(c), st),
     sd_mpi_bytes_v(rn, NP(c), rt))
COLL(Alltoallw, (const void *s, const int sn[], const int sd[], const MPI_Datatype st[],
		 void *r, const int rn[], const int rd[], const MPI_Datatype rt[], MPI_Comm c),
     (s, sn, sd, st, r, rn, rd, rt, c),
     IN_PLACE(s) ? per_type(rn, rt, c) : per_type(sn, st, c), per_type(rn, rt, c))

/* One-sided: what the origin puts (or accumulates) is sent, what it gets received. */
COLL(Put, (const void *o, int on, MPI_Datatype ot, int tr, MPI_Aint td, int tn, MPI_Datatype tt,
	   MPI_Win w), (o, on, ot, tr, td, tn, tt, w),
     tr == MPI_PROC_NULL ? 0 : sd_mpi_bytes(on, ot), 0)
COLL(Get, (void *o, int on, MPI_Datatype ot, int tr, MPI_Aint td, int tn, MPI_Datatype tt,
	   MPI_Win w), (o, on, ot, tr, td, tn, tt, w),
     0, tr == MPI_PROC_NULL ? 0 : sd_mpi_bytes(on, ot))
COLL(Accumulate, (const void *o, int on, MPI_Datatype ot, int tr, MPI_Aint td, int tn,
		  MPI_Datatype tt, MPI_Op op, MPI_Win w), (o, on, ot, tr, td, tn, tt, op, w),
     tr == MPI_PROC_NULL ? 0 : sd_mpi_bytes(on, ot), 0)
