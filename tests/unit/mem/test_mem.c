/* test_mem.c - unit.mem: sonde's own memory (mem/mem.h): the allocator
 * over mmap and the budget under RLIMIT_AS.
 *
 *   blocks      every size from 0 to past a page, small and mapped blocks:
 *               16-byte aligned, the bytes asked for usable, contents kept
 *               by realloc (growing and shrinking, across the two kinds),
 *               calloc zeroed, a freed block reused
 *   accounting  sd_mem_used follows mappings (a region for small blocks,
 *               each large block, sd_mem_map, sd_mem_charge) and gives them
 *               back as large blocks and maps are freed
 *   budget      under RLIMIT_AS (set before sd_mem_init), the budget is
 *               RLIMIT_AS / SD_MEM_SHARE; a map, charge or large block past
 *               it fails with ENOMEM, changing nothing; sd_mem_room keeps the
 *               slack free
 *   concurrent  4 threads allocating, writing, checking and freeing blocks
 *               of every kind at once
 *
 * mem.c takes its lock through sd_real_pthread_mutex_lock (common/real.h):
 * this test links common/real.c as libsonde does (from an executable,
 * RTLD_NEXT finds libc's pthread_mutex_lock).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "common/real.h"
#include "mem/mem.h"
#include "tests/unit/unit.h"

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(seed + i * 7);
}

static int same(const unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(seed + i * 7))
			return 0;
	return 1;
}

static void case_blocks(void)
{
	static const size_t sizes[] = {0, 1, 15, 16, 17, 100, 1000, 2016, 2032, 2033, 4080,
				       4100, 8192, 70000};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		size_t n = sizes[i];
		unsigned char *p = sd_mem_alloc(n);
		CHECK(p);
		CHECK_EQ((uintptr_t)p % 16, 0);
		fill(p, n, (unsigned)i);
		for (size_t j = 0; j < sizeof sizes / sizeof sizes[0]; j++) {
			size_t m = sizes[j];
			unsigned char *q = sd_mem_alloc(n);
			CHECK(q);
			fill(q, n, (unsigned)j);
			q = sd_mem_realloc(q, m);
			CHECK(q);
			CHECK(same(q, n < m ? n : m, (unsigned)j));
			fill(q, m, (unsigned)j + 1);
			sd_mem_free(q);
		}
		CHECK(same(p, n, (unsigned)i));
		sd_mem_free(p);
		unsigned char *z = sd_mem_calloc(n, 3);
		CHECK(z);
		for (size_t k = 0; k < 3 * n; k++)
			CHECK_EQ(z[k], 0);
		sd_mem_free(z);
	}
	/* a freed small block is what the next one of its class gets */
	void *a = sd_mem_alloc(40);
	sd_mem_free(a);
	CHECK(sd_mem_alloc(48) == a);
	char *s = sd_mem_strdup("sonde");
	CHECK_STR(s, "sonde");
	sd_mem_free(s);
	sd_mem_free(NULL);
	errno = 0;
	CHECK(!sd_mem_alloc(SIZE_MAX - 8));
	CHECK_EQ(errno, ENOMEM);
	CHECK(!sd_mem_calloc(SIZE_MAX / 4, 4));
}

static void case_accounting(void)
{
	CHECK_EQ(sd_mem_budget(), 0); /* no sd_mem_init: no budget */
	CHECK_EQ(sd_mem_left(), SIZE_MAX);
	CHECK(sd_mem_room(SIZE_MAX / 2));
	size_t u0 = sd_mem_used();
	void *small = sd_mem_alloc(100);
	CHECK_EQ(sd_mem_used(), u0 + SD_MEM_REGION); /* the first region */
	void *small2 = sd_mem_alloc(100);
	CHECK_EQ(sd_mem_used(), u0 + SD_MEM_REGION);
	void *big = sd_mem_alloc(10000); /* 10016 bytes: three pages */
	CHECK_EQ(sd_mem_used(), u0 + SD_MEM_REGION + 3 * 4096);
	sd_mem_free(big);
	CHECK_EQ(sd_mem_used(), u0 + SD_MEM_REGION);
	void *m = sd_mem_map(5000, 0);
	CHECK(m != MAP_FAILED);
	CHECK_EQ(sd_mem_used(), u0 + SD_MEM_REGION + 2 * 4096);
	memset(m, 1, 5000);
	sd_mem_unmap(m, 5000);
	CHECK_EQ(sd_mem_charge(12345), 0);
	CHECK_EQ(sd_mem_used(), u0 + SD_MEM_REGION + 12345);
	sd_mem_uncharge(12345);
	sd_mem_free(small);
	sd_mem_free(small2);
	CHECK_EQ(sd_mem_used(), u0 + SD_MEM_REGION); /* regions are kept */
}

static void case_budget(void)
{
#if defined(__SANITIZE_ADDRESS__)
	printf("skip: AddressSanitizer's shadow memory does not fit under RLIMIT_AS\n");
	exit(77);
#endif
	struct rlimit rl = {64u << 20, 64u << 20};
	CHECK_EQ(setrlimit(RLIMIT_AS, &rl), 0);
	sd_mem_init();
	CHECK_EQ(sd_mem_limit(), 64u << 20);
	CHECK_EQ(sd_mem_budget(), (64u << 20) / SD_MEM_SHARE);
	size_t b = sd_mem_budget();
	CHECK_EQ(sd_mem_left(), b);
	/* the slack: an eighth of a budget this small */
	CHECK(sd_mem_room(b - b / 8));
	CHECK(!sd_mem_room(b - b / 8 + 1));
	void *m = sd_mem_map(b - 4096, 0);
	CHECK(m != MAP_FAILED);
	CHECK_EQ(sd_mem_left(), 4096);
	errno = 0;
	CHECK(sd_mem_map(8192, 0) == MAP_FAILED);
	CHECK_EQ(errno, ENOMEM);
	CHECK_EQ(sd_mem_charge(8192), -ENOMEM);
	CHECK(!sd_mem_alloc(5000));
	CHECK_EQ(sd_mem_used(), b - 4096);
	CHECK_EQ(sd_mem_charge(4096), 0);
	CHECK_EQ(sd_mem_left(), 0);
	CHECK(!sd_mem_room(0));
	sd_mem_uncharge(4096);
	sd_mem_unmap(m, b - 4096);
	CHECK_EQ(sd_mem_used(), 0);
	void *p = sd_mem_alloc(1000);
	CHECK(p);
	sd_mem_free(p);
}

static void *churn(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	unsigned char *held[64] = {0};
	size_t len[64] = {0};
	for (unsigned i = 0; i < 20000; i++) {
		unsigned k = (seed * 31 + i * 17) % 64;
		if (held[k]) {
			CHECK(same(held[k], len[k], seed + k));
			sd_mem_free(held[k]);
			held[k] = NULL;
		} else {
			len[k] = (i * 37 + seed) % (i % 50 == 0 ? 9000 : 600);
			held[k] = sd_mem_alloc(len[k]);
			CHECK(held[k]);
			fill(held[k], len[k], seed + k);
		}
	}
	for (unsigned k = 0; k < 64; k++)
		sd_mem_free(held[k]);
	return NULL;
}

static void case_concurrent(void)
{
	pthread_t t[4];
	for (uintptr_t i = 0; i < 4; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, churn, (void *)(i + 1)), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
}

UNIT_MAIN({"blocks", case_blocks}, {"accounting", case_accounting}, {"budget", case_budget},
	  {"concurrent", case_concurrent})
