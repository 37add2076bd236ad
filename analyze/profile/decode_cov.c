/*
 * decode_cov.c: the records of a stream that the coverage account reads, into its
 * struct sstate (profile_int.h), for decode.c's record loop: DROPS (each thread's
 * cumulative drops by reason), THREAD_CPU (the kernel's CPU time of a thread at a flush,
 * with the samples and drops so far) and UNSAMPLED (CPU time the runtime knows it did
 * not sample); and the sample drops by coverage gap (sd_cov_drop_names, the names the
 * coverage view prints; sd_decode_thread_drops, read at a THREAD_CPU and by the account
 * merge_cov.c makes). Runs where the stream is read (possibly a --jobs worker): touches
 * nothing but the stream's state.
 */
#include "analyze/profile/profile_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- coverage gaps: the sample drop reasons (docs/FORMAT.md DROPS) ----------------- */

const char *const sd_cov_drop_names[SD_COV_NDROP] = {
	"ring_full", "busy", "in_dl", "no_thread", "stopped", "fd_stolen", "stack", "throttled",
	"queue_overflow", "signals_blocked", "other_drops",
};

/* -1 for drops that are not cpu-time samples: region events, and the
 * overflows of a PAPI source that were counted but never signalled. */
static int cov_drop_index(const char *reason)
{
	static const char *const names[] = SD_DROP_NAMES;
	if (!strncmp(reason, SD_DROP_REGION_PREFIX, sizeof SD_DROP_REGION_PREFIX - 1) ||
	    !strcmp(reason, names[SD_DROP_SIGNAL_LOST]))
		return -1;
	for (int k = 0; k < SD_COV_NDROP - 1; k++)
		if (!strcmp(reason, sd_cov_drop_names[k]))
			return k;
	return SD_COV_NDROP - 1;
}

/* Thread thr's sample drops so far, by coverage gap (sd_cov_drop_names). */
void sd_decode_thread_drops(const struct sstate *st, uint64_t thr, uint64_t out[SD_COV_NDROP])
{
	memset(out, 0, SD_COV_NDROP * sizeof(*out));
	for (size_t i = 0; i < st->ndrops; i++) {
		int k = st->dropt[i] == thr ? cov_drop_index(st->dropr[i]) : -1;
		if (k >= 0)
			out[k] += st->dropv[i];
	}
}

int sd_decode_rec_thread_cpu(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t thread, t, cpu_ns;
	if (sd_rec_u64(r, SD_F_THREAD_CPU_THREAD, &thread) || sd_rec_u64(r, SD_F_THREAD_CPU_T, &t) ||
	    sd_rec_u64(r, SD_F_THREAD_CPU_NS, &cpu_ns))
		return REC_BAD;
	if (!sd_decode_known_thread(c, thread,
				    "THREAD_CPU names a thread that no THREAD record defined before it"))
		return REC_BAD;
	struct sthread *th = &st->threads[thread];
	th->has_flush = 1;
	th->flush_cpu_ns = cpu_ns;
	th->snap_sampled = th->cov_sampled;
	sd_decode_thread_drops(st, thread, th->snap_drops);
	return 0;
}

int sd_decode_rec_unsampled(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t thread, t, cpu_ns;
	if (sd_rec_u64(r, SD_F_UNSAMPLED_THREAD, &thread) || sd_rec_u64(r, SD_F_UNSAMPLED_T, &t) ||
	    r->n <= SD_F_UNSAMPLED_NS || r->v[SD_F_UNSAMPLED_REASON].type != MSGPACK_OBJECT_STR ||
	    sd_rec_u64(r, SD_F_UNSAMPLED_NS, &cpu_ns))
		return REC_BAD;
	if (!sd_decode_known_thread(c, thread,
				    "UNSAMPLED names a thread that no THREAD record defined before it"))
		return REC_BAD;
	struct sthread *th = &st->threads[thread];
	const msgpack_object_str *rs = &r->v[SD_F_UNSAMPLED_REASON].via.str;
	static const char *const reasons[SD_UNSAMPLED_NREASONS] = SD_UNSAMPLED_NAMES;
	uint64_t *un[SD_UNSAMPLED_NREASONS] = {
		[SD_UNSAMPLED_FD_CLOSED] = &th->un_fd_closed,
		[SD_UNSAMPLED_NOT_SAMPLED] = &th->un_not_sampled,
		[SD_UNSAMPLED_CLONE_VM] = &th->un_clone_vm };
	for (unsigned k = 0; k < SD_UNSAMPLED_NREASONS; k++)
		if (rs->size == strlen(reasons[k]) && !memcmp(rs->ptr, reasons[k], rs->size))
			*un[k] = cpu_ns;
	return 0; /* a reason of a later sonde: not counted */
}

/* Thread `thread`'s cumulative count for drop reason `reason`. */
static int drop_set(struct sstate *st, uint64_t thread, const msgpack_object *reason,
		    uint64_t count)
{
	uint32_t idx;
	char key[600];
	int kl = snprintf(key, sizeof(key), "%llu:%.*s", (unsigned long long)thread,
			  (int)(reason->via.str.size > 500 ? 500 : reason->via.str.size),
			  reason->via.str.ptr);
	if (!sd_strmap_get(&st->drops, key, (size_t)kl, &idx)) {
		idx = (uint32_t)st->ndrops;
		if (sd_strmap_put(&st->drops, key, (size_t)kl, idx))
			return -ENOMEM;
		uint64_t *nv = realloc(st->dropv, (st->ndrops + 1) * sizeof(*nv));
		if (nv)
			st->dropv = nv;
		uint64_t *nt = realloc(st->dropt, (st->ndrops + 1) * sizeof(*nt));
		if (nt)
			st->dropt = nt;
		if (!nt)
			return -ENOMEM;
		nt[idx] = thread;
		char **nr = realloc(st->dropr, (st->ndrops + 1) * sizeof(*nr));
		if (nr)
			st->dropr = nr;
		if (!nv || !nr || !(nr[idx] = sd_obj_strdup(reason)))
			return -ENOMEM;
		st->ndrops++;
	}
	st->dropv[idx] = count;
	return 0;
}

int sd_decode_rec_drops(struct rec_ctx *c)
{
	const struct sd_record *r = c->r;
	uint64_t thread, count;
	const msgpack_object *m = r->n > SD_F_DROPS_COUNTS ? &r->v[SD_F_DROPS_COUNTS] : NULL;
	if (sd_rec_u64(r, SD_F_DROPS_THREAD, &thread) || !m || m->type != MSGPACK_OBJECT_MAP)
		return REC_BAD;
	for (uint32_t k = 0; k < m->via.map.size; k++) {
		const msgpack_object_kv *kv = &m->via.map.ptr[k];
		c->why = "DROPS counts is not a map of reason names to unsigned integers";
		if (kv->key.type != MSGPACK_OBJECT_STR || sd_obj_u64(&kv->val, &count))
			return REC_BAD;
		int err = drop_set(c->st, thread, &kv->key, count);
		if (err)
			return err;
	}
	return 0;
}
