/* calls.h - the MPI calls libsonde_mpi.so wraps by wrap.c's generic wrapper:
 * those that block or communicate without moving data of their own (waits,
 * tests, probes, barriers, one-sided synchronisation; docs/ENV.md, "MPI").
 * Those that move data are written out in p2p.c and coll.c, which count
 * their bytes. One X-macro row each:
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
	X(Finalize, (void), ())                                                                \
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
	X(Barrier, (MPI_Comm c), (c))                                                          \
	X(Ibarrier, (MPI_Comm c, MPI_Request *q), (c, q))                                      \
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
	X(Win_wait, (MPI_Win w), (w))

#endif
