/* wl_cpu.h - the CPU time a test program really used, printed by the program
 * itself, so that tests derive their expectations from it and never from a
 * fixed amount of work (which takes less time on a faster machine) or of
 * time (whose user-mode part depends on the machine).
 *
 * A CPU-time source of sonde counts the thread's user-mode time (the task
 * clock with exclude_kernel); the kernel's split of CPU time into user and
 * system comes from scheduler ticks, so a test takes [user, user + system]
 * as the reference interval for a count of samples.
 *
 * Used by tests/workloads and tests/runtime programs; header-only; each
 * function is for ordinary (not signal) context. The includer defines
 * _GNU_SOURCE (RUSAGE_THREAD).
 */
#ifndef SONDE_WL_CPU_H
#define SONDE_WL_CPU_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

/* CPU time of the calling thread, in ns: all of it, and the user-mode part. */
struct wl_cpu {
    long long cpu_ns;
    long long user_ns;
};

static inline struct wl_cpu wl_cpu_now(void)
{
    struct wl_cpu c = {0, 0};
    struct timespec ts;
    struct rusage ru;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        c.cpu_ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    if (getrusage(RUSAGE_THREAD, &ru) == 0)
        c.user_ns = (long long)ru.ru_utime.tv_sec * 1000000000LL +
                    (long long)ru.ru_utime.tv_usec * 1000LL;
    return c;
}

/* Prints "cpu WHAT cpu_ns N user_ns N": the calling thread's CPU time since
 * `from` (all zero: since the thread began). One line, written at once. */
static inline void wl_cpu_print(const char *what, struct wl_cpu from)
{
    struct wl_cpu now = wl_cpu_now();
    printf("cpu %s cpu_ns %lld user_ns %lld\n", what, now.cpu_ns - from.cpu_ns,
           now.user_ns - from.user_ns);
    fflush(stdout);
}

/* Burns `sec` seconds of the calling thread's CPU time, in user mode (a
 * multiply-add loop whose result is kept), checking its CPU clock. */
static volatile unsigned long long wl_burn_sink;

static inline void wl_burn(double sec)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    long long end = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec + (long long)(sec * 1e9);
    unsigned long long x = 1;
    for (;;) {
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        if ((long long)ts.tv_sec * 1000000000LL + ts.tv_nsec >= end)
            break;
        for (int i = 0; i < 20000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    }
    wl_burn_sink += x;
}

/* Programs whose output must not change under sonde print CPU lines only
 * when the test asks, with WL_CPU=1 in the environment. */
static inline int wl_cpu_wanted(void)
{
    const char *v = getenv("WL_CPU");
    return v && v[0] == '1';
}

#endif
