/* wl_threads - N named worker threads doing unequal, known amounts of work.
 *
 * Worker i (named "worker-<i>" with pthread_setname_np) runs (i+1) * R
 * rounds of the split pattern (split_core.c: leaf_a/b/c/d = 50/30/15/5 %),
 * so per-thread CPU time grows 1:2:...:N while the leaf split is the same in
 * every thread.  The workers are pure CPU (no sleeps, no locks after the
 * start barrier), so a CPU-time profiler's per-thread sample counts should be
 * proportional to the per-thread CPU times this program prints.
 *
 * usage: wl_threads [N [SCALE]]   N workers (default 4, max 64); SCALE
 *                                 multiplies R (default 1: R = 64, about
 *                                 1.5 s of CPU in total for N = 4)
 * Output (stdout), after all workers finished, in worker order:
 *   thread worker-<i> tid <tid> cpu_ns <ns> user_ns <ns>
 * with cpu_ns from CLOCK_THREAD_CPUTIME_ID read by the worker as its last
 * act and user_ns, the user-mode part, from getrusage(RUSAGE_THREAD), then "checksum <hex>" (depends only on N and SCALE, not on
 * scheduling).  Exit status 0; 1 if a thread could not be created; 2 on a bad
 * argument.
 */
#define _GNU_SOURCE
#include <sys/resource.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "split_core.h"
#include "work.h"

enum { DEFAULT_THREADS = 4, MAX_THREADS = 64, DEFAULT_ROUNDS = 64 };

struct worker {
    pthread_t handle;
    int index;
    long rounds;
    pthread_barrier_t *start;
    /* Written by the worker, read by main after pthread_join. */
    pid_t tid;
    uint64_t sum;
    long long cpu_ns;
    long long user_ns;
};

static WL_NOINLINE uint64_t worker_body(int index, long rounds)
{
    uint64_t sum = 0;
    for (long r = 0; r < rounds; r++)
        sum += split_round((uint64_t)r * MAX_THREADS + (uint64_t)index);
    WL_BARRIER();
    return sum;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    char name[16];
    snprintf(name, sizeof name, "worker-%d", w->index);
    pthread_setname_np(pthread_self(), name);
    w->tid = gettid();
    pthread_barrier_wait(w->start);
    w->sum = worker_body(w->index, w->rounds);
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    w->cpu_ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    w->user_ns = (long long)ru.ru_utime.tv_sec * 1000000000LL + ru.ru_utime.tv_usec * 1000LL;
    return NULL;
}

int main(int argc, char **argv)
{
    long n = DEFAULT_THREADS;
    if (argc > 1) {
        char *end = NULL;
        n = strtol(argv[1], &end, 10);
        if (end == argv[1] || *end != '\0' || n < 1 || n > MAX_THREADS)
            n = -1;
    }
    double scale = wl_parse_scale(argc > 2 ? argv[2] : NULL, 1.0);
    if (argc > 3 || n < 1 || scale < 0) {
        fprintf(stderr, "usage: wl_threads [N [SCALE]]  (N 1..%d)\n",
                MAX_THREADS);
        return 2;
    }
    long base = (long)(DEFAULT_ROUNDS * scale + 0.5);
    if (base < 1)
        base = 1;
    printf("wl_threads: threads=%ld rounds=%ld*(i+1) ", n, base);
    split_print_intended();
    printf("\n");
    fflush(stdout);

    static struct worker workers[MAX_THREADS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)n);
    for (int i = 0; i < n; i++) {
        workers[i] = (struct worker){.index = i, .rounds = base * (i + 1),
                                     .start = &start};
        if (pthread_create(&workers[i].handle, NULL, worker_main,
                           &workers[i]) != 0) {
            /* The started workers wait on the barrier forever: just leave. */
            fprintf(stderr, "wl_threads: pthread_create failed\n");
            return 1;
        }
    }
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(workers[i].handle, NULL);
        total += workers[i].sum * (uint64_t)(2 * i + 1);
    }
    pthread_barrier_destroy(&start);
    for (int i = 0; i < n; i++)
        printf("thread worker-%d tid %d cpu_ns %lld user_ns %lld\n", i, (int)workers[i].tid,
               workers[i].cpu_ns, workers[i].user_ns);
    printf("checksum %016llx\n", (unsigned long long)total);
    return 0;
}
