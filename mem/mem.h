/* mem.h - sonde's own memory: everything the runtime allocates, kept off
 * the program's malloc and, under a finite RLIMIT_AS, within a budget.
 *
 * Why not malloc: glibc gives each thread that first calls malloc or free
 * an arena of its own (up to 8 per core), and each arena reserves 64 MiB of
 * address space. sonde's writer thread, and every program thread sonde sets
 * up as it begins, got one through sonde's calls alone: 64 MiB of VmSize
 * per thread that never called malloc itself, which under RLIMIT_AS is
 * address space the program counted on (docs/ENV.md, "sonde's memory", and
 * "What sonde takes from the program's limits", Address space).
 *
 * Every byte here comes from mmap (libc's, through the PLT, so that
 * tests/fault can fail it): blocks of up to SD_MEM_SMALL bytes, header
 * included, are carved from SD_MEM_REGION-byte regions and kept on a free
 * list per power-of-two size when freed; larger blocks are mapped one by one,
 * n + 16 bytes (so a fault rule names such an allocation by that length)
 * and unmapped when freed. Regions are never given back.
 *
 * The budget: when sonde starts (sd_mem_init) under a finite soft
 * RLIMIT_AS, everything sonde maps while it runs, this allocator's regions
 * and blocks, its rings, alternate stacks and the writer thread's stack
 * (sd_mem_charge), stays within RLIMIT_AS / SD_MEM_SHARE; past it a mapping
 * fails with ENOMEM and the caller degrades. Without a limit there is no
 * budget (only the accounting).
 *
 * Context: ordinary context, any thread; and the one drain a sample may do
 * in a process without a writer thread (writer/drain.c, sd_writer_drain_sigsafe),
 * never when the signal came while its thread held the lock
 * (sd_mem_held_here_sigsafe): a leaf lock held only for a list's update,
 * so a handler waiting for another thread's hold waits briefly. Held across
 * fork (sd_mem_fork_*).
 */
#ifndef SONDE_MEM_H
#define SONDE_MEM_H

#include <stddef.h>
#include <stdint.h>

/* The share of RLIMIT_AS sonde's run-time mappings may use: 1/64; sized for
 * SD_MEM_THREADS threads, each with its ring, alternate stack, buffers and
 * libunwind's cache (writer/rings.c, ring_bytes_for). */
#define SD_MEM_SHARE 64u
#define SD_MEM_THREADS 64u
/* Blocks up to this size (header included) come from regions. */
#define SD_MEM_SMALL 2048u
/* A region: 15 pages, a length nothing else of sonde's maps. */
#define SD_MEM_REGION (15u * 4096u)

/* Reads the soft RLIMIT_AS and sets the budget. Ordinary context, once, as
 * the runtime starts (before it allocates); until then there is none. */
void sd_mem_init(void);

/* malloc, calloc, realloc, free and strdup over sonde's memory. NULL with
 * errno ENOMEM when out of memory or budget; sd_mem_realloc leaves p as it
 * was then. sd_mem_free(NULL) does nothing. A block is freed only with
 * sd_mem_free (never libc's free), by any thread. Blocks are 16-byte
 * aligned; sd_mem_calloc's are zeroed. */
void *sd_mem_alloc(size_t n);
void *sd_mem_calloc(size_t n, size_t size);
void *sd_mem_realloc(void *p, size_t n);
void sd_mem_free(void *p);
char *sd_mem_strdup(const char *s);

/* Zeroed pages, read-write, counted against the budget: MAP_FAILED with
 * errno ENOMEM when the budget (or the kernel) refuses. stack: for a thread
 * or signal stack (MAP_STACK). Unmapped with sd_mem_unmap and the same
 * length. */
void *sd_mem_map(size_t bytes, int stack);
void sd_mem_unmap(void *p, size_t bytes);

/* Memory mapped on sonde's behalf by someone else (glibc maps the writer
 * thread's stack): counted as if sd_mem_map had made it. 0, or -ENOMEM
 * (nothing counted) when it does not fit in the budget. */
int sd_mem_charge(size_t bytes);
void sd_mem_uncharge(size_t bytes);

/* Per-thread mappings (a ring, an alternate stack, libunwind's cache) are
 * made only while SD_MEM_SLACK of the budget (1/8 of a smaller budget)
 * stays free beside them: sonde's own bookkeeping (its tables, the stream's
 * buffer) never runs short for them. 1 when `bytes` fit so (always, without
 * a budget). Atomics only. */
#define SD_MEM_SLACK (256u * 1024u)
int sd_mem_room(size_t bytes);

/* The soft RLIMIT_AS read by sd_mem_init (0: unlimited), the budget (0:
 * none), the bytes counted now, and what is left of the budget
 * (SIZE_MAX without one). Any context; atomics only. */
uint64_t sd_mem_limit(void);
size_t sd_mem_budget(void);
size_t sd_mem_used(void);
size_t sd_mem_left(void);

/* 1 when the calling thread holds the allocator's lock: a signal handler
 * that would allocate (the writer's drain, writer/drain.c) must not then.
 * async-signal-safe. */
int sd_mem_held_here_sigsafe(void);

/* Around fork: the lock is held across it and made anew in the child. */
void sd_mem_fork_prepare(void);
void sd_mem_fork_parent(void);
void sd_mem_fork_child(void);

#endif
