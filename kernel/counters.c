/* counters.c - counters whose deltas every sample carries.
 *
 * Called at start (probe, main thread), when a thread begins and ends (open,
 * close; ordinary context) and from the signal handler (read, signal
 * context). Never a silent zero: context switches and migrations happen in
 * the kernel, so with exclude_kernel=1 (all an unprivileged user gets at
 * perf_event_paranoid 2) their perf events open fine and read 0 forever; the
 * probe detects that and takes context switches from getrusage(RUSAGE_THREAD)
 * instead, and marks migrations unavailable. Page faults count with
 * exclude_kernel=1 (the faulting registers are user-mode).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/sys.h"
#include "kernel/kernel.h"

#define DEFAULT_COUNTERS "context-switches,page-faults"

static int perf_open_ev(const struct sd_counter *c, pid_t tid, int group_fd)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = c->type;
	attr.config = c->config;
	attr.config1 = c->config1;
	attr.config2 = c->config2;
	attr.exclude_kernel = (unsigned)c->exclude_kernel;
	attr.exclude_hv = 1;
	attr.disabled = group_fd < 0;
	attr.read_format = PERF_FORMAT_GROUP;
	/* Through libc's syscall() name on purpose, not common/sys.h: the one
	 * system call tests/fault's shim fails this way (never SYS_close here). */
	int fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Opening the event for this thread is the proof that it counts (opening
 * with kernel-side counting is allowed exactly when the kernel counts for
 * this user). The descriptor is kept open until the first thread's own
 * counters are (sd_kernel_counters_probe_release): closing the last event
 * of a kind makes the kernel patch its code on every CPU, and opening the
 * next one patches it again (about 0.1 ms each here). 0 or -errno. */
static int probe_one(struct sd_counters *out, uint64_t config, int exclude_kernel)
{
	struct sd_counter ev = {.type = PERF_TYPE_SOFTWARE, .config = config,
				.exclude_kernel = exclude_kernel};
	int fd = perf_open_ev(&ev, 0, -1);
	if (fd < 0)
		return fd;
	if (out->nprobe_fd < SD_MAX_COUNTERS)
		out->probe_fd[out->nprobe_fd++] = fd;
	else
		sd_sys_close(fd);
	return 0;
}

void sd_kernel_counters_probe_release(struct sd_counters *out)
{
	for (unsigned i = 0; i < out->nprobe_fd; i++)
		sd_sys_close(out->probe_fd[i]);
	out->nprobe_fd = 0;
}

static void add(struct sd_counters *out, const char *name, const char *group, const char *source,
		int kind, uint64_t config, int exclude_kernel)
{
	if (out->n == SD_MAX_COUNTERS)
		return;
	struct sd_counter *c = &out->c[out->n++];
	snprintf(c->name, sizeof c->name, "%s", name);
	snprintf(c->group, sizeof c->group, "%s", group);
	snprintf(c->source, sizeof c->source, "%s", source);
	c->kind = kind;
	c->type = PERF_TYPE_SOFTWARE;
	c->config = config;
	c->exclude_kernel = exclude_kernel;
	if (kind == SD_CTR_PERF)
		out->nperf++;
}

static void unavailable(struct sd_counters *out, const char *name, const char *reason)
{
	if (out->nunavail == SD_MAX_COUNTERS)
		return;
	snprintf(out->unavail_name[out->nunavail], sizeof out->unavail_name[0], "%s", name);
	snprintf(out->unavail_reason[out->nunavail], sizeof out->unavail_reason[0], "%s", reason);
	out->nunavail++;
}

struct known {
	struct sd_counter_known k; /* k.name, k.perf_config: the perf_event */
	int ru[2];                /* rusage fields, -1 if none */
	const char *ru_names[2];
};

static const struct known known[] = {
	{{"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES, 1, "getrusage:ru_nvcsw+ru_nivcsw"},
	 {SD_RU_NVCSW, SD_RU_NIVCSW}, {"voluntary", "involuntary"}},
	{{"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS, 1, NULL}, {-1, -1}, {0, 0}},
	{{"page-faults", PERF_COUNT_SW_PAGE_FAULTS, 0, "getrusage:ru_minflt+ru_majflt"},
	 {SD_RU_FAULTS, -1}, {0, 0}},
	{{"minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN, 0, "getrusage:ru_minflt"},
	 {SD_RU_MINFLT, -1}, {0, 0}},
	{{"major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ, 0, "getrusage:ru_majflt"},
	 {SD_RU_MAJFLT, -1}, {0, 0}},
};

const struct sd_counter_known *sd_kernel_counter_known(size_t i)
{
	return i < sizeof known / sizeof known[0] ? &known[i].k : NULL;
}

int sd_kernel_sw_open(uint64_t config, int exclude_kernel)
{
	struct sd_counter ev = {.type = PERF_TYPE_SOFTWARE, .config = config,
				.exclude_kernel = exclude_kernel};
	return perf_open_ev(&ev, 0, -1);
}

static const char *const ru_field_names[] = {"ru_nvcsw", "ru_nivcsw", "ru_minflt", "ru_majflt",
					     "ru_minflt+ru_majflt"};

/* Where the thread's own rusage has the counter (context switches, faults),
 * it comes from getrusage(RUSAGE_THREAD): exact, per thread, for every user,
 * and it costs a thread no descriptor, no perf_event to open at its start and
 * close at its end (about 10 us a thread here), and the process no probe.
 * Context switches come as two counters, voluntary and involuntary. Only
 * what rusage lacks (migrations) is a perf_event, probed here. */
static void probe_known(const struct known *k, struct sd_counters *out,
			void (*say)(const char *fmt, ...))
{
	char src[48], reason[192];
	if (k->ru[0] >= 0) {
		if (k->ru[1] >= 0) {
			for (int i = 0; i < 2; i++) {
				char name[48];
				snprintf(name, sizeof name, "%s.%s", k->k.name, k->ru_names[i]);
				snprintf(src, sizeof src, "getrusage:%s", ru_field_names[k->ru[i]]);
				add(out, name, k->k.name, src, SD_CTR_RUSAGE, (uint64_t)k->ru[i], 0);
			}
		} else {
			snprintf(src, sizeof src, "getrusage:%s", ru_field_names[k->ru[0]]);
			add(out, k->k.name, k->k.name, src, SD_CTR_RUSAGE, (uint64_t)k->ru[0], 0);
		}
		return;
	}
	/* The perf event with kernel-side counting; with exclude_kernel only
	 * (perf_event_paranoid 2), a kernel-side event would read 0 forever. */
	int r0 = probe_one(out, k->k.perf_config, 0);
	if (r0 >= 0) {
		snprintf(src, sizeof src, "perf_event:%s", k->k.name);
		add(out, k->k.name, k->k.name, src, SD_CTR_PERF, k->k.perf_config, 0);
		return;
	}
	char par[48];
	sd_kernel_paranoid_text(par, sizeof par);
	int nofd = r0 == -EMFILE || r0 == -ENFILE;
	if (nofd)
		snprintf(reason, sizeof reason, "out of descriptors (%s), and no other source exists",
			 strerror(-r0));
	else
		snprintf(reason, sizeof reason,
			 "%.47s: kernel-side events read 0 for this user (%.60s), and no other "
			 "source exists", par, strerror(-r0));
	unavailable(out, k->k.name, reason);
	say("sonde: SONDE_COUNTERS: %s: unavailable: %s (%s; see 'sonde events')", k->k.name, reason,
	    nofd ? "raise RLIMIT_NOFILE" : "run as root or lower kernel.perf_event_paranoid");
}

/* A PAPI event as a counter: PAPI_read is not async-signal-safe, so the
 * event is resolved to its perf_event encoding (sd_kernel_papi_encode: a preset
 * through PAPI to its one native event, the native through libpfm4) and read in
 * the thread's perf group like the kernel counters. */
static void probe_papi(const char *tok, struct sd_counters *out, void (*say)(const char *fmt, ...))
{
	char native[128], reason[128];
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	if (sd_kernel_papi_encode(tok, &attr, native, sizeof native, reason, sizeof reason))
		goto unavailable;
	struct sd_counter probe = {.type = attr.type, .config = attr.config,
				   .config1 = attr.config1, .config2 = attr.config2,
				   .exclude_kernel = 1};
	int fd = perf_open_ev(&probe, 0, -1);
	if (fd < 0) {
		snprintf(reason, sizeof reason, "%s%s", strerror(-fd),
			 fd == -ENOENT || fd == -EOPNOTSUPP ? " (no hardware PMU for it here)" : "");
		goto unavailable;
	}
	sd_sys_close(fd);
	char src[48];
	snprintf(src, sizeof src, "perf_event:%.36s", native);
	add(out, tok, tok, src, SD_CTR_PERF, attr.config, 1);
	struct sd_counter *c = &out->c[out->n - 1];
	c->type = attr.type;
	c->config1 = attr.config1;
	c->config2 = attr.config2;
	return;
unavailable:
	unavailable(out, tok, reason);
	say("sonde: SONDE_COUNTERS: %s: unavailable: %s (see 'sonde events')", tok, reason);
}

void sd_kernel_counters_probe(const char *spec, struct sd_counters *out,
			      void (*say)(const char *fmt, ...))
{
	memset(out, 0, sizeof *out);
	if (!spec)
		spec = DEFAULT_COUNTERS;
	if (!*spec || !strcmp(spec, "none"))
		return;
	char buf[512];
	snprintf(buf, sizeof buf, "%s", spec);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		if (!*tok)
			continue;
		const struct known *k = NULL;
		for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
			if (!strcmp(tok, known[i].k.name))
				k = &known[i];
		int dup = 0;
		for (unsigned i = 0; i < out->n; i++)
			dup |= !strcmp(out->c[i].group, tok);
		if (dup)
			continue;
		int papi = !k && (!strncmp(tok, "PAPI_", 5) || strstr(tok, "::"));
		if (!k && !papi) {
			say("sonde: SONDE_COUNTERS: '%s': unknown counter (use context-switches, "
			    "cpu-migrations, page-faults, minor-faults or major-faults; see 'sonde events')",
			    tok);
			continue;
		}
		/* values it adds: context switches are two (voluntary, involuntary) */
		unsigned need = k && k->ru[0] >= 0 && k->ru[1] >= 0 ? 2 : 1;
		if (out->n + need > SD_MAX_COUNTERS) {
			say("sonde: SONDE_COUNTERS: '%s': too many counters (at most %d values)", tok,
			    SD_MAX_COUNTERS);
			break;
		}
		if (papi)
			probe_papi(tok, out, say);
		else
			probe_known(k, out, say);
	}
}

int sd_kernel_counters_open(const struct sd_counters *c, pid_t tid, int fd_floor, int read_start,
			    struct sd_counters_thread *t)
{
	t->tid = tid;
	t->group_fd = -1;
	t->ok = 0;
	for (unsigned i = 0; i < SD_MAX_COUNTERS; i++)
		t->fds[i] = -1;
	int err = 0;
	/* No O_ASYNC: the owner is never signalled, it names the thread. */
	struct f_owner_ex owner = {.type = F_OWNER_TID, .pid = tid};
	for (unsigned i = 0; i < c->n; i++) {
		if (c->c[i].kind != SD_CTR_PERF)
			continue;
		int fd = perf_open_ev(&c->c[i], tid, t->group_fd);
		if (fd < 0) {
			err = fd;
			goto fail;
		}
		fd = sd_kernel_fd_high(fd, fd_floor);
		if (fcntl(fd, F_SETSIG, SD_KERNEL_MARK_SIG) < 0 ||
		    fcntl(fd, F_SETOWN_EX, &owner) < 0) {
			err = -errno;
			sd_sys_close(fd);
			goto fail;
		}
		t->fds[i] = fd;
		if (t->group_fd < 0)
			t->group_fd = fd;
	}
	if (t->group_fd >= 0 &&
	    ioctl(t->group_fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) < 0) {
		err = -errno;
		goto fail;
	}
	t->ok = 1;
	memset(t->last, 0, sizeof t->last);
	/* rusage values are since the thread began; perf values since now. The
	 * first delta of an rusage counter on an adopted thread may include its
	 * past; on a thread just created both start at its birth. */
	if (read_start)
		sd_kernel_counters_read_sigsafe(c, t, NULL, t->last);
	return 0;
fail:
	sd_kernel_counters_close(t);
	return err;
}

void sd_kernel_counters_close(struct sd_counters_thread *t)
{
	/* A number without the mark was closed behind our back and may be the
	 * program's now, or another thread's counter: forgotten, never closed. */
	for (unsigned i = 0; i < SD_MAX_COUNTERS; i++) {
		if (sd_kernel_fd_marked_sigsafe(t->fds[i], SD_KERNEL_MARK_SIG, t->tid))
			sd_sys_close(t->fds[i]);
		t->fds[i] = -1;
	}
	t->group_fd = -1;
	t->ok = 0;
}

int sd_kernel_counters_read_sigsafe(const struct sd_counters *c, const struct sd_counters_thread *t,
				    const struct rusage *ru, uint64_t *now)
{
	if (!t->ok)
		return -1;
	uint64_t buf[1 + SD_MAX_COUNTERS];
	if (t->group_fd >= 0) {
		if (!sd_kernel_fd_marked_sigsafe(t->group_fd, SD_KERNEL_MARK_SIG, t->tid))
			return -1; /* closed behind our back: the program's or another thread's now */
		ssize_t want = (ssize_t)((1 + c->nperf) * sizeof buf[0]);
		if (sd_sys_read(t->group_fd, buf, (size_t)want) != want || buf[0] != c->nperf)
			return -1;
	}
	struct rusage own;
	unsigned k = 0;
	for (unsigned i = 0; i < c->n; i++) {
		if (c->c[i].kind == SD_CTR_PERF) {
			now[i] = buf[1 + k++];
			continue;
		}
		if (!ru) {
			if (getrusage(RUSAGE_THREAD, &own) != 0)
				return -1;
			ru = &own;
		}
		switch (c->c[i].config) {
		case SD_RU_NVCSW: now[i] = (uint64_t)ru->ru_nvcsw; break;
		case SD_RU_NIVCSW: now[i] = (uint64_t)ru->ru_nivcsw; break;
		case SD_RU_MINFLT: now[i] = (uint64_t)ru->ru_minflt; break;
		case SD_RU_FAULTS: now[i] = (uint64_t)(ru->ru_minflt + ru->ru_majflt); break;
		default: now[i] = (uint64_t)ru->ru_majflt; break;
		}
	}
	return 0;
}
