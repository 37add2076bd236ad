/*
 * profile_int.h: what the files of the profile engine share, and nothing else
 * includes. decode.c reads one stream's records into a struct sstate (per-stream
 * state: ids as the stream numbers them), with decode_header.c (the HEADER),
 * decode_annot.c (annotation records and region timing) and decode_cov.c (the
 * coverage account's records); merge.c merges a read stream into the struct
 * sd_profile (merged ids), with merge_cov.c (the coverage account); profile.c holds
 * the public entry points (profile.h: sd_profile_*) and the interning both use. The
 * design is described at the top of profile.c.
 */
#ifndef SONDE_PROFILE_INT_H
#define SONDE_PROFILE_INT_H

#include "analyze/profile/profile.h"

/* trunc_root: the [truncated] root that merge.c adds above cut stacks (no address) */
struct snode { uint32_t parent; int64_t mod; uint64_t addr; uint64_t samples; double weight;
	       uint32_t cnode; int used, trunc_root; uint32_t file, line; /* innermost frame's source */ };
struct sopen { uint32_t node; uint64_t t, child_ns; uint64_t *cnt; /* counts at begin */
	       int lost; /* its end, a child's events or its begin's context may be lost:
			  * left out when it closes */ };
struct sthread { uint64_t tid, t, now, samples, periods, first, last, last_t; char *name;
		 int defined;
		 int ended; /* a THREAD_END was read */
		 struct sopen *open; size_t nopen, capopen; uint32_t row;
		 uint64_t *lastcnt; /* counts of its last REGION that had them */
		 uint64_t *endcnt;  /* its THREAD_END deltas, summed (NULL: none) */
		 /* coverage (coverage.c): cpu-time samples' ns, the kernel's CPU time from
		  * THREAD_END cpu (end_cpu) or its last THREAD_CPU (flush), and at that
		  * record the samples and drops so far (snap_*) */
		 double cov_sampled, snap_sampled, cov_accounted;
		 uint64_t snap_drops[SD_COV_NDROP];
		 int end_cpu, split, has_flush;
		 uint64_t end_cpu_ns, user_ns, sys_ns, flush_cpu_ns;
		 /* UNSAMPLED (cumulative, the last one counts): CPU time the runtime
		  * knows it did not sample: its descriptors closed behind its back
		  * (fd_closed), a raw clone found late (not_sampled), a CLONE_VM child
		  * process never sampled (clone_vm: its whole CPU time) */
		 uint64_t un_fd_closed, un_not_sampled, un_clone_vm; };
struct sattr { char *name; uint32_t gid; int merged; };
struct sctx { uint32_t parent, attr, gnode; char *value; int used;
	      uint32_t site; /* FRAME node of the code that opened it first (0: unknown) */ };
/* trunc: its stack was cut at max_depth (SAMPLE flag 1); in the key, a bit of the source */
struct sagg { uint32_t thread, source, ctx, pctx, node; int kept, trunc;
	      uint64_t samples, first, last; double weight; uint64_t nocnt;
	      uint64_t periods;  /* sum of the samples' weights (periods they stand for) */
	      uint64_t maxw;     /* largest weight of a signalled (not accounted) sample */ };
#define SD_AGG_TRUNC 0x80000000u
struct sreg { uint32_t thread, node; uint64_t calls, incl, excl, min, max, forced;
	      uint64_t open_end;  /* calls open at the end of the stream (in calls, forced) */
	      uint64_t left_out;  /* calls left out: a begin or end of theirs was lost */
	      uint64_t open_t; int open; /* REGION_OPEN: a call open since open_t */
	      double sumsq; /* of the inclusive times, ns^2 */
	      uint64_t sent, recv; /* bytes its calls moved (REGION_STATS traffic) */
	      uint64_t *cnt; /* inclusive counter deltas, NULL until the first */ };
/* A peer of the stream's last MESSAGES record: msgs messages of bytes in all sent to it. */
struct speer { uint32_t peer; uint64_t msgs, bytes; };
struct scounter { char *name, *group, *unit, *source; uint32_t gid; };
/* A child process its CHILD records name: how it started (how: an SD_CHILD_* start
 * event, -1: a start of a later format; has_start 0: only its end was recorded) and
 * how the program saw it end (end: SD_CHILD_EXIT or SD_CHILD_SIGNAL, -1: unknown). */
struct schild { uint64_t pid, t, end_t, value; int how, has_start, end; };
struct ssource { char *name, *spec, *unit, *mechanism; uint64_t period, samples; double weight; };

/* Everything known about the stream being read. Index 0 of nodes is the root; index 0 of
 * threads collects samples of undefined threads; sources[nsources] undefined sources. */
struct sstate {
	uint64_t pid;
	int64_t rank;                             /* HEADER rank, -1 without one */
	uint64_t max_depth;                       /* HEADER max_depth, 0 unknown */
	uint64_t trunc_samples;                   /* kept samples with flag 1 (merge) */
	char *host;                               /* HEADER host */
	long host_id;                             /* interned at merge (value_strs) */
	uint64_t start_ticks;                     /* HEADER start_ticks, 0: unknown */
	struct snode *nodes; size_t nnodes;       /* nnodes includes the root */
	int *mods; size_t nmods;                  /* stream module id - 1 -> symbolizer handle */
	char **modpath; uint8_t **modbid; size_t *modbidlen; /* registered at merge time */
	uint64_t *modstat;                        /* SD_MODSTAT per module: MODULE size, mtime
						   * (size UINT64_MAX: not recorded), bias, lo,
						   * hi (the run-time range of its PT_LOADs) */
	struct sthread *threads; size_t nthreads; /* includes slot 0 */
	struct ssource *sources; size_t nsources; /* plus one more for undefined */
	uint64_t nostack, badnode;
	double nostack_w, badnode_w;
	struct sd_strmap drops;                   /* thread \0 reason -> index in dropv */
	uint64_t *dropv; char **dropr; size_t ndrops;
	uint64_t *dropt;                          /* the thread of each entry */
	long cpu_src;                             /* the cpu-time source (-1: none) */
	struct sattr *attrs; size_t nattrs, capattrs;  /* includes slot 0 */
	struct sctx *ctxs; size_t nctxs, capctxs;      /* includes the root */
	struct sagg *aggs; size_t naggs, capaggs;
	struct aggslot *aggtab; size_t aggcap;         /* key -> index in aggs (open addressing) */
	uint32_t last_agg; int have_last;              /* cache: consecutive samples repeat */
	struct sreg *regs; size_t nregs, capregs;
	struct sd_u64map regmap;                       /* thread << 32 | node -> index in regs */
	uint64_t nregion_records, nregion_counts, nregion_stats;
	struct scounter *ctrs; size_t nctrs;           /* HEADER counters */
	char **unames, **ureasons; size_t nun;         /* HEADER counters_unavailable */
	uint64_t *aggcnt; size_t capaggcnt;            /* nctrs sums per agg */
	char *exe;                                     /* HEADER exe (empty MODULE paths) */
	char *cwd;                                     /* HEADER cwd (relative MODULE paths) */
	int has_exe, has_ppid, has_clock;              /* HEADER exe, ppid, clock present */
	uint64_t ppid, origin_ns;                      /* HEADER ppid, clock monotonic_ns */
	uint64_t real_ns;                              /* HEADER clock realtime_ns (0: none) */
	int jitmap;                                    /* its perf map: sd_sym_perfmap_open's
							* handle + 1, 0 none */
	char *name, *command;                          /* process name; argv joined (or NULL) */
	uint64_t max_t;                                /* latest t of its records */
	double cpu_ns;                                 /* its threads' CPU time (coverage) */
	uint64_t cpu_threads, cpu_flush, nthreads_def; /* threads with it; from a flush; all */
	int ended;                                     /* the last known record was END */
	char *end_reason;                              /* of the last END (NULL: none) */
	uint64_t end_signal;                           /* its stats `signal` */
	uint64_t nsamples_all;                         /* SAMPLE records read */
	uint64_t throttled;                            /* bit i: a NOTE says source i was
							* throttled (i < 64) */
	struct schild *children; size_t nchildren, capchildren; /* CHILD records, by pid */
	struct speer *peers; size_t npeers;            /* the last MESSAGES record's */
	uint32_t msg_rank, msg_size;                   /* its world rank and size */
	int has_msgs;                                  /* a MESSAGES record was read */
	struct sd_u64map childmap;                     /* pid -> its latest entry in children */
	/* the profile's observers (sd_profile_observe), copied when it is read, and
	 * each one's state for this stream */
	const struct sd_observer_ops *obs_ops[SD_MAX_OBSERVERS];
	void *obs[SD_MAX_OBSERVERS];
	size_t nobs;
	int obs_samples;                               /* an observer hears of samples */
};

/* The per-key table: the hot lookup of every SAMPLE, so the key lives in the slot
 * (no pointer to chase) and the hash is a few multiplications. */
struct aggslot { uint32_t k[5]; uint32_t idx1; /* index + 1; 0 = empty */ };

/* A stream read but not yet merged (--jobs reads several at once). */
struct sd_load {
	struct sstate st;
	int r, truncated;
	size_t bad_off;
	const char *name; /* the stream's (not owned: the caller's file name) */
};

/* ---- decode.c and the files of its record decoders -------------------------------- */

/* The context of one record's decoder: the profile (its options), the stream's state,
 * the record, the stream (its error buffer) and why the record is corrupt. Each decoder
 * (rec_* in decode.c, sd_decode_rec_* below) reads its fields by name, checks them and
 * the ids they name, and updates the stream's state. It returns 0, -ENOMEM, or REC_BAD
 * with c->why set (left at the generic reason: decode.c's field_why() then names the
 * missing or mistyped field). */
#define REC_BAD 1
struct rec_ctx {
	struct sd_profile *p;
	struct sstate *st;
	const struct sd_record *r;
	struct sd_stream *s;
	const char *why;
};
/* A key of a map that a record holds and the type its value must have (msgpack type). */
struct keyty { const char *key; msgpack_object_type ty; };

/* decode.c: st's memory freed (st itself is the caller's). */
void sd_sstate_fini(struct sstate *st);
/* decode.c: a copy of o's string, else of dflt; NULL on ENOMEM. */
char *sd_decode_strdup_or(const msgpack_object *o, const char *dflt);
/* decode.c: p[0..len) as a fresh C string (p may be NULL if len is 0); NULL on ENOMEM. */
char *sd_decode_dupn(const char *p, size_t len);
/* decode.c: the index of a definition of id in a table of n (slot 0 reserved), or -1. */
long sd_decode_def_index(uint64_t id, size_t n);
/* decode.c: NULL if o is an array of n unsigned integers, else why it is corrupt. */
const char *sd_decode_check_counts(const msgpack_object *o, size_t n, const char *what);
/* decode.c: 1 if records before this one defined thread id `thread`, else 0 (c->why = why). */
int sd_decode_known_thread(struct rec_ctx *c, uint64_t thread, const char *why);

/* decode_header.c: NULL if map m's keys of kt have their types, else why not (in buf). */
const char *sd_decode_check_keys(const msgpack_object *m, const struct keyty *kt,
				 const char *what, char *buf, size_t len);
/* decode_header.c: the HEADER into st: 0, SD_ERR_CORRUPT (strm's error set) or -ENOMEM. */
int sd_decode_header(struct sstate *st, const struct sd_record *r, struct sd_stream *strm);

/* decode_annot.c: the decoders of ATTRIBUTE, CONTEXT, REGION, REGION_STATS, REGION_OPEN. */
int sd_decode_rec_attribute(struct rec_ctx *c);
int sd_decode_rec_context(struct rec_ctx *c);
int sd_decode_rec_region(struct rec_ctx *c);
int sd_decode_rec_region_stats(struct rec_ctx *c);
int sd_decode_rec_region_open(struct rec_ctx *c);
int sd_decode_rec_messages(struct rec_ctx *c);
/* decode_annot.c: the regions still open at the stream's end, closed. 0 or -ENOMEM. */
int sd_decode_regions_end(struct sstate *st);

/* decode_cov.c: the decoders of THREAD_CPU, UNSAMPLED, DROPS. */
int sd_decode_rec_thread_cpu(struct rec_ctx *c);
int sd_decode_rec_unsampled(struct rec_ctx *c);
int sd_decode_rec_drops(struct rec_ctx *c);
/* decode_cov.c: the drops of thread `thr` of st by coverage gap (sd_cov_drop_names). */
void sd_decode_thread_drops(const struct sstate *st, uint64_t thr, uint64_t out[SD_COV_NDROP]);

/* The frames of stream node n's address (sd_sym_frames: outermost first; the module
 * handle from the stream's module id: -1 none, -2 not defined in the stream): their
 * number, or -ENOMEM / -EINVAL. */
static inline int sd_snode_frames(struct sd_profile *p, const struct sstate *st,
				  const struct snode *n, const struct sd_frame **fr)
{
	int h = n->mod == 0 ? -1 : (uint64_t)n->mod <= st->nmods ? st->mods[n->mod - 1] : -2;
	if (h == -1 && st->jitmap) /* outside every module: JIT code named by its perf map */
		return sd_sym_jit_frames(p->sym, st->jitmap, n->addr, fr);
	return sd_sym_frames(p->sym, h, n->addr, fr);
}

/* merge.c: a stream read without error into p (name: its file, for the stream
 * list; truncated: it ended in a partial record): 0 or -ENOMEM. */
int sd_merge_stream(struct sd_profile *p, struct sstate *st, const char *name, int truncated);
/* merge_cov.c: st's threads' coverage rows into p (after their thread rows). 0 or -ENOMEM. */
int sd_merge_coverage(struct sd_profile *p, struct sstate *st);

/* profile.c: the observers' callbacks (struct sd_observer_ops) called in order; the
 * first error is returned. sd_obs_stream: the observers of p copied into st (decode.c,
 * before its records). */
void sd_obs_stream(const struct sd_profile *p, struct sstate *st);
int sd_obs_sample(struct sstate *st, uint64_t t, uint32_t agg, double w,
		  const msgpack_object *deltas);
int sd_obs_region(struct sstate *st, uint32_t thread, uint64_t t, uint32_t node,
		  uint32_t event);
void sd_obs_stream_free(struct sstate *st);
int sd_obs_frames(struct sd_profile *p, const struct sd_frame *fr, int nf);
int sd_obs_merged(struct sd_profile *p, const struct sstate *st, size_t row0, int keep_ends);
/* Does an observer follow the rows that --where filters renumber? */
int sd_obs_rows_wanted(const struct sd_profile *p);
void sd_obs_rows_kept(struct sd_profile *p, const uint32_t *map);
void sd_obs_regions_kept(struct sd_profile *p,
			 int (*ok)(const struct sd_profile *, const void *,
				   const struct sd_region_row *), const void *okarg);

#endif
