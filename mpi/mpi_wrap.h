/* mpi_wrap.h - libsonde_mpi.so's entry and exit of a wrapped MPI call
 * (wrap.c) and the bytes and partners of the calls that move data
 * (traffic.c; the wrappers in p2p.c and coll.c). */
#ifndef SONDE_MPI_WRAP_H
#define SONDE_MPI_WRAP_H

#include <mpi.h>
#include <stdint.h>

/* Resolves *real (the real PMPI_ function named pname) if needed and enters
 * a call: 1 for the thread's outermost MPI call (to be timed), 0 for one
 * inside another, -1 when the real function cannot be found (said). */
int sd_mpi_enter(void **real, const char *pname);
/* Opens the region mpi=name (the outermost call). */
void sd_mpi_begin(const char *name);
/* Leaves the call entered; closes its region if it was the outermost, charged
 * the bytes it sent and received. */
void sd_mpi_leave(int outer);
void sd_mpi_leave_tx(int outer, uint64_t sent, uint64_t recv);
/* Are bytes wanted? Only when libsonde.so is loaded and keeps them (without it, the
 * wrappers only pass the calls on, and count nothing). */
int sd_mpi_counting(void);

/* traffic.c. The real helper function PMPI_<name> (not wrapped), or NULL. */
void *sd_mpi_helper(void **cache, const char *pname);
/* After MPI_Init or MPI_Init_thread returned rc: the world's size to sonde. */
void sd_mpi_inited(int rc);
/* count elements of t, in bytes (0: unknown or negative). */
uint64_t sd_mpi_bytes(int count, MPI_Datatype t);
/* The sum of counts[0..n) elements of t, in bytes. */
uint64_t sd_mpi_bytes_v(const int *counts, int n, MPI_Datatype t);
/* What a completed receive's status says it received, in bytes. */
uint64_t sd_mpi_status_bytes(const MPI_Status *st);
/* c's size and this process's rank in c (-1: unknown). */
int sd_mpi_comm_size(MPI_Comm c);
int sd_mpi_comm_rank(MPI_Comm c);
/* A point-to-point message of `bytes` to rank dest of c: counted for the
 * matrix (by its world rank; MPI_PROC_NULL is no message). */
void sd_mpi_sent(MPI_Comm c, int dest, uint64_t bytes);

/* Opens a wrapped call: the real function is resolved, a call nested in another
 * passes straight on. Declares `outer`. */
#define SD_MPI_OPEN(NAME, ARGS)                                                        \
	int outer = sd_mpi_enter((void **)&real_##NAME, "PMPI_" #NAME);                \
	if (outer < 0)                                                                 \
		return MPI_ERR_INTERN;                                                 \
	if (!outer)                                                                    \
		return real_##NAME ARGS;                                               \
	sd_mpi_begin("MPI_" #NAME)

#endif
