/* api_c - an annotated C program with a known split of time by phase.
 *
 * Tests the annotation API of include/sonde.h from C (tests/api/check.sh) and
 * serves as a workload with known behaviour for profile checks: over N
 * numbered iterations (sonde_set_int("iteration", i)), the phases solve,
 * exchange and checkpoint (attribute "phase", each also a region of the same
 * name inside the region "run") get 70/20/10 % of identical work units of
 * tests/fixtures/workloads/work.h (a serial multiply/xor chain in noinline leaves,
 * about 28 us per unit). The process-scope integer attribute "units" (by
 * handle) holds the units per iteration for the whole run.
 *
 * Context of a sample inside solve_kernel, outermost first:
 *   units=U (process) | region=run, iteration=i, phase=solve, region=solve
 *
 * usage: api_c [ITERATIONS [SCALE]]   default 10 iterations, SCALE 1 (100
 *                                     units per iteration, about 2.8 ms)
 * Output: the plan, then "checksum <hex>", which depends only on the
 * arguments, not on whether sonde is loaded. Exit 0, or 2 on bad arguments.
 */
#include <stdio.h>
#include <stdlib.h>

#include "include/sonde.h"
#include "tests/fixtures/workloads/work.h"

uint64_t solve_kernel(uint64_t seed, uint64_t units);
uint64_t exchange_kernel(uint64_t seed, uint64_t units);
uint64_t checkpoint_kernel(uint64_t seed, uint64_t units);
WL_DEFINE_LEAF(solve_kernel)
WL_DEFINE_LEAF(exchange_kernel)
WL_DEFINE_LEAF(checkpoint_kernel)

/* One phase: attribute "phase" and a region of the same name around it. */
static WL_NOINLINE uint64_t phase(const char *name,
                                  uint64_t (*kernel)(uint64_t, uint64_t),
                                  uint64_t seed, uint64_t units)
{
    sonde_begin("phase", name);
    sonde_region_begin(name);
    uint64_t r = kernel(seed, units);
    WL_BARRIER();
    sonde_region_end(name);
    sonde_end("phase");
    return r;
}

static WL_NOINLINE uint64_t iterate(long i, const uint64_t units[3])
{
    uint64_t seed = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    uint64_t sum = phase("solve", solve_kernel, seed, units[0]);
    sum ^= phase("exchange", exchange_kernel, seed + 1, units[1]);
    sum += phase("checkpoint", checkpoint_kernel, seed + 2, units[2]);
    return sum;
}

int main(int argc, char **argv)
{
    long n = 10;
    char *end = NULL;
    if (argc > 1) {
        n = strtol(argv[1], &end, 10);
        if (end == argv[1] || *end || n < 1)
            n = -1;
    }
    double scale = wl_parse_scale(argc > 2 ? argv[2] : NULL, 1.0);
    if (argc > 3 || n < 1 || scale < 0) {
        fprintf(stderr, "usage: api_c [ITERATIONS [SCALE]]\n");
        return 2;
    }
    const uint64_t units[3] = {(uint64_t)(70 * scale + 0.5), (uint64_t)(20 * scale + 0.5),
                               (uint64_t)(10 * scale + 0.5)};
    printf("api_c: iterations=%ld units solve=%llu exchange=%llu checkpoint=%llu\n", n,
           (unsigned long long)units[0], (unsigned long long)units[1],
           (unsigned long long)units[2]);

    sonde_attr_t units_attr = sonde_attr_create("units", SONDE_INT, SONDE_PROCESS);
    sonde_attr_begin_int(units_attr, (int64_t)(units[0] + units[1] + units[2]));
    sonde_region_begin("run");
    uint64_t sum = 0;
    for (long i = 0; i < n; i++) {
        sonde_set_int("iteration", i);
        sum = sum * 31 + iterate(i, units);
    }
    sonde_end("iteration");
    sonde_region_end("run");
    sonde_attr_end(units_attr);

    printf("checksum %016llx\n", (unsigned long long)sum);
    return 0;
}
