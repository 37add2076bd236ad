/* plug.c - libplug.so, the plugin wl_churn dlopen()s and dlclose()s in a loop.
 *
 * plug_work does real work in plug_leaf, so samples land in code that is
 * unmapped again moments later: a profiler must record the mapping when it
 * appears (and its end) to symbolize them.  No state; thread-safe.
 */
#include "work.h"

#define PLUG_API __attribute__((visibility("default")))

uint64_t plug_leaf(uint64_t seed, uint64_t units);
WL_DEFINE_LEAF(plug_leaf)

/* Runs `units` work units (about 28 us each) inside plug_leaf; returns a
 * checksum that depends only on the arguments. */
PLUG_API uint64_t plug_work(uint64_t seed, uint64_t units);
PLUG_API uint64_t plug_work(uint64_t seed, uint64_t units)
{
    uint64_t r = plug_leaf(seed, units);
    WL_BARRIER();
    return r + 1;
}
