/*
 * mkstream.c: writes sonde streams (docs/FORMAT.md) with known contents, for the analyzer
 * tests, while the runtime cannot write them yet. Its MODULE records describe this very
 * binary (and libmkdup.so), with the real path, build-id (read from the loaded notes) and
 * load bias, and its FRAME addrs are the ELF addresses of the mk_* functions below, so
 * `sonde report` must symbolize them to those names.
 *
 * Prints the stream's size, or for corrupt/cycle the offset of the bad record.
 * usage: mkstream SCENARIO OUT [--pid N] [--count N] [--bad-build-id] [--missing-module] [--no-end]
 *                 [--swap-ids] [--rank N] [--end-signal N] [--cwd DIR] [--module PATH]...
 *                 [--dup-path PATH]
 * --no-end leaves the END record out (an incomplete stream); --end-signal N writes END with
 * reason `signal` and stats `signal` N.
 * The scenarios and their exact counts are listed with each function; the shell tests
 * assert on them.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <msgpack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common.h"
#include "format/format.h"

/* Functions whose addresses appear in the streams: different bodies so that identical
 * code folding cannot merge them. */
volatile int mk_sink;
__attribute__((noinline)) void mk_main(void) { mk_sink = 1; mk_sink += 11; }
__attribute__((noinline)) void mk_alpha(void) { mk_sink = 2; mk_sink *= 22; }
__attribute__((noinline)) void mk_beta(void) { mk_sink = 3; mk_sink -= 33; }
__attribute__((noinline)) void mk_gamma(void) { mk_sink = 4; mk_sink ^= 44; }
__attribute__((noinline)) void mk_recurse(void) { mk_sink = 5; mk_sink |= 55; }
void mk_alpha_dup(void); /* libmkdup.so: a function named mk_alpha lives there too */
void *mk_dup_alpha_addr(void);
void *mk_exp_name_addr(void); /* libmkdup.so: a C++ name that demangles to 870 MB */

struct mod { const char *name; uintptr_t bias; uint8_t bid[64]; size_t bid_len; char path[PATH_MAX]; };

static int find_mod(struct dl_phdr_info *info, size_t size, void *data)
{
	struct mod *m = data;
	(void)size;
	if (m->name[0] ? !strstr(info->dlpi_name, m->name) : info->dlpi_name[0] != 0)
		return 0;
	m->bias = info->dlpi_addr;
	if (m->name[0])
		snprintf(m->path, sizeof(m->path), "%s", info->dlpi_name);
	m->bid_len = sd_build_id_of(info->dlpi_phdr, info->dlpi_phnum, info->dlpi_addr, m->bid,
				    sizeof(m->bid));
	return 1;
}

static msgpack_packer pk;
static msgpack_sbuffer sb;
static size_t mark = SIZE_MAX; /* offset of the bad record, printed for the tests */

static void str(const char *s) { msgpack_pack_str_with_body(&pk, s, strlen(s)); }
static void u64(uint64_t v) { msgpack_pack_uint64(&pk, v); }
static void kv_str(const char *k, const char *v) { str(k); str(v); }
static void kv_u64(const char *k, uint64_t v) { str(k); u64(v); }

static int with_counters; /* header(): add `counters` and `counters_unavailable` */
static int papi_source;   /* header(): one PAPI source (perf::TASK-CLOCK) instead */
static long long rank = -1; /* header(): `rank` when >= 0 (--rank N) */
static const char *cwd_arg;  /* header(): `cwd` when given (--cwd DIR) */
/* header(): argv[0] (--argv0 NAME), no argv (--no-argv, as SONDE_ARGV=off writes), no exe
 * (--no-exe), ppid (--ppid N), clock monotonic_ns (--clock NS) */
static const char *argv0 = "mkstream";
static int no_argv, no_exe;
static uint64_t ppid = 1, clock_ns = 123456789;
/* header(): host (--host NAME), start_ticks (--start N; 0: absent) */
static const char *host_arg = "testhost";
static uint64_t start_arg;
/* --evil S: the name of flat's first thread and ctx's phase value "solve" (escapes,
 * newlines and bytes that are not UTF-8, for the escaping tests) */
static const char *evil;

static void counter(const char *name, const char *group, const char *source)
{
	msgpack_pack_map(&pk, 4);
	kv_str("name", name); kv_str("group", group); kv_str("unit", "count");
	kv_str("source", source);
}

static void header(uint64_t pid)
{
	msgpack_pack_array(&pk, SD_F_HEADER_N);
	u64(SD_K_HEADER); str(SD_FORMAT_MAGIC); u64(SD_FORMAT_VERSION);
	msgpack_pack_map(&pk, (with_counters ? 9 : 7) + (rank >= 0) + (cwd_arg != NULL) - no_argv -
				     no_exe + (start_arg != 0));
	if (rank >= 0)
		kv_u64("rank", (uint64_t)rank);
	if (cwd_arg)
		kv_str("cwd", cwd_arg);
	if (with_counters) {
		str("counters"); msgpack_pack_array(&pk, 3);
		counter("context-switches.voluntary", "context-switches", "getrusage:ru_nvcsw");
		counter("context-switches.involuntary", "context-switches", "getrusage:ru_nivcsw");
		counter("page-faults", "page-faults", "perf_event:page-faults");
		str("counters_unavailable"); msgpack_pack_array(&pk, 1);
		msgpack_pack_map(&pk, 2);
		kv_str("name", "cpu-migrations");
		kv_str("reason", "perf_event_paranoid is 2: counts only user space, where no "
		       "migration happens");
	}
	kv_u64("pid", pid);
	kv_u64("ppid", ppid);
	if (start_arg)
		kv_u64("start_ticks", start_arg);
	kv_str("host", host_arg);
	if (!no_exe)
		kv_str("exe", "/usr/bin/mkstream-test");
	if (!no_argv) {
		str("argv"); msgpack_pack_array(&pk, 2); str(argv0); str("a,\"b\"\n");
	}
	if (papi_source) {
		str("sources"); msgpack_pack_array(&pk, 1);
		msgpack_pack_map(&pk, 6);
		kv_str("name", "perf::TASK-CLOCK"); kv_str("spec", "perf::TASK-CLOCK@1000000");
		kv_str("unit", "events"); kv_u64("period", 1000000); kv_str("mechanism", "papi:overflow");
		kv_u64("signal", 36);
		goto clock;
	}
	str("sources"); msgpack_pack_array(&pk, 2);
	msgpack_pack_map(&pk, 6);
	kv_str("name", "cpu-time"); kv_str("spec", "cpu-time@1ms"); kv_str("unit", "ns");
	kv_u64("period", 1000000); kv_str("mechanism", "perf_event:task-clock");
	kv_u64("signal", 34);
	msgpack_pack_map(&pk, 6);
	kv_str("name", "wall-time"); kv_str("spec", "wall-time@10ms"); kv_str("unit", "ns");
	kv_u64("period", 10000000); kv_str("mechanism", "posix-timer:monotonic");
	kv_u64("signal", 35);
clock:
	str("clock"); msgpack_pack_map(&pk, 2);
	kv_u64("monotonic_ns", clock_ns); kv_u64("realtime_ns", 1700000000000000000ULL);
}

static void module(uint64_t id, const char *path, const uint8_t *bid, size_t bid_len,
		   uint64_t bias)
{
	msgpack_pack_array(&pk, SD_F_MODULE_SIZE); /* an earlier sonde's: no size, mtime */
	u64(SD_K_MODULE); u64(id); u64(10); str(path);
	if (bid)
		msgpack_pack_bin_with_body(&pk, bid, bid_len);
	else
		msgpack_pack_nil(&pk);
	u64(bias); u64(bias); u64(bias + 0x10000);
}

static void thread(uint64_t id, uint64_t tid, uint64_t t, const char *name)
{
	msgpack_pack_array(&pk, SD_F_THREAD_N);
	u64(SD_K_THREAD); u64(id); u64(tid); u64(t); str(name);
}

static void frame(uint64_t node, uint64_t parent, uint64_t mod, uint64_t addr)
{
	msgpack_pack_array(&pk, SD_F_FRAME_N);
	u64(SD_K_FRAME); u64(node); u64(parent); u64(mod); u64(addr);
}

static void samples(int n, uint64_t thr, uint64_t src, uint64_t node, uint64_t weight)
{
	for (int i = 0; i < n; i++) {
		msgpack_pack_array(&pk, SD_F_SAMPLE_FLAGS);
		u64(SD_K_SAMPLE); u64(thr); u64(1000000); u64(src); u64(node); u64(weight);
	}
}

static void attribute(uint64_t id, const char *name, const char *type, const char *scope)
{
	msgpack_pack_array(&pk, SD_F_ATTRIBUTE_N);
	u64(SD_K_ATTRIBUTE); u64(id); str(name); str(type); str(scope);
}

static void context(uint64_t node, uint64_t parent, uint64_t attr, const char *value)
{
	msgpack_pack_array(&pk, SD_F_CONTEXT_FLAGS);
	u64(SD_K_CONTEXT); u64(node); u64(parent); u64(attr); str(value);
}

static void context_int(uint64_t node, uint64_t parent, uint64_t attr, int64_t value)
{
	msgpack_pack_array(&pk, SD_F_CONTEXT_SITE); /* with flags */
	u64(SD_K_CONTEXT); u64(node); u64(parent); u64(attr); msgpack_pack_int64(&pk, value); u64(0);
}

static void csamples(int n, uint64_t thr, uint64_t node, uint64_t ctx, uint64_t pctx)
{
	for (int i = 0; i < n; i++) {
		msgpack_pack_array(&pk, SD_F_SAMPLE_DELTAS);
		u64(SD_K_SAMPLE); u64(thr); u64(1000000); u64(0); u64(node); u64(1); u64(0); u64(ctx);
		u64(pctx);
	}
}

/* n SAMPLEs of source src with flags, thread context ctx and deltas d[3] (NULL: none) */
static void dsamples(int n, uint64_t thr, uint64_t src, uint64_t node, uint64_t flags,
		     uint64_t ctx, const uint64_t *d)
{
	for (int i = 0; i < n; i++) {
		msgpack_pack_array(&pk, d ? SD_F_SAMPLE_N : SD_F_SAMPLE_DELTAS);
		u64(SD_K_SAMPLE); u64(thr); u64(1000000); u64(src); u64(node); u64(1); u64(flags); u64(ctx);
		u64(0);
		if (d) {
			msgpack_pack_array(&pk, 3);
			u64(d[0]); u64(d[1]); u64(d[2]);
		}
	}
}

/* one SAMPLE dt ns after its thread's previous one, weight 1, deltas d[3] (NULL: none) */
static void tsample(uint64_t thr, uint64_t src, uint64_t dt, uint64_t node, uint64_t ctx,
		    const uint64_t *d)
{
	msgpack_pack_array(&pk, d ? SD_F_SAMPLE_N : SD_F_SAMPLE_DELTAS);
	u64(SD_K_SAMPLE); u64(thr); u64(dt); u64(src); u64(node); u64(1); u64(0); u64(ctx); u64(0);
	if (d) {
		msgpack_pack_array(&pk, 3);
		u64(d[0]); u64(d[1]); u64(d[2]);
	}
}

/* REGION with counts c[3] */
static void cregion(uint64_t thr, uint64_t t, uint64_t node, uint64_t event, uint64_t v,
		    uint64_t iv, uint64_t pf)
{
	msgpack_pack_array(&pk, SD_F_REGION_N);
	u64(SD_K_REGION); u64(thr); u64(t); u64(node); u64(event);
	msgpack_pack_array(&pk, 3);
	u64(v); u64(iv); u64(pf);
}

/* MESSAGES of world rank `rank` of `size`: one peer, msgs messages of bytes in all. */
static void messages(uint64_t wrank, uint64_t size, uint64_t peer, uint64_t msgs, uint64_t bytes)
{
	msgpack_pack_array(&pk, SD_F_MSGS_N);
	u64(SD_K_MESSAGES); u64(5000); u64(wrank); u64(size);
	msgpack_pack_array(&pk, 1);
	msgpack_pack_array(&pk, 3); u64(peer); u64(msgs); u64(bytes);
}

/* REGION_STATS of one call of 1000 ns of node, with no counts and traffic [sent, recv]
 * (nvals 2; more: zeros after them). */
static void rstats_traffic(uint64_t thr, uint64_t node, uint64_t sent, uint64_t recv,
			   unsigned nvals)
{
	msgpack_pack_array(&pk, SD_F_RSTATS_N);
	u64(SD_K_REGION_STATS); u64(thr); u64(4000); u64(node); u64(1); u64(1000); u64(1000);
	u64(1000); u64(1000); msgpack_pack_double(&pk, 1e6); u64(0); u64(0);
	msgpack_pack_array(&pk, 0);
	msgpack_pack_array(&pk, nvals); u64(sent); u64(recv);
	for (unsigned i = 2; i < nvals; i++)
		u64(0);
}

static void region(uint64_t thr, uint64_t t, uint64_t node, uint64_t event)
{
	msgpack_pack_array(&pk, SD_F_REGION_COUNTS);
	u64(SD_K_REGION); u64(thr); u64(t); u64(node); u64(event);
}

static void drops(uint64_t thr, uint64_t ring_full, uint64_t busy)
{
	msgpack_pack_array(&pk, SD_F_DROPS_N);
	u64(SD_K_DROPS); u64(thr);
	msgpack_pack_map(&pk, busy ? 2 : 1);
	kv_u64("ring_full", ring_full);
	if (busy)
		kv_u64("busy", busy);
}

static uint64_t end_signal; /* --end-signal N: END reason "signal" */
static const char *end_reason = "exit"; /* --end-reason R (exec, _exit, ...) */

static void end(void)
{
	msgpack_pack_array(&pk, SD_F_END_N);
	u64(SD_K_END); u64(999999999); str(end_signal ? "signal" : end_reason);
	msgpack_pack_map(&pk, end_signal ? 3 : 2);
	kv_u64("samples", 100); kv_u64("dropped", 4);
	if (end_signal)
		kv_u64("signal", end_signal);
}

/* DROPS of thread thr with n (reason, count) pairs */
static void drops_kv(uint64_t thr, int n, const char *const *reason, const uint64_t *count)
{
	msgpack_pack_array(&pk, SD_F_DROPS_N);
	u64(SD_K_DROPS); u64(thr);
	msgpack_pack_map(&pk, (size_t)n);
	for (int i = 0; i < n; i++)
		kv_u64(reason[i], count[i]);
}

/* THREAD_END of thr at t with deltas d[3] */
static void thread_end(uint64_t thr, uint64_t t, const char *name, const uint64_t *d)
{
	msgpack_pack_array(&pk, SD_F_THREAD_END_CPU);
	u64(SD_K_THREAD_END); u64(thr); u64(t); str(name);
	msgpack_pack_array(&pk, 3);
	u64(d[0]); u64(d[1]); u64(d[2]);
}

/* THREAD_END of thr with no deltas and cpu {cpu_ns[, user_ns, sys_ns]} */
static void thread_end_cpu(uint64_t thr, uint64_t t, const char *name, uint64_t cpu,
			   uint64_t user, uint64_t sys, int split)
{
	msgpack_pack_array(&pk, SD_F_THREAD_END_N);
	u64(SD_K_THREAD_END); u64(thr); u64(t); str(name);
	msgpack_pack_array(&pk, 0);
	msgpack_pack_map(&pk, split ? 3 : 1);
	kv_u64("cpu_ns", cpu);
	if (split) {
		kv_u64("user_ns", user);
		kv_u64("sys_ns", sys);
	}
}

static uint64_t addr_of(void (*fn)(void), uintptr_t bias)
{
	return (uint64_t)((uintptr_t)fn - bias);
}

int main(int argc, char **argv)
{
	struct mod self = { .name = "" }, dup = { .name = "libmkdup.so" };
	uint64_t pid = 4242, count = 1000000;
	int bad_bid = 0, no_bid = 0, missing = 0, no_end = 0, swap = 0, nmods = 0;
	const char *mods[16], *dup_path = NULL;
	if (argc < 3) {
		fprintf(stderr, "usage: mkstream flat|edge|dup|big|corrupt|cycle OUT [--pid N] "
			"[--count N] [--bad-build-id] [--missing-module] [--no-end]\n");
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--pid") && i + 1 < argc)
			pid = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--count") && i + 1 < argc)
			count = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--bad-build-id"))
			bad_bid = 1;
		else if (!strcmp(argv[i], "--missing-module"))
			missing = 1;
		else if (!strcmp(argv[i], "--no-build-id")) /* the program's MODULE has none */
			no_bid = 1;
		else if (!strcmp(argv[i], "--no-end"))
			no_end = 1;
		else if (!strcmp(argv[i], "--swap-ids"))
			swap = 1;
		else if (!strcmp(argv[i], "--rank") && i + 1 < argc)
			rank = strtoll(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--end-signal") && i + 1 < argc)
			end_signal = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--cwd") && i + 1 < argc)
			cwd_arg = argv[++i];
		else if (!strcmp(argv[i], "--module") && i + 1 < argc && nmods < 16)
			mods[nmods++] = argv[++i];
		else if (!strcmp(argv[i], "--dup-path") && i + 1 < argc)
			dup_path = argv[++i];
		else if (!strcmp(argv[i], "--argv0") && i + 1 < argc)
			argv0 = argv[++i];
		else if (!strcmp(argv[i], "--end-reason") && i + 1 < argc)
			end_reason = argv[++i];
		else if (!strcmp(argv[i], "--evil") && i + 1 < argc)
			evil = argv[++i];
		else if (!strcmp(argv[i], "--no-argv"))
			no_argv = 1;
		else if (!strcmp(argv[i], "--no-exe"))
			no_exe = 1;
		else if (!strcmp(argv[i], "--ppid") && i + 1 < argc)
			ppid = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--clock") && i + 1 < argc)
			clock_ns = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--host") && i + 1 < argc)
			host_arg = argv[++i];
		else if (!strcmp(argv[i], "--start") && i + 1 < argc)
			start_arg = strtoull(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "mkstream: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	mk_alpha_dup(); /* keep libmkdup.so loaded (DT_NEEDED) */
	dl_iterate_phdr(find_mod, &self);
	dl_iterate_phdr(find_mod, &dup);
	if (!realpath("/proc/self/exe", self.path) || !self.bid_len || !dup.bid_len) {
		fprintf(stderr, "mkstream: cannot find own path or build-ids\n");
		return 1;
	}
	if (bad_bid)
		self.bid[0] ^= 0xff;
	const char *path = missing ? "/nonexistent/dir/libgone.so" : self.path;
	uintptr_t b = self.bias;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	with_counters = !strncmp(argv[1], "counters", 8) || !strncmp(argv[1], "cnt_", 4) ||
			!strcmp(argv[1], "timeline");
	papi_source = !strcmp(argv[1], "papi");
	if (!strncmp(argv[1], "bad_header_", 11)) {
		/* a HEADER with one field of the wrong type: the stream is corrupt at byte 0 */
		const char *w = argv[1] + 11;
		msgpack_pack_array(&pk, SD_F_HEADER_N);
		u64(SD_K_HEADER); str(SD_FORMAT_MAGIC); u64(SD_FORMAT_VERSION);
		if (!strcmp(w, "info")) {
			str("not a map");
		} else {
			msgpack_pack_map(&pk, 3);
			kv_str("host", "testhost");
			if (!strcmp(w, "pid"))
				kv_str("pid", "4242");                   /* pid: str */
			else
				kv_u64("pid", pid);
			str("sources");
			if (!strcmp(w, "sources")) {
				u64(1);                                  /* sources: int */
			} else {
				msgpack_pack_array(&pk, 1);
				msgpack_pack_map(&pk, 3);
				kv_str("name", "cpu-time"); kv_str("unit", "ns");
				if (!strcmp(w, "period"))
					kv_str("period", "1ms");         /* period: str */
				else
					kv_u64("period", 1000000);
			}
		}
		mark = 0;
		goto write;
	}
	header(pid);
	if (!strcmp(argv[1], "bad_empty_module")) {
		/* a MODULE whose path is the empty string (FORMAT: replaced by `exe`) */
		module(1, "", NULL, 0, b);
		thread(1, pid, 0, "main");
		frame(1, 0, 1, 0x10);
		samples(2, 1, 0, 1, 1);
		goto done;
	}
	module(1, path, no_bid ? NULL : self.bid, self.bid_len, b);

	if (!strcmp(argv[1], "flat")) {
		/* paths (callers first) and counts; 100 samples, 90 cpu-time + 10 wall-time:
		 *   T1 main;alpha;beta 50 w1 | T1 main;alpha 20 w1 | T2 main;gamma 10 w2
		 *   T2 main;gamma 10 w1 (wall-time) | T2 main;recurse;recurse;beta 10 w1 */
		thread(1, pid, 1000, evil ? evil : "main");
		thread(2, pid + 1, 5000, "worker");
		frame(1, 0, 1, addr_of(mk_main, b));
		frame(2, 1, 1, addr_of(mk_alpha, b));
		frame(3, 2, 1, addr_of(mk_beta, b));
		samples(50, 1, 0, 3, 1);
		drops(1, 1, 0);
		samples(20, 1, 0, 2, 1);
		frame(4, 1, 1, addr_of(mk_gamma, b));
		samples(10, 2, 0, 4, 2);
		samples(10, 2, 1, 4, 1);
		frame(5, 1, 1, addr_of(mk_recurse, b));
		frame(6, 5, 1, addr_of(mk_recurse, b));
		frame(7, 6, 1, addr_of(mk_beta, b));
		samples(10, 2, 0, 7, 1);
		drops(1, 3, 1); /* supersedes the first: 4 drops */
		msgpack_pack_array(&pk, SD_F_THREAD_END_DELTAS); /* THREAD_END with the thread's final name */
		u64(SD_K_THREAD_END); u64(2); u64(99999); str("worker-end");
	} else if (!strcmp(argv[1], "edge")) {
		/* one sample each: raw address 0x1234, undefined module 9, the vDSO, no stack;
		 * main. (A SAMPLE naming an undefined thread, source or node is corrupt: the
		 * bad_sample_* scenarios.) */
		module(2, "[vdso]", NULL, 0, 0x7fff0000);
		thread(1, pid, 0, "main");
		frame(1, 0, 1, addr_of(mk_main, b));
		frame(2, 1, 0, 0x1234);
		frame(3, 1, 9, 0x10);
		frame(4, 1, 2, 0x20);
		samples(1, 1, 0, 2, 1);
		samples(1, 1, 0, 3, 1);
		samples(1, 1, 0, 4, 1);
		samples(1, 1, 0, 0, 1);
		samples(1, 1, 0, 1, 1);
		msgpack_pack_array(&pk, 3); /* a kind from the future: skipped */
		u64(42); str("future"); msgpack_pack_true(&pk);
		msgpack_pack_array(&pk, SD_F_SAMPLE_N + 1); /* SAMPLE with flags, contexts, deltas and one more */
		u64(SD_K_SAMPLE); u64(1); u64(1); u64(0); u64(1); u64(1); u64(3); u64(0); u64(0);
		msgpack_pack_array(&pk, 0); str("more");
		msgpack_pack_array(&pk, SD_F_NOTE_N); /* NOTE */
		u64(SD_K_NOTE); u64(77); str("note with \"quotes\"\tand\x01 control");
	} else if (!strcmp(argv[1], "dup")) {
		/* main;mk_alpha (this binary) 3 samples, main;mk_alpha (libmkdup.so) 1 sample */
		module(2, dup.path, dup.bid, dup.bid_len, dup.bias);
		thread(1, pid, 0, "main");
		frame(1, 0, 1, addr_of(mk_main, b));
		frame(2, 1, 1, addr_of(mk_alpha, b));
		frame(3, 1, 2, (uint64_t)((uintptr_t)mk_dup_alpha_addr() - dup.bias));
		samples(3, 1, 0, 2, 1);
		samples(1, 1, 0, 3, 1);
	} else if (!strcmp(argv[1], "bomb")) {
		/* main;mk_alpha 3 samples, main;<libmkdup.so's mk_exp_name> 2 samples */
		module(2, dup.path, dup.bid, dup.bid_len, dup.bias);
		thread(1, pid, 0, "main");
		frame(1, 0, 1, addr_of(mk_main, b));
		frame(2, 1, 1, addr_of(mk_alpha, b));
		frame(3, 1, 2, (uint64_t)((uintptr_t)mk_exp_name_addr() - dup.bias));
		samples(3, 1, 0, 2, 1);
		samples(2, 1, 0, 3, 1);
	} else if (!strcmp(argv[1], "diff_a") || !strcmp(argv[1], "diff_b")) {
		/* for `sonde diff`, one thread, cpu-time (self per function):
		 *   diff_a: main;alpha 20 | main;beta 50 | main;gamma 30               (100)
		 *   diff_b: main;alpha 80 | main;beta 66 | main;gamma 44 | main;recurse 10 (200)
		 * so mk_alpha's share doubles (20 % -> 40 %) */
		int b2 = argv[1][5] == 'b';
		thread(1, pid, 0, "main");
		frame(1, 0, 1, addr_of(mk_main, b));
		frame(2, 1, 1, addr_of(mk_alpha, b));
		frame(3, 1, 1, addr_of(mk_beta, b));
		frame(4, 1, 1, addr_of(mk_gamma, b));
		frame(5, 1, 1, addr_of(mk_recurse, b));
		samples(b2 ? 80 : 20, 1, 0, 2, 1);
		samples(b2 ? 66 : 50, 1, 0, 3, 1);
		samples(b2 ? 44 : 30, 1, 0, 4, 1);
		if (b2)
			samples(10, 1, 0, 5, 1);
	} else if (!strcmp(argv[1], "modpaths")) {
		/* modules named by the command line: each --module PATH (no build-id) gets one
		 * frame at 0x1000 + 0x10 k and one sample; --dup-path PATH is libmkdup.so
		 * under that path (its build-id), with 3 samples in its mk_alpha */
		thread(1, pid, 0, "main");
		for (int k = 0; k < nmods; k++) {
			module(2 + (uint64_t)k, mods[k], NULL, 0, 0);
			frame(1 + (uint64_t)k, 0, 2 + (uint64_t)k, 0x1000 + 0x10 * (uint64_t)k);
			samples(1, 1, 0, 1 + (uint64_t)k, 1);
		}
		if (dup_path) {
			module(2 + (uint64_t)nmods, dup_path, dup.bid, dup.bid_len, dup.bias);
			frame(1 + (uint64_t)nmods, 0, 2 + (uint64_t)nmods,
			      (uint64_t)((uintptr_t)mk_dup_alpha_addr() - dup.bias));
			samples(3, 1, 0, 1 + (uint64_t)nmods, 1);
		}
	} else if (!strcmp(argv[1], "stats")) {
		/* for --stats: three threads, K = --count; T1 (tid pid) main, T2 (tid pid+1)
		 * worker, T3 (tid pid+2) idle (no samples); cpu-time, weight 1:
		 *   T1 main;alpha K | T1 main;beta 10 | T2 main;beta K */
		thread(1, pid, 0, "main");
		thread(2, pid + 1, 0, "worker");
		thread(3, pid + 2, 0, "idle");
		frame(1, 0, 1, addr_of(mk_main, b));
		frame(2, 1, 1, addr_of(mk_alpha, b));
		frame(3, 1, 1, addr_of(mk_beta, b));
		samples((int)count, 1, 0, 2, 1);
		samples(10, 1, 0, 3, 1);
		samples((int)count, 2, 0, 3, 1);
	} else if (!strcmp(argv[1], "big")) {
		/* --count N samples alternating over main;alpha;beta (thread 1) and
		 * main;gamma (thread 2), with 1000 unsampled FRAMEs in between */
		thread(1, pid, 0, "main");
		thread(2, pid + 1, 0, "worker");
		frame(1, 0, 1, addr_of(mk_main, b));
		frame(2, 1, 1, addr_of(mk_alpha, b));
		frame(3, 2, 1, addr_of(mk_beta, b));
		for (int i = 0; i < 1000; i++)
			frame(4 + (uint64_t)i, 3 + (uint64_t)i, 1, addr_of(mk_recurse, b));
		frame(1004, 1, 1, addr_of(mk_gamma, b));
		for (uint64_t i = 0; i < count; i++)
			samples(1, 1 + i % 2, 0, i % 2 ? 1004 : 3, 1);
	} else if (!strcmp(argv[1], "deep")) {
		/* one call chain --count N frames deep (main, then mk_recurse N - 1 times), one
		 * sample at its leaf and one in main: the tree view's depth bounds */
		thread(1, pid, 0, "main");
		frame(1, 0, 1, addr_of(mk_main, b));
		for (uint64_t i = 2; i <= count; i++)
			frame(i, i - 1, 1, addr_of(mk_recurse, b));
		samples(1, 1, 0, count, 1);
		samples(1, 1, 0, 1, 1);
	} else if (!strcmp(argv[1], "deep_thin")) {
		/* the weight low, a thin chain high: main;mk_alpha;mk_beta 99 samples, and
		 * main;mk_recurse x 300 one sample (a flame graph opens at mk_beta's level) */
		thread(1, pid, 0, "main");
		frame(1, 0, 1, addr_of(mk_main, b));
		frame(2, 1, 1, addr_of(mk_alpha, b));
		frame(3, 2, 1, addr_of(mk_beta, b));
		for (uint64_t i = 4; i < 304; i++)
			frame(i, i == 4 ? 1 : i - 1, 1, addr_of(mk_recurse, b));
		samples(99, 1, 0, 3, 1);
		samples(1, 1, 0, 303, 1);
	} else if (!strcmp(argv[1], "ctx")) {
		/* Annotation contexts; --swap-ids numbers the attributes the other way round
		 * (same names and values). Attributes: phase (string, thread), iteration (int,
		 * thread), run (string, process), region (string, thread). Contexts:
		 *   c1 phase=solve  c2 c1/iteration=1  c3 c1/iteration=2  c4 phase=exchange
		 *   c5 c4/iteration=1  c6 run=big (process)  c7 c2/phase=inner (nested phase)
		 *   c8 region=outer  c9 c8/region=inner
		 * Samples (100, cpu-time, weight 1): T1 main (tid=pid), T2 worker (tid=pid+1)
		 *   T1 c2 p6 main;alpha;beta 30 | T1 c3 p6 main;alpha;beta 20
		 *   T1 c5 p6 main;alpha 15      | T2 c7 p6 main;gamma 10
		 *   T2 -  p6 main;gamma 15      | T2 -  -  main 10
		 * Regions (ms): T1 outer [1,10] with inner [2,5] and [6,7]; outer [20,23].
		 *   T2 outer [1,4] with inner [3,...) closed by outer's end (forced); outer [5,..)
		 *   with inner [5.5,6] ended forced (event 2); outer still open: closed at the
		 *   THREAD_END of T2 at 40 ms (forced). Per path, merged:
		 *   outer: 4 calls, incl 50, excl 44.5, min 3, mean 12.5, max 35, forced 1
		 *   outer/inner: 4 calls, incl 5.5, excl 5.5, min 0.5, mean 1.375, max 3, forced 2
		 * Plus an end of a node that is not open (left out: 1) and an event 7 (ignored). (A REGION
		 * naming an undefined thread or node is corrupt: bad_region_*.) */
		uint64_t A_PHASE = swap ? 4 : 1, A_ITER = swap ? 3 : 2, A_RUN = swap ? 2 : 3,
			 A_REGION = swap ? 1 : 4;
		thread(1, pid, 1000, "main");
		thread(2, pid + 1, 5000, "worker");
		for (uint64_t k = 1; k <= 4; k++) {
			if (k == A_PHASE) attribute(k, "phase", "string", "thread");
			if (k == A_ITER) attribute(k, "iteration", "int", "thread");
			if (k == A_RUN) attribute(k, "run", "string", "process");
			if (k == A_REGION) attribute(k, "region", "string", "thread");
		}
		context(1, 0, A_PHASE, evil ? evil : "solve");
		context_int(2, 1, A_ITER, 1);
		context_int(3, 1, A_ITER, 2);
		context(4, 0, A_PHASE, "exchange");
		context_int(5, 4, A_ITER, 1);
		context(6, 0, A_RUN, "big");
		context(7, 2, A_PHASE, "inner");
		context(8, 0, A_REGION, "outer");
		context(9, 8, A_REGION, "inner");
		frame(1, 0, 1, addr_of(mk_main, b));
		frame(2, 1, 1, addr_of(mk_alpha, b));
		frame(3, 2, 1, addr_of(mk_beta, b));
		frame(4, 1, 1, addr_of(mk_gamma, b));
		csamples(30, 1, 3, 2, 6);
		csamples(20, 1, 3, 3, 6);
		csamples(15, 1, 2, 5, 6);
		csamples(10, 2, 4, 7, 6);
		csamples(15, 2, 4, 0, 6);
		csamples(10, 2, 1, 0, 0);
		region(1, 1000000, 8, 1);
		region(2, 1000000, 8, 1);
		region(1, 2000000, 9, 1);
		region(2, 3000000, 9, 1);
		region(2, 4000000, 8, 0);
		region(1, 5000000, 9, 0);
		region(2, 5000000, 8, 1);
		region(2, 5500000, 9, 1);
		region(2, 6000000, 9, 2);
		region(1, 6000000, 9, 1);
		region(1, 7000000, 9, 0);
		region(1, 10000000, 8, 0);
		region(1, 20000000, 8, 1);
		region(1, 23000000, 8, 0);
		region(1, 24000000, 9, 0); /* not open: left out (its begin was lost) */
		region(1, 1000000, 8, 7);  /* unknown event */
		msgpack_pack_array(&pk, SD_F_THREAD_END_DELTAS); /* THREAD_END of T2 */
		u64(SD_K_THREAD_END); u64(2); u64(40000000); str("worker");
	} else if (!strncmp(argv[1], "ctx_", 4)) {
		/* invalid context records, each at the printed offset */
		thread(1, pid, 0, "main");
		attribute(1, "phase", "string", "thread");
		context(1, 0, 1, "solve");
		mark = sb.size;
		if (!strcmp(argv[1], "ctx_noattr"))
			context(2, 1, 2, "x");          /* attribute 2 not defined */
		else if (!strcmp(argv[1], "ctx_parent"))
			context(2, 2, 1, "x");          /* parent not earlier */
		else if (!strcmp(argv[1], "ctx_skip"))
			context(3, 1, 1, "x");          /* id 3 skips 2 */
		else {
			msgpack_pack_array(&pk, SD_F_CONTEXT_FLAGS);     /* value nil */
			u64(SD_K_CONTEXT); u64(2); u64(1); u64(1); msgpack_pack_nil(&pk);
		}
		csamples(1, 1, 0, 1, 0);
	} else if (!strcmp(argv[1], "counters")) {
		/* Counters (header): context-switches.voluntary, .involuntary (group
		 * context-switches, getrusage), page-faults (perf_event); cpu-migrations
		 * unavailable. Attributes: phase (1), region (2); c1 phase=solve, c2 phase=io,
		 * c3 region=load, c4 c3/region=parse. Samples (80; weight 1; deltas v,iv,pf):
		 *   T1 c1 main;alpha;beta 40 cpu-time [1,0,2]  | T1 c2 main;alpha 10 cpu-time [0,1,0]
		 *   T2 -  main;gamma 20 cpu-time, no deltas    | T2 - main;gamma 5 cpu-time, flag 8
		 *   T2 -  main;gamma 5 wall-time [2,0,0]
		 * Totals: voluntary 50, involuntary 10, page-faults 80; CPU time 75 ms.
		 * Regions of T1 (ms: counts): load [1: 0,0,0 .. 5: 3,1,10] with parse
		 *   [2: 1,0,4 .. 4: 2,1,9]; load [10: 5,1,12 .. 12: 9,2,20].
		 *   load: 2 calls, incl 6, excl 4, min 2, mean 3, max 4; deltas 7, 2, 18
		 *   load/parse: 1 call, 2 ms; deltas 1, 1, 5 */
		static const uint64_t d1[3] = { 1, 0, 2 }, d2[3] = { 0, 1, 0 }, d3[3] = { 2, 0, 0 };
		thread(1, pid, 1000, "main");
		thread(2, pid + 1, 5000, "worker");
		attribute(1, "phase", "string", "thread");
		attribute(2, "region", "string", "thread");
		context(1, 0, 1, "solve");
		context(2, 0, 1, "io");
		context(3, 0, 2, "load");
		context(4, 3, 2, "parse");
		frame(1, 0, 1, addr_of(mk_main, b));
		frame(2, 1, 1, addr_of(mk_alpha, b));
		frame(3, 2, 1, addr_of(mk_beta, b));
		frame(4, 1, 1, addr_of(mk_gamma, b));
		dsamples(40, 1, 0, 3, 0, 1, d1);
		dsamples(10, 1, 0, 2, 0, 2, d2);
		samples(20, 2, 0, 4, 1);
		dsamples(5, 2, 0, 4, 8, 0, NULL);
		dsamples(5, 2, 1, 4, 0, 0, d3);
		cregion(1, 1000000, 3, 1, 0, 0, 0);
		cregion(1, 2000000, 4, 1, 1, 0, 4);
		cregion(1, 4000000, 4, 0, 2, 1, 9);
		cregion(1, 5000000, 3, 0, 3, 1, 10);
		cregion(1, 10000000, 3, 1, 5, 1, 12);
		cregion(1, 12000000, 3, 0, 9, 2, 20);
		msgpack_pack_array(&pk, SD_F_THREAD_END_CPU); /* THREAD_END of T2 with deltas: totals only */
		u64(SD_K_THREAD_END); u64(2); u64(90000000); str("worker");
		msgpack_pack_array(&pk, 3); u64(0); u64(0); u64(0);
	} else if (!strcmp(argv[1], "timeline")) {
		/* Samples and regions at known times (ms after the HEADER clock; 3 counters:
		 * voluntary, involuntary, page-faults), for --format trace and speedscope:
		 *   T1 main (tid pid, t0 0), cpu-time@1ms, weight 1, about one sample per ms:
		 *     main;alpha at 1, 2, 3 (phase=solve) [1,0,2] | main;alpha;beta at 4.2, 5.4
		 *     (phase=solve) [0,1,0] | main;gamma at 6.4, 7.4 [1,0,0] | main;gamma at
		 *     12.4 [2,0,1] (5 ms after the one before); THREAD_END at 13 with [1,1,1]
		 *   T2 worker (tid pid+1, t0 0), wall-time@10ms: main;alpha;beta at 2, 4, 6, 8,
		 *     no deltas
		 * Totals: 12 samples (alpha self 3, beta 6, gamma 3), 48 ms of weight (T1 8,
		 * T2 40); voluntary 8, involuntary 3, page-faults 8.
		 * Stack slices (ms; each sample stands for the time since the one before, or its
		 * 1 ms after a gap): T1 mk_main [0,7.4] with mk_alpha [0,5.4] (mk_beta [3,5.4])
		 * and mk_gamma [5.4,7.4], then mk_main [11.4,12.4] with mk_gamma [11.4,12.4];
		 * T2 mk_main, mk_alpha, mk_beta [0,8].
		 * Regions of T1 (phase=solve, region=inner inside it, region=tail): solve
		 * [0.5,6.5] with inner [1,2] and inner [3,6.5] (still open when solve ends:
		 * forced); tail [11,13] (open at the end of the stream: forced). */
		static const uint64_t a[3] = { 1, 0, 2 }, be[3] = { 0, 1, 0 }, g[3] = { 1, 0, 0 },
				      g2[3] = { 2, 0, 1 }, e1[3] = { 1, 1, 1 };
		thread(1, pid, 0, "main");
		thread(2, pid + 1, 0, "worker");
		attribute(1, "phase", "string", "thread");
		attribute(2, "region", "string", "thread");
		context(1, 0, 1, "solve");
		context(2, 1, 2, "inner");
		context(3, 0, 2, "tail");
		frame(1, 0, 1, addr_of(mk_main, b));
		frame(2, 1, 1, addr_of(mk_alpha, b));
		frame(3, 2, 1, addr_of(mk_beta, b));
		frame(4, 1, 1, addr_of(mk_gamma, b));
		region(1, 500000, 1, 1);
		for (int i = 0; i < 3; i++)
			tsample(1, 0, 1000000, 2, 1, a);
		region(1, 1000000, 2, 1);
		region(1, 2000000, 2, 0);
		region(1, 3000000, 2, 1);
		for (int i = 0; i < 2; i++) /* the timer's jitter: 1.2 ms apart */
			tsample(1, 0, 1200000, 3, 1, be);
		region(1, 6500000, 1, 0);
		for (int i = 0; i < 4; i++)
			tsample(2, 1, 2000000, 3, 0, NULL);
		for (int i = 0; i < 2; i++)
			tsample(1, 0, 1000000, 4, 0, g);
		region(1, 11000000, 3, 1);
		tsample(1, 0, 5000000, 4, 0, g2);
		thread_end(1, 13000000, "main", e1);
	} else if (!strncmp(argv[1], "cnt_", 4)) {
		/* invalid counter data (3 header counters), each at the printed offset */
		static const uint64_t d[3] = { 1, 2, 3 };
		thread(1, pid, 0, "main");
		frame(1, 0, 1, addr_of(mk_main, b));
		dsamples(2, 1, 0, 1, 0, 0, d);
		mark = sb.size;
		msgpack_pack_array(&pk, SD_F_SAMPLE_N);
		u64(SD_K_SAMPLE); u64(1); u64(1000000); u64(0); u64(1); u64(1);
		u64(!strcmp(argv[1], "cnt_flag8") ? 8 : 0); u64(0); u64(0);
		if (!strcmp(argv[1], "cnt_long")) {
			msgpack_pack_array(&pk, 4); u64(1); u64(2); u64(3); u64(4);
		} else if (!strcmp(argv[1], "cnt_short")) {
			msgpack_pack_array(&pk, 2); u64(1); u64(2);
		} else if (!strcmp(argv[1], "cnt_type")) {
			msgpack_pack_array(&pk, 3); u64(1); str("2"); u64(3);
		} else if (!strcmp(argv[1], "cnt_region")) {
			msgpack_pack_array(&pk, 3); u64(1); u64(2); u64(3);
			attribute(1, "region", "string", "thread");
			context(1, 0, 1, "load");
			mark = sb.size;
			msgpack_pack_array(&pk, SD_F_REGION_N);
			u64(SD_K_REGION); u64(1); u64(1000); u64(1); u64(1);
			msgpack_pack_array(&pk, 2); u64(1); u64(2);
		} else { /* cnt_flag8: flag 8 and deltas */
			msgpack_pack_array(&pk, 3); u64(1); u64(2); u64(3);
		}
	} else if (!strcmp(argv[1], "papi")) {
		/* one PAPI source perf::TASK-CLOCK@1000000 (unit events): T1 main;alpha 30
		 * samples of weight 1, main;beta 10 samples of weight 2: 50000000 events */
		thread(1, pid, 0, "main");
		frame(1, 0, 1, addr_of(mk_main, b));
		frame(2, 1, 1, addr_of(mk_alpha, b));
		frame(3, 1, 1, addr_of(mk_beta, b));
		samples(30, 1, 0, 2, 1);
		samples(10, 1, 0, 3, 2);
	} else if (!strcmp(argv[1], "counters_end")) {
		/* THREAD_END deltas (3 header counters: voluntary, involuntary, page-faults):
		 *   T1 main (tid pid): 10 samples main;alpha [1,0,2], then THREAD_END [2,1,5]
		 *   T2 blocked (tid pid+1): never sampled, THREAD_END [500,3,40]
		 * Totals: voluntary 512, involuntary 4, page-faults 65; context-switches by
		 * thread: main 13, blocked 503 (516); by function: mk_alpha 10, the rest (506)
		 * at thread ends. */
		static const uint64_t d1[3] = { 1, 0, 2 }, e1[3] = { 2, 1, 5 }, e2[3] = { 500, 3, 40 };
		thread(1, pid, 1000, "main");
		thread(2, pid + 1, 2000, "blocked");
		frame(1, 0, 1, addr_of(mk_main, b));
		frame(2, 1, 1, addr_of(mk_alpha, b));
		dsamples(10, 1, 0, 2, 0, 0, d1);
		thread_end(2, 50000000, "blocked", e2);
		thread_end(1, 60000000, "main", e1);
	} else if (!strcmp(argv[1], "coverage")) {
		/* The coverage account (sources cpu-time@1ms and wall-time@10ms; all ms):
		 *   T1 main (tid pid): 300 samples w1 + 10 samples w2 (320 sampled), 5 wall-time
		 *     samples flag 16 (accounted: not counted), drops ring_full 4, busy 1,
		 *     throttled 3; THREAD_END cpu 350 (user 340, sys 10): 94.12% of user;
		 *     kernel 10, unexplained 350 - 320 - 8 - 10 = 12
		 *   T2 worker (pid+1): no samples, no drops, THREAD_END cpu 50 (no split):
		 *     not sampled 50, 0.00% of cpu
		 *   T3 blocked (pid+2): no samples, drops signals_blocked 100, THREAD_END cpu
		 *     102.5 (user 100, sys 2.5): unexplained 0
		 *   T4 flushed (pid+3): 40 samples, THREAD_CPU 45, then 10 samples, no
		 *     THREAD_END: cpu 45 up to the last flush, sampled 40, 10 after it,
		 *     unexplained 5
		 *   T5 old (pid+4): 7 samples, THREAD_END with an empty cpu map: unknown
		 *   process-wide drops: stopped 2
		 * Total (T1-T4): cpu 547.5, sampled 360 (65.75% of cpu: not every thread has a
		 * user/sys split), drops 110 (signals_blocked 100, ring_full 4, throttled 3,
		 * stopped 2, busy 1), kernel 12.5, not sampled 50, unexplained 15 */
		static const char *const r1[3] = { "ring_full", "busy", "throttled" };
		static const uint64_t c1[3] = { 4, 1, 3 };
		static const char *const r3[1] = { "signals_blocked" };
		static const uint64_t c3[1] = { 100 };
		static const char *const r0[1] = { "stopped" };
		static const uint64_t c0[1] = { 2 };
		thread(1, pid, 1000, "main");
		thread(2, pid + 1, 2000, "worker");
		thread(3, pid + 2, 3000, "blocked");
		thread(4, pid + 3, 4000, "flushed");
		thread(5, pid + 4, 5000, "old");
		frame(1, 0, 1, addr_of(mk_main, b));
		frame(2, 1, 1, addr_of(mk_alpha, b));
		frame(3, 2, 0, 2); /* [off-cpu] */
		samples(300, 1, 0, 2, 1);
		samples(10, 1, 0, 2, 2);
		dsamples(5, 1, 1, 3, 16, 0, NULL);
		drops_kv(1, 3, r1, c1);
		drops_kv(3, 1, r3, c3);
		drops_kv(0, 1, r0, c0);
		samples(40, 4, 0, 2, 1);
		msgpack_pack_array(&pk, SD_F_THREAD_CPU_N); /* THREAD_CPU of T4 */
		u64(SD_K_THREAD_CPU); u64(4); u64(60000000); u64(45000000);
		samples(10, 4, 0, 2, 1);
		samples(7, 5, 0, 2, 1);
		thread_end_cpu(1, 400000000, "main", 350000000, 340000000, 10000000, 1);
		thread_end_cpu(2, 400000000, "worker", 50000000, 0, 0, 0);
		thread_end_cpu(3, 400000000, "blocked", 102500000, 100000000, 2500000, 1);
		msgpack_pack_array(&pk, SD_F_THREAD_END_N); /* THREAD_END of T5: cpu unknown (empty map) */
		u64(SD_K_THREAD_END); u64(5); u64(400000000); str("old"); msgpack_pack_array(&pk, 0);
		msgpack_pack_map(&pk, 0);
	} else if (!strcmp(argv[1], "coverage_split")) {
		/* A user/sys split the samples disprove (cpu-time@1ms; all ms):
		 *   T1 main: 95 samples, THREAD_END cpu 100 (user 10, sys 90): 95 > 10 + 20 + 5,
		 *     so the split is not used: 95.00% of cpu, unexplained 5
		 *   T2 worker: 40 samples, THREAD_END cpu 50 (user 45, sys 5): kept, 88.89% of
		 *     user, kernel 5, unexplained 5
		 * Total: cpu 150, sampled 135: 90.00% of cpu (one split not used), kernel 5,
		 * unexplained 10 */
		thread(1, pid, 1000, "main");
		thread(2, pid + 1, 2000, "worker");
		frame(1, 0, 1, addr_of(mk_main, b));
		frame(2, 1, 1, addr_of(mk_alpha, b));
		samples(95, 1, 0, 2, 1);
		samples(40, 2, 0, 2, 1);
		thread_end_cpu(1, 200000000, "main", 100000000, 10000000, 90000000, 1);
		thread_end_cpu(2, 200000000, "worker", 50000000, 45000000, 5000000, 1);
	} else if (!strcmp(argv[1], "coverage_over")) {
		/* A split a little off (cpu-time@1ms; all ms): T1 main: 44 samples, THREAD_END
		 * cpu 45 (user 43, sys 2): kept (44 is within a fifth of 45 of 43): 102.33% of
		 * user, kernel 2, unexplained -1 (over 1) */
		thread(1, pid, 1000, "main");
		frame(1, 0, 1, addr_of(mk_main, b));
		samples(44, 1, 0, 1, 1);
		thread_end_cpu(1, 200000000, "main", 45000000, 43000000, 2000000, 1);
	} else if (!strcmp(argv[1], "region_drops")) {
		/* SONDE_REGIONS=on with a small ring: 3 samples (T1 main;alpha) and 2 REGION
		 * records (region=outer [1 ms, 2 ms]) recorded; dropped: 5977108 region events
		 * (region_ring_full), 1 sample throttled (T1), 2 samples signals_blocked
		 * (process-wide): 3 of 6 samples (50.00 %), 5977108 of 5977110 region events */
		static const char *const r1[2] = { "region_ring_full", "throttled" };
		static const uint64_t c1[2] = { 5977108, 1 };
		static const char *const r0[1] = { "signals_blocked" };
		static const uint64_t c0[1] = { 2 };
		thread(1, pid, 0, "main");
		attribute(1, "region", "string", "thread");
		context(1, 0, 1, "outer");
		frame(1, 0, 1, addr_of(mk_main, b));
		frame(2, 1, 1, addr_of(mk_alpha, b));
		region(1, 1000000, 1, 1);
		samples(3, 1, 0, 2, 1);
		region(1, 2000000, 1, 0);
		drops_kv(1, 2, r1, c1);
		drops_kv(0, 1, r0, c0);
	} else if (!strncmp(argv[1], "bad_", 4)) {
		/* a record naming what the stream never defined, or with a field of the wrong
		 * type, at the printed offset; everything before it is valid */
		const char *w = argv[1] + 4;
		thread(1, pid, 0, "main");
		attribute(1, "region", "string", "thread");
		context(1, 0, 1, "outer");
		frame(1, 0, 1, addr_of(mk_main, b));
		samples(2, 1, 0, 1, 1);
		mark = sb.size;
		if (!strcmp(w, "sample_thread"))
			samples(1, 2, 0, 1, 1);           /* thread 2 never defined */
		else if (!strcmp(w, "sample_thread0"))
			samples(1, 0, 0, 1, 1);           /* thread 0 is no thread */
		else if (!strcmp(w, "sample_source"))
			samples(1, 1, 2, 1, 1);           /* the header has sources 0 and 1 */
		else if (!strcmp(w, "sample_node"))
			samples(1, 1, 0, 2, 1);           /* node 2 never defined */
		else if (!strcmp(w, "sample_context"))
			csamples(1, 1, 1, 2, 0);          /* context 2 never defined */
		else if (!strcmp(w, "region_thread"))
			region(2, 1000, 1, 1);            /* thread 2 never defined */
		else if (!strcmp(w, "region_node"))
			region(1, 1000, 2, 1);            /* context 2 never defined */
		else if (!strcmp(w, "msgs_peer"))
			messages(1, 4, 4, 1, 8);         /* peer 4 of a world of 4 */
		else if (!strcmp(w, "msgs_rank"))
			messages(4, 4, 1, 1, 8);         /* rank 4 of a world of 4 */
		else if (!strcmp(w, "rstats_traffic")) { /* traffic of 3 values */
			rstats_traffic(1, 1, 10, 20, 3);
		} else if (!strcmp(w, "region_t")) {
			msgpack_pack_array(&pk, SD_F_REGION_COUNTS);       /* t: str */
			u64(SD_K_REGION); u64(1); str("1000"); u64(1); u64(1);
		} else if (!strcmp(w, "region_event")) {
			msgpack_pack_array(&pk, SD_F_REGION_COUNTS);       /* event: nil */
			u64(SD_K_REGION); u64(1); u64(1000); u64(1); msgpack_pack_nil(&pk);
		} else if (!strcmp(w, "thread_cpu")) {
			msgpack_pack_array(&pk, SD_F_THREAD_CPU_N);       /* thread 2 never defined */
			u64(SD_K_THREAD_CPU); u64(2); u64(1000); u64(5000);
		} else if (!strcmp(w, "end_cpu")) {
			msgpack_pack_array(&pk, SD_F_THREAD_END_N);       /* cpu: str */
			u64(SD_K_THREAD_END); u64(1); u64(1000); str("main"); msgpack_pack_array(&pk, 0);
			str("5ms");
		} else if (!strcmp(w, "end_cpu_ns")) {
			msgpack_pack_array(&pk, SD_F_THREAD_END_N);       /* cpu_ns: str */
			u64(SD_K_THREAD_END); u64(1); u64(1000); str("main"); msgpack_pack_array(&pk, 0);
			msgpack_pack_map(&pk, 1); kv_str("cpu_ns", "5");
		} else if (!strcmp(w, "end_reason")) {
			msgpack_pack_array(&pk, SD_F_END_N);       /* reason: int */
			u64(SD_K_END); u64(1000); u64(1); msgpack_pack_map(&pk, 0);
		} else if (!strcmp(w, "end_t")) {
			msgpack_pack_array(&pk, SD_F_END_N);       /* t: str */
			u64(SD_K_END); str("1000"); str("exit"); msgpack_pack_map(&pk, 0);
		} else if (!strcmp(w, "end_stats")) {
			msgpack_pack_array(&pk, SD_F_END_N);       /* stats: array */
			u64(SD_K_END); u64(1000); str("exit"); msgpack_pack_array(&pk, 0);
		} else if (!strcmp(w, "end_signal")) {
			msgpack_pack_array(&pk, SD_F_END_N);       /* stats signal: str */
			u64(SD_K_END); u64(1000); str("signal"); msgpack_pack_map(&pk, 1);
			kv_str("signal", "SIGKILL");
		} else {
			fprintf(stderr, "mkstream: unknown scenario %s\n", argv[1]);
			return 2;
		}
		no_end = 1;
	} else if (!strcmp(argv[1], "corrupt")) {
		/* a valid start, then a record that is not [kind, ...] at a known offset */
		thread(1, pid, 0, "main");
		frame(1, 0, 1, addr_of(mk_main, b));
		samples(2, 1, 0, 1, 1);
		mark = sb.size;
		msgpack_pack_array(&pk, 2);
		str("x"); u64(1);
		samples(2, 1, 0, 1, 1);
	} else if (!strcmp(argv[1], "model")) {
		/* Region timings (REGION_STATS) for the model view: attributes n (int) and
		 * region; for n = 512, 1024, ..., 16384 the contexts n=N and n=N/region=quad,
		 * whose 3 calls take exactly 1000 + n^2 / 4 ns each (so a model must give
		 * t = 0.001 + 2.5e-07 * n^2 ms with R^2 1), and region=quad with no n above it
		 * (2 calls, left out). One thread. */
		thread(1, pid, 1000, "main");
		attribute(1, "n", "int", "thread");
		attribute(2, "region", "string", "thread");
		uint64_t node = 0;
		for (uint64_t n = 512; n <= 16384; n *= 2) {
			context_int(node + 1, 0, 1, (int64_t)n);
			context(node + 2, node + 1, 2, "quad");
			node += 2;
			uint64_t t = 1000 + n * n / 4;
			msgpack_pack_array(&pk, SD_F_RSTATS_COUNTS);
			u64(SD_K_REGION_STATS); u64(1); u64(2000); u64(node); u64(3); u64(3 * t);
			u64(3 * t); u64(t); u64(t); msgpack_pack_double(&pk, 3.0 * (double)t * (double)t);
			u64(0); u64(0);
		}
		context(++node, 0, 2, "quad");
		msgpack_pack_array(&pk, SD_F_RSTATS_COUNTS);
		u64(SD_K_REGION_STATS); u64(1); u64(2000); u64(node); u64(2); u64(2000); u64(2000);
		u64(1000); u64(1000); msgpack_pack_double(&pk, 2e6); u64(0); u64(0);
	} else if (!strcmp(argv[1], "messages")) {
		/* An MPI rank's traffic (world rank 1 of 3): MPI_Send sent 3000 bytes,
		 * MPI_Recv received 500 (REGION_STATS traffic); MESSAGES to peer 2, first 1
		 * message of 100 bytes, then (the totals, superseding) 3 of 3000. */
		thread(1, pid, 1000, "main");
		attribute(1, "mpi", "string", "thread");
		context(1, 0, 1, "MPI_Send");
		context(2, 0, 1, "MPI_Recv");
		rstats_traffic(1, 1, 3000, 0, 2);
		rstats_traffic(1, 2, 0, 500, 2);
		messages(1, 3, 2, 1, 100);
		messages(1, 3, 2, 3, 3000);
	} else if (!strcmp(argv[1], "cycle")) {
		/* a FRAME whose parent is not an earlier node */
		thread(1, pid, 0, "main");
		frame(1, 0, 1, addr_of(mk_main, b));
		mark = sb.size;
		frame(2, 3, 1, addr_of(mk_alpha, b));
		samples(1, 1, 0, 2, 1);
	} else {
		fprintf(stderr, "mkstream: unknown scenario %s\n", argv[1]);
		return 2;
	}
done:
	if (!no_end)
		end();
write:;
	FILE *f = fopen(argv[2], "wb");
	if (!f || fwrite(sb.data, 1, sb.size, f) != sb.size || fclose(f)) {
		perror(argv[2]);
		return 1;
	}
	printf("%zu\n", mark != SIZE_MAX ? mark : sb.size);
	msgpack_sbuffer_destroy(&sb);
	return 0;
}
