/* split_core.h - the "split" work pattern shared by wl_split and wl_threads.
 *
 * One round does 100 work units: leaf_a 50, leaf_b 30, leaf_c 15, leaf_d 5.
 * The leaves run identical code, so they take 50/30/15/5 % of the CPU time.
 */
#ifndef SONDE_WL_SPLIT_CORE_H
#define SONDE_WL_SPLIT_CORE_H

#include <stdint.h>

enum { SPLIT_NLEAVES = 4, SPLIT_UNITS_PER_ROUND = 100 };

/* Work units per round for leaf_a..leaf_d, and their names. */
extern const unsigned split_units[SPLIT_NLEAVES];
extern const char *const split_names[SPLIT_NLEAVES];

/* Runs one round: every leaf k gets split_units[k] units, reached through
 *   split_round > chain_1 > ... > chain_6 > dispatch > leaf_X.
 * Returns a checksum of the round that depends only on `seed`.
 * Thread-safe (no shared state). */
uint64_t split_round(uint64_t seed);

/* When split_measure is set (by wl_split, before any round), split_round adds
 * the CPU time each leaf's call took (CLOCK_THREAD_CPUTIME_ID, a system call
 * on each side of it) to the calling thread's split_leaf_cpu_ns[k]: the split
 * the machine really gave, which tests compare a profile with. */
extern int split_measure;
extern __thread long long split_leaf_cpu_ns[SPLIT_NLEAVES];

/* Prints "intended leaf_a=50.0% ..." (no newline) to stdout. */
void split_print_intended(void);

#endif
