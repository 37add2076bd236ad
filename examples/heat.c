/* heat - 2-D heat equation (Jacobi iteration) on T threads: sonde's example.
 *
 * The README's first command profiles this program.  It is a small but real
 * numeric code with three phases that a flat profile should show, compute
 * dominating:
 *   heat_compute     the 5-point stencil sweep over the thread's strip
 *   heat_exchange    halo exchange between neighbouring strips, through
 *                    per-thread send buffers guarded by a pthread barrier
 *   heat_checkpoint  every K iterations, each thread write()s its strip of
 *                    the grid into DIR/heat.ckpt (no fsync)
 *
 * The N x N grid of unknowns is split into T horizontal strips, one per
 * thread ("heat-<i>").  A thread owns its strip privately, as in a
 * distributed-memory code: two (rows + 2) x (N + 2) arrays, the extra rows
 * being ghost rows (neighbour data or the boundary) and the extra columns the
 * fixed boundary.  Boundary (Dirichlet): 1.0 above the top row, 0.0 on the
 * other three sides; the interior starts at 0.
 *
 * Each point's new value depends only on the previous iteration, so results
 * do not depend on T or on scheduling: the final residual and checksum are
 * the same on every run with the same N and ITERS.
 *
 * Checkpoint file: a 32-byte header ("HEATCKP1", then N and the iteration
 * number as little-endian uint64, then 8 zero bytes) followed by the N x N
 * grid as doubles, row-major.  Each checkpoint overwrites the previous one.
 *
 * usage: heat [-n N] [-i ITERS] [-t THREADS] [-c EVERY] [-o DIR]
 *   -n N       grid size (default 512)
 *   -i ITERS   iterations (default 5000: about 1.6 s of CPU on 2 vCPUs)
 *   -t THREADS threads / strips (default 2)
 *   -c EVERY   checkpoint every EVERY iterations, 0 = never (default 100)
 *   -o DIR     checkpoint directory (default $TMPDIR, else /tmp)
 * Exit status: 0 ok, 1 run-time error (allocation, threads, I/O), 2 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

enum { HEADER_BYTES = 32, MAX_THREADS = 256 };

struct options {
    long n;
    long iters;
    long threads;
    long every;
    const char *dir;
};

struct heat;

struct strip {
    pthread_t handle;
    struct heat *heat;
    int index;
    long row0;     /* first global row owned */
    long rows;     /* rows owned */
    double *u;     /* (rows + 2) x (n + 2), current iterate */
    double *unew;  /* same shape, next iterate */
    double *send_top; /* copy of the first owned row, read by index - 1 */
    double *send_bot; /* copy of the last owned row, read by index + 1 */
    double *pack;     /* rows x n, the strip as written to the checkpoint */
    int err;          /* 0 or an errno from a checkpoint write */
};

struct heat {
    struct options opt;
    pthread_barrier_t halo;
    int ckpt_fd;
    struct strip *strips;
};

#define AT(a, n, r, c) ((a)[(size_t)(r) * (size_t)((n) + 2) + (size_t)(c)])

/* One Jacobi sweep over the owned rows, then the iterates swap roles. */
static NOINLINE void heat_compute(struct strip *s, long n)
{
    const double *u = s->u;
    double *v = s->unew;
    for (long r = 1; r <= s->rows; r++)
        for (long c = 1; c <= n; c++)
            AT(v, n, r, c) = 0.25 * (AT(u, n, r - 1, c) + AT(u, n, r + 1, c) +
                                     AT(u, n, r, c - 1) + AT(u, n, r, c + 1));
    s->unew = s->u;
    s->u = v;
}

/* Publishes the strip's edge rows, then fills its ghost rows from its
 * neighbours' published rows.  The second barrier keeps a fast thread from
 * overwriting its send buffers before its neighbours have read them. */
static NOINLINE void heat_exchange(struct heat *h, struct strip *s)
{
    long n = h->opt.n;
    size_t row_bytes = (size_t)n * sizeof(double);
    memcpy(s->send_top, &AT(s->u, n, 1, 1), row_bytes);
    memcpy(s->send_bot, &AT(s->u, n, s->rows, 1), row_bytes);
    pthread_barrier_wait(&h->halo);
    if (s->index > 0)
        memcpy(&AT(s->u, n, 0, 1), h->strips[s->index - 1].send_bot, row_bytes);
    if (s->index + 1 < h->opt.threads)
        memcpy(&AT(s->u, n, s->rows + 1, 1), h->strips[s->index + 1].send_top,
               row_bytes);
    pthread_barrier_wait(&h->halo);
}

/* Writes all of buf at offset; returns 0 or an errno value. */
static int write_all(int fd, const void *buf, size_t len, off_t offset)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = pwrite(fd, p, len, offset);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += w;
        len -= (size_t)w;
        offset += w;
    }
    return 0;
}

/* Writes the strip (and, from strip 0, the header) into the checkpoint. */
static NOINLINE void heat_checkpoint(struct heat *h, struct strip *s, long iter)
{
    long n = h->opt.n;
    for (long r = 0; r < s->rows; r++)
        memcpy(s->pack + (size_t)r * (size_t)n, &AT(s->u, n, r + 1, 1),
               (size_t)n * sizeof(double));
    if (s->index == 0) {
        unsigned char hdr[HEADER_BYTES] = "HEATCKP1";
        uint64_t fields[2] = {(uint64_t)n, (uint64_t)iter};
        memcpy(hdr + 8, fields, sizeof fields); /* x86-64: little-endian */
        int e = write_all(h->ckpt_fd, hdr, sizeof hdr, 0);
        if (e && !s->err)
            s->err = e;
    }
    off_t off = HEADER_BYTES + (off_t)s->row0 * n * (off_t)sizeof(double);
    int e = write_all(h->ckpt_fd, s->pack,
                      (size_t)s->rows * (size_t)n * sizeof(double), off);
    if (e && !s->err)
        s->err = e;
}

static void *strip_main(void *arg)
{
    struct strip *s = arg;
    struct heat *h = s->heat;
    char name[16];
    snprintf(name, sizeof name, "heat-%d", s->index);
    pthread_setname_np(pthread_self(), name);
    for (long it = 1; it <= h->opt.iters; it++) {
        heat_compute(s, h->opt.n);
        heat_exchange(h, s);
        if (h->opt.every > 0 && it % h->opt.every == 0)
            heat_checkpoint(h, s, it);
    }
    return NULL;
}

/* Strip i gets n / t rows, the first n % t strips one more. */
static int strips_new(struct heat *h)
{
    long n = h->opt.n, t = h->opt.threads;
    h->strips = calloc((size_t)t, sizeof *h->strips);
    if (!h->strips)
        return -ENOMEM;
    long row0 = 0;
    for (long i = 0; i < t; i++) {
        struct strip *s = &h->strips[i];
        s->heat = h;
        s->index = (int)i;
        s->row0 = row0;
        s->rows = n / t + (i < n % t);
        row0 += s->rows;
        size_t cells = (size_t)(s->rows + 2) * (size_t)(n + 2);
        s->u = calloc(cells, sizeof(double));
        s->unew = calloc(cells, sizeof(double));
        s->send_top = calloc((size_t)n, sizeof(double));
        s->send_bot = calloc((size_t)n, sizeof(double));
        s->pack = calloc((size_t)s->rows * (size_t)n, sizeof(double));
        if (!s->u || !s->unew || !s->send_top || !s->send_bot || !s->pack)
            return -ENOMEM;
        if (i == 0) /* the hot edge above row 0, in both iterates */
            for (long c = 1; c <= n; c++)
                AT(s->u, n, 0, c) = AT(s->unew, n, 0, c) = 1.0;
    }
    return 0;
}

static void strips_free(struct heat *h)
{
    if (!h->strips)
        return;
    for (long i = 0; i < h->opt.threads; i++) {
        struct strip *s = &h->strips[i];
        free(s->u);
        free(s->unew);
        free(s->send_top);
        free(s->send_bot);
        free(s->pack);
    }
    free(h->strips);
    h->strips = NULL;
}

/* Value of global cell (r, c), including the boundary (r or c = -1 or n). */
static double cell(const struct heat *h, long r, long c)
{
    long n = h->opt.n;
    if (r < 0)
        return c >= 0 && c < n ? 1.0 : 0.0;
    if (r >= n || c < 0 || c >= n)
        return 0.0;
    const struct strip *s = h->strips;
    while (r >= s->row0 + s->rows)
        s++;
    return AT(s->u, n, r - s->row0 + 1, c + 1);
}

/* Residual of the discrete Laplace equation (2-norm over the grid) and the
 * sum of all values, in one fixed order: independent of the thread count. */
static void summarize(const struct heat *h, double *residual, double *sum)
{
    long n = h->opt.n;
    double r2 = 0.0, total = 0.0;
    for (long r = 0; r < n; r++)
        for (long c = 0; c < n; c++) {
            double v = cell(h, r, c);
            double d = 0.25 * (cell(h, r - 1, c) + cell(h, r + 1, c) +
                               cell(h, r, c - 1) + cell(h, r, c + 1)) - v;
            r2 += d * d;
            total += v;
        }
    *residual = sqrt(r2);
    *sum = total;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi)
        return -EINVAL;
    *out = v;
    return 0;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: heat [-n N] [-i ITERS] [-t THREADS] [-c EVERY] [-o DIR]\n"
            "  -n N        grid size, 4..16384 (default 512)\n"
            "  -i ITERS    iterations (default 5000)\n"
            "  -t THREADS  threads, 1..%d and at most N (default 2)\n"
            "  -c EVERY    checkpoint every EVERY iterations, 0 = never "
            "(default 100)\n"
            "  -o DIR      checkpoint directory (default $TMPDIR, else /tmp)\n",
            MAX_THREADS);
}

int main(int argc, char **argv)
{
    struct heat h = {.opt = {.n = 512, .iters = 5000, .threads = 2,
                             .every = 100, .dir = NULL},
                     .ckpt_fd = -1};
    int opt, bad = 0;
    while ((opt = getopt(argc, argv, "n:i:t:c:o:")) != -1) {
        switch (opt) {
        case 'n': bad |= parse_long(optarg, 4, 16384, &h.opt.n); break;
        case 'i': bad |= parse_long(optarg, 1, LONG_MAX, &h.opt.iters); break;
        case 't': bad |= parse_long(optarg, 1, MAX_THREADS, &h.opt.threads); break;
        case 'c': bad |= parse_long(optarg, 0, LONG_MAX, &h.opt.every); break;
        case 'o': h.opt.dir = optarg; break;
        default: bad = 1; break;
        }
    }
    if (bad || optind != argc || h.opt.threads > h.opt.n) {
        usage();
        return 2;
    }
    if (!h.opt.dir) {
        const char *tmp = getenv("TMPDIR");
        h.opt.dir = tmp && *tmp ? tmp : "/tmp";
    }

    int rc = 1;
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/heat.ckpt", h.opt.dir) >= (int)sizeof path) {
        fprintf(stderr, "heat: %s: directory name too long\n", h.opt.dir);
        return 1;
    }
    if (strips_new(&h) != 0) {
        fprintf(stderr, "heat: out of memory for a %ld x %ld grid\n", h.opt.n,
                h.opt.n);
        goto out;
    }
    if (h.opt.every > 0) {
        h.ckpt_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (h.ckpt_fd < 0) {
            fprintf(stderr, "heat: %s: %s (choose another directory with -o)\n",
                    path, strerror(errno));
            goto out;
        }
    }
    printf("heat: n=%ld iters=%ld threads=%ld checkpoint-every=%ld\n", h.opt.n,
           h.opt.iters, h.opt.threads, h.opt.every);
    fflush(stdout);

    pthread_barrier_init(&h.halo, NULL, (unsigned)h.opt.threads);
    long started = 0;
    for (; started < h.opt.threads; started++)
        if (pthread_create(&h.strips[started].handle, NULL, strip_main,
                           &h.strips[started]) != 0) {
            /* The started threads would wait on the barrier forever. */
            fprintf(stderr, "heat: cannot create thread %ld\n", started);
            exit(1);
        }
    for (long i = 0; i < started; i++)
        pthread_join(h.strips[i].handle, NULL);
    pthread_barrier_destroy(&h.halo);

    int err = 0;
    for (long i = 0; i < h.opt.threads && !err; i++)
        err = h.strips[i].err;
    if (err) {
        fprintf(stderr, "heat: writing %s: %s (choose another directory with -o)\n",
                path, strerror(err));
        goto out;
    }
    long written = h.opt.every > 0 ? h.opt.iters / h.opt.every : 0;
    if (written > 0)
        printf("checkpoints %ld, last at iteration %ld (%s)\n", written,
               written * h.opt.every, path);
    else
        printf("checkpoints 0\n");
    double residual, sum;
    summarize(&h, &residual, &sum);
    printf("residual %.12e\n", residual);
    printf("checksum %.12e\n", sum);
    rc = 0;
out:
    if (h.ckpt_fd >= 0)
        close(h.ckpt_fd);
    strips_free(&h);
    return rc;
}
