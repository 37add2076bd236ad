/* work.h - the CPU-work kernel shared by the sonde test workloads.
 *
 * Used by every program in tests/workloads/ (and by libplug.so).  A "leaf"
 * runs a serial multiply/xor/shift dependency chain: each iteration needs the
 * previous result, so the compiler can neither vectorise nor fold it, and its
 * speed does not depend on the data.  Every leaf is stamped out from the same
 * macro, so leaves have identical code at different addresses and the CPU
 * time a leaf takes is proportional to the work units it is given.  That is
 * what lets a workload promise a known split of time between functions.
 */
#ifndef SONDE_WL_WORK_H
#define SONDE_WL_WORK_H

#include <stdint.h>
#include <stdlib.h>

#define WL_NOINLINE __attribute__((noinline))

/* Iterations per work unit: about 28 us (2.8 ns per iteration) on the 2-vCPU test VM. */
#define WL_UNIT_ITERS 10000u

/* Stops the compiler from turning a call into a tail call or moving work
 * across it: placed after a call, the caller's frame must survive it. */
#define WL_BARRIER() __asm__ volatile("" ::: "memory")

/* Defines `uint64_t NAME(uint64_t seed, uint64_t units)`: units * WL_UNIT_ITERS
 * iterations of the kernel; returns a value that depends on all of them.
 * The 64-byte alignment places every copy of the loop the same way relative to
 * cache lines and the decoder, so the copies run at the same speed. */
#define WL_DEFINE_LEAF(name)                                                  \
    WL_NOINLINE __attribute__((aligned(64))) uint64_t name(          \
        uint64_t seed, uint64_t units)                                       \
    {                                                                        \
        uint64_t x = seed | 1u;                                              \
        uint64_t n = units * WL_UNIT_ITERS;                                  \
        for (uint64_t i = 0; i < n; i++) {                                   \
            x ^= x >> 29;                                                    \
            x *= 0xBF58476D1CE4E5B9ull;                                      \
            x += i;                                                          \
        }                                                                    \
        return x;                                                            \
    }

/* Parses a non-negative SCALE argument; returns `def` for NULL.  Prints a
 * message and returns a negative value when `s` is not a number >= 0. */
static inline double wl_parse_scale(const char *s, double def)
{
    if (!s)
        return def;
    char *end = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= 0.0))
        return -1.0;
    return v;
}

#endif
