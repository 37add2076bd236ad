/* calls.h - the MPI calls libsonde_mpi.so wraps: those that block or
 * communicate (docs/ENV.md, "MPI"). One X-macro row each:
 *
 *   X(NAME, PARAMS, ARGS)
 *
 * NAME without its MPI_ prefix, PARAMS as Open MPI's mpi.h declares them (a
 * mismatch fails the build: the wrapper is declared against the real
 * prototype), ARGS the same names to pass on.
 */
#ifndef SONDE_MPI_CALLS_H
#define SONDE_MPI_CALLS_H

#define SD_MPI_TIMED_CALLS(X)                                                                  \
	X(Init, (int *ac, char ***av), (ac, av))                                               \
	X(Init_thread, (int *ac, char ***av, int req, int *got), (ac, av, req, got))           \
	X(Finalize, (void), ())                                                                \
	X(Send, (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c), (b, n, t, d, g, c)) \
	X(Ssend, (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c), (b, n, t, d, g, c)) \
	X(Bsend, (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c), (b, n, t, d, g, c)) \
	X(Rsend, (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c), (b, n, t, d, g, c)) \
	X(Recv, (void *b, int n, MPI_Datatype t, int s, int g, MPI_Comm c, MPI_Status *st),    \
	  (b, n, t, s, g, c, st))                                                              \
	X(Sendrecv, (const void *sb, int sn, MPI_Datatype stt, int d, int sg, void *rb, int rn, \
		     MPI_Datatype rt, int s, int rg, MPI_Comm c, MPI_Status *st),              \
	  (sb, sn, stt, d, sg, rb, rn, rt, s, rg, c, st))                                      \
	X(Sendrecv_replace, (void *b, int n, MPI_Datatype t, int d, int sg, int s, int rg,     \
			     MPI_Comm c, MPI_Status *st), (b, n, t, d, sg, s, rg, c, st))      \
	X(Isend, (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *r), \
	  (b, n, t, d, g, c, r))                                                               \
	X(Issend, (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *r), \
	  (b, n, t, d, g, c, r))                                                               \
	X(Ibsend, (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *r), \
	  (b, n, t, d, g, c, r))                                                               \
	X(Irsend, (const void *b, int n, MPI_Datatype t, int d, int g, MPI_Comm c, MPI_Request *r), \
	  (b, n, t, d, g, c, r))                                                               \
	X(Irecv, (void *b, int n, MPI_Datatype t, int s, int g, MPI_Comm c, MPI_Request *r),   \
	  (b, n, t, s, g, c, r))                                                               \
	X(Wait, (MPI_Request * r, MPI_Status *st), (r, st))                                    \
	X(Waitall, (int n, MPI_Request r[], MPI_Status st[]), (n, r, st))                      \
	X(Waitany, (int n, MPI_Request r[], int *i, MPI_Status *st), (n, r, i, st))            \
	X(Waitsome, (int n, MPI_Request r[], int *o, int i[], MPI_Status st[]), (n, r, o, i, st)) \
	X(Test, (MPI_Request * r, int *f, MPI_Status *st), (r, f, st))                         \
	X(Testall, (int n, MPI_Request r[], int *f, MPI_Status st[]), (n, r, f, st))           \
	X(Testany, (int n, MPI_Request r[], int *i, int *f, MPI_Status *st), (n, r, i, f, st)) \
	X(Testsome, (int n, MPI_Request r[], int *o, int i[], MPI_Status st[]), (n, r, o, i, st)) \
	X(Probe, (int s, int g, MPI_Comm c, MPI_Status *st), (s, g, c, st))                    \
	X(Iprobe, (int s, int g, MPI_Comm c, int *f, MPI_Status *st), (s, g, c, f, st))        \
	X(Mprobe, (int s, int g, MPI_Comm c, MPI_Message *m, MPI_Status *st), (s, g, c, m, st)) \
	X(Improbe, (int s, int g, MPI_Comm c, int *f, MPI_Message *m, MPI_Status *st),         \
	  (s, g, c, f, m, st))                                                                 \
	X(Mrecv, (void *b, int n, MPI_Datatype t, MPI_Message *m, MPI_Status *st), (b, n, t, m, st)) \
	X(Barrier, (MPI_Comm c), (c))                                                          \
	X(Bcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c), (b, n, t, root, c))   \
	X(Reduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c), \
	  (s, r, n, t, o, root, c))                                                            \
	X(Allreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c),    \
	  (s, r, n, t, o, c))                                                                  \
	X(Gather, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,   \
		   int root, MPI_Comm c), (s, sn, st, r, rn, rt, root, c))                      \
	X(Gatherv, (const void *s, int sn, MPI_Datatype st, void *r, const int rn[],           \
		    const int d[], MPI_Datatype rt, int root, MPI_Comm c),                     \
	  (s, sn, st, r, rn, d, rt, root, c))                                                  \
	X(Scatter, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,  \
		    int root, MPI_Comm c), (s, sn, st, r, rn, rt, root, c))                     \
	X(Scatterv, (const void *s, const int sn[], const int d[], MPI_Datatype st, void *r,   \
		     int rn, MPI_Datatype rt, int root, MPI_Comm c),                           \
	  (s, sn, d, st, r, rn, rt, root, c))                                                  \
	X(Allgather, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, \
		      MPI_Comm c), (s, sn, st, r, rn, rt, c))                                   \
	X(Allgatherv, (const void *s, int sn, MPI_Datatype st, void *r, const int rn[],        \
		       const int d[], MPI_Datatype rt, MPI_Comm c), (s, sn, st, r, rn, d, rt, c)) \
	X(Alltoall, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, \
		     MPI_Comm c), (s, sn, st, r, rn, rt, c))                                    \
	X(Alltoallv, (const void *s, const int sn[], const int sd[], MPI_Datatype st, void *r, \
		      const int rn[], const int rd[], MPI_Datatype rt, MPI_Comm c),            \
	  (s, sn, sd, st, r, rn, rd, rt, c))                                                   \
	X(Alltoallw, (const void *s, const int sn[], const int sd[], const MPI_Datatype st[],  \
		      void *r, const int rn[], const int rd[], const MPI_Datatype rt[],        \
		      MPI_Comm c), (s, sn, sd, st, r, rn, rd, rt, c))                           \
	X(Reduce_scatter, (const void *s, void *r, const int rn[], MPI_Datatype t, MPI_Op o,   \
			   MPI_Comm c), (s, r, rn, t, o, c))                                    \
	X(Reduce_scatter_block, (const void *s, void *r, int rn, MPI_Datatype t, MPI_Op o,     \
				 MPI_Comm c), (s, r, rn, t, o, c))                              \
	X(Scan, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c),         \
	  (s, r, n, t, o, c))                                                                  \
	X(Exscan, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c),       \
	  (s, r, n, t, o, c))                                                                  \
	X(Ibarrier, (MPI_Comm c, MPI_Request *q), (c, q))                                      \
	X(Ibcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *q),      \
	  (b, n, t, root, c, q))                                                               \
	X(Ireduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, int root,         \
		    MPI_Comm c, MPI_Request *q), (s, r, n, t, o, root, c, q))                   \
	X(Iallreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c,    \
		       MPI_Request *q), (s, r, n, t, o, c, q))                                 \
	X(Iallgather, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, \
		       MPI_Comm c, MPI_Request *q), (s, sn, st, r, rn, rt, c, q))              \
	X(Ialltoall, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, \
		      MPI_Comm c, MPI_Request *q), (s, sn, st, r, rn, rt, c, q))               \
	X(Win_fence, (int a, MPI_Win w), (a, w))                                               \
	X(Win_lock, (int l, int r, int a, MPI_Win w), (l, r, a, w))                            \
	X(Win_unlock, (int r, MPI_Win w), (r, w))                                              \
	X(Win_lock_all, (int a, MPI_Win w), (a, w))                                            \
	X(Win_unlock_all, (MPI_Win w), (w))                                                    \
	X(Win_flush, (int r, MPI_Win w), (r, w))                                               \
	X(Win_flush_all, (MPI_Win w), (w))                                                     \
	X(Win_flush_local, (int r, MPI_Win w), (r, w))                                         \
	X(Win_start, (MPI_Group g, int a, MPI_Win w), (g, a, w))                               \
	X(Win_complete, (MPI_Win w), (w))                                                      \
	X(Win_post, (MPI_Group g, int a, MPI_Win w), (g, a, w))                                \
	X(Win_wait, (MPI_Win w), (w))                                                          \
	X(Put, (const void *o, int on, MPI_Datatype ot, int tr, MPI_Aint td, int tn,           \
		MPI_Datatype tt, MPI_Win w), (o, on, ot, tr, td, tn, tt, w))                    \
	X(Get, (void *o, int on, MPI_Datatype ot, int tr, MPI_Aint td, int tn, MPI_Datatype tt, \
		MPI_Win w), (o, on, ot, tr, td, tn, tt, w))                                     \
	X(Accumulate, (const void *o, int on, MPI_Datatype ot, int tr, MPI_Aint td, int tn,    \
		       MPI_Datatype tt, MPI_Op op, MPI_Win w), (o, on, ot, tr, td, tn, tt, op, w))

#endif
