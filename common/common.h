/* common.h - small utilities shared by the runtime and the analyzer (and the
 * test programs), each defined once: the runtime's clocks, hashing, and the
 * GNU build-id of a loaded object.
 *
 * Header only (static inline): every component compiles them in without a
 * library of its own, the runtime's hidden-visibility objects included.
 * Everything here is async-signal-safe (no allocation, no locks, no calls
 * but memcpy, memcmp, clock_gettime, and a failed assertion's write and
 * abort).
 */
#ifndef SONDE_COMMON_H
#define SONDE_COMMON_H

#include <elf.h>
#include <link.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/sys.h"

/* Internal consistency checks: SD_ASSERT(e) states an invariant a header
 * documents. Compiled in with SD_ASSERTS (CMake SONDE_ASSERTS=ON, and every
 * sanitizer build), where a failure writes one line
 * "sonde: internal error: FILE:LINE: EXPR" and aborts, so that a test
 * catches it; compiled out otherwise (a profiled program is never stopped
 * by sonde's own bookkeeping). Async-signal-safe: usable in the handler. */
static inline void sd_assert_fail_sigsafe(const char *expr, const char *file, unsigned line)
{
	char num[12];
	unsigned n = sizeof num;
	do
		num[--n] = (char)('0' + line % 10);
	while ((line /= 10) && n);
	const char *parts[] = {"sonde: internal error: ", file, ":", NULL, ": ", expr, "\n"};
	for (unsigned i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		const char *p = parts[i] ? parts[i] : num + n;
		size_t len = parts[i] ? strlen(p) : sizeof num - n;
		ssize_t w = sd_sys_write(STDERR_FILENO, p, len); /* not libsonde's wrapper */
		(void)w;
	}
	abort();
}
#ifdef SD_ASSERTS
#define SD_ASSERT(e) ((e) ? (void)0 : sd_assert_fail_sigsafe(#e, __FILE__, __LINE__))
#else
#define SD_ASSERT(e) ((void)0)
#endif

/* CLOCK_MONOTONIC in ns: the time base of the runtime's records (the
 * writer's and the sampler's alike). A vDSO read; async-signal-safe. */
static inline uint64_t sd_now_ns_sigsafe(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The calling thread's CPU time (user + system) in ns, into *ns: 0, or -1
 * when the clock cannot be read. async-signal-safe. */
static inline int sd_own_cpu_ns_sigsafe(uint64_t *ns)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return -1;
	*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return 0;
}

/* Population standard deviation of n values from their sum and sum of squares (0 for
 * fewer than 2, or when rounding makes the variance negative). */
static inline double sd_stddev(uint64_t n, double sum, double sumsq)
{
	if (n < 2)
		return 0;
	double mean = sum / (double)n, var = sumsq / (double)n - mean * mean;
	return var > 0 ? sqrt(var) : 0;
}

/* qsort's contract, as a heapsort that allocates nothing (glibc's qsort
 * mallocs a copy of arrays over 1 KiB: on sonde's writer thread that would
 * cost the process a malloc arena; mem/mem.h). Not stable. */
static inline void sd_sort_swap_(char *a, char *b, size_t size)
{
	while (size--) {
		char t = *a;
		*a++ = *b;
		*b++ = t;
	}
}

static inline void sd_sort_sift_(char *base, size_t i, size_t n, size_t size,
				 int (*cmp)(const void *, const void *))
{
	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && cmp(base + c * size, base + (c + 1) * size) < 0)
			c++;
		if (cmp(base + i * size, base + c * size) >= 0)
			return;
		sd_sort_swap_(base + i * size, base + c * size, size);
	}
}

static inline void sd_sort(void *base, size_t n, size_t size,
			   int (*cmp)(const void *, const void *))
{
	char *b = base;
	for (size_t i = n / 2; i-- > 0;)
		sd_sort_sift_(b, i, n, size, cmp);
	for (size_t end = n; end > 1; end--) {
		sd_sort_swap_(b, b + (end - 1) * size, size);
		sd_sort_sift_(b, 0, end - 1, size, cmp);
	}
}

/* A 64-bit finalizer (MurmurHash3's fmix64): spreads every input bit over
 * the result, for open-addressing tables indexed by its low bits. */
static inline uint64_t sd_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* FNV-1a, the one string hash of sonde's (not mixed: callers that index tables with it
 * mix). sd_fnv1a: of len bytes; sd_fnv1a_more: h (SD_FNV1A_SEED or an earlier hash) run
 * on over len more bytes; sd_fnv1a32_str: the 32-bit variant of a string (colours). */
#define SD_FNV1A_SEED 0xcbf29ce484222325ULL

static inline uint64_t sd_fnv1a_more(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

static inline uint64_t sd_fnv1a(const void *p, size_t len)
{
	return sd_fnv1a_more(SD_FNV1A_SEED, p, len);
}

static inline uint32_t sd_fnv1a32_str(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The GNU build-id of a loaded object (program headers phdr[0..phnum),
 * load bias `bias`: dl_iterate_phdr's dlpi_phdr, dlpi_phnum, dlpi_addr), from
 * its PT_NOTE segments in memory (NT_GNU_BUILD_ID, owner "GNU"): copied to
 * out (at most cap bytes) and its length returned; 0 when it has none (or a
 * longer one). Notes are walked with bounds checks: a malformed note ends
 * the walk of its segment. */
static inline size_t sd_build_id_of(const ElfW(Phdr) *phdr, unsigned phnum, uintptr_t bias,
				    uint8_t *out, size_t cap)
{
	for (unsigned i = 0; i < phnum; i++) {
		const ElfW(Phdr) *ph = &phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *p = (const uint8_t *)(bias + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			size_t name_sz = (nh->n_namesz + 3u) & ~3u;
			size_t desc_sz = (nh->n_descsz + 3u) & ~3u;
			const uint8_t *desc = p + sizeof *nh + name_sz;
			if (desc + desc_sz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(p + sizeof *nh, "GNU", 4) && nh->n_descsz <= cap) {
				memcpy(out, desc, nh->n_descsz);
				return nh->n_descsz;
			}
			p = desc + desc_sz;
		}
	}
	return 0;
}

/* The MPI rank a launcher gave this process, from the variables launchers set (no MPI
 * call): the value (digits first), or NULL when none is set. The writer's HEADER rank
 * and `sonde run`'s "launched by MPI" (analyze/cli/run_old.c). */
static inline const char *sd_mpi_rank_env(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
					    "MV2_COMM_WORLD_RANK", "SLURM_PROCID" };
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const char *v = getenv(vars[i]);
		if (v && *v >= '0' && *v <= '9')
			return v;
	}
	return NULL;
}

/* MPI launchers and their daemons, by executable name: they start ranks and are none,
 * whatever their environment says (a batch script's SLURM_PROCID=0 reaches mpirun too).
 * `sonde run` preloads the MPI wrapper for them (analyze/cli/run_mpi.c); the writer gives
 * their streams no rank. */
static const char *const sd_mpi_launchers[] = {
	"mpirun", "mpiexec", "orterun", "prterun", "srun", "mpiexec.hydra", "mpiexec.openmpi",
	"mpirun.openmpi", "mpiexec.mpich", "mpirun.mpich", "oshrun", "aprun", "orted", "prted",
	"hydra_pmi_proxy", "slurmstepd", NULL };

/* Is base (an executable's name, no directory) an MPI launcher or daemon? */
static inline int sd_mpi_is_launcher(const char *base)
{
	for (size_t i = 0; sd_mpi_launchers[i]; i++)
		if (!strcmp(base, sd_mpi_launchers[i]))
			return 1;
	return 0;
}

#endif
