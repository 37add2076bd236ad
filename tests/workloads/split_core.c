/* split_core.c - leaves and call chain of the "split" pattern.
 *
 * Called from wl_split's main thread and from wl_threads' workers.  Stack at
 * a sample inside a leaf, innermost first (wl_split: 12 frames):
 *   leaf_X, dispatch, chain_6, ..., chain_1, split_round, run_split, main
 * Every chain_N and dispatch does arithmetic after its call, so none can be
 * compiled into a tail call; all are noinline, so every frame is real even at
 * -O2 without frame pointers.
 */
#include <stdio.h>
#include <time.h>

#include "split_core.h"
#include "work.h"

const unsigned split_units[SPLIT_NLEAVES] = {50, 30, 15, 5};
const char *const split_names[SPLIT_NLEAVES] = {"leaf_a", "leaf_b", "leaf_c",
                                                "leaf_d"};

uint64_t leaf_a(uint64_t seed, uint64_t units);
uint64_t leaf_b(uint64_t seed, uint64_t units);
uint64_t leaf_c(uint64_t seed, uint64_t units);
uint64_t leaf_d(uint64_t seed, uint64_t units);

WL_DEFINE_LEAF(leaf_a)
WL_DEFINE_LEAF(leaf_b)
WL_DEFINE_LEAF(leaf_c)
WL_DEFINE_LEAF(leaf_d)

/* Volatile so that GCC cannot resolve the call to a direct one per leaf and
 * clone dispatch for each k: all leaves share one call site. */
static uint64_t (*volatile const leaves[SPLIT_NLEAVES])(uint64_t, uint64_t) = {
    leaf_a, leaf_b, leaf_c, leaf_d};

uint64_t dispatch(int k, uint64_t seed, uint64_t units);
WL_NOINLINE uint64_t dispatch(int k, uint64_t seed, uint64_t units)
{
    uint64_t r = leaves[k](seed, units);
    WL_BARRIER();
    return r ^ (uint64_t)k;
}

#define DEFINE_CHAIN(n, next)                                                \
    uint64_t chain_##n(int k, uint64_t seed, uint64_t units);                \
    WL_NOINLINE uint64_t chain_##n(int k, uint64_t seed, uint64_t units)     \
    {                                                                        \
        uint64_t r = next(k, seed + n, units);                               \
        WL_BARRIER();                                                        \
        return r * 5 + n;                                                    \
    }
DEFINE_CHAIN(6, dispatch)
DEFINE_CHAIN(5, chain_6)
DEFINE_CHAIN(4, chain_5)
DEFINE_CHAIN(3, chain_4)
DEFINE_CHAIN(2, chain_3)
DEFINE_CHAIN(1, chain_2)

int split_measure;
__thread long long split_leaf_cpu_ns[SPLIT_NLEAVES];

static long long thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

WL_NOINLINE uint64_t split_round(uint64_t seed)
{
    uint64_t acc = 0;
    for (int k = 0; k < SPLIT_NLEAVES; k++) {
        long long t0 = split_measure ? thread_cpu_ns() : 0;
        acc ^= chain_1(k, seed * 4 + (uint64_t)k, split_units[k]);
        if (split_measure)
            split_leaf_cpu_ns[k] += thread_cpu_ns() - t0;
    }
    WL_BARRIER();
    return acc + 1;
}

void split_print_intended(void)
{
    printf("intended");
    for (int k = 0; k < SPLIT_NLEAVES; k++)
        printf(" %s=%.1f%%", split_names[k],
               100.0 * split_units[k] / SPLIT_UNITS_PER_ROUND);
}
