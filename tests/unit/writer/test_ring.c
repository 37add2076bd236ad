/* test_ring.c - unit.ring: the per-thread sample ring of writer/writer.h.
 *
 * The producer side is the header's own inline functions
 * (sd_ring_reserve_sigsafe, sd_ring_commit_sigsafe, sd_ring_drop_sigsafe),
 * used as the handler uses them (sampler/handler.c). The consumer below
 * follows the writer's protocol (writer/drain.c, drain_records()): head read with
 * acquire, records read between tail and head at tail mod cap_bytes, PAD
 * records skipped by their length, tail stored with release once the records
 * are read. Every record carries a sequence number and contents derived from
 * it, so a record that is overwritten, torn, misplaced or lost shows.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "writer/writer.h"
#include "tests/unit/unit.h"

/* As the writer sizes records (rings.c ring_max_rec): header, max_depth PCs
 * plus one, and SD_MAX_COUNTERS values, rounded to 8 bytes. */
static uint32_t max_rec_bytes(unsigned max_depth)
{
	return (uint32_t)((sizeof(struct sd_rec) + (max_depth + 1 + SD_MAX_COUNTERS) * 8 + 7) &
			  ~(size_t)7);
}

static struct sd_ring *ring_new(uint64_t cap_bytes, unsigned max_depth)
{
	struct sd_ring *r = calloc(1, sizeof *r);
	CHECK(r);
	r->buf = aligned_alloc(64, cap_bytes);
	CHECK(r->buf);
	/* Garbage, not zeros: the consumer must never rely on fresh memory. */
	memset(r->buf, 0xa5, cap_bytes);
	r->cap_bytes = cap_bytes;
	r->max_rec_bytes = max_rec_bytes(max_depth);
	return r;
}

static void ring_free(struct sd_ring *r)
{
	free(r->buf);
	free(r);
}

/* The value of PC j (or counter j after the PCs) of record `seq`. */
static uint64_t word(uint64_t seq, unsigned j)
{
	return seq * 0x9e3779b97f4a7c15ull + j * 0x100000001b3ull + 1;
}

static unsigned depth_of(uint64_t seq, unsigned max_depth)
{
	return (unsigned)((seq * 7) % (max_depth + 1));
}

static unsigned ncounters_of(uint64_t seq)
{
	return (unsigned)(seq % (SD_MAX_COUNTERS + 1));
}

/* Producer: one record `seq` (as the handler fills one), or a RING_FULL
 * drop. 1 if written. */
static int produce(struct sd_ring *r, uint64_t seq, unsigned max_depth)
{
	struct sd_rec *rec = sd_ring_reserve_sigsafe(r);
	if (!rec) {
		sd_ring_drop_sigsafe(r, SD_DROP_RING_FULL);
		return 0;
	}
	/* Where it was put: whole, inside the buffer, clear of unread data. */
	uint64_t off = (uint64_t)((uint8_t *)rec - r->buf);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	CHECK(off % 8 == 0);
	CHECK(off + r->max_rec_bytes <= r->cap_bytes);
	CHECK(off == (r->reserved_at & (r->cap_bytes - 1)));
	CHECK(r->reserved_at + r->max_rec_bytes - tail <= r->cap_bytes);

	unsigned depth = depth_of(seq, max_depth), nc = ncounters_of(seq);
	rec->kind = SD_REC_SAMPLE;
	rec->depth = (uint16_t)depth;
	rec->ncounters = (uint16_t)nc;
	rec->t_ns = seq;
	rec->weight = (uint32_t)(seq * 3 + 1);
	rec->source = (uint8_t)(seq % 4);
	rec->flags = (uint8_t)(seq % 32);
	rec->ctx = (uint32_t)(seq ^ 0x5555);
	rec->pctx = (uint32_t)(seq ^ 0xaaaa);
	for (unsigned j = 0; j < depth + nc; j++)
		rec->pcs[j] = word(seq, j);
	sd_ring_commit_sigsafe(r, rec);
	return 1;
}

static void check_record(const struct sd_rec *rec, uint64_t seq, unsigned max_depth)
{
	unsigned depth = depth_of(seq, max_depth), nc = ncounters_of(seq);
	CHECK_EQ(rec->kind, SD_REC_SAMPLE);
	CHECK_EQ(rec->t_ns, seq);
	CHECK_EQ(rec->depth, depth);
	CHECK_EQ(rec->ncounters, nc);
	CHECK_EQ(rec->len_bytes, (sizeof *rec + (depth + nc) * 8 + 7) & ~(size_t)7);
	CHECK_EQ(rec->weight, (uint32_t)(seq * 3 + 1));
	CHECK_EQ(rec->source, seq % 4);
	CHECK_EQ(rec->flags, seq % 32);
	CHECK_EQ(rec->ctx, (uint32_t)(seq ^ 0x5555));
	CHECK_EQ(rec->pctx, (uint32_t)(seq ^ 0xaaaa));
	for (unsigned j = 0; j < depth + nc; j++)
		CHECK_EQ(rec->pcs[j], word(seq, j));
}

struct consumed {
	uint64_t records, pads, pad_bytes;
	uint64_t next_seq; /* lowest sequence number still expected */
	uint64_t gaps;     /* sequence numbers skipped: must be the drops */
};

/* Consumer: every record between tail and head, as drain_records() reads them. With
 * `exact`, no record may be missing; else the records skipped are counted in
 * c->gaps. Returns how many sample records it read. */
static uint64_t consume(struct sd_ring *r, struct consumed *c, unsigned max_depth, int exact)
{
	uint64_t n = 0;
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	CHECK(head - tail <= r->cap_bytes);
	while (tail != head) {
		uint64_t pos = tail & (r->cap_bytes - 1);
		const struct sd_rec *rec = (const void *)(r->buf + pos);
		CHECK(rec->len_bytes >= 8 && rec->len_bytes % 8 == 0);
		CHECK(pos + rec->len_bytes <= r->cap_bytes); /* never straddles the end */
		CHECK(rec->len_bytes <= head - tail);
		if (rec->kind == SD_REC_PAD) {
			/* A pad fills the buffer's end exactly. */
			CHECK_EQ(pos + rec->len_bytes, r->cap_bytes);
			c->pads++;
			c->pad_bytes += rec->len_bytes;
		} else {
			CHECK(rec->t_ns >= c->next_seq);
			if (exact)
				CHECK_EQ(rec->t_ns, c->next_seq);
			c->gaps += rec->t_ns - c->next_seq;
			check_record(rec, rec->t_ns, max_depth);
			c->next_seq = rec->t_ns + 1;
			c->records++;
			n++;
		}
		tail += rec->len_bytes;
	}
	atomic_store_explicit(&r->tail, tail, memory_order_release);
	return n;
}

static uint64_t drops_total(struct sd_ring *r)
{
	uint64_t t = 0;
	for (unsigned i = 0; i < SD_DROP_NREASONS; i++)
		t += atomic_load(&r->drops[i]);
	return t;
}

/* Records of every depth from 0 to max_depth and 0..SD_MAX_COUNTERS values,
 * consumed in batches of varying size: the head laps the buffer many times,
 * with pads at the end each time a record might not fit, and nothing is ever
 * lost because the consumer keeps up. */
static void case_wrap(void)
{
	const unsigned max_depth = 37;
	const uint64_t cap = 4096;
	struct sd_ring *r = ring_new(cap, max_depth);
	struct consumed c = {0};
	uint64_t seq = 0, produced_bytes = 0;
	for (unsigned round = 0; round < 3000; round++) {
		unsigned batch = 1 + round % 5; /* at most 5 records: fits with room to spare */
		for (unsigned k = 0; k < batch; k++) {
			uint64_t before = atomic_load(&r->head);
			CHECK(produce(r, seq, max_depth));
			produced_bytes += atomic_load(&r->head) - before;
			seq++;
		}
		consume(r, &c, max_depth, 1);
		CHECK_EQ(atomic_load(&r->tail), atomic_load(&r->head));
	}
	CHECK_EQ(c.records, seq);
	CHECK_EQ(c.next_seq, seq);
	CHECK_EQ(drops_total(r), 0);
	CHECK(atomic_load(&r->head) / cap >= 100); /* it did lap, many times */
	CHECK(c.pads > 0);
	/* Every byte the head moved is a record or a pad that was read. */
	CHECK_EQ(atomic_load(&r->head), produced_bytes);
	ring_free(r);
}

/* A ring nobody drains: records of fixed length L go in while a whole
 * max-size record still fits, n = floor((cap - M) / L) + 1 of them from an
 * empty ring; then every reserve fails and is counted as RING_FULL, by
 * reason, no other reason touched. Draining it all makes room again: the
 * next record goes to the buffer's start after a pad. */
static void case_full(void)
{
	const unsigned max_depth = 16;
	const uint64_t cap = 4096;
	struct sd_ring *r = ring_new(cap, max_depth);
	const uint64_t M = r->max_rec_bytes;
	/* Fixed depth: produce() varies depth by seq, so pick seqs of one depth
	 * (depth_of(seq) == 0 and ncounters_of(seq) == 0 for multiples of
	 * 9 * 17 = 153, as 7 * 153 is a multiple of 17). */
	const uint64_t step = (SD_MAX_COUNTERS + 1) * (max_depth + 1);
	CHECK_EQ(depth_of(step, max_depth), 0);
	CHECK_EQ(ncounters_of(step), 0);
	const uint64_t L = sizeof(struct sd_rec);
	const uint64_t n = (cap - M) / L + 1;
	CHECK(n > 1 && n * L < cap);

	uint64_t written = 0;
	for (uint64_t i = 0; i < n; i++)
		written += (uint64_t)produce(r, i * step, max_depth);
	CHECK_EQ(written, n);
	CHECK_EQ(atomic_load(&r->head), n * L);
	for (int k = 0; k < 5; k++)
		CHECK(!produce(r, (n + (uint64_t)k) * step, max_depth));
	sd_ring_drop_sigsafe(r, SD_DROP_BUSY);
	sd_ring_drop_sigsafe(r, SD_DROP_BUSY);
	sd_ring_drop_sigsafe(r, SD_DROP_STACK);
	for (unsigned i = 0; i < SD_DROP_NREASONS; i++) {
		uint64_t want = i == SD_DROP_RING_FULL ? 5 : i == SD_DROP_BUSY ? 2
							: i == SD_DROP_STACK ? 1 : 0;
		CHECK_EQ(atomic_load(&r->drops[i]), want);
	}
	/* A failed reserve leaves the ring as it was. */
	CHECK_EQ(atomic_load(&r->head), n * L);

	/* One record read is not room for a max-size one at the end... */
	uint64_t head = atomic_load(&r->head);
	const struct sd_rec *first = (const void *)r->buf;
	CHECK_EQ(first->t_ns, 0);
	atomic_store(&r->tail, first->len_bytes);
	CHECK(!produce(r, 999 * step, max_depth));
	CHECK_EQ(atomic_load(&r->drops[SD_DROP_RING_FULL]), 6);
	/* ...all of them read is: it goes to offset 0 behind a pad. */
	uint64_t tail = 0;
	for (uint64_t i = 0; i < n; i++) {
		const struct sd_rec *rec = (const void *)(r->buf + tail);
		check_record(rec, i * step, max_depth);
		tail += rec->len_bytes;
	}
	CHECK_EQ(tail, head);
	atomic_store(&r->tail, tail);
	struct sd_rec *rec = sd_ring_reserve_sigsafe(r);
	CHECK(rec == (struct sd_rec *)r->buf);
	const struct sd_rec *pad = (const void *)(r->buf + head);
	CHECK_EQ(pad->kind, SD_REC_PAD);
	CHECK_EQ(pad->len_bytes, cap - head);
	CHECK_EQ(r->reserved_at, cap);
	rec->kind = SD_REC_SAMPLE;
	rec->depth = 0;
	rec->ncounters = 0;
	sd_ring_commit_sigsafe(r, rec);
	CHECK_EQ(atomic_load(&r->head), cap + L);
	ring_free(r);
}

/* The producer thread writes seq 0..N-1 as fast as it can (a failed reserve
 * is a RING_FULL drop, as in the handler); the consumer thread drains
 * concurrently, yielding now and then so that the ring fills. Every record
 * that arrives is intact and in order, and every missing sequence number is
 * a counted drop: records + drops == produced. */
#define CONC_N 400000u
#define CONC_DEPTH 24u

struct conc {
	struct sd_ring *r;
	_Atomic int done;
	struct consumed c;
};

static void *producer(void *arg)
{
	struct conc *x = arg;
	for (uint64_t seq = 0; seq < CONC_N; seq++) {
		/* A drop lets the consumer run (as a program runs on between
		 * samples), so that the ring both fills and laps. */
		if (!produce(x->r, seq, CONC_DEPTH))
			sched_yield();
	}
	atomic_store_explicit(&x->done, 1, memory_order_release);
	return NULL;
}

static void *consumer(void *arg)
{
	struct conc *x = arg;
	for (unsigned i = 0;; i++) {
		int done = atomic_load_explicit(&x->done, memory_order_acquire);
		consume(x->r, &x->c, CONC_DEPTH, 0);
		if (done && atomic_load(&x->r->head) == atomic_load(&x->r->tail))
			break;
		if (i % 3 == 0)
			sched_yield();
	}
	return NULL;
}

static void case_concurrent(void)
{
	struct conc x = {.r = ring_new(8192, CONC_DEPTH)};
	pthread_t p, c;
	CHECK(pthread_create(&c, NULL, consumer, &x) == 0);
	CHECK(pthread_create(&p, NULL, producer, &x) == 0);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	uint64_t dropped = atomic_load(&x.r->drops[SD_DROP_RING_FULL]);
	printf("concurrent: %u produced, %" PRIu64 " read, %" PRIu64 " dropped, %" PRIu64
	       " pads\n", CONC_N, x.c.records, dropped, x.c.pads);
	/* Drops at the very end are no gap before a later record: count them. */
	uint64_t tail_missing = CONC_N - x.c.next_seq;
	CHECK_EQ(x.c.records + dropped, CONC_N);
	CHECK_EQ(x.c.gaps + tail_missing, dropped);
	CHECK_EQ(drops_total(x.r), dropped);
	ring_free(x.r);
}

/* With SD_ASSERTS (SONDE_ASSERTS=ON, sanitizer builds), a record committed
 * longer than the ring's largest record (the invariant writer.h states)
 * stops the process with one "sonde: internal error:" line naming the
 * check; without, the case is skipped. */
static void case_assert(void)
{
#ifndef SD_ASSERTS
	printf("skip: built without SONDE_ASSERTS\n");
	exit(77);
#else
	int pfd[2];
	CHECK(pipe(pfd) == 0);
	fflush(NULL);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		dup2(pfd[1], STDERR_FILENO);
		struct sd_ring *r = ring_new(1u << 16, 8);
		struct sd_rec *rec = sd_ring_reserve_sigsafe(r);
		rec->depth = 40; /* more frames than max_depth 8 allows */
		rec->ncounters = 0;
		sd_ring_commit_sigsafe(r, rec);
		_exit(0); /* not reached when the check is in */
	}
	close(pfd[1]);
	char buf[512] = "";
	size_t n = 0;
	ssize_t k;
	while (n < sizeof buf - 1 && (k = read(pfd[0], buf + n, sizeof buf - 1 - n)) > 0)
		n += (size_t)k;
	buf[n] = 0;
	int st = 0;
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	CHECK(!strncmp(buf, "sonde: internal error: ", 23));
	CHECK(strstr(buf, "writer.h:") && strstr(buf, "rec->len_bytes <= r->max_rec_bytes"));
#endif
}

UNIT_MAIN({"wrap", case_wrap}, {"full", case_full}, {"concurrent", case_concurrent},
	  {"assert", case_assert})
