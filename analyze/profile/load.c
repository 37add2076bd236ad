/*
 * load.c: reads the streams of one report, in parallel (--jobs N), and merges them.
 *
 * Workers take files in order from a shared counter, open and parse each (the costly part:
 * msgpack decoding and per-key aggregation, struct sd_load), and hand it back; the calling
 * thread merges the loads strictly in file order, so the profile, its symbols and every
 * message are the same whatever the number of jobs. Memory: at most the not-yet-merged
 * loads, each proportional to its stream's distinct keys, not to its samples.
 *
 * A stream is counted once however often it is given (a directory and a file in it, a
 * link, a copy): a file that is one already read (st_dev and st_ino of the opened
 * descriptor), or a copy of one (its HEADER's pid, host and clock origin, its size and
 * its first HEAD_BYTES bytes the same), is said in one line and skipped.
 *
 * On a terminal, when reading takes more than a second, one progress line is redrawn on
 * stderr (files done, megabytes read) and erased at the end; never when piped.
 */
#include "analyze/profile/profile.h"
#include "common/common.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

enum { HEAD_BYTES = 64 << 10 };

struct slot {
	struct sd_stream s;
	struct sd_load *l;
	int open_r;
	uint64_t head_hash;  /* of its first HEAD_BYTES bytes (0: unread) */
	_Atomic int ready;
};

/* A stream merged, to know its duplicates by: its file (by index), identity and HEADER. */
struct seen {
	size_t file;
	dev_t dev; ino_t ino; int has_ino;
	uint64_t pid, origin_ns; char *host; /* host NULL: no HEADER identity */
	uint64_t size, head_hash;
};

struct loader {
	const struct sd_profile *p;
	char **files;
	size_t n;
	struct slot *slots;
	_Atomic size_t next;
	_Atomic uint64_t bytes;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static void parse_one(struct loader *ld, size_t i)
{
	struct slot *sl = &ld->slots[i];
	sl->open_r = sd_stream_open(&sl->s, ld->files[i]);
	if (sl->open_r == 0) {
		uint8_t *b = malloc(HEAD_BYTES);
		ssize_t got = b ? pread(sl->s.fd, b, HEAD_BYTES, 0) : -1;
		if (got > 0)
			sl->head_hash = sd_fnv1a(b, (size_t)got);
		free(b);
		sl->l = sd_profile_parse(ld->p, &sl->s);
		atomic_fetch_add(&ld->bytes, (uint64_t)sl->s.len_bytes);
	}
	pthread_mutex_lock(&ld->lock);
	atomic_store(&sl->ready, 1);
	pthread_cond_broadcast(&ld->cond);
	pthread_mutex_unlock(&ld->lock);
}

static void *worker(void *arg)
{
	struct loader *ld = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&ld->next, 1);
		if (i >= ld->n)
			return NULL;
		parse_one(ld, i);
	}
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void progress(struct loader *ld, size_t done, double t0, int *shown)
{
	if (!isatty(STDERR_FILENO) || now_s() - t0 < 1.0)
		return;
	fprintf(stderr, "\rsonde: reading %zu/%zu streams, %.0f MB ", done, ld->n,
		(double)atomic_load(&ld->bytes) / 1e6);
	*shown = 1;
}

/* Is slot i (opened and read) a stream merged already? 1 (said), 0 (now remembered), or
 * -ENOMEM. Runs in the merging thread, in file order. */
static int duplicate(struct seen **seen, size_t *n, size_t *cap, char **files, size_t i,
		     const struct slot *sl)
{
	struct seen me = { .file = i, .size = sl->s.len_bytes, .head_hash = sl->head_hash };
	struct stat st;
	const char *host;

	if (fstat(sl->s.fd, &st) == 0)
		me.dev = st.st_dev, me.ino = st.st_ino, me.has_ino = 1;
	int ident = sd_load_ident(sl->l, &me.pid, &host, &me.origin_ns) == 0;
	for (size_t k = 0; k < *n; k++) {
		const struct seen *o = &(*seen)[k];
		if (me.has_ino && o->has_ino && me.dev == o->dev && me.ino == o->ino) {
			fprintf(stderr, "sonde: %s: the same file as %s, read already (counted "
				"once)\n", files[i], files[o->file]);
			return 1;
		}
		if (ident && o->host && me.pid == o->pid && me.origin_ns == o->origin_ns &&
		    !strcmp(host, o->host) && me.size == o->size && me.head_hash &&
		    me.head_hash == o->head_hash) {
			fprintf(stderr, "sonde: %s: the same stream as %s (pid %" PRIu64 " on %s, "
				"started at the same time; counted once)\n", files[i],
				files[o->file], me.pid, host);
			return 1;
		}
	}
	if (ident && !(me.host = strdup(host)))
		return -ENOMEM;
	if (sd_grow(seen, cap, *n + 1, sizeof(**seen))) {
		free(me.host);
		return -ENOMEM;
	}
	(*seen)[(*n)++] = me;
	return 0;
}

int sd_load_files(struct sd_profile *p, char **files, size_t n, int jobs, int strict,
		  size_t *used)
{
	struct seen *seen = NULL;
	size_t nseen = 0, capseen = 0;
	struct loader ld = { .p = p, .files = files, .n = n };
	int code = SD_EXIT_OK, shown = 0;
	double t0 = now_s();
	size_t nthreads = 0;
	pthread_t *threads = NULL;

	ld.slots = calloc(n ? n : 1, sizeof(*ld.slots));
	if (!ld.slots)
		return -ENOMEM;
	pthread_mutex_init(&ld.lock, NULL);
	pthread_cond_init(&ld.cond, NULL);
	if (jobs > 1 && n > 1) {
		threads = calloc((size_t)jobs, sizeof(*threads));
		for (int j = 0; threads && j < jobs && (size_t)j < n; j++)
			if (pthread_create(&threads[nthreads], NULL, worker, &ld) == 0)
				nthreads++;
	}
	for (size_t i = 0; i < n; i++) {
		struct slot *sl = &ld.slots[i];
		if (!nthreads) {
			atomic_store(&ld.next, i + 1);
			parse_one(&ld, i);
		} else {
			pthread_mutex_lock(&ld.lock);
			while (!atomic_load(&sl->ready)) {
				struct timespec until;
				clock_gettime(CLOCK_REALTIME, &until);
				until.tv_nsec += 200000000;
				if (until.tv_nsec >= 1000000000) {
					until.tv_sec++;
					until.tv_nsec -= 1000000000;
				}
				pthread_cond_timedwait(&ld.cond, &ld.lock, &until);
				pthread_mutex_unlock(&ld.lock);
				progress(&ld, i, t0, &shown);
				pthread_mutex_lock(&ld.lock);
			}
			pthread_mutex_unlock(&ld.lock);
		}
		progress(&ld, i, t0, &shown);
		if (code != SD_EXIT_OK) { /* --strict stopped: just release the rest */
			if (sl->l) {
				size_t off;
				sl->l = (sd_profile_merge(p, sl->l, &off), NULL);
			}
			sd_stream_close(&sl->s);
			continue;
		}
		size_t off = 0;
		int r = sl->open_r;
		if (r == 0 && sl->l) {
			int d = duplicate(&seen, &nseen, &capseen, files, i, sl);
			if (d < 0) {
				code = d;
			} else if (d) {
				sd_load_free(sl->l);
				sl->l = NULL;
				sd_stream_close(&sl->s);
				continue;
			}
		}
		if (r == 0)
			r = sl->l ? sd_profile_merge(p, sl->l, &off) : -ENOMEM;
		sl->l = NULL;
		if (r == -ENOMEM) {
			sd_stream_close(&sl->s);
			code = -ENOMEM;
			continue;
		}
		if (r == 1)
			fprintf(stderr, "%ssonde: %s: truncated at byte %zu (using the valid prefix)\n",
				shown ? "\r\033[K" : "", files[i], off);
		if (r >= 0) {
			(*used)++;
			/* --strict: a stream without END (killed, still running) is fatal too */
			if (strict && p->nsinfo && !p->sinfo[p->nsinfo - 1].end) {
				if (shown)
					fputs("\r\033[K", stderr);
				code = sd_error(SD_EXIT_BADINPUT, "%s: incomplete stream: no END "
						"record (the process ended without an exit sonde saw, "
						"such as SIGKILL or a raw exit_group system call, or "
						"is still running; --strict refuses it)", files[i]);
			}
		} else {
			if (shown)
				fprintf(stderr, "\r\033[K");
			int c = sd_stream_perror(&sl->s, files[i], r);
			if (strict)
				code = c;
		}
		sd_stream_close(&sl->s);
	}
	sd_profile_children(p);
	for (size_t j = 0; j < nthreads; j++)
		pthread_join(threads[j], NULL);
	if (shown)
		fprintf(stderr, "\r\033[K");
	free(threads);
	for (size_t k = 0; k < nseen; k++)
		free(seen[k].host);
	free(seen);
	free(ld.slots);
	pthread_cond_destroy(&ld.cond);
	pthread_mutex_destroy(&ld.lock);
	return code;
}
