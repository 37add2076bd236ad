/* mpi_wrap.h - libsonde_mpi.so's entry and exit of a wrapped MPI call
 * (wrap.c). */
#ifndef SONDE_MPI_WRAP_H
#define SONDE_MPI_WRAP_H

/* Resolves *real (the real PMPI_ function named pname) if needed and enters
 * a call: 1 for the thread's outermost MPI call (to be timed), 0 for one
 * inside another, -1 when the real function cannot be found (said). */
int sd_mpi_enter(void **real, const char *pname);
/* Opens the region mpi=name (the outermost call). */
void sd_mpi_begin(const char *name);
/* Leaves the call entered; closes its region if it was the outermost. */
void sd_mpi_leave(int outer);

#endif
