/* wl_split - single-threaded CPU workload with a known split of time.
 *
 * leaf_a/b/c/d get 50/30/15/5 % of identical work units (see split_core.c),
 * each reached through
 *   main > run_split > split_round > chain_1 .. chain_6 > dispatch > leaf_X
 * A profile of it must attribute self time in that ratio, with every sample
 * in a leaf carrying that whole 12-frame stack.
 *
 * usage: wl_split [SCALE]     SCALE multiplies the rounds (default 1: 540
 *                             rounds of 100 units, about 1.3 s of CPU here)
 * Output: the intended split, then "checksum <hex>", which depends only on
 * SCALE, then "cpu main cpu_ns N user_ns N": the CPU time the work took
 * (wl_cpu.h; tests expect samples from it), and "cpu leaf_X cpu_ns N" per
 * leaf: the split of it that the machine really gave (split_core.h).  Exit status 0, or 2 on a bad
 * argument.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "split_core.h"
#include "work.h"
#include "wl_cpu.h"

enum { DEFAULT_ROUNDS = 540 };

static WL_NOINLINE uint64_t run_split(long rounds)
{
    uint64_t sum = 0;
    for (long r = 0; r < rounds; r++)
        sum += split_round((uint64_t)r);
    WL_BARRIER();
    return sum;
}

int main(int argc, char **argv)
{
    double scale = wl_parse_scale(argc > 1 ? argv[1] : NULL, 1.0);
    if (argc > 2 || scale < 0) {
        fprintf(stderr, "usage: wl_split [SCALE]\n");
        return 2;
    }
    long rounds = (long)(DEFAULT_ROUNDS * scale + 0.5);
    if (rounds < 1)
        rounds = 1;
    printf("wl_split: rounds=%ld ", rounds);
    split_print_intended();
    printf("\n");
    split_measure = 1;
    struct wl_cpu start = wl_cpu_now();
    uint64_t sum = run_split(rounds);
    printf("checksum %016llx\n", (unsigned long long)sum);
    wl_cpu_print("main", start);
    for (int k = 0; k < SPLIT_NLEAVES; k++)
        printf("cpu %s cpu_ns %lld\n", split_names[k], split_leaf_cpu_ns[k]);
    return 0;
}
