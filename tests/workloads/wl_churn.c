/* wl_churn - torture workload for a preloaded in-process profiler.
 *
 * Three activities overlap:
 *   A. main creates and joins NTHR short threads, 4 at a time, each doing
 *      ~0.1 ms of work: thread start and exit race with the profiler's
 *      per-thread set-up, tear-down and signal delivery.
 *   B. a helper thread ("dl-loop") runs NDL cycles of dlopen(libplug.so),
 *      dlsym(plug_work), a call doing ~0.3 ms of work in plug_leaf, dlclose:
 *      code is mapped and unmapped while it is being sampled.  libplug.so is
 *      looked up next to this executable (via /proc/self/exe).
 *   C. during A, main forks NFORK children at evenly spaced points; each does
 *      ~30 ms of work and _exit()s with a byte of its checksum, which the
 *      parent checks with waitpid (fork of a multi-threaded process with
 *      profiler state inherited).  The helper does not start its last cycle
 *      before all forks are done, so every fork happens while B is live.
 *
 * usage: wl_churn [SCALE]   SCALE multiplies NTHR (2000) and NDL (1500);
 *                           NFORK is always 4.  Default: ~1.2 s of CPU here.
 * Output: counts, "errors N", "checksum <hex>" (depends only on SCALE); with
 * WL_CPU=1 in the environment also "cpu plug_work cpu_ns N", the CPU time the
 * dl-loop thread spent inside the plugin's calls (wl_cpu.h).
 * Exit status 0 only if every thread, dlopen/dlsym and child succeeded; 1
 * otherwise; 2 on a bad argument.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "work.h"
#include "wl_cpu.h"

enum {
    DEFAULT_THREADS = 2000,
    DEFAULT_DLOPENS = 1500,
    NFORK = 4,
    BATCH = 4,
    THREAD_UNITS = 4,  /* ~0.1 ms per short thread */
    PLUG_UNITS = 11,   /* ~0.3 ms per plugin call */
    CHILD_UNITS = 1100 /* ~30 ms per child */
};

uint64_t churn_leaf(uint64_t seed, uint64_t units);
WL_DEFINE_LEAF(churn_leaf)

/* Shared between main and the dl-loop thread. */
struct dl_loop {
    pthread_t handle;
    char path[PATH_MAX + 16];
    long cycles;
    atomic_int forks_done;  /* set by main once every child was reaped */
    /* Written by dl-loop, read by main after pthread_join. */
    uint64_t sum;
    long errors;
    long long plug_cpu_ns;  /* CPU time inside plug_work, all calls */
};

static void *short_thread(void *arg)
{
    uint64_t r = churn_leaf((uint64_t)(uintptr_t)arg, THREAD_UNITS);
    return (void *)(uintptr_t)(r | 1);
}

static WL_NOINLINE uint64_t dl_cycle(struct dl_loop *dl, long i)
{
    void *h = dlopen(dl->path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "wl_churn: dlopen: %s\n", dlerror());
        dl->errors++;
        return 0;
    }
    uint64_t r = 0;
    uint64_t (*work)(uint64_t, uint64_t);
    *(void **)&work = dlsym(h, "plug_work");
    if (work) {
        struct wl_cpu t0 = wl_cpu_now();
        r = work((uint64_t)i, PLUG_UNITS);
        dl->plug_cpu_ns += wl_cpu_now().cpu_ns - t0.cpu_ns;
    } else {
        fprintf(stderr, "wl_churn: dlsym(plug_work): %s\n", dlerror());
        dl->errors++;
    }
    if (dlclose(h) != 0) {
        fprintf(stderr, "wl_churn: dlclose: %s\n", dlerror());
        dl->errors++;
    }
    return r;
}

static void *dl_loop_main(void *arg)
{
    struct dl_loop *dl = arg;
    pthread_setname_np(pthread_self(), "dl-loop");
    uint64_t sum = 0;
    for (long i = 0; i < dl->cycles; i++) {
        if (i == dl->cycles - 1) {
            struct timespec pause = {0, 100000};
            while (!atomic_load(&dl->forks_done))
                nanosleep(&pause, NULL);
        }
        sum += dl_cycle(dl, i);
    }
    dl->sum = sum;
    return NULL;
}

/* Forks child k; returns 0 if it exited with the expected byte, else 1. */
static WL_NOINLINE int fork_child(int k, uint64_t *sum)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("wl_churn: fork");
        return 1;
    }
    if (pid == 0)
        _exit((int)(churn_leaf(1000 + (uint64_t)k, CHILD_UNITS) & 0x7f));
    uint64_t expect = churn_leaf(1000 + (uint64_t)k, CHILD_UNITS);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != (int)(expect & 0x7f)) {
        fprintf(stderr, "wl_churn: child %d: bad status 0x%x\n", k, status);
        return 1;
    }
    *sum += expect;
    return 0;
}

/* Creates and joins threads [first, first + count); returns the errors. */
static WL_NOINLINE long thread_batch(long first, int count, uint64_t *sum)
{
    pthread_t t[BATCH];
    long errors = 0;
    int started = 0;
    for (; started < count; started++)
        if (pthread_create(&t[started], NULL, short_thread,
                           (void *)(uintptr_t)(first + started)) != 0) {
            errors += count - started;
            break;
        }
    for (int j = 0; j < started; j++) {
        void *rv = NULL;
        if (pthread_join(t[j], &rv) != 0 || !rv)
            errors++;
        *sum += (uintptr_t)rv;
    }
    return errors;
}

static int plugin_path(char *buf, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    int w = snprintf(buf, len, "%s/libplug.so", self);
    return w < 0 || (size_t)w >= len ? -1 : 0;
}

int main(int argc, char **argv)
{
    double scale = wl_parse_scale(argc > 1 ? argv[1] : NULL, 1.0);
    if (argc > 2 || scale < 0) {
        fprintf(stderr, "usage: wl_churn [SCALE]\n");
        return 2;
    }
    long nthr = (long)(DEFAULT_THREADS * scale + 0.5);
    static struct dl_loop dl;
    dl.cycles = (long)(DEFAULT_DLOPENS * scale + 0.5);
    if (nthr < BATCH)
        nthr = BATCH;
    if (dl.cycles < 1)
        dl.cycles = 1;
    if (plugin_path(dl.path, sizeof dl.path) != 0) {
        fprintf(stderr, "wl_churn: cannot locate libplug.so via /proc/self/exe\n");
        return 1;
    }
    printf("wl_churn: threads=%ld dlopens=%ld forks=%d\n", nthr, dl.cycles,
           NFORK);

    if (pthread_create(&dl.handle, NULL, dl_loop_main, &dl) != 0) {
        fprintf(stderr, "wl_churn: pthread_create failed\n");
        return 1;
    }
    uint64_t sum = 0;
    long errors = 0;
    long nbatch = (nthr + BATCH - 1) / BATCH;
    int forked = 0;
    for (long b = 0; b < nbatch; b++) {
        long first = b * BATCH;
        int count = nthr - first < BATCH ? (int)(nthr - first) : BATCH;
        errors += thread_batch(first, count, &sum);
        /* child k is forked after batch (k + 1) * nbatch / (NFORK + 1) */
        while (forked < NFORK && b + 1 >= (forked + 1) * nbatch / (NFORK + 1)) {
            errors += fork_child(forked, &sum);
            forked++;
        }
    }
    for (; forked < NFORK; forked++)
        errors += fork_child(forked, &sum);
    atomic_store(&dl.forks_done, 1);
    pthread_join(dl.handle, NULL);
    sum += dl.sum;
    errors += dl.errors;

    printf("errors %ld\n", errors);
    printf("checksum %016llx\n", (unsigned long long)sum);
    if (wl_cpu_wanted())
        printf("cpu plug_work cpu_ns %lld\n", dl.plug_cpu_ns);
    return errors ? 1 : 0;
}
