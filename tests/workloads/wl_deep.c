/* wl_deep - deep recursion with the work at the bottom (stresses unwinders).
 *
 * deep_a > deep_b > deep_c > deep_a > ... recurse through volatile function
 * pointers (GCC can neither inline them nor turn the recursion into a loop)
 * and use the callee's result afterwards (no tail calls).  Every frame holds a
 * 64-byte local array, so the stack at the bottom is roughly DEPTH * 100 bytes
 * (about 13 KiB at 128), more than perf's default 8 KiB DWARF stack copy.
 * At the bottom deep_leaf does the work; nearly every sample lands there with
 * a stack of DEPTH + 4 frames:
 *   deep_leaf, DEPTH x deep_{a,b,c}, descend, run_deep, main
 *
 * usage: wl_deep [DEPTH [SCALE [sleep]]]   DEPTH default 128; SCALE
 *                                  multiplies the descents (default 1: about
 *                                  1.3 s of CPU)
 * With `sleep`, the bottom does no work but waits in nanosleep (deep_wait,
 * 2 ms a descent, DEFAULT_WAITS x SCALE descents: about 0.3 s at 1), so that
 * wall-time charges the time to the deep stack under [blocked].
 * Output: "expected-frames-at-leaf N" and "checksum <hex>" (depends only on
 * the arguments), then "cpu main cpu_ns N user_ns N": the CPU time the work
 * took (wl_cpu.h).  Exit status 0, or 2 on a bad argument.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "work.h"
#include "wl_cpu.h"

enum { DEFAULT_DEPTH = 128, DEFAULT_DESCENTS = 14000, DEFAULT_WAITS = 150, LEAF_UNITS = 4 };

uint64_t deep_leaf(uint64_t seed, uint64_t units);
WL_DEFINE_LEAF(deep_leaf)

/* The bottom in `sleep` mode: 2 ms in nanosleep. */
uint64_t deep_wait(uint64_t seed, uint64_t units);
WL_NOINLINE uint64_t deep_wait(uint64_t seed, uint64_t units)
{
    struct timespec ts = {0, 2000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
    return seed + units;
}
static uint64_t (*volatile bottom)(uint64_t, uint64_t) = deep_leaf;

typedef uint64_t (*rec_fn)(int, uint64_t);
uint64_t deep_a(int d, uint64_t x);
uint64_t deep_b(int d, uint64_t x);
uint64_t deep_c(int d, uint64_t x);
static rec_fn volatile next_of_a = deep_b;
static rec_fn volatile next_of_b = deep_c;
static rec_fn volatile next_of_c = deep_a;

/* One recursion level: d levels remain below this one. */
#define DEFINE_REC(name, next)                                               \
    WL_NOINLINE uint64_t name(int d, uint64_t x)                             \
    {                                                                        \
        volatile unsigned char pad[64];                                      \
        pad[x & 63] = (unsigned char)d;                                      \
        uint64_t r = d <= 0 ? bottom(x, LEAF_UNITS) : next(d - 1, x + 1);   \
        return (r ^ pad[x & 63]) + (uint64_t)d;                              \
    }
DEFINE_REC(deep_a, next_of_a)
DEFINE_REC(deep_b, next_of_b)
DEFINE_REC(deep_c, next_of_c)

/* depth frames of deep_*: deep_a is the first, deep_leaf's caller the last. */
static WL_NOINLINE uint64_t descend(int depth, uint64_t seed)
{
    uint64_t r = deep_a(depth - 1, seed);
    WL_BARRIER();
    return r + 7;
}

static WL_NOINLINE uint64_t run_deep(int depth, long descents)
{
    uint64_t sum = 0;
    for (long i = 0; i < descents; i++)
        sum += descend(depth, (uint64_t)i);
    WL_BARRIER();
    return sum;
}

int main(int argc, char **argv)
{
    long depth = DEFAULT_DEPTH;
    if (argc > 1) {
        char *end = NULL;
        depth = strtol(argv[1], &end, 10);
        if (end == argv[1] || *end != '\0' || depth < 1 || depth > 50000)
            depth = -1;
    }
    double scale = wl_parse_scale(argc > 2 ? argv[2] : NULL, 1.0);
    int sleep_mode = argc > 3 && !strcmp(argv[3], "sleep");
    if (argc > 4 || (argc > 3 && !sleep_mode) || depth < 1 || scale < 0) {
        fprintf(stderr, "usage: wl_deep [DEPTH [SCALE [sleep]]]  (DEPTH 1..50000)\n");
        return 2;
    }
    if (sleep_mode)
        bottom = deep_wait;
    long descents = (long)((sleep_mode ? DEFAULT_WAITS : DEFAULT_DESCENTS) * scale + 0.5);
    if (descents < 1)
        descents = 1;
    printf("wl_deep: depth=%ld descents=%ld expected-frames-at-leaf %ld\n",
           depth, descents, depth + 4);
    struct wl_cpu start = wl_cpu_now();
    uint64_t sum = run_deep((int)depth, descents);
    printf("checksum %016llx\n", (unsigned long long)sum);
    wl_cpu_print("main", start);
    return 0;
}
