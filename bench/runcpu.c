/* runcpu - run a command and record its CPU and wall time precisely.
 *
 * bench/overhead.sh wraps every timed run in it instead of GNU time, whose
 * output has 10 ms resolution.  CPU time is user + system of the child and of
 * every descendant it waited for (wait4's rusage), in microseconds, so a
 * `perf record` run includes perf's own work.
 *
 * usage: runcpu OUTFILE CMD [ARG...]
 * Appends "cpu_s wall_s status maxrss_kb" to OUTFILE, where status is the
 * exit status, or 128 + the signal number if the command was killed, and
 * maxrss_kb the largest resident set of the command (or a descendant).  The command's
 * stdin/stdout/stderr are this program's.  Exits with that status; 127 if
 * CMD cannot be run, 126 on a bad invocation or when OUTFILE can't be written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: runcpu OUTFILE CMD [ARG...]\n");
        return 126;
    }
    double t0 = mono_s();
    pid_t pid = fork();
    if (pid < 0) {
        perror("runcpu: fork");
        return 126;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        fprintf(stderr, "runcpu: %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) {
            perror("runcpu: wait4");
            return 126;
        }
    double wall = mono_s() - t0;
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    int rc = WIFEXITED(status) ? WEXITSTATUS(status)
                               : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    FILE *f = fopen(argv[1], "a");
    if (!f || fprintf(f, "%.6f %.6f %d %ld\n", cpu, wall, rc, ru.ru_maxrss) < 0 || fclose(f) != 0) {
        fprintf(stderr, "runcpu: %s: %s\n", argv[1], strerror(errno));
        return 126;
    }
    return rc;
}
