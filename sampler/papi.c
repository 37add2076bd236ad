/* papi.c - sampling on PAPI event overflow (SONDE_SAMPLE=NAME@COUNT).
 *
 * Called in ordinary context: at start (probe: library and thread support,
 * each event checked on the main thread), when a thread begins and ends
 * (its own event set: register, add, overflow, start / stop, destroy,
 * unregister), around fork and exec. PAPI owns its overflow signal
 * (SIGRTMIN+2 for the perf_event component) and its handler; sonde's
 * overflow callback runs inside it, in signal context, and takes the sample
 * like sonde's own handler does. PAPI is never called from signal context.
 * Threads alive before sonde started get no PAPI event set (PAPI cannot
 * overflow-sample an attached set).
 */
#define _GNU_SOURCE
#include <papi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/sys.h"
#include "kernel/kernel.h"
#include "sampler/sampler.h"


static int papi_on; /* PAPI initialised and at least one PAPI source kept */
static const struct sd_papi_lib *P; /* loaded when a PAPI source is asked for */

static unsigned long thread_id(void)
{
	return (unsigned long)sd_syscall(SYS_gettid);
}

/* PAPI's overflow dispatch, in signal context. async-signal-safe (it reads
 * the event set's overflow mapping set up before the thread could sample). */
static void on_overflow(int es, void *address, long long vector, void *context)
{
	(void)address;
	struct sd_thread *t = sd_tls_thread;
	if (!t || t->papi_es != es || !context)
		return;
	/* With one PAPI source the answer is known; with several, the lowest
	 * overflowing event index picks it (PAPI sets one bit per counter). */
	int src = t->papi_src[0], at = 0;
	if (t->papi_src[1] >= 0) {
		int idx[SD_MAX_SOURCES], n = SD_MAX_SOURCES;
		if (P->PAPI_get_overflow_event_index(es, vector, idx, &n) == PAPI_OK && n > 0 &&
		    idx[0] >= 0 && idx[0] < SD_MAX_SOURCES && t->papi_src[idx[0]] >= 0)
			src = t->papi_src[at = idx[0]];
	}
	if (src < 0)
		return;
	t->papi_seen[at]++;
	sd_handler_take_sigsafe(t, src, 1, context);
}

/* A source of papi.c's row (source_table.c). */
static int is_papi(const struct sd_source *s)
{
	return s->kind == SD_SRC_PAPI;
}

/* Which PAPI component an event name belongs to, found without PAPI's name
 * lookup (which fails for every event of a disabled component): a
 * "component:::event" prefix names the component, a libpfm4 "pmu::event"
 * prefix one of the component's PMUs, and a bare name (a preset, or a native
 * event of the default PMU) the CPU component, perf_event. -1 if none. */
static int event_component(const char *event)
{
	const char *sep = strstr(event, ":::");
	size_t plen = sep ? (size_t)(sep - event) : 0;
	int pmu = 0;
	if (!sep && (sep = strstr(event, "::")))
		plen = (size_t)(sep - event), pmu = 1;
	if (!sep)
		return P->PAPI_get_component_index("perf_event");
	int n = P->PAPI_num_components();
	for (int c = 0; c < n; c++) {
		const PAPI_component_info_t *ci = P->PAPI_get_component_info(c);
		if (!ci)
			continue;
		if ((strlen(ci->short_name) == plen && !strncmp(ci->short_name, event, plen)) ||
		    (strlen(ci->name) == plen && !strncmp(ci->name, event, plen)))
			return c;
		for (int k = 0; pmu && k < PAPI_PMU_MAX && ci->pmu_names[k]; k++)
			if (strlen(ci->pmu_names[k]) == plen && !strncmp(ci->pmu_names[k], event, plen))
				return c;
	}
	return -1;
}

/* If the event's component is disabled (perf_event in a VM where libpfm4
 * finds no PMU: then even software events such as perf::TASK-CLOCK are
 * refused), says so in why: "PAPI's perf_event component is disabled: REASON". */
static int component_disabled(const char *event, int code, int have_code, char *why,
			      size_t len)
{
	int c = have_code ? P->PAPI_get_event_component(code) : -1;
	if (c < 0)
		c = event_component(event);
	const PAPI_component_info_t *ci = c >= 0 ? P->PAPI_get_component_info(c) : NULL;
	if (!ci || !ci->disabled)
		return 0;
	const char *reason = ci->disabled_reason[0] ? ci->disabled_reason : P->PAPI_strerror(ci->disabled);
	if (!strncmp(reason, "Error ", 6)) /* PAPI's reasons often start so */
		reason += 6;
	snprintf(why, len, "PAPI's %s component is disabled: %s", ci->name, reason);
	return 1;
}

/* Checks one event on this thread: it can be added and overflow-sampled. */
static int check_event(int code, uint64_t threshold, char *why, size_t len)
{
	int es = PAPI_NULL, r;
	if ((r = P->PAPI_create_eventset(&es)) != PAPI_OK)
		goto out;
	if ((r = P->PAPI_add_event(es, code)) != PAPI_OK)
		goto out_es;
	if ((r = P->PAPI_overflow(es, code, (int)threshold, 0, on_overflow)) != PAPI_OK)
		goto out_es;
	if ((r = P->PAPI_start(es)) == PAPI_OK)
		P->PAPI_stop(es, NULL);
	P->PAPI_overflow(es, code, 0, 0, on_overflow);
out_es:
	P->PAPI_cleanup_eventset(es);
	P->PAPI_destroy_eventset(&es);
out:
	if (r != PAPI_OK)
		snprintf(why, len, "%s", P->PAPI_strerror(r));
	return r;
}

void sd_papi_probe(struct sd_config *cfg)
{
	int any = 0;
	for (unsigned i = 0; i < cfg->nsources; i++)
		any |= is_papi(&cfg->sources[i]);
	if (!any)
		return;
	const char *why_not = NULL;
	if (!(P = sd_kernel_papi_lib(&why_not))) {
		sd_msg("sonde: PAPI: cannot load the library: %s (PAPI sources dropped; install "
		       "libpapi7.0 or sample with cpu-time)", why_not);
		for (unsigned i = cfg->nsources; i-- > 0;)
			if (is_papi(&cfg->sources[i]))
				sd_source_drop(cfg, i);
		return;
	}
	int r = P->PAPI_library_init(PAPI_VER_CURRENT);
	if (r != PAPI_VER_CURRENT || P->PAPI_thread_init(thread_id) != PAPI_OK) {
		sd_msg("sonde: PAPI: cannot initialise: %s (PAPI sources dropped; see 'sonde events')",
		       r < 0 ? P->PAPI_strerror(r) : "version mismatch");
		for (unsigned i = cfg->nsources; i-- > 0;)
			if (is_papi(&cfg->sources[i]))
				sd_source_drop(cfg, i);
		return;
	}
	unsigned npapi = 0;
	for (unsigned i = cfg->nsources; i-- > 0;) {
		struct sd_source *s = &cfg->sources[i];
		if (!is_papi(s))
			continue;
		char why[2 * PAPI_HUGE_STR_LEN];
		int known = P->PAPI_event_name_to_code(s->event, &s->papi_code) == PAPI_OK;
		if (component_disabled(s->event, s->papi_code, known, why, sizeof why)) {
			sd_msg("sonde: %s: %s (sample with cpu-time@1ms; see 'sonde events')", s->event,
			       why);
			sd_source_drop(cfg, i);
			continue;
		}
		if (!known) {
			sd_msg("sonde: %s: unknown PAPI event (see 'sonde events' for the events of this "
			       "machine)", s->event);
			sd_source_drop(cfg, i);
			continue;
		}
		if (check_event(s->papi_code, s->period_ns, why, sizeof why) != PAPI_OK) {
			sd_msg("sonde: %s: event not available on this CPU: %s (try perf::TASK-CLOCK or "
			       "cpu-time@1ms; see 'sonde events')", s->event, why);
			sd_source_drop(cfg, i);
			continue;
		}
		npapi++;
	}
	papi_on = npapi > 0;
}

int sd_papi_thread_open(struct sd_thread *t)
{
	t->papi_es = PAPI_NULL;
	for (unsigned i = 0; i < SD_MAX_SOURCES; i++)
		t->papi_src[i] = -1, t->papi_seen[i] = 0;
	if (!papi_on)
		return 0;
	int es = PAPI_NULL, r, n = 0;
	if ((r = P->PAPI_register_thread()) != PAPI_OK || (r = P->PAPI_create_eventset(&es)) != PAPI_OK)
		goto fail;
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++) {
		const struct sd_source *s = &sd_rt.cfg.sources[i];
		if (!is_papi(s))
			continue;
		if ((r = P->PAPI_add_event(es, s->papi_code)) != PAPI_OK ||
		    (r = P->PAPI_overflow(es, s->papi_code, (int)s->period_ns, 0, on_overflow)) != PAPI_OK)
			goto fail;
		t->papi_src[n++] = (int)i;
	}
	t->papi_es = es;
	if ((r = P->PAPI_start(es)) != PAPI_OK) {
		t->papi_es = PAPI_NULL;
		goto fail;
	}
	return 0;
fail:
	if (es != PAPI_NULL) {
		P->PAPI_cleanup_eventset(es);
		P->PAPI_destroy_eventset(&es);
	}
	for (unsigned i = 0; i < SD_MAX_SOURCES; i++)
		t->papi_src[i] = -1;
	static _Atomic int said;
	if (!atomic_exchange(&said, 1))
		sd_msg("sonde: thread %d: PAPI sampling not started: %s (this thread has no PAPI "
		       "samples; PAPI limits such as too many events are reported here)",
		       (int)t->tid, P->PAPI_strerror(r));
	return -1;
}

/* Overflows the kernel counted but never signalled: each source's count
 * over its period, less the overflows PAPI dispatched to us, counted as
 * dropped samples (signal_lost). Seen on kernels where two sampling events
 * of one thread (sonde's cpu-time clock and a PAPI one) lose signals of one
 * of them: without this the PAPI source's samples would silently stand for
 * less than the thread ran. v: the set's values, by set index. */
static void account_lost(struct sd_thread *t, const long long *v)
{
	for (unsigned i = 0; i < SD_MAX_SOURCES && t->papi_src[i] >= 0; i++) {
		uint64_t period = sd_rt.cfg.sources[t->papi_src[i]].period_ns;
		uint64_t due = v[i] > 0 && period ? (uint64_t)v[i] / period : 0;
		if (due > t->papi_seen[i])
			sd_ring_drops_add(t->ring, SD_DROP_SIGNAL_LOST, due - t->papi_seen[i]);
		t->papi_seen[i] = (uint32_t)due;
	}
}

void sd_papi_thread_account(struct sd_thread *t)
{
	long long v[SD_MAX_SOURCES] = {0};
	if (papi_on && t && t->papi_es != PAPI_NULL && P->PAPI_read(t->papi_es, v) == PAPI_OK)
		account_lost(t, v);
}

void sd_papi_thread_close(struct sd_thread *t)
{
	if (!papi_on || t->papi_es == PAPI_NULL)
		return;
	int es = t->papi_es;
	t->papi_es = PAPI_NULL;
	long long v[SD_MAX_SOURCES] = {0};
	if (P->PAPI_stop(es, v) == PAPI_OK)
		account_lost(t, v);
	P->PAPI_cleanup_eventset(es);
	P->PAPI_destroy_eventset(&es);
	P->PAPI_unregister_thread();
}

/* exec: stop the calling thread's counters (their descriptors would
 * otherwise signal the new image), or start them again if exec failed. */
void sd_papi_exec_prepare(struct sd_thread *t, int stop)
{
	if (!papi_on || !t || t->papi_es == PAPI_NULL)
		return;
	if (stop)
		P->PAPI_stop(t->papi_es, NULL);
	else
		P->PAPI_start(t->papi_es);
}

/* In a forked child, PAPI's state describes the parent's threads: start over
 * for the one thread there is. */
void sd_papi_fork_child(void)
{
	if (!papi_on)
		return;
	P->PAPI_shutdown();
	if (P->PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT ||
	    P->PAPI_thread_init(thread_id) != PAPI_OK) {
		papi_on = 0;
		return;
	}
	/* Native event codes are handed out at initialisation: look them up
	 * again. */
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++) {
		struct sd_source *s = &sd_rt.cfg.sources[i];
		if (is_papi(s) && P->PAPI_event_name_to_code(s->event, &s->papi_code) != PAPI_OK)
			papi_on = 0;
	}
}
