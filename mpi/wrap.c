/* wrap.c - libsonde_mpi.so: every MPI call that blocks or communicates
 * (calls.h) is timed exactly, as a region of the attribute "mpi" whose value
 * is the call's name (mpi=MPI_Allreduce), through libsonde's annotation API.
 *
 * Preloaded beside libsonde.so (sonde run adds it when the program is linked
 * with libmpi, or is an MPI launcher; docs/ENV.md "MPI"), never linked with
 * libmpi: the real functions are found at the first call with
 * dlsym(RTLD_NEXT), or in a libmpi loaded RTLD_LOCAL (a Python extension).
 * Both names are wrapped: MPI_X is an alias of this library's PMPI_X, so a C
 * call enters once, and the Fortran bindings (mpif.h, use mpi, use mpi_f08),
 * which call PMPI_X and never MPI_X, are caught as well. A call made inside
 * another (Open MPI's PMPI_Sendrecv_replace calls PMPI_Sendrecv) is the outer
 * call's: a thread-local depth keeps it out.
 *
 * Compiled against one implementation's mpi.h (the ABI of handles and
 * constants differs between Open MPI and MPICH): it serves that one. It
 * refers to no MPI symbol at load (only the functions' prototypes), so a
 * process without libmpi (the launcher) loads it and nothing happens.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "include/sonde.h"
#include "mpi/calls.h"
#include "mpi/mpi_wrap.h"

static __thread unsigned depth; /* MPI calls open in this thread */
static sonde_attr_t attr;       /* "mpi", thread scope */
static int attr_made;

/* The real function: the next definition after this library, else one in
 * a libmpi loaded without RTLD_GLOBAL. NULL if there is none. */
static void *resolve(const char *name)
{
	static const char *const libs[] = {"libmpi.so.40", "libmpi.so.12", "libmpi.so"};
	void *f = dlsym(RTLD_NEXT, name);
	for (size_t i = 0; !f && i < sizeof libs / sizeof libs[0]; i++) {
		void *h = dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			f = dlsym(h, name);
			dlclose(h);
		}
	}
	return f;
}

int sd_mpi_enter(void **real, const char *pname)
{
	if (!__atomic_load_n(real, __ATOMIC_ACQUIRE)) {
		void *f = resolve(pname);
		if (!f) {
			char line[160];
			int n = snprintf(line, sizeof line, "sonde: mpi: %s: not found in any "
					 "loaded MPI library (the call fails with MPI_ERR_INTERN)\n",
					 pname);
			ssize_t w = write(STDERR_FILENO, line, (size_t)n);
			(void)w;
			return -1;
		}
		__atomic_store_n(real, f, __ATOMIC_RELEASE);
	}
	if (depth++)
		return 0;
	if (!__atomic_load_n(&attr_made, __ATOMIC_ACQUIRE)) {
		/* attr_create finds the same attribute when two threads race */
		attr = sonde_attr_create("mpi", SONDE_STRING, SONDE_THREAD);
		__atomic_store_n(&attr_made, 1, __ATOMIC_RELEASE);
	}
	return 1;
}

void sd_mpi_begin(const char *name)
{
	sonde_attr_begin_str(attr, name);
}

/* Not in sonde.h's API: libsonde.so's region end with bytes (annotate/api.c). */
extern void sonde_rt_attr_end_traffic(sonde_attr_t a, uint64_t sent, uint64_t recv)
	__attribute__((weak));

int sd_mpi_counting(void)
{
	return sonde_rt_attr_end_traffic && __atomic_load_n(&attr_made, __ATOMIC_ACQUIRE) && attr;
}

void sd_mpi_leave(int outer)
{
	depth--;
	if (outer)
		sonde_attr_end(attr);
}

void sd_mpi_leave_tx(int outer, uint64_t sent, uint64_t recv)
{
	depth--;
	if (!outer)
		return;
	if ((sent || recv) && attr && sonde_rt_attr_end_traffic)
		sonde_rt_attr_end_traffic(attr, sent, recv);
	else
		sonde_attr_end(attr);
}

/* PMPI_X: times the call (outermost only) and passes it on; MPI_X is the
 * same function. */
#define SD_MPI_WRAP(NAME, PARAMS, ARGS)                                          \
	static int(*real_##NAME) PARAMS;                                         \
	int PMPI_##NAME PARAMS                                                   \
	{                                                                        \
		int outer = sd_mpi_enter((void **)&real_##NAME, "PMPI_" #NAME); \
		if (outer < 0)                                                   \
			return MPI_ERR_INTERN;                                   \
		if (outer)                                                       \
			sd_mpi_begin("MPI_" #NAME);                              \
		int rc = real_##NAME ARGS;                                       \
		sd_mpi_leave(outer);                                             \
		return rc;                                                       \
	}                                                                        \
	int MPI_##NAME PARAMS __attribute__((alias("PMPI_" #NAME)));

SD_MPI_TIMED_CALLS(SD_MPI_WRAP)
