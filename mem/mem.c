/* mem.c - sonde's own memory (mem.h): an allocator over mmap and the
 * budget under RLIMIT_AS.
 *
 * Called by every runtime component, from program threads (as they begin
 * and end, in the API), the writer thread and the constructor; never from a
 * signal handler.
 *
 * Each block has a 16-byte header just before it: for a block carved from a
 * region, its size class (0 .. NCLASS-1: 32 << class bytes, header
 * included); for a block mapped on its own, the length mapped. A freed small
 * block goes on its class's free list (its first word links it); regions
 * are carved from the front, and what is left of one too short for the next
 * block is cut into smaller blocks for their lists. Invariants: `used` is
 * the sum of the lengths mapped through here and charged, and never exceeds
 * `budget` when there is one; the lists and the current region change only
 * under `lock`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "common/common.h"
#include "common/real.h"
#include "mem/mem.h"

/* Under AddressSanitizer, what no caller owns is poisoned: a block's bytes
 * past the size asked for, a freed block, a region's uncarved rest. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define HDR 16u
#define NCLASS 7 /* 32 .. 2048 bytes */
#define MAGIC 0x5344u

struct hdr {
	uint64_t word; /* class (< NCLASS) or the mapped length (> SD_MEM_SMALL) */
	uint64_t tag;  /* MAGIC | the size asked for << 16 */
};

static struct {
	pthread_mutex_t lock;
	void *free_list[NCLASS];
	char *cur;       /* the current region's unused part */
	size_t cur_left;
	_Atomic uint64_t limit;
	_Atomic size_t budget, used;
} m = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Does this thread hold the lock (a signal came inside sd_mem_*)? Set only
 * by its owner: a handler reads its own thread's flag. */
static __thread int held_here __attribute__((tls_model("initial-exec")));

static void lock_m(void)
{
	sd_real_pthread_mutex_lock(&m.lock);
	held_here = 1;
}

static void unlock_m(void)
{
	held_here = 0;
	pthread_mutex_unlock(&m.lock);
}

int sd_mem_held_here_sigsafe(void)
{
	return held_here;
}

void sd_mem_init(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return;
	atomic_store(&m.limit, (uint64_t)rl.rlim_cur);
	atomic_store(&m.budget, (size_t)(rl.rlim_cur / SD_MEM_SHARE));
}

uint64_t sd_mem_limit(void)
{
	return atomic_load(&m.limit);
}

size_t sd_mem_budget(void)
{
	return atomic_load(&m.budget);
}

size_t sd_mem_used(void)
{
	return atomic_load(&m.used);
}

size_t sd_mem_left(void)
{
	size_t b = atomic_load(&m.budget), u = atomic_load(&m.used);
	return !b ? SIZE_MAX : u < b ? b - u : 0;
}

int sd_mem_room(size_t bytes)
{
	size_t left = sd_mem_left();
	size_t slack = sd_mem_budget() / 8 < SD_MEM_SLACK ? sd_mem_budget() / 8 : SD_MEM_SLACK;
	return left == SIZE_MAX || (left >= slack && left - slack >= bytes);
}

int sd_mem_charge(size_t bytes)
{
	size_t b = atomic_load(&m.budget);
	size_t u = atomic_load(&m.used);
	do {
		if (b && (u > b || bytes > b - u))
			return -ENOMEM;
	} while (!atomic_compare_exchange_weak(&m.used, &u, u + bytes));
	return 0;
}

void sd_mem_uncharge(size_t bytes)
{
	atomic_fetch_sub(&m.used, bytes);
}

void *sd_mem_map(size_t bytes, int stack)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t counted = (bytes + page - 1) & ~(page - 1);
	if (sd_mem_charge(counted) != 0) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (stack ? MAP_STACK : 0), -1, 0);
	if (p == MAP_FAILED) {
		int e = errno;
		sd_mem_uncharge(counted);
		errno = e;
	}
	return p;
}

void sd_mem_unmap(void *p, size_t bytes)
{
	if (!p || p == MAP_FAILED)
		return;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	munmap(p, bytes);
	sd_mem_uncharge((bytes + page - 1) & ~(page - 1));
}

/* The class of a block of `need` bytes, header included (<= SD_MEM_SMALL). */
static unsigned class_of(size_t need)
{
	unsigned c = 0;
	while ((32u << c) < need)
		c++;
	return c;
}

/* Cuts what is left of the current region into blocks for the lists. Lock held. */
static void region_retire(void)
{
	for (unsigned c = NCLASS; c-- > 0;)
		while (m.cur_left >= (32u << c)) {
			UNPOISON(m.cur, HDR);
			*(void **)m.cur = m.free_list[c];
			m.free_list[c] = m.cur;
			m.cur += 32u << c;
			m.cur_left -= 32u << c;
		}
	m.cur = NULL;
	m.cur_left = 0;
}

/* A small block of class c, its header not yet written; NULL: out of
 * memory. Lock held. */
static char *small_get(unsigned c)
{
	size_t sz = 32u << c;
	char *b = m.free_list[c];
	if (b) {
		m.free_list[c] = *(void **)b;
		return b;
	}
	if (m.cur_left < sz) {
		region_retire();
		char *r = sd_mem_map(SD_MEM_REGION, 0);
		if (r == MAP_FAILED)
			return NULL;
		POISON(r, SD_MEM_REGION);
		m.cur = r;
		m.cur_left = SD_MEM_REGION;
	}
	b = m.cur;
	m.cur += sz;
	m.cur_left -= sz;
	UNPOISON(b, HDR);
	return b;
}

void *sd_mem_alloc(size_t n)
{
	if (n > SIZE_MAX / 2) {
		errno = ENOMEM;
		return NULL;
	}
	size_t need = n + HDR;
	struct hdr *h;
	if (need <= SD_MEM_SMALL) {
		unsigned c = class_of(need);
		lock_m();
		h = (struct hdr *)small_get(c);
		unlock_m();
		if (!h) {
			errno = ENOMEM;
			return NULL;
		}
		h->word = c;
		UNPOISON(h + 1, n);
		POISON((char *)(h + 1) + n, (32u << c) - need);
	} else {
		h = sd_mem_map(need, 0);
		if (h == MAP_FAILED)
			return NULL;
		h->word = need;
	}
	h->tag = MAGIC | (uint64_t)n << 16;
	return h + 1;
}

void *sd_mem_calloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / 2 / size) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = sd_mem_alloc(n * size);
	/* a block mapped on its own is fresh from the kernel, zeroed: not
	 * touched here, it costs no resident memory until it is used */
	if (p && n * size + HDR <= SD_MEM_SMALL)
		memset(p, 0, n * size);
	return p;
}

/* The bytes the caller may use in the block at p. */
static size_t usable(const struct hdr *h)
{
	return (h->word < NCLASS ? (size_t)32u << h->word : h->word) - HDR;
}

void sd_mem_free(void *p)
{
	if (!p)
		return;
	struct hdr *h = (struct hdr *)p - 1;
	SD_ASSERT((h->tag & 0xffff) == MAGIC);
	h->tag = 0;
	if (h->word >= NCLASS) {
		UNPOISON(h, h->word); /* whoever maps these pages next owns them */
		sd_mem_unmap(h, h->word);
		return;
	}
	unsigned c = (unsigned)h->word;
	POISON(p, (32u << c) - HDR);
	lock_m();
	*(void **)h = m.free_list[c];
	m.free_list[c] = h;
	unlock_m();
}

void *sd_mem_realloc(void *p, size_t n)
{
	if (!p)
		return sd_mem_alloc(n);
	struct hdr *h = (struct hdr *)p - 1;
	SD_ASSERT((h->tag & 0xffff) == MAGIC);
	size_t have = usable(h), asked = (size_t)(h->tag >> 16);
	if (n <= have && (h->word < NCLASS || n + HDR > SD_MEM_SMALL)) {
		/* fits; a mapped block is not moved into a region */
		UNPOISON(p, n);
		POISON((char *)p + n, have - n);
		h->tag = MAGIC | (uint64_t)n << 16;
		return p;
	}
	void *q = sd_mem_alloc(n);
	if (!q)
		return NULL;
	memcpy(q, p, asked < n ? asked : n);
	sd_mem_free(p);
	return q;
}

char *sd_mem_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = sd_mem_alloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

void sd_mem_fork_prepare(void)
{
	lock_m();
}

void sd_mem_fork_parent(void)
{
	unlock_m();
}

void sd_mem_fork_child(void)
{
	held_here = 0;
	pthread_mutex_init(&m.lock, NULL);
}
