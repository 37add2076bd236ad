/* query.c - the query entry points of include/sonde.h that ask the sampler and
 * the writer (sonde_rt_profile_top, sonde_rt_flush; region queries are the
 * annotate component's, annotate/api.c).
 *
 * Called by the program, in any of its threads, ordinary context; never from
 * a signal handler (they take the writer's lock and the loader's). sonde's
 * signals are blocked meanwhile, so a sample of the calling thread cannot
 * interrupt it while it holds the writer's lock.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/sonde.h"
#include "sampler/sampler.h"
#include "mem/mem.h"

struct fn { char name[120]; uint64_t samples; };

static int by_samples(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct fn *)a)->name, ((const struct fn *)b)->name);
}

/* The function (or module+offset) an innermost PC is in, as the loader knows it. */
static void name_of(uint64_t pc, char *buf, size_t len)
{
	Dl_info di;
	if (dladdr((void *)(uintptr_t)pc, &di) && di.dli_sname) {
		snprintf(buf, len, "%s", di.dli_sname);
	} else if (di.dli_fname) {
		const char *base = strrchr(di.dli_fname, '/');
		snprintf(buf, len, "%s+0x%llx", base ? base + 1 : di.dli_fname,
			 (unsigned long long)(pc - (uintptr_t)di.dli_fbase));
	} else {
		snprintf(buf, len, "0x%llx", (unsigned long long)pc);
	}
}

SONDE_API int sonde_rt_profile_top(struct sonde_func *out, int n)
{
	if (atomic_load(&sd_rt.state) != SD_RUNNING || !out || n < 0)
		return SONDE_UNAVAILABLE;
	sigset_t old;
	sd_runtime_block_signals(&old);
	struct sd_top_pc *pcs;
	size_t npc = sd_writer_leaf_pcs(&pcs);
	sd_runtime_restore_signals(&old);
	struct fn *f = npc ? sd_mem_alloc(npc * sizeof *f) : NULL;
	if (!f) {
		sd_mem_free(pcs);
		return 0;
	}
	for (size_t i = 0; i < npc; i++) {
		name_of(pcs[i].pc, f[i].name, sizeof f[i].name);
		f[i].samples = pcs[i].samples;
	}
	sd_mem_free(pcs);
	/* one entry per function: sort by name, sum runs, then most samples first */
	qsort(f, npc, sizeof *f, by_name);
	size_t k = 0;
	for (size_t i = 0; i < npc; i++) {
		if (k && !strcmp(f[k - 1].name, f[i].name))
			f[k - 1].samples += f[i].samples;
		else
			f[k++] = f[i];
	}
	qsort(f, k, sizeof *f, by_samples);
	int m = (size_t)n < k ? n : (int)k;
	for (int i = 0; i < m; i++) {
		memcpy(out[i].name, f[i].name, sizeof out[i].name);
		out[i].samples = f[i].samples;
	}
	sd_mem_free(f);
	return m;
}

SONDE_API int sonde_rt_flush(void)
{
	if (atomic_load(&sd_rt.state) != SD_RUNNING)
		return SONDE_UNAVAILABLE;
	sigset_t old;
	sd_runtime_block_signals(&old);
	int r = sd_writer_flush_now();
	sd_runtime_restore_signals(&old);
	return r == 0 ? SONDE_OK : SONDE_UNAVAILABLE;
}
