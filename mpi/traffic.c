/* traffic.c - what the MPI calls that move data moved: bytes (count times the
 * datatype's size, as MPI counts them) and, for point-to-point messages sent,
 * the peer's world rank, which libsonde.so tables per peer for the
 * communication matrix (writer/traffic.c, MESSAGES records).
 *
 * The helpers PMPI_Type_size, PMPI_Comm_group and the like are never wrapped:
 * they are found like the wrapped ones (sd_mpi_helper) and called only from
 * inside a wrapped call or MPI_Init's, where MPI is initialised. A peer in a
 * communicator other than MPI_COMM_WORLD is translated through the groups at
 * each message (a cache keyed by the handle would go stale when a freed
 * communicator's handle is reused).
 *
 * Open MPI's constants are addresses of its globals: the references below
 * are weak, so a process without libmpi (the launcher) still loads this.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>

#include "mpi/mpi_wrap.h"

#ifdef OPEN_MPI
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_mpi_byte
#endif

/* libsonde.so's table of messages sent (not in sonde.h's API). */
extern void sonde_rt_mpi_peers(uint32_t rank, uint32_t n) __attribute__((weak));
extern void sonde_rt_mpi_sent(uint32_t peer, uint64_t bytes) __attribute__((weak));

#define HELPER(NAME) ((__typeof__(&PMPI_##NAME))sd_mpi_helper(&h_##NAME, "PMPI_" #NAME))
static void *h_Type_size, *h_Comm_size, *h_Comm_rank, *h_Comm_group, *h_Comm_remote_group,
	*h_Comm_test_inter, *h_Group_translate_ranks, *h_Group_free, *h_Get_count;
static MPI_Group world_group;
static int world_size, have_world;

void *sd_mpi_helper(void **cache, const char *pname)
{
	void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
	if (!f) {
		f = dlsym(RTLD_NEXT, pname);
		if (!f)
			f = dlsym(RTLD_DEFAULT, pname);
		__atomic_store_n(cache, f, __ATOMIC_RELEASE);
	}
	return f;
}

void sd_mpi_inited(int rc)
{
	int n = 0, me = -1;
	if (rc != MPI_SUCCESS || !HELPER(Comm_size) || !HELPER(Comm_group) || !HELPER(Comm_rank))
		return;
	if (HELPER(Comm_size)(MPI_COMM_WORLD, &n) != MPI_SUCCESS || n <= 0 ||
	    HELPER(Comm_rank)(MPI_COMM_WORLD, &me) != MPI_SUCCESS || me < 0 || me >= n)
		return;
	if (HELPER(Comm_group)(MPI_COMM_WORLD, &world_group) != MPI_SUCCESS)
		return;
	world_size = n;
	__atomic_store_n(&have_world, 1, __ATOMIC_RELEASE);
	if (sonde_rt_mpi_peers)
		sonde_rt_mpi_peers((uint32_t)me, (uint32_t)n);
}

uint64_t sd_mpi_bytes(int count, MPI_Datatype t)
{
	int size = 0;
	if (count <= 0 || !HELPER(Type_size) || HELPER(Type_size)(t, &size) != MPI_SUCCESS ||
	    size <= 0)
		return 0;
	return (uint64_t)count * (uint64_t)size;
}

uint64_t sd_mpi_bytes_v(const int *counts, int n, MPI_Datatype t)
{
	uint64_t sum = 0;
	for (int i = 0; counts && i < n; i++)
		sum += counts[i] > 0 ? (uint64_t)counts[i] : 0;
	return sum > INT32_MAX ? sum * sd_mpi_bytes(1, t) : sd_mpi_bytes((int)sum, t);
}

uint64_t sd_mpi_status_bytes(const MPI_Status *st)
{
	int n = 0;
	if (!st || !HELPER(Get_count) || HELPER(Get_count)(st, MPI_BYTE, &n) != MPI_SUCCESS ||
	    n <= 0)
		return 0;
	return (uint64_t)n;
}

int sd_mpi_comm_size(MPI_Comm c)
{
	int n = -1;
	if (!HELPER(Comm_size) || HELPER(Comm_size)(c, &n) != MPI_SUCCESS)
		return -1;
	return n;
}

int sd_mpi_comm_rank(MPI_Comm c)
{
	int r = -1;
	if (!HELPER(Comm_rank) || HELPER(Comm_rank)(c, &r) != MPI_SUCCESS)
		return -1;
	return r;
}

/* Rank r of c (of its remote group for an intercommunicator) in MPI_COMM_WORLD,
 * -1 if unknown. */
static int world_rank(MPI_Comm c, int r)
{
	if (c == MPI_COMM_WORLD)
		return r;
	int inter = 0, w = MPI_UNDEFINED;
	MPI_Group g;
	if (!HELPER(Comm_test_inter) || !HELPER(Comm_remote_group) || !HELPER(Comm_group) ||
	    !HELPER(Group_translate_ranks) || !HELPER(Group_free) ||
	    HELPER(Comm_test_inter)(c, &inter) != MPI_SUCCESS)
		return -1;
	if ((inter ? HELPER(Comm_remote_group)(c, &g) : HELPER(Comm_group)(c, &g)) != MPI_SUCCESS)
		return -1;
	int rc = HELPER(Group_translate_ranks)(g, 1, &r, world_group, &w);
	HELPER(Group_free)(&g);
	return rc == MPI_SUCCESS && w >= 0 ? w : -1;
}

void sd_mpi_sent(MPI_Comm c, int dest, uint64_t bytes)
{
	if (dest < 0 || !sonde_rt_mpi_sent || !__atomic_load_n(&have_world, __ATOMIC_ACQUIRE))
		return;
	int w = world_rank(c, dest);
	if (w >= 0 && w < world_size)
		sonde_rt_mpi_sent((uint32_t)w, bytes);
}
