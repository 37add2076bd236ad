/* traffic.c - the MPI point-to-point messages this process sent, per peer
 * (world rank): libsonde_mpi.so's send wrappers add to them
 * (sonde_rt_mpi_peers, sonde_rt_mpi_sent; not in sonde.h's API), the drain
 * writes the totals as a MESSAGES record when they changed (docs/FORMAT.md),
 * so a rank that is killed keeps those of its last flush. The analyzer's
 * --view comm is the matrix of every rank's row.
 *
 * The table is made once, for the world's size, by the first
 * sonde_rt_mpi_peers (MPI_Init's wrapper); adds are relaxed atomic
 * increments from any thread, without a lock. A forked child starts from
 * zero (its parent's messages are in the parent's stream).
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>

#include "include/sonde.h"
#include "mem/mem.h"
#include "writer/writer_int.h"

#define SD_TRAFFIC_PEERS_MAX (1u << 24) /* world sizes beyond are not tabled */

static struct {
	_Atomic(_Atomic uint64_t *) v; /* msgs, bytes per peer */
	uint32_t n, rank;
	_Atomic uint64_t adds;
	uint64_t written; /* adds at the last record */
} tr;

SONDE_API void sonde_rt_mpi_peers(uint32_t rank, uint32_t n)
{
	if (atomic_load(&tr.v) || n == 0 || n > SD_TRAFFIC_PEERS_MAX || rank >= n)
		return;
	_Atomic uint64_t *v = sd_mem_calloc(2 * (size_t)n, sizeof *v);
	if (!v)
		return;
	tr.n = n;
	tr.rank = rank;
	_Atomic uint64_t *none = NULL;
	if (!atomic_compare_exchange_strong(&tr.v, &none, v))
		sd_mem_free(v);
}

SONDE_API void sonde_rt_mpi_sent(uint32_t peer, uint64_t bytes)
{
	_Atomic uint64_t *v = atomic_load_explicit(&tr.v, memory_order_acquire);
	if (!v || peer >= tr.n)
		return;
	atomic_fetch_add_explicit(&v[2 * (size_t)peer], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&v[2 * (size_t)peer + 1], bytes, memory_order_relaxed);
	atomic_fetch_add_explicit(&tr.adds, 1, memory_order_release);
}

/* The totals, when they changed since the last record. Writer lock held. */
void sd_traffic_emit(void)
{
	_Atomic uint64_t *v = atomic_load_explicit(&tr.v, memory_order_acquire);
	uint64_t adds = atomic_load_explicit(&tr.adds, memory_order_acquire);
	if (!v || adds == tr.written)
		return;
	tr.written = adds;
	uint32_t peers = 0;
	for (uint32_t p = 0; p < tr.n; p++)
		peers += atomic_load_explicit(&v[2 * (size_t)p], memory_order_relaxed) != 0;
	sd_stream_messages(tr.rank, tr.n, v, peers);
}

void sd_traffic_fork_child(void)
{
	_Atomic uint64_t *v = atomic_load(&tr.v);
	for (size_t i = 0; v && i < 2 * (size_t)tr.n; i++)
		atomic_store(&v[i], 0);
	atomic_store(&tr.adds, 0);
	tr.written = 0;
}
