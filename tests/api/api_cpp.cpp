// api_cpp - api_c (tests/api/api_c.c) written with the C++ scope guards of
// include/sonde.hpp, built with -fno-exceptions -fno-rtti.
//
// Same plan, same work, same checksum as api_c: over N numbered iterations
// the phases solve, exchange and checkpoint (attribute "phase", each also a
// region of the same name inside the region "run") get 70/20/10 % of
// identical work units (tests/fixtures/workloads/work.h). The iteration is a guard
// over a handle (sonde::attribute + sonde::scope: the hot-loop form); the
// process-scope attribute "units" is a handle too.
//
// usage: api_cpp [ITERATIONS [SCALE]]   defaults 10 and 1, as api_c
// Output: the plan, then "checksum <hex>". Exit 0, or 2 on bad arguments.
#include <stdio.h>
#include <stdlib.h>

#include "include/sonde.hpp"
#include "tests/fixtures/workloads/work.h"

extern "C" {
uint64_t solve_kernel(uint64_t seed, uint64_t units);
uint64_t exchange_kernel(uint64_t seed, uint64_t units);
uint64_t checkpoint_kernel(uint64_t seed, uint64_t units);
WL_DEFINE_LEAF(solve_kernel)
WL_DEFINE_LEAF(exchange_kernel)
WL_DEFINE_LEAF(checkpoint_kernel)
}

// One phase: attribute "phase" and a region of the same name around it.
static WL_NOINLINE uint64_t phase(const char *name, uint64_t (*kernel)(uint64_t, uint64_t),
                                  uint64_t seed, uint64_t units)
{
    sonde::scope p("phase", name);
    sonde::region r(name);
    uint64_t x = kernel(seed, units);
    WL_BARRIER();
    return x;
}

static WL_NOINLINE uint64_t iterate(long i, const uint64_t units[3])
{
    uint64_t seed = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull;
    uint64_t sum = phase("solve", solve_kernel, seed, units[0]);
    sum ^= phase("exchange", exchange_kernel, seed + 1, units[1]);
    sum += phase("checkpoint", checkpoint_kernel, seed + 2, units[2]);
    return sum;
}

int main(int argc, char **argv)
{
    long n = 10;
    if (argc > 1) {
        char *end = nullptr;
        n = strtol(argv[1], &end, 10);
        if (end == argv[1] || *end || n < 1)
            n = -1;
    }
    double scale = wl_parse_scale(argc > 2 ? argv[2] : nullptr, 1.0);
    if (argc > 3 || n < 1 || scale < 0) {
        fprintf(stderr, "usage: api_cpp [ITERATIONS [SCALE]]\n");
        return 2;
    }
    const uint64_t units[3] = {static_cast<uint64_t>(70 * scale + 0.5),
                               static_cast<uint64_t>(20 * scale + 0.5),
                               static_cast<uint64_t>(10 * scale + 0.5)};
    printf("api_cpp: iterations=%ld units solve=%llu exchange=%llu checkpoint=%llu\n", n,
           static_cast<unsigned long long>(units[0]), static_cast<unsigned long long>(units[1]),
           static_cast<unsigned long long>(units[2]));

    uint64_t sum = 0;
    {
        sonde::attribute units_attr("units", SONDE_INT, SONDE_PROCESS);
        sonde::scope u(units_attr, units[0] + units[1] + units[2]);
        sonde::region run("run");
        sonde::attribute iteration("iteration", SONDE_INT);
        for (long i = 0; i < n; i++) {
            sonde::scope it(iteration, i);
            sum = sum * 31 + iterate(i, units);
        }
    }

    printf("checksum %016llx\n", static_cast<unsigned long long>(sum));
    return 0;
}
