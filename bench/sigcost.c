/* sigcost - cost of one empty-handler signal round trip, as sonde takes them.
 *
 * Run by bench/overhead.sh beside the profiler figures: it is the floor
 * under sonde's per-sample cost, the part no handler code can remove.
 * Sets up exactly the delivery path sonde's sampler uses: a per-thread
 * perf_event (PERF_COUNT_SW_TASK_CLOCK, user time only) whose overflows are
 * delivered as a real-time signal (O_ASYNC, F_SETSIG SIGRTMIN+4, F_SETOWN_EX
 * F_OWNER_TID) to an empty SA_SIGINFO handler that only counts.
 *
 * It then runs a fixed amount of CPU work PAIRS times with the event off and
 * on, alternating, measuring each run with CLOCK_THREAD_CPUTIME_ID (user +
 * system time of this thread, so kernel delivery and sigreturn are counted).
 * The cost per signal is the median over the pairs of
 *   (cpu_on - cpu_off) / signals_on.
 *
 * usage: sigcost [PERIOD_US [SECONDS]]   defaults 100 us and 1 s of CPU in
 *                                        all (half of it with signals)
 * Output: a description line per pair, then the result line
 *   per_signal_us <median> signals <n> period_us <p>
 * Exit status 0; 1 if the event cannot be set up (e.g. perf_event_paranoid),
 * 2 on a bad argument.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { PAIRS = 51 }; /* short alternating runs: slow drifts of the VM cancel */

static volatile sig_atomic_t signals_seen;

static void on_signal(int sig, siginfo_t *info, void *uctx)
{
    (void)sig;
    (void)info;
    (void)uctx;
    signals_seen++;
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A serial dependency chain the compiler cannot shorten; noipa so that the
 * two calls with equal arguments are not merged into one. */
static __attribute__((noipa)) uint64_t spin(uint64_t iters, uint64_t x)
{
    for (uint64_t i = 0; i < iters; i++) {
        x ^= x >> 29;
        x *= 0xBF58476D1CE4E5B9ull;
        x += i;
    }
    return x;
}

static int open_event(long period_us, int sig)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.sample_period = (uint64_t)period_us * 1000u;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.wakeup_events = 1;
    int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1,
                          PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "sigcost: perf_event_open(task-clock): %s "
                "(check /proc/sys/kernel/perf_event_paranoid)\n", strerror(errno));
        return -1;
    }
    struct f_owner_ex owner = {.type = F_OWNER_TID, .pid = (pid_t)gettid()};
    if (fcntl(fd, F_SETFL, O_ASYNC) != 0 || fcntl(fd, F_SETSIG, sig) != 0 ||
        fcntl(fd, F_SETOWN_EX, &owner) != 0) {
        fprintf(stderr, "sigcost: fcntl on the perf_event fd: %s\n",
                strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long period_us = argc > 1 ? atol(argv[1]) : 100;
    double seconds = argc > 2 ? atof(argv[2]) : 1.0;
    if (argc > 3 || period_us < 1 || !(seconds > 0)) {
        fprintf(stderr, "usage: sigcost [PERIOD_US [SECONDS]]\n");
        return 2;
    }
    int sig = SIGRTMIN + 4;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    int fd = open_event(period_us, sig);
    if (fd < 0)
        return 1;

    /* Size one run so that 2 * PAIRS runs take `seconds` of CPU. */
    uint64_t sink = 0, iters = 1000000;
    double t0 = thread_cpu_s();
    sink += spin(iters, 1);
    double per_iter = (thread_cpu_s() - t0) / (double)iters;
    iters = (uint64_t)(seconds / (2 * PAIRS) / per_iter);

    double cost_us[PAIRS], sum_off = 0, sum_on = 0;
    long total = 0;
    for (int p = 0; p < PAIRS; p++) {
        double a = thread_cpu_s();
        sink += spin(iters, (uint64_t)p + 2);
        double off = thread_cpu_s() - a;

        sig_atomic_t before = signals_seen;
        ioctl(fd, PERF_EVENT_IOC_RESET, 0);
        ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
        a = thread_cpu_s();
        sink += spin(iters, (uint64_t)p + 2);
        double on = thread_cpu_s() - a;
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        long n = (long)(signals_seen - before);
        total += n;
        cost_us[p] = n > 0 ? (on - off) * 1e6 / (double)n : 0.0;
        sum_off += off;
        sum_on += on;
    }
    close(fd);
    if (total == 0) {
        fprintf(stderr, "sigcost: no signal was delivered (is task-clock "
                "sampling working here?)\n");
        return 1;
    }
    qsort(cost_us, PAIRS, sizeof cost_us[0], cmp_double);
    printf("sigcost: %d pairs, CPU off %.3f s, on %.3f s, %ld signals; "
           "per-pair us/signal quartiles %.2f %.2f %.2f, pooled %.2f\n",
           PAIRS, sum_off, sum_on, total, cost_us[PAIRS / 4], cost_us[PAIRS / 2],
           cost_us[3 * PAIRS / 4], (sum_on - sum_off) * 1e6 / (double)total);
    printf("per_signal_us %.3f signals %ld period_us %ld (sink %llx)\n",
           cost_us[PAIRS / 2], total, period_us, (unsigned long long)(sink & 0xf));
    return 0;
}
