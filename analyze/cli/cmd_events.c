/*
 * cmd_events.c: `sonde events [--all] [--format text|csv|json]`: what can trigger samples
 * and what can be counted on this machine, for the user running it, found by probing for
 * real (perf_event_open on the calling thread, PAPI event sets) rather than by reading
 * documentation. Each unavailable item carries a one-line reason.
 *
 * The probes mirror the runtime's choices (docs/ENV.md, SONDE_SAMPLE and SONDE_COUNTERS):
 *   cpu-time   perf_event task clock (exclude_kernel=1), else a POSIX CPU-time timer
 *   wall-time  always a POSIX CLOCK_MONOTONIC timer
 *   counters   context switches and faults from getrusage(RUSAGE_THREAD) (exact, per
 *              thread, no descriptor); migrations from perf_event with exclude_kernel=0,
 *              unavailable where only exclude_kernel=1 opens (they happen in the kernel and
 *              would read 0)
 *   PAPI       presets and a few native events (events_papi.c, or events_nopapi.c when
 *              sonde was built without libpapi)
 *
 * The sources listed are the rows of the runtime's own table of source kinds
 * (sampler/source_kinds.c: names, specs, units, default periods), each probed here as
 * its row's kind runs; the text also shows each row's spec and what it stands for.
 *
 * Runs in the CLI's only thread; every descriptor it opens is closed before it returns.
 */
#define _GNU_SOURCE /* sampler/sampler.h: link.h's dl_phdr_info */
#include "analyze/cli/cli.h"
#include "kernel/kernel.h"
#include "sampler/sampler.h"

#include <linux/perf_event.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int sd_events_add(struct sd_events *ev, const char *kind, const char *name, const char *status,
		  const char *source, const char *reason)
{
	if (ev->n == ev->cap) {
		size_t cap = ev->cap ? ev->cap * 2 : 64;
		struct sd_event_row *nr = realloc(ev->rows, cap * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		ev->rows = nr;
		ev->cap = cap;
	}
	struct sd_event_row *r = &ev->rows[ev->n];
	r->kind = strdup(kind), r->name = strdup(name), r->status = strdup(status);
	r->source = strdup(source ? source : ""), r->reason = strdup(reason ? reason : "");
	if (!r->kind || !r->name || !r->status || !r->source || !r->reason) {
		free(r->kind), free(r->name), free(r->status), free(r->source), free(r->reason);
		return -ENOMEM;
	}
	ev->n++;
	return 0;
}

static void events_fini(struct sd_events *ev)
{
	for (size_t i = 0; i < ev->n; i++) {
		struct sd_event_row *r = &ev->rows[i];
		free(r->kind), free(r->name), free(r->status), free(r->source), free(r->reason);
	}
	free(ev->rows);
}

/* Enable fd, make the thread switch and fault a few times, read the count. */
static uint64_t count_activity(int fd)
{
	uint64_t v = 0;
	struct timespec ts = { 0, 200000 };

	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 5; i++) {
		sched_yield();
		nanosleep(&ts, NULL);
	}
	char *page = malloc(1 << 20); /* fresh pages: minor faults */
	if (page) {
		for (size_t i = 0; i < (1 << 20); i += 4096)
			((volatile char *)page)[i] = 1;
		free(page);
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &v, sizeof(v)) != sizeof(v))
		v = 0;
	return v;
}

/* perf_event_paranoid, or -100 when it cannot be read. */
static int read_paranoid(void)
{
	int v = sd_kernel_paranoid();
	return v == SD_PARANOID_UNKNOWN ? -100 : v;
}

/* cpu-time: a perf_event task clock, else the POSIX CPU-time timer it falls back to. */
static int probe_cpu_time(struct sd_events *ev, const char *name, int paranoid)
{
	char why[256];
	int fd = sd_kernel_sw_open(PERF_COUNT_SW_TASK_CLOCK, 1);

	if (fd >= 0) {
		close(fd);
		return sd_events_add(ev, "source", name, "available", "perf_event:task-clock",
				     "perf_event task clock");
	}
	snprintf(why, sizeof(why), "perf_event_open: %s; perf_event_paranoid is %d",
		 strerror(-fd), paranoid);
	return sd_events_add(ev, "source", name, "fallback", "posix-timer:thread-cputime", why);
}

static int probe_wall_time(struct sd_events *ev, const char *name, int paranoid)
{
	(void)paranoid;
	return sd_events_add(ev, "source", name, "available", "posix-timer:monotonic",
			     "POSIX timer");
}

/* How each kind with a name of its own is probed, by the row's index; the kinds named by
 * their event (PAPI) are probed event by event (events_papi.c). */
static int (*const probe_kind[SD_SRC_NKINDS])(struct sd_events *, const char *, int) = {
	[SD_SRC_CPU] = probe_cpu_time,
	[SD_SRC_WALL] = probe_wall_time,
};

static int probe_sources(struct sd_events *ev, int paranoid)
{
	for (unsigned k = 0; k < SD_SRC_NKINDS; k++) {
		const struct sd_source_kind_desc *d = &sd_source_kinds[k];
		if (d->name && probe_kind[k] && probe_kind[k](ev, d->name, paranoid))
			return -ENOMEM;
	}
	return 0;
}

/* The spec of every kind of source (sampler/source_kinds.c), after the sources' rows. */
static void print_specs(FILE *out, size_t w)
{
	for (unsigned k = 0; k < SD_SRC_NKINDS; k++) {
		const struct sd_source_kind_desc *d = &sd_source_kinds[k];
		fprintf(out, "  %-*s  %s (unit %s%s%s)\n", (int)w, d->syntax, d->summary,
			d->unit, d->default_spec ? ", default " : "",
			d->default_spec ? d->default_spec : "");
	}
	fprintf(out, "  %-*s  %s\n", (int)w, "PERIOD", sd_source_period_forms);
}

/* The counters sonde knows (kernel/counters.c's table): from getrusage where the
 * thread's rusage has them, else a perf_event probed here as the runtime would open it,
 * with kernel-side counting, then without (where a kernel-side event reads 0). */
static int probe_counters(struct sd_events *ev, int paranoid)
{
	char src[96], why[320];
	const struct sd_counter_known *k;

	for (size_t i = 0; (k = sd_kernel_counter_known(i)); i++) {
		if (k->rusage) {
			if (sd_events_add(ev, "counter", k->name, "available", k->rusage,
					  "RUSAGE_THREAD: exact, per thread, no descriptor"))
				return -ENOMEM;
			continue;
		}
		int k0 = sd_kernel_sw_open(k->perf_config, 0), k1 = -1, zero = 0;
		if (k0 >= 0) {
			close(k0);
			snprintf(src, sizeof(src), "perf_event:%s", k->name);
			if (sd_events_add(ev, "counter", k->name, "available", src,
					  "perf_event (exclude_kernel=0)"))
				return -ENOMEM;
			continue;
		}
		k1 = sd_kernel_sw_open(k->perf_config, 1);
		if (k1 >= 0) {
			/* context switches and migrations happen in the kernel: with
			 * exclude_kernel=1 they read 0 (perf_event_paranoid 2) */
			if (k->kernel_side)
				zero = count_activity(k1) == 0;
			close(k1);
		}
		if (k1 >= 0 && zero)
			snprintf(why, sizeof(why), "perf_event_paranoid=%d hides kernel-side counts: "
				 "with exclude_kernel=1 it reads 0", paranoid);
		else
			snprintf(why, sizeof(why), "perf_event_paranoid=%d hides kernel-side counts: "
				 "perf_event_open with exclude_kernel=0: %s", paranoid, strerror(-k0));
		char hint[400];
		snprintf(hint, sizeof(hint), "%s; run as root or set kernel.perf_event_paranoid=1",
			 why);
		if (sd_events_add(ev, "counter", k->name, "unavailable", "", hint))
			return -ENOMEM;
	}
	return 0;
}

static const char *section_title(const char *kind)
{
	return !strcmp(kind, "source") ? "sources" : !strcmp(kind, "counter") ? "counters"
	       : !strcmp(kind, "papi-preset") ? "papi presets" : !strcmp(kind, "papi-native")
	       ? "papi native" : "papi";
}

/* Text: one section per kind; unavailable PAPI presets only with --all, else counted. */
static void print_text(FILE *out, const struct sd_events *ev, int all, int paranoid, uid_t uid)
{
	size_t w = 8;
	const char *last = NULL;

	for (size_t i = 0; i < ev->n; i++)
		if (strlen(ev->rows[i].name) > w)
			w = strlen(ev->rows[i].name);
	if (w > 40)
		w = 40;
	fprintf(out, "sonde events: uid %u, perf_event_paranoid %d\n", (unsigned)uid, paranoid);
	for (size_t i = 0; i < ev->n; i++) {
		const struct sd_event_row *r = &ev->rows[i];
		int preset = !strcmp(r->kind, "papi-preset");
		if (!last || strcmp(last, r->kind)) {
			if (last && !strcmp(last, "source"))
				print_specs(out, w);
			fprintf(out, "\n%s:\n", section_title(r->kind));
			last = r->kind;
			if (preset && !all) {
				size_t nun = 0, same = 0;
				const char *common = NULL;
				for (size_t j = i; j < ev->n && !strcmp(ev->rows[j].kind, r->kind); j++) {
					if (!strcmp(ev->rows[j].status, "available"))
						continue;
					nun++;
					if (!common)
						common = ev->rows[j].reason;
					same += !strcmp(common, ev->rows[j].reason);
				}
				if (nun)
					fprintf(out, "  (%zu unavailable, %s%s; --all lists them)\n", nun,
						same == nun ? "all: " : "most: ", common);
			}
		}
		if (preset && !all && strcmp(r->status, "available"))
			continue;
		if (!strcmp(r->kind, "counter") && !strcmp(r->status, "available") &&
		    strncmp(r->source, "perf_event:", 11))
			fprintf(out, "  %-*s  getrusage (%s)\n", (int)w, r->name, r->reason);
		else if (!strcmp(r->kind, "counter") && !strcmp(r->status, "available"))
			fprintf(out, "  %-*s  perf_event\n", (int)w, r->name);
		else if (!strcmp(r->status, "available"))
			fprintf(out, "  %-*s  available (%s)\n", (int)w, r->name,
				r->reason[0] ? r->reason : r->source);
		else if (!strcmp(r->status, "fallback"))
			fprintf(out, "  %-*s  fallback: POSIX CPU-time timer (%s)\n", (int)w, r->name,
				r->reason);
		else
			fprintf(out, "  %-*s  %s (%s)\n", (int)w, r->name, r->status, r->reason);
	}
	if (last && !strcmp(last, "source"))
		print_specs(out, w);
}

int sd_cmd_events(int argc, char **argv)
{
	static const char usage[] = "usage: sonde events [--all] [--format text|csv|json]";
	struct sd_events ev = { 0 };
	int all = 0, fmt = 0, code = SD_EXIT_IO;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			printf("%s\n\nLists the sampling sources, counters and PAPI events that work on "
			       "this machine for this user,\nprobing each one; columns: docs/ENV.md "
			       "('sonde events').\n\noptions:\n"
			       "  --all                     also what does not work here, with why\n"
			       "  --format text|csv|json    the output format (default text)\n"
			       "  -h, --help                this text\n", usage);
			return SD_EXIT_OK;
		}
		if (!strcmp(a, "--all")) {
			all = 1;
			continue;
		}
		if (!strncmp(a, "--format=", 9))
			val = a + 9;
		else if (!strcmp(a, "--format") && i + 1 < argc)
			val = argv[++i];
		if (val && (!strcmp(val, "text") || !strcmp(val, "csv") || !strcmp(val, "json"))) {
			fmt = val[0] == 't' ? 0 : val[0] == 'c' ? 1 : 2;
			continue;
		}
		return sd_error(SD_EXIT_USAGE, "events: %s '%s' (%s)", val ? "unknown format" :
				"unknown option", val ? val : a, usage);
	}
	int paranoid = read_paranoid();
	if (probe_sources(&ev, paranoid) || probe_counters(&ev, paranoid) ||
	    sd_events_papi(&ev, paranoid))
		goto nomem;
	if (fmt == 0) {
		print_text(stdout, &ev, all, paranoid, getuid());
	} else if (fmt == 1) {
		fputs("kind,name,status,source,reason\n", stdout);
		for (size_t i = 0; i < ev.n; i++) {
			const struct sd_event_row *r = &ev.rows[i];
			sd_csv_str(stdout, r->kind), putchar(',');
			sd_csv_str(stdout, r->name), putchar(',');
			sd_csv_str(stdout, r->status), putchar(',');
			sd_csv_str(stdout, r->source), putchar(',');
			sd_csv_str(stdout, r->reason), putchar('\n');
		}
	} else {
		printf("{\"uid\":%u,\"perf_event_paranoid\":%d,\"events\":[", (unsigned)getuid(),
		       paranoid);
		for (size_t i = 0; i < ev.n; i++) {
			const struct sd_event_row *r = &ev.rows[i];
			const char *f[] = { "kind", r->kind, "name", r->name, "status", r->status,
					    "source", r->source, "reason", r->reason };
			fputs(i ? ",\n{" : "\n{", stdout);
			for (int k = 0; k < 10; k += 2) {
				printf("%s\"%s\":", k ? "," : "", f[k]);
				sd_json_str(stdout, f[k + 1], strlen(f[k + 1]));
			}
			putchar('}');
		}
		fputs("]}\n", stdout);
	}
	code = SD_EXIT_OK;
	if (fflush(stdout) || ferror(stdout))
		code = sd_error(SD_EXIT_IO, "events: stdout: %s", strerror(errno));
	goto out;
nomem:
	code = -ENOMEM;
out:
	events_fini(&ev);
	return code;
}
