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
 * stderr (files done, megabytes read) and erased at the end; when stderr is not a
 * terminal (a batch job), only with --progress: a whole line every 2 seconds, and one
 * at the end (streams used of those given, megabytes, seconds).
 *
 * With a remote loader (sd_load_set_remote: the MPI report), other processes parse the
 * files instead of the workers and send each parsed file (wire.c) with what the merging
 * needs of its slot; process 0 receives them in file order and merges them as here, so
 * its profile and messages are those of a local load.
 */
#include "analyze/profile/profile.h"
#include "common/common.h"
#include "common/log.h"

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
	struct sd_stream s;  /* closed once parsed: descriptors stay few */
	struct sd_load *l;
	int open_r;
	dev_t dev; ino_t ino; int has_ino; /* of the opened file, for duplicates */
	uint64_t head_hash;  /* of its first HEAD_BYTES bytes (0: unread) */
	char *why;           /* s.err_why, when received from another process (owned) */
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
	/* Workers read at most `window` files ahead of the merging: open descriptors and
	 * unmerged loads are bounded by it, whatever the number of files. */
	_Atomic size_t merged;
	size_t window;
	int batch;        /* --progress: lines on a stderr that is not a terminal */
	double last_said; /* when the last of them was said (merging thread) */
	_Atomic uint64_t bytes;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

/* What the merging (calling) thread keeps from one file to the next. */
struct merging {
	struct sd_profile *p;
	char **files;
	int strict;
	size_t *used;          /* streams merged (the caller's count) */
	int code;              /* SD_EXIT_OK, or what stops the load (said, or -ENOMEM) */
	int shown;             /* a progress line is on stderr (erased before a message) */
	struct seen *seen;     /* the streams merged, to know duplicates by */
	size_t nseen, capseen;
};

static void parse_one(struct loader *ld, size_t i)
{
	struct slot *sl = &ld->slots[i];
	sl->open_r = sd_stream_open(&sl->s, ld->files[i]);
	if (sl->open_r == 0) {
		uint8_t *b = malloc(HEAD_BYTES);
		ssize_t got = b ? pread(sl->s.fd, b, HEAD_BYTES, 0) : -1;
		struct stat st;
		if (got > 0)
			sl->head_hash = sd_fnv1a(b, (size_t)got);
		free(b);
		if (fstat(sl->s.fd, &st) == 0)
			sl->dev = st.st_dev, sl->ino = st.st_ino, sl->has_ino = 1;
		sl->l = sd_profile_parse(ld->p, &sl->s);
		atomic_fetch_add(&ld->bytes, (uint64_t)sl->s.len_bytes);
		sd_stream_close(&sl->s); /* read whole: its error offsets stay */
	}
	pthread_mutex_lock(&ld->lock);
	atomic_store(&sl->ready, 1);
	pthread_cond_broadcast(&ld->cond);
	pthread_mutex_unlock(&ld->lock);
}

/* ---- remote parsing (the MPI report) ------------------------------------------------ */

static const struct sd_load_remote *remote;
static int remote_used; /* once: the parsing processes end with their files */

void sd_load_set_remote(const struct sd_load_remote *r)
{
	remote = r;
}

/* The process that parses file i. */
static int owner(size_t i)
{
	return 1 + (int)(i % (size_t)(remote->nprocs - 1));
}

/* What the merging needs of a slot parsed elsewhere, before its load's bytes and the
 * text of its error (why_len: its length + 1, 0: none). */
struct slot_wire {
	uint64_t i, mode, dev, ino, has_ino, has_load, head_hash, len_bytes, err_off, version;
	uint64_t why_len;
	int64_t open_r;
};

/* Slot i as bytes (malloc'ed): 0 or -ENOMEM. A load that cannot be packed is sent as
 * -ENOMEM, which stops the report in process 0. */
static int pack_slot(const struct slot *sl, size_t i, uint8_t **out, size_t *len)
{
	uint8_t *lb = NULL;
	size_t ll = 0, wl = sl->s.err_why ? strlen(sl->s.err_why) : 0;
	int packed = sl->l && sd_load_pack(sl->l, &lb, &ll) == 0;
	struct slot_wire h = { i, sl->s.mode, (uint64_t)sl->dev, (uint64_t)sl->ino,
			       (uint64_t)sl->has_ino, (uint64_t)packed, sl->head_hash,
			       sl->s.len_bytes, sl->s.err_off, sl->s.version,
			       sl->s.err_why ? wl + 1 : 0, sl->open_r };
	if (sl->open_r == 0 && !packed)
		h.open_r = -ENOMEM;
	*len = sizeof h + wl + ll;
	if (!(*out = malloc(*len))) {
		free(lb);
		return -ENOMEM;
	}
	memcpy(*out, &h, sizeof h);
	if (wl)
		memcpy(*out + sizeof h, sl->s.err_why, wl);
	if (ll)
		memcpy(*out + sizeof h + wl, lb, ll);
	free(lb);
	return 0;
}

static int unpack_slot(struct slot *sl, size_t i, const char *name, const uint8_t *b, size_t len)
{
	struct slot_wire h;
	if (len < sizeof h)
		return -EBADMSG;
	memcpy(&h, b, sizeof h);
	size_t wl = h.why_len ? h.why_len - 1 : 0;
	if (h.i != i || wl > len - sizeof h)
		return -EBADMSG;
	sl->s.fd = -1;
	sl->s.name = name;
	sl->s.mode = (unsigned)h.mode, sl->s.len_bytes = h.len_bytes;
	sl->s.err_off = h.err_off, sl->s.version = h.version;
	sl->open_r = (int)h.open_r;
	sl->dev = (dev_t)h.dev, sl->ino = (ino_t)h.ino, sl->has_ino = (int)h.has_ino;
	sl->head_hash = h.head_hash;
	if (h.why_len) {
		if (!(sl->why = malloc(wl + 1)))
			return -ENOMEM;
		memcpy(sl->why, b + sizeof h, wl);
		sl->why[wl] = 0;
		sl->s.err_why = sl->why;
	}
	if (h.has_load && !(sl->l = sd_load_unpack(b + sizeof h + wl, len - sizeof h - wl, name)))
		return -EBADMSG;
	return 0;
}

static void parse_one(struct loader *ld, size_t i);

/* A parsing process: its files, in order, to process 0; does not return. */
static void work_remote(struct loader *ld)
{
	for (size_t i = (size_t)remote->me - 1; i < ld->n; i += (size_t)remote->nprocs - 1) {
		struct slot *sl = &ld->slots[i];
		uint8_t *b = NULL;
		size_t len = 0;
		parse_one(ld, i);
		if (pack_slot(sl, i, &b, &len) == 0)
			remote->send(remote->arg, b, len);
		else /* not even the slot: its header alone, as out of memory */
			remote->send(remote->arg, (const uint8_t *)&(struct slot_wire){
					     .i = i, .open_r = -ENOMEM }, sizeof(struct slot_wire));
		free(b);
		sd_load_free(sl->l);
		sl->l = NULL;
	}
	remote->finished(remote->arg);
}

/* Process 0: file i from the process that parsed it. One it cannot have is said as an
 * unreadable file (-EIO), never left out silently. */
static void fetch_remote(struct loader *ld, size_t i)
{
	struct slot *sl = &ld->slots[i];
	uint8_t *b = NULL;
	size_t len = 0;
	int r = remote->recv(remote->arg, owner(i), &b, &len);
	if (r == 0)
		r = unpack_slot(sl, i, ld->files[i], b, len);
	if (r) {
		sd_load_free(sl->l);
		sl->l = NULL;
		sl->open_r = r == -ENOMEM ? -ENOMEM : -EIO;
		sl->s.fd = -1;
	}
	free(b);
	atomic_fetch_add(&ld->bytes, (uint64_t)sl->s.len_bytes);
	atomic_store(&sl->ready, 1);
}

/* Do all processes read the same files? (collective; 0 without a remote loader) */
static int remote_agreed(const struct sd_profile *p, char **files, size_t n)
{
	if (!remote || remote->nprocs < 2 || remote_used++)
		return 0;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = h * 1099511628211ull ^ sd_fnv1a(files[i], strlen(files[i]) + 1);
	int same = remote->agree(remote->arg, n, h);
	/* observers (the formats of every sample's time: speedscope, trace, the page's
	 * timeline) keep per-stream state that is not sent: rank 0 reads alone, as said in
	 * docs/REPORT.md, and nothing is said here, the output being the same */
	int ok = same && !p->nobs;
	if (!ok && remote->me != 0)
		remote->finished(remote->arg);
	if (!same && n)
		sd_msg("sonde: report: the MPI ranks do not all read these %zu streams (another "
		       "file list, or a rank stopped before reading): rank 0 reads them alone", n);
	return ok;
}

static void *worker(void *arg)
{
	struct loader *ld = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&ld->next, 1);
		if (i >= ld->n)
			return NULL;
		pthread_mutex_lock(&ld->lock);
		while (i >= atomic_load(&ld->merged) + ld->window)
			pthread_cond_wait(&ld->cond, &ld->lock);
		pthread_mutex_unlock(&ld->lock);
		parse_one(ld, i);
	}
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The progress line, and its erasing before a message ("\r\033[K"), are terminal drawing,
 * not messages: written on stdio's stderr directly, not through the log sink (common/log.h
 * makes whole lines), and in order with the messages because the CLI's sink writes to
 * stdio's stderr too (util's sd_stderr_sink). */
static void progress(struct loader *ld, size_t done, double t0, int *shown)
{
	double now = now_s();
	if (now - t0 < 1.0)
		return;
	if (isatty(STDERR_FILENO)) {
		fprintf(stderr, "\rsonde: reading %zu/%zu streams, %.0f MB ", done, ld->n,
			(double)atomic_load(&ld->bytes) / 1e6);
		*shown = 1;
	} else if (ld->batch && now - ld->last_said >= 2.0) {
		/* --progress in a batch job: a whole line every 2 s, through the sink */
		sd_msg("sonde: reading %zu/%zu streams, %.0f MB", done, ld->n,
		       (double)atomic_load(&ld->bytes) / 1e6);
		ld->last_said = now;
	}
}

/* Is slot i (opened and read) a stream merged already? 1 (said), 0 (now remembered), or
 * -ENOMEM. Runs in the merging thread, in file order. */
static int duplicate(struct merging *m, size_t i, const struct slot *sl)
{
	struct seen me = { .file = i, .size = sl->s.len_bytes, .head_hash = sl->head_hash,
			   .dev = sl->dev, .ino = sl->ino, .has_ino = sl->has_ino };
	const char *host;

	int ident = sd_load_ident(sl->l, &me.pid, &host, &me.origin_ns) == 0;
	for (size_t k = 0; k < m->nseen; k++) {
		const struct seen *o = &m->seen[k];
		if (me.has_ino && o->has_ino && me.dev == o->dev && me.ino == o->ino) {
			sd_msg("sonde: %s: the same file as %s, read already (counted "
				"once)", m->files[i], m->files[o->file]);
			return 1;
		}
		if (ident && o->host && me.pid == o->pid && me.origin_ns == o->origin_ns &&
		    !strcmp(host, o->host) && me.size == o->size && me.head_hash &&
		    me.head_hash == o->head_hash) {
			sd_msg("sonde: %s: the same stream as %s (pid %" PRIu64 " on %s, "
				"started at the same time; counted once)", m->files[i],
				m->files[o->file], me.pid, host);
			return 1;
		}
	}
	if (ident && !(me.host = strdup(host)))
		return -ENOMEM;
	if (sd_grow(&m->seen, &m->capseen, m->nseen + 1, sizeof(*m->seen))) {
		free(me.host);
		return -ENOMEM;
	}
	m->seen[m->nseen++] = me;
	return 0;
}

/* Start up to jobs workers (no more than files): how many started, in *threads (the
 * caller frees it). None started: the calling thread parses each file itself. */
static size_t start_workers(struct loader *ld, int jobs, pthread_t **threads)
{
	size_t nthreads = 0;
	*threads = calloc((size_t)jobs, sizeof(**threads));
	for (int j = 0; *threads && j < jobs && (size_t)j < ld->n; j++)
		if (pthread_create(&(*threads)[nthreads], NULL, worker, ld) == 0)
			nthreads++;
	return nthreads;
}

/* Wait until the workers have read file i, redrawing the progress line every 200 ms. */
static void wait_ready(struct loader *ld, size_t i, double t0, int *shown)
{
	struct slot *sl = &ld->slots[i];
	pthread_mutex_lock(&ld->lock);
	while (!atomic_load(&sl->ready)) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 200000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&ld->cond, &ld->lock, &until);
		pthread_mutex_unlock(&ld->lock);
		progress(ld, i, t0, shown);
		pthread_mutex_lock(&ld->lock);
	}
	pthread_mutex_unlock(&ld->lock);
}

/* Merge file i, read into sl, into m->p (or skip it as a duplicate, or say why it could
 * not be read), and close its stream; m->code records what stops the load. */
static void merge_slot(struct merging *m, size_t i, struct slot *sl)
{
	struct sd_profile *p = m->p;
	if (m->code != SD_EXIT_OK) { /* --strict stopped: just release the rest */
		if (sl->l) {
			size_t off;
			sl->l = (sd_profile_merge(p, sl->l, &off), NULL);
		}
		sd_stream_close(&sl->s);
		return;
	}
	size_t off = 0;
	int r = sl->open_r;
	if (r == 0 && sl->l) {
		int d = duplicate(m, i, sl);
		if (d < 0) {
			m->code = d;
		} else if (d) {
			sd_load_free(sl->l);
			sl->l = NULL;
			sd_stream_close(&sl->s);
			return;
		}
	}
	if (r == 0)
		r = sl->l ? sd_profile_merge(p, sl->l, &off) : -ENOMEM;
	sl->l = NULL;
	if (r == -ENOMEM) {
		sd_stream_close(&sl->s);
		m->code = -ENOMEM;
		return;
	}
	if (r == 1) {
		if (m->shown)
			fputs("\r\033[K", stderr);
		sd_msg("sonde: %s: truncated at byte %zu (using the valid prefix)", m->files[i],
		       off);
	}
	if (r >= 0) {
		(*m->used)++;
		/* --strict: a stream without END (killed, still running) is fatal too */
		if (m->strict && p->nsinfo && !p->sinfo[p->nsinfo - 1].end) {
			if (m->shown)
				fputs("\r\033[K", stderr);
			m->code = sd_error(SD_EXIT_BADINPUT, "%s: incomplete stream: no END "
					   "record (the process ended without an exit sonde saw, "
					   "such as SIGKILL or a raw exit_group system call, or "
					   "is still running; --strict refuses it)", m->files[i]);
		}
	} else if (r == -EMFILE || r == -ENFILE) {
		/* not the file's fault: a report without it would be wrong */
		if (m->shown)
			fprintf(stderr, "\r\033[K");
		m->code = sd_error(SD_EXIT_IO, "%s: %s (the report stops: it would leave streams "
				   "out; raise the limit of open files, ulimit -n)", m->files[i],
				   strerror(-r));
	} else {
		if (m->shown)
			fprintf(stderr, "\r\033[K");
		int c = sd_stream_perror(&sl->s, m->files[i], r);
		p->unreadable++;
		if (m->strict)
			m->code = c;
	}
	sd_stream_close(&sl->s);
}

int sd_load_files(struct sd_profile *p, char **files, size_t n, int jobs, unsigned flags,
		  size_t *used)
{
	struct merging m = { .p = p, .files = files, .strict = !!(flags & SD_LOAD_STRICT),
			     .used = used,
			     .code = SD_EXIT_OK };
	struct loader ld = { .p = p, .files = files, .n = n };
	double t0 = now_s();
	size_t nthreads = 0;
	pthread_t *threads = NULL;

	ld.slots = calloc(n ? n : 1, sizeof(*ld.slots));
	if (!ld.slots)
		return -ENOMEM;
	pthread_mutex_init(&ld.lock, NULL);
	pthread_cond_init(&ld.cond, NULL);
	ld.window = jobs > 1 ? 2 * (size_t)jobs : 1;
	ld.batch = !!(flags & SD_LOAD_PROGRESS);
	ld.last_said = t0;
	int rem = remote_agreed(p, files, n);
	if (rem && remote->me != 0)
		work_remote(&ld); /* does not return */
	if (!rem && jobs > 1 && n > 1)
		nthreads = start_workers(&ld, jobs, &threads);
	for (size_t i = 0; i < n; i++) {
		if (rem) {
			fetch_remote(&ld, i);
		} else if (!nthreads) {
			atomic_store(&ld.next, i + 1);
			parse_one(&ld, i);
		} else {
			wait_ready(&ld, i, t0, &m.shown);
		}
		progress(&ld, i, t0, &m.shown);
		merge_slot(&m, i, &ld.slots[i]);
		free(ld.slots[i].why);
		ld.slots[i].why = NULL;
		pthread_mutex_lock(&ld.lock);
		atomic_store(&ld.merged, i + 1);
		pthread_cond_broadcast(&ld.cond);
		pthread_mutex_unlock(&ld.lock);
	}
	sd_profile_children(p);
	for (size_t j = 0; j < nthreads; j++)
		pthread_join(threads[j], NULL);
	if (m.shown)
		fprintf(stderr, "\r\033[K");
	if (ld.batch && !isatty(STDERR_FILENO))
		sd_msg("sonde: read %zu of %zu streams, %.0f MB in %.1f s", *used, n,
		       (double)atomic_load(&ld.bytes) / 1e6, now_s() - t0);
	free(threads);
	for (size_t k = 0; k < m.nseen; k++)
		free(m.seen[k].host);
	free(m.seen);
	free(ld.slots);
	pthread_cond_destroy(&ld.cond);
	pthread_mutex_destroy(&ld.lock);
	return m.code;
}
