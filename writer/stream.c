/* stream.c - msgpack encoding of the records of docs/FORMAT.md, and the
 * interning of call stacks into the call-path prefix tree.
 *
 * Runs in the writer thread, or in the thread that stops or forks the
 * process, always with the writer lock held. Every function appends whole
 * records to sd_w.sbuf; the file only ever receives whole records.
 *
 * Interning: a stack is walked from the outermost frame inward; each frame is
 * looked up by (parent node, module, address) in an open-addressing table.
 * Consecutive samples of a thread usually share all but their innermost
 * frames, so the previous stack of each thread is kept and its shared outer
 * part is reused without lookups.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "annotate/annotate.h"
#include "common/common.h"
#include "common/sys.h"
#include "include/sonde.h"
#include "writer/writer_int.h"
#include "mem/mem.h"

static const char *const drop_names[SD_DROP_NREASONS] = SD_DROP_NAMES;

/* Every record starts here: where it starts is kept, so that a record cut
 * short by out of memory is taken back whole (writer/writer.c, sbuf_write). */
static void rec_begin(size_t n)
{
	sd_w.rec_start = sd_w.sbuf.size;
	msgpack_pack_array(&sd_w.pk, n);
}

static void pack_str(const char *s)
{
	size_t n = strlen(s);
	msgpack_pack_str(&sd_w.pk, n);
	msgpack_pack_str_body(&sd_w.pk, s, n);
}

static void pack_kv_str(const char *k, const char *v)
{
	pack_str(k);
	pack_str(v);
}

static void pack_kv_u64(const char *k, uint64_t v)
{
	pack_str(k);
	msgpack_pack_uint64(&sd_w.pk, v);
}

uint64_t sd_stream_rel(uint64_t t_ns)
{
	return t_ns > sd_w.t0_mono ? t_ns - sd_w.t0_mono : 0;
}

/* Not stdio: no malloc (mem.h). */
static size_t read_small_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t n = 0;
	while (n < len) {
		ssize_t k = sd_sys_read(fd, buf + n, len - n);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	sd_sys_close(fd);
	return n;
}

/* The program's arguments as /proc/self/cmdline has them (NUL-separated,
 * cut short at len), *nargs of them; none when SONDE_ARGV is off. */
static size_t read_cmdline(char *cmdline, size_t len, unsigned *nargs)
{
	size_t n = 0;
	*nargs = 0;
	if (sd_w.cfg.argv_mode != SD_ARGV_OFF) {
		n = read_small_file("/proc/self/cmdline", cmdline, len);
		if (n == len)
			cmdline[n - 1] = 0; /* cut short: the last argument ends here */
		for (size_t i = 0; i < n; i++)
			*nargs += cmdline[i] == 0;
	}
	return n;
}

/* HEADER's "argv": the arguments, redacted as SONDE_ARGV says. */
static void pack_argv(const char *cmdline, size_t n, unsigned nargs)
{
	/* regexec: ordinary context (the constructor or a forked child's
	 * start), never a signal handler. */
	pack_str("argv");
	msgpack_pack_array(&sd_w.pk, nargs);
	for (size_t i = 0; i < n && nargs; i += strlen(cmdline + i) + 1) {
		int hide = sd_w.cfg.argv_mode == SD_ARGV_REDACT &&
			   (!sd_w.cfg.argv_redact ||
			    regexec(sd_w.cfg.argv_redact, cmdline + i, 0, NULL, 0) == 0);
		pack_str(hide ? "[redacted]" : cmdline + i);
	}
}

/* HEADER's "sources": the sampling sources. */
static void pack_sources(void)
{
	pack_str("sources");
	msgpack_pack_array(&sd_w.pk, sd_w.cfg.nsources);
	for (unsigned i = 0; i < sd_w.cfg.nsources; i++) {
		const struct sd_source_info *s = &sd_w.sources[i];
		msgpack_pack_map(&sd_w.pk, 6 + (s->fallback_reason ? 1 : 0));
		pack_kv_str("name", s->name);
		pack_kv_str("spec", s->spec);
		pack_kv_str("unit", s->unit ? s->unit : "ns");
		pack_kv_u64("period", s->period_ns);
		pack_kv_str("mechanism", s->mechanism);
		pack_kv_u64("signal", (uint64_t)s->signo);
		if (s->fallback_reason)
			pack_kv_str("fallback_reason", s->fallback_reason);
	}
}

/* HEADER's "counters" and "counters_unavailable". */
static void pack_counters(void)
{
	const struct sd_counters *c = sd_w.cfg.counters;
	pack_str("counters");
	msgpack_pack_array(&sd_w.pk, c ? c->n : 0);
	for (unsigned i = 0; c && i < c->n; i++) {
		msgpack_pack_map(&sd_w.pk, 4);
		pack_kv_str("name", c->c[i].name);
		pack_kv_str("group", c->c[i].group);
		pack_kv_str("unit", "count");
		pack_kv_str("source", c->c[i].source);
	}
	pack_str("counters_unavailable");
	msgpack_pack_array(&sd_w.pk, c ? c->nunavail : 0);
	for (unsigned i = 0; c && i < c->nunavail; i++) {
		msgpack_pack_map(&sd_w.pk, 2);
		pack_kv_str("name", c->unavail_name[i]);
		pack_kv_str("reason", c->unavail_reason[i]);
	}
}

/* The process's start, /proc/self/stat field 22 (clock ticks after boot): with the
 * host and pid, the process's identity (kept across exec; a fork child has its own).
 * 0 when unreadable. */
static uint64_t start_ticks(void)
{
	char stat[1024];
	size_t n = read_small_file("/proc/self/stat", stat, sizeof stat - 1);
	stat[n] = 0;
	char *p = strrchr(stat, ')'); /* after the command name, which may hold anything */
	for (int field = 2; p && *p && field < 22; p++)
		field += *p == ' ';
	return p && *p ? strtoull(p, NULL, 10) : 0;
}

void sd_stream_header(void)
{
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	char cmdline[8192];
	unsigned nargs;
	size_t n = read_cmdline(cmdline, sizeof cmdline, &nargs);
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		cwd[0] = 0;

	rec_begin(SD_F_HEADER_N);
	msgpack_pack_uint8(&sd_w.pk, SD_K_HEADER);
	pack_str(SD_FORMAT_MAGIC);
	msgpack_pack_uint8(&sd_w.pk, SD_FORMAT_VERSION);
	const char *rank = sd_stream_rank(); /* the MPI rank a launcher gave */
	uint64_t start = start_ticks();
	msgpack_pack_map(&sd_w.pk, 14 + (sd_w.fork_of ? 1 : 0) + (rank ? 1 : 0) + (start != 0) +
				       (sd_w.cfg.argv_mode != SD_ARGV_OFF) + (cwd[0] == '/'));
	if (rank)
		pack_kv_u64("rank", strtoull(rank, NULL, 10));
	pack_kv_u64("pid", (uint64_t)getpid());
	pack_kv_u64("ppid", (uint64_t)getppid());
	if (start)
		pack_kv_u64("start_ticks", start);
	pack_kv_str("host", host);
	pack_kv_str("exe", sd_w.exe);
	static const char *const argv_modes[] = {"on", "off", "redact"};
	pack_kv_str("argv_mode", argv_modes[sd_w.cfg.argv_mode]);
	if (sd_w.cfg.argv_mode != SD_ARGV_OFF)
		pack_argv(cmdline, n, nargs);
	if (cwd[0] == '/')
		pack_kv_str("cwd", cwd);
	pack_str("clock");
	msgpack_pack_map(&sd_w.pk, 2);
	pack_kv_u64("monotonic_ns", sd_w.t0_mono);
	pack_kv_u64("realtime_ns", sd_w.t0_real);
	pack_sources();
	pack_kv_str("unwind", sd_w.cfg.unwind);
	pack_kv_u64("max_depth", sd_w.cfg.max_depth);
	pack_kv_u64("seq", (uint64_t)sd_w.seq);
	pack_kv_str("sonde", SONDE_VERSION_TEXT);
	pack_kv_u64("ring_bytes", sd_w.cfg.ring_bytes);
	pack_counters();
	if (sd_w.fork_of)
		pack_kv_u64("fork_of", (uint64_t)sd_w.fork_of);
}

void sd_stream_module(const struct sd_module *m)
{
	rec_begin(SD_F_MODULE_N);
	msgpack_pack_uint8(&sd_w.pk, SD_K_MODULE);
	msgpack_pack_uint32(&sd_w.pk, m->id);
	msgpack_pack_uint64(&sd_w.pk, sd_stream_rel(m->t_load));
	pack_str(m->path);
	if (m->build_id_len) {
		msgpack_pack_bin(&sd_w.pk, m->build_id_len);
		msgpack_pack_bin_body(&sd_w.pk, m->build_id, m->build_id_len);
	} else {
		msgpack_pack_nil(&sd_w.pk);
	}
	msgpack_pack_uint64(&sd_w.pk, m->bias);
	msgpack_pack_uint64(&sd_w.pk, m->lo);
	msgpack_pack_uint64(&sd_w.pk, m->hi);
	if (m->has_stat) {
		msgpack_pack_uint64(&sd_w.pk, m->size);
		msgpack_pack_uint64(&sd_w.pk, m->mtime_ns);
	} else {
		msgpack_pack_nil(&sd_w.pk);
		msgpack_pack_nil(&sd_w.pk);
	}
}

void sd_stream_module_end(const struct sd_module *m)
{
	rec_begin(SD_F_MODULE_END_N);
	msgpack_pack_uint8(&sd_w.pk, SD_K_MODULE_END);
	msgpack_pack_uint32(&sd_w.pk, m->id);
	msgpack_pack_uint64(&sd_w.pk, sd_stream_rel(m->t_unload));
}

void sd_stream_thread(struct sd_ring *r)
{
	r->idx = ++sd_w.next_thread;
	sd_w.n_threads++;
	r->last_t_ns = sd_stream_rel(r->t_begin_ns);
	rec_begin(SD_F_THREAD_N);
	msgpack_pack_uint8(&sd_w.pk, SD_K_THREAD);
	msgpack_pack_uint32(&sd_w.pk, r->idx);
	msgpack_pack_uint32(&sd_w.pk, (uint32_t)r->tid);
	msgpack_pack_uint64(&sd_w.pk, r->last_t_ns);
	pack_str(r->name_begin);
}

void sd_stream_thread_end(struct sd_ring *r)
{
	rec_begin(SD_F_THREAD_END_N);
	msgpack_pack_uint8(&sd_w.pk, SD_K_THREAD_END);
	msgpack_pack_uint32(&sd_w.pk, r->idx);
	msgpack_pack_uint64(&sd_w.pk, sd_stream_rel(atomic_load(&r->t_end_ns)));
	pack_str(r->name_end);
	int deltas = 0;
	for (unsigned i = 0; i < r->nfinal; i++)
		deltas |= r->final_deltas[i] != 0;
	msgpack_pack_array(&sd_w.pk, deltas ? r->nfinal : 0);
	for (unsigned i = 0; deltas && i < r->nfinal; i++)
		msgpack_pack_uint64(&sd_w.pk, r->final_deltas[i]);
	unsigned n = r->cpu_known ? 1u + 2u * (r->cpu_known > 1) : 0;
	msgpack_pack_map(&sd_w.pk, n);
	if (r->cpu_known) {
		pack_kv_u64("cpu_ns", r->cpu_ns);
		if (r->cpu_known > 1) {
			pack_kv_u64("user_ns", r->user_ns);
			pack_kv_u64("sys_ns", r->sys_ns);
		}
	}
}

/* The thread's CPU clock so far, once per flush period per thread: a
 * process killed before its threads end still tells how much CPU they used
 * up to its last flush. */
void sd_stream_thread_cpu(struct sd_ring *r, uint64_t t_ns, uint64_t cpu_ns)
{
	rec_begin(SD_F_THREAD_CPU_N);
	msgpack_pack_uint8(&sd_w.pk, SD_K_THREAD_CPU);
	msgpack_pack_uint32(&sd_w.pk, r->idx);
	msgpack_pack_uint64(&sd_w.pk, sd_stream_rel(t_ns));
	msgpack_pack_uint64(&sd_w.pk, cpu_ns);
}

void sd_stream_drops(uint32_t thread, const uint64_t *counts)
{
	unsigned n = 0;
	for (unsigned i = 0; i < SD_DROP_NREASONS; i++)
		n += counts[i] != 0;
	sd_w.n_dropped = 0;
	for (struct sd_ring *r = sd_w.rings; r; r = r->next)
		for (unsigned i = 0; i < SD_DROP_NREASONS; i++)
			sd_w.n_dropped += r->drops_sent[i];
	for (unsigned i = 0; i < SD_DROP_NREASONS; i++)
		sd_w.n_dropped += sd_w.global_drops_sent[i];
	sd_w.n_dropped += sd_w.n_dropped_gone;
	rec_begin(SD_F_DROPS_N);
	msgpack_pack_uint8(&sd_w.pk, SD_K_DROPS);
	msgpack_pack_uint32(&sd_w.pk, thread);
	msgpack_pack_map(&sd_w.pk, n);
	for (unsigned i = 0; i < SD_DROP_NREASONS; i++)
		if (counts[i])
			pack_kv_u64(drop_names[i], counts[i]);
}

void sd_stream_unsampled(uint32_t thread, const char *reason, uint64_t cpu_ns)
{
	rec_begin(SD_F_UNSAMPLED_N);
	msgpack_pack_uint8(&sd_w.pk, SD_K_UNSAMPLED);
	msgpack_pack_uint32(&sd_w.pk, thread);
	msgpack_pack_uint64(&sd_w.pk, sd_stream_rel(sd_now_ns_sigsafe()));
	pack_str(reason);
	msgpack_pack_uint64(&sd_w.pk, cpu_ns);
}

void sd_stream_note(const char *text)
{
	rec_begin(SD_F_NOTE_N);
	msgpack_pack_uint8(&sd_w.pk, SD_K_NOTE);
	msgpack_pack_uint64(&sd_w.pk, sd_stream_rel(sd_now_ns_sigsafe()));
	pack_str(text);
}

void sd_stream_child(uint64_t t_ns, int32_t pid, unsigned event, int32_t value)
{
	static const char *const names[SD_CHILD_NEVENTS] = SD_CHILD_NAMES;
	int has_value = event == SD_CHILD_EXIT || event == SD_CHILD_SIGNAL;
	if (event >= SD_CHILD_NEVENTS)
		return;
	rec_begin(has_value ? SD_F_CHILD_N : SD_F_CHILD_VALUE);
	msgpack_pack_uint8(&sd_w.pk, SD_K_CHILD);
	msgpack_pack_uint64(&sd_w.pk, sd_stream_rel(t_ns));
	msgpack_pack_uint32(&sd_w.pk, (uint32_t)pid);
	pack_str(names[event]);
	if (has_value)
		msgpack_pack_uint32(&sd_w.pk, (uint32_t)value);
}

void sd_stream_messages(uint32_t rank, uint32_t n, _Atomic uint64_t *v, uint32_t npeers)
{
	rec_begin(SD_F_MSGS_N);
	msgpack_pack_uint8(&sd_w.pk, SD_K_MESSAGES);
	msgpack_pack_uint64(&sd_w.pk, sd_stream_rel(sd_now_ns_sigsafe()));
	msgpack_pack_uint32(&sd_w.pk, rank);
	msgpack_pack_uint32(&sd_w.pk, n);
	/* counts only grow: the npeers counted are nonzero still; one that became nonzero
	 * since may take a later one's place here, and the next record has both */
	msgpack_pack_array(&sd_w.pk, npeers);
	for (uint32_t p = 0; p < n && npeers; p++) {
		uint64_t msgs = atomic_load_explicit(&v[2 * (size_t)p], memory_order_relaxed);
		if (!msgs)
			continue;
		npeers--;
		msgpack_pack_array(&sd_w.pk, 3);
		msgpack_pack_uint32(&sd_w.pk, p);
		msgpack_pack_uint64(&sd_w.pk, msgs);
		msgpack_pack_uint64(&sd_w.pk, atomic_load_explicit(&v[2 * (size_t)p + 1],
								   memory_order_relaxed));
	}
}

void sd_stream_end(const char *reason, int signo)
{
	uint64_t dropped = sd_w.n_dropped;
	rec_begin(SD_F_END_N);
	msgpack_pack_uint8(&sd_w.pk, SD_K_END);
	msgpack_pack_uint64(&sd_w.pk, sd_stream_rel(sd_now_ns_sigsafe()));
	pack_str(reason);
	msgpack_pack_map(&sd_w.pk, 5 + (signo ? 1 : 0));
	pack_kv_u64("samples", sd_w.n_samples);
	pack_kv_u64("dropped", dropped);
	pack_kv_u64("threads", sd_w.n_threads);
	pack_kv_u64("frames", sd_w.n_frames);
	pack_kv_u64("bytes", sd_w.n_bytes + sd_w.sbuf.size);
	if (signo)
		pack_kv_u64("signal", (uint64_t)signo);
}

/* ---- interning ---------------------------------------------------------- */

/* One more sample whose innermost frame is pc (sonde_profile_top). */
static void leaf_count(uint64_t pc, uint64_t n)
{
	if ((sd_w.used_leaf + 1) * 2 > sd_w.nleaf) {
		size_t cap = sd_w.nleaf ? 2 * sd_w.nleaf : 1024;
		struct sd_top_pc *t = sd_mem_calloc(cap, sizeof *t);
		if (!t)
			return; /* out of memory: the query misses it, the stream does not */
		for (size_t i = 0; i < sd_w.nleaf; i++) {
			if (!sd_w.leaf[i].samples)
				continue;
			size_t h = sd_mix64(sd_w.leaf[i].pc) & (cap - 1);
			while (t[h].samples)
				h = (h + 1) & (cap - 1);
			t[h] = sd_w.leaf[i];
		}
		sd_mem_free(sd_w.leaf);
		sd_w.leaf = t;
		sd_w.nleaf = cap;
	}
	size_t mask = sd_w.nleaf - 1, h = sd_mix64(pc) & mask;
	while (sd_w.leaf[h].samples && sd_w.leaf[h].pc != pc)
		h = (h + 1) & mask;
	if (!sd_w.leaf[h].samples)
		sd_w.used_leaf++;
	sd_w.leaf[h].pc = pc;
	sd_w.leaf[h].samples += n;
}

size_t sd_stream_leaf_copy(struct sd_top_pc **out)
{
	*out = NULL;
	if (!sd_w.used_leaf || !(*out = sd_mem_alloc(sd_w.used_leaf * sizeof **out)))
		return 0;
	size_t k = 0;
	for (size_t i = 0; i < sd_w.nleaf && k < sd_w.used_leaf; i++)
		if (sd_w.leaf[i].samples)
			(*out)[k++] = sd_w.leaf[i];
	return k;
}

void sd_stream_intern_reset(void)
{
	sd_mem_free(sd_w.leaf);
	sd_w.leaf = NULL;
	sd_w.nleaf = sd_w.used_leaf = 0;
	sd_w.ctx_sent = 0;
	sd_w.attrs_sent = 0;
	sd_mem_free(sd_w.slots);
	sd_w.slots = NULL;
	sd_w.nslots = sd_w.used_slots = 0;
	sd_w.next_node = 0;
}


static int grow(void)
{
	size_t n = sd_w.nslots ? sd_w.nslots * 2 : 4096;
	struct sd_intern_slot *s = sd_mem_calloc(n, sizeof *s);
	if (!s)
		return -1;
	for (size_t i = 0; i < sd_w.nslots; i++) {
		struct sd_intern_slot *o = &sd_w.slots[i];
		if (!o->node)
			continue;
		size_t h = sd_mix64(o->addr ^ ((uint64_t)o->parent << 32) ^ o->module) & (n - 1);
		while (s[h].node)
			h = (h + 1) & (n - 1);
		s[h] = *o;
	}
	sd_mem_free(sd_w.slots);
	sd_w.slots = s;
	sd_w.nslots = n;
	return 0;
}

/* The node for frame (module, addr) under parent, defined on first use. */
static uint32_t intern(uint32_t parent, uint32_t module, uint64_t addr)
{
	if ((sd_w.used_slots + 1) * 10 >= sd_w.nslots * 7 && grow() != 0)
		return parent; /* out of memory: the stack is cut here */
	size_t mask = sd_w.nslots - 1;
	size_t h = sd_mix64(addr ^ ((uint64_t)parent << 32) ^ module) & mask;
	for (;; h = (h + 1) & mask) {
		struct sd_intern_slot *s = &sd_w.slots[h];
		if (!s->node)
			break;
		if (s->addr == addr && s->parent == parent && s->module == module)
			return s->node;
	}
	struct sd_intern_slot *s = &sd_w.slots[h];
	s->addr = addr;
	s->parent = parent;
	s->module = module;
	s->node = ++sd_w.next_node;
	sd_w.used_slots++;
	sd_w.n_frames++;
	rec_begin(SD_F_FRAME_N);
	msgpack_pack_uint8(&sd_w.pk, SD_K_FRAME);
	msgpack_pack_uint32(&sd_w.pk, s->node);
	msgpack_pack_uint32(&sd_w.pk, parent);
	msgpack_pack_uint32(&sd_w.pk, module);
	msgpack_pack_uint64(&sd_w.pk, addr);
	return s->node;
}

/* Is m the runtime itself? Its frames between the program's (the thread
 * trampoline, interposed calls) are left out of call paths; an innermost
 * frame in sonde is kept, so time spent in sonde stays visible. */
static int is_self(const struct sd_module *m)
{
	uintptr_t self = (uintptr_t)&sd_stream_sample;
	return m && self >= m->lo && self < m->hi;
}

static uint32_t intern_frame(uint32_t parent, uint64_t pc, int innermost, uint64_t t_ns)
{
	/* Callers' return addresses point after the call: step back into it. */
	uint64_t look = innermost ? pc : pc - 1;
	struct sd_module *m = sd_modules_find((uintptr_t)look, t_ns);
	if (!innermost && is_self(m))
		return parent;
	if (!m)
		return intern(parent, 0, look);
	return intern(parent, m->id, look - m->bias);
}

/* ---- annotation context -------------------------------------------------- */

static void emit_attrs_upto(uint32_t id)
{
	static const char *const types[] = {"string", "int", "double"};
	while (sd_w.attrs_sent < id) {
		struct sd_attr_view a;
		uint32_t n = ++sd_w.attrs_sent;
		if (sd_annotate_attr_get(n, &a) != 0)
			continue;
		rec_begin(SD_F_ATTRIBUTE_N);
		msgpack_pack_uint8(&sd_w.pk, SD_K_ATTRIBUTE);
		msgpack_pack_uint32(&sd_w.pk, n);
		pack_str(a.name);
		pack_str(types[a.type >= 0 && a.type <= 2 ? a.type : 0]);
		pack_str(a.scope ? "process" : "thread");
	}
}

/* Writes CONTEXT records for every node up to `id` not yet in this stream
 * (nodes are numbered so that parents come first). */
static void emit_contexts_upto(uint32_t id)
{
	while (sd_w.ctx_sent < id) {
		struct sd_node_view v;
		uint32_t n = ++sd_w.ctx_sent;
		if (sd_annotate_node_get(n, &v) != 0)
			continue;
		emit_attrs_upto(v.attr);
		/* where it was first opened: its stack then, sonde's own frames left out */
		uint32_t site = 0;
		for (unsigned k = v.nsites; k-- > 0;)
			site = intern_frame(site, v.sites[k], 0, sd_now_ns_sigsafe());
		rec_begin(site ? SD_F_CONTEXT_N : v.flags ? SD_F_CONTEXT_SITE : SD_F_CONTEXT_FLAGS);
		msgpack_pack_uint8(&sd_w.pk, SD_K_CONTEXT);
		msgpack_pack_uint32(&sd_w.pk, n);
		msgpack_pack_uint32(&sd_w.pk, v.parent);
		msgpack_pack_uint32(&sd_w.pk, v.attr);
		if (v.type == 1)
			msgpack_pack_int64(&sd_w.pk, v.i);
		else if (v.type == 2)
			msgpack_pack_double(&sd_w.pk, v.d);
		else
			pack_str(v.s ? v.s : "");
		if (v.flags || site)
			msgpack_pack_uint8(&sd_w.pk, v.flags);
		if (site)
			msgpack_pack_uint32(&sd_w.pk, site);
	}
}

void sd_stream_region(struct sd_ring *r, const struct sd_rec *rec)
{
	emit_contexts_upto(rec->weight);
	if (rec->source & SD_REC_REGION_LOST) { /* the events dropped before it: said */
		rec_begin(SD_F_REGION_COUNTS);
		msgpack_pack_uint8(&sd_w.pk, SD_K_REGION);
		msgpack_pack_uint32(&sd_w.pk, r->idx);
		msgpack_pack_uint64(&sd_w.pk, sd_stream_rel(rec->t_ns));
		msgpack_pack_uint32(&sd_w.pk, rec->weight);
		msgpack_pack_uint8(&sd_w.pk, SD_REGION_LOST);
	}
	rec_begin(rec->ncounters ? SD_F_REGION_N : SD_F_REGION_COUNTS);
	msgpack_pack_uint8(&sd_w.pk, SD_K_REGION);
	msgpack_pack_uint32(&sd_w.pk, r->idx);
	msgpack_pack_uint64(&sd_w.pk, sd_stream_rel(rec->t_ns));
	msgpack_pack_uint32(&sd_w.pk, rec->weight);
	msgpack_pack_uint8(&sd_w.pk, rec->source & ~SD_REC_REGION_LOST);
	if (rec->ncounters) {
		msgpack_pack_array(&sd_w.pk, rec->ncounters);
		for (unsigned i = 0; i < rec->ncounters; i++)
			msgpack_pack_uint64(&sd_w.pk, rec->pcs[i]);
	}
}

void sd_stream_region_stat(struct sd_ring *r, const struct sd_region_stat *s)
{
	int traffic = s->sent || s->recv;
	emit_contexts_upto(s->node);
	rec_begin(traffic ? SD_F_RSTATS_N : s->ncounts ? SD_F_RSTATS_TRAFFIC : SD_F_RSTATS_COUNTS);
	msgpack_pack_uint8(&sd_w.pk, SD_K_REGION_STATS);
	msgpack_pack_uint32(&sd_w.pk, r->idx);
	msgpack_pack_uint64(&sd_w.pk, sd_stream_rel(sd_now_ns_sigsafe()));
	msgpack_pack_uint32(&sd_w.pk, s->node);
	msgpack_pack_uint64(&sd_w.pk, s->calls);
	msgpack_pack_uint64(&sd_w.pk, s->incl_ns);
	msgpack_pack_uint64(&sd_w.pk, s->excl_ns);
	msgpack_pack_uint64(&sd_w.pk, s->min_ns);
	msgpack_pack_uint64(&sd_w.pk, s->max_ns);
	msgpack_pack_double(&sd_w.pk, s->sumsq_ns2);
	msgpack_pack_uint64(&sd_w.pk, s->forced);
	msgpack_pack_uint32(&sd_w.pk, 0); /* site: not recorded yet */
	if (s->ncounts || traffic) {
		msgpack_pack_array(&sd_w.pk, s->ncounts);
		for (unsigned i = 0; i < s->ncounts; i++)
			msgpack_pack_uint64(&sd_w.pk, s->counts[i]);
	}
	if (traffic) {
		msgpack_pack_array(&sd_w.pk, 2);
		msgpack_pack_uint64(&sd_w.pk, s->sent);
		msgpack_pack_uint64(&sd_w.pk, s->recv);
	}
}

void sd_stream_region_open(struct sd_ring *r, const struct sd_region_stat *s)
{
	emit_contexts_upto(s->node);
	rec_begin(SD_F_ROPEN_N);
	msgpack_pack_uint8(&sd_w.pk, SD_K_REGION_OPEN);
	msgpack_pack_uint32(&sd_w.pk, r->idx);
	msgpack_pack_uint64(&sd_w.pk, sd_stream_rel(sd_now_ns_sigsafe()));
	msgpack_pack_uint32(&sd_w.pk, s->node);
	msgpack_pack_uint64(&sd_w.pk, sd_stream_rel(s->open_begin_ns));
}

void sd_stream_sample(struct sd_ring *r, const struct sd_rec *rec)
{
	unsigned depth = rec->depth;
	uint32_t *nodes = sd_w.tmp_nodes;
	uint32_t node = 0;
	if (depth) {
		unsigned k = 0;
		if (r->prev_gen == sd_w.mod_gen)
			while (k + 1 < depth && k + 1 < r->prev_depth &&
			       rec->pcs[depth - 1 - k] == r->prev_pcs[r->prev_depth - 1 - k])
				k++;
		uint32_t parent = 0;
		for (unsigned m = 0; m < k; m++)
			nodes[depth - 1 - m] = r->prev_nodes[r->prev_depth - 1 - m];
		if (k)
			parent = nodes[depth - k];
		uint32_t gen = sd_w.mod_gen;
		for (unsigned i = depth - k; i-- > 0;) {
			parent = intern_frame(parent, rec->pcs[i], i == 0, rec->t_ns);
			nodes[i] = parent;
		}
		node = nodes[0];
		leaf_count(rec->pcs[0], 1);
		if (gen == sd_w.mod_gen) {
			memcpy(r->prev_pcs, rec->pcs, depth * sizeof *r->prev_pcs);
			memcpy(r->prev_nodes, nodes, depth * sizeof *r->prev_nodes);
			r->prev_depth = depth;
			r->prev_gen = gen;
		} else {
			r->prev_depth = 0;
		}
	}
	uint64_t t = sd_stream_rel(rec->t_ns);
	uint64_t dt = t > r->last_t_ns ? t - r->last_t_ns : 0;
	r->last_t_ns = t;
	int deltas = 0;
	for (unsigned i = 0; i < rec->ncounters; i++)
		deltas |= rec->pcs[rec->depth + i] != 0;
	int ctx = rec->ctx || rec->pctx || deltas;
	if (rec->ctx || rec->pctx)
		emit_contexts_upto(rec->ctx > rec->pctx ? rec->ctx : rec->pctx);
	rec_begin(deltas  ? SD_F_SAMPLE_N
				       : ctx   ? SD_F_SAMPLE_DELTAS
				       : rec->flags ? SD_F_SAMPLE_CONTEXT : SD_F_SAMPLE_FLAGS);
	msgpack_pack_uint8(&sd_w.pk, SD_K_SAMPLE);
	msgpack_pack_uint32(&sd_w.pk, r->idx);
	msgpack_pack_uint64(&sd_w.pk, dt);
	msgpack_pack_uint8(&sd_w.pk, rec->source);
	msgpack_pack_uint32(&sd_w.pk, node);
	msgpack_pack_uint32(&sd_w.pk, rec->weight);
	if (rec->flags || ctx)
		msgpack_pack_uint8(&sd_w.pk, rec->flags);
	if (ctx) {
		msgpack_pack_uint32(&sd_w.pk, rec->ctx);
		msgpack_pack_uint32(&sd_w.pk, rec->pctx);
	}
	if (deltas) {
		msgpack_pack_array(&sd_w.pk, rec->ncounters);
		for (unsigned i = 0; i < rec->ncounters; i++)
			msgpack_pack_uint64(&sd_w.pk, rec->pcs[rec->depth + i]);
	}
	/* [sonde]'s own time is no stack of the program's: the off-CPU and kernel time
	 * charged to the last sampled stack (offcpu.c) stays with the program's */
	if (!(rec->depth == 1 && rec->pcs[0] == SD_PSEUDO_SONDE)) {
		r->last_node = node;
		r->last_trunc = (rec->flags & SD_FLAG_TRUNCATED) != 0;
	}
	sd_w.n_samples++;
}

/* A sample that no signal took: `weight` periods of `source` that thread r
 * spent off CPU (or in the kernel), charged to pseudo-frame `pseudo` under
 * the stack pcs[0..n) (innermost first, all return addresses or sonde's own
 * frames), or under the thread's last sampled stack when n is 0; flags:
 * SD_FLAG_TRUNCATED when that stack was cut (SD_FLAG_ACCOUNTED is added). */
void sd_stream_accounted(struct sd_ring *r, uint64_t t_ns, uint8_t source, const uint64_t *pcs,
			 unsigned n, uint32_t pseudo, uint32_t weight, uint8_t flags)
{
	uint32_t parent = n ? 0 : r->last_node;
	for (unsigned i = n; i-- > 0;)
		parent = intern_frame(parent, pcs[i], 0, t_ns);
	uint32_t node = intern(parent, 0, pseudo);
	uint64_t t = sd_stream_rel(t_ns);
	uint64_t dt = t > r->last_t_ns ? t - r->last_t_ns : 0;
	if (t > r->last_t_ns)
		r->last_t_ns = t;
	rec_begin(SD_F_SAMPLE_CONTEXT);
	msgpack_pack_uint8(&sd_w.pk, SD_K_SAMPLE);
	msgpack_pack_uint32(&sd_w.pk, r->idx);
	msgpack_pack_uint64(&sd_w.pk, dt);
	msgpack_pack_uint8(&sd_w.pk, source);
	msgpack_pack_uint32(&sd_w.pk, node);
	msgpack_pack_uint32(&sd_w.pk, weight);
	msgpack_pack_uint8(&sd_w.pk, (uint8_t)(SD_FLAG_ACCOUNTED | flags));
	sd_w.n_samples++;
}
