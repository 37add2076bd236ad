/* sources.c - arming and disarming a thread's sampling sources.
 *
 * Called in ordinary context: from the thread itself when it begins (the
 * pthread_create trampoline, the constructor for the main thread), from the
 * constructor for threads alive before sonde started, and at thread end.
 *
 * cpu-time is a per-thread perf_event task clock delivering the sampling
 * signal to its own thread (exact rate: 1000 signals per CPU-second at 1 ms
 * here). POSIX CPU-time timers fire only on the scheduler tick (250 Hz on
 * this kernel), so they are the fallback where perf_event is refused, with
 * each sample weighted by 1 + overrun. wall-time uses the same clock for
 * the time a thread runs its own code, so that no signal ever reaches a
 * thread blocked in a system call (it would return EINTR); the rest of its
 * elapsed time is accounted by the writer (writer/offcpu.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/sys.h"
#include "kernel/kernel.h"
#include "sampler/sampler.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

static int probe_fd[SD_MAX_SOURCES] = {[0 ... SD_MAX_SOURCES - 1] = -1};
static pid_t probe_tid;

/* cpu-time and wall-time on the same mechanism (both task clocks, or both
 * timers) share one clock per thread (sampler.h: primary/derived). */
static void pick_shared_clock(const struct sd_config *c)
{
	int cpu = -1, wall = -1;
	for (unsigned i = 0; i < c->nsources; i++) {
		const struct sd_source_ops *o = sd_source_ops_of(&c->sources[i]);
		if (o->clocked && !o->off_cpu && cpu < 0)
			cpu = (int)i;
		if (o->clocked && o->off_cpu && wall < 0)
			wall = (int)i;
	}
	if (cpu < 0 || wall < 0 || c->sources[cpu].use_timer != c->sources[wall].use_timer)
		return;
	int cpu_first = c->sources[cpu].period_ns <= c->sources[wall].period_ns;
	sd_rt.primary_src = cpu_first ? cpu : wall;
	sd_rt.derived_src = cpu_first ? wall : cpu;
}

/* Decides, once per process, whether cpu-time can use perf_event, by opening
 * the calling thread's own task clock for each clocked source: the first
 * thread's sources then take these descriptors (sd_sources_open) instead of
 * opening their clocks a second time; what is left is closed by
 * sd_sources_probe_release, after the first thread's sources are open
 * (closing the last per-task event makes the kernel patch its code on every
 * CPU, and the next open patches it back). Then pairs cpu-time and
 * wall-time on one clock where they can (pick_shared_clock). The clocks' probe
 * hook (source_table.c). */
void sd_sources_probe(struct sd_config *cfg)
{
	probe_tid = (pid_t)sd_syscall(SYS_gettid);
	for (unsigned i = 0; i < cfg->nsources; i++) {
		struct sd_source *s = &cfg->sources[i];
		if (!sd_source_ops_of(s)->clocked)
			continue;
		int fd = -1;
		uint32_t m = atomic_load(&sd_rt.start_mult[i]);
		s->use_timer = 1;
		if (!sd_runtime_fd_room_sigsafe(1)) {
			snprintf(s->fallback_reason, sizeof s->fallback_reason,
				 "sonde's share of RLIMIT_NOFILE used up (%d of %ld)", sd_rt.fd_share,
				 sd_rt.fd_limit);
			sd_msg("sonde: %s: perf_event task clock unavailable: no file descriptor left "
			       "within sonde's share of RLIMIT_NOFILE (%d of %ld) (sampling with a POSIX "
			       "CPU-time timer, limited to the scheduler tick; raise RLIMIT_NOFILE for "
			       "exact rates)", s->spec, sd_rt.fd_share, sd_rt.fd_limit);
			continue;
		}
		int err = sd_kernel_clock_open_sigsafe(probe_tid, s->period_ns * (m ? m : 1), cfg->signo,
						       sd_rt.fd_floor, &fd);
		if (err == 0) {
			probe_fd[i] = fd;
			sd_runtime_fd_track_sigsafe(fd, 1); /* counted in sonde's share */
			s->use_timer = 0;
			continue;
		}
		char par[96];
		int nofd = err == -EMFILE || err == -ENFILE;
		sd_kernel_paranoid_text(par, sizeof par);
		snprintf(s->fallback_reason, sizeof s->fallback_reason,
			 "perf_event_open refused: %s (%s)", strerror(-err), par);
		sd_msg("sonde: %s: perf_event task clock unavailable: %s, %s (sampling with a "
		       "POSIX CPU-time timer, limited to the scheduler tick; %s for exact rates)",
		       s->spec, strerror(-err), par,
		       nofd ? "raise RLIMIT_NOFILE" : "lower kernel.perf_event_paranoid");
	}
	pick_shared_clock(cfg);
}

void sd_sources_probe_release(void)
{
	for (unsigned i = 0; i < SD_MAX_SOURCES; i++) {
		if (probe_fd[i] >= 0) {
			sd_runtime_fd_track_sigsafe(probe_fd[i], 0);
			sd_real_close(probe_fd[i]);
		}
		probe_fd[i] = -1;
	}
}

/* The first period of thread tid's source i, drawn uniformly from
 * [lo, period] (sampler.h, phase): a thread's samples then stand for its
 * CPU time in expectation however short it lives (the bias left is under
 * lo / 2 of a period per thread). lo is at least 20 us: the kernel runs a
 * task clock's hrtimer at no less than 10 us, and a first period below that
 * made it signal a new thread every 2 us for milliseconds (measured here on
 * Linux 6.18 with a period of 4.6 us). A mix of the clock, the tid and the
 * source: no state, no lock. */
#define FIRST_PERIOD_MIN_NS 20000u

static uint64_t first_period_ns(pid_t tid, unsigned i, uint64_t period)
{
	uint64_t lo = period / 64 > FIRST_PERIOD_MIN_NS ? period / 64 : FIRST_PERIOD_MIN_NS;
	if (lo >= period)
		return period;
	uint64_t z = sd_mix64(sd_now_ns_sigsafe() ^ ((uint64_t)(uint32_t)tid << 32) ^ i);
	return lo + z % (period - lo + 1);
}

int sd_sources_timer_create(clockid_t clock, struct sigevent *sev, timer_t *id)
{
	if (atomic_fetch_add(&sd_rt.timers, 1) >= sd_rt.timer_share) {
		atomic_fetch_sub(&sd_rt.timers, 1);
		return -EDQUOT; /* sonde's share of the signal quota used up */
	}
	/* by name: tests/fault's shim fails it (the wrapper passes sonde's on,
	 * interpose/signals.c) */
	if (timer_create(clock, sev, id) != 0) {
		int err = -errno;
		atomic_fetch_sub(&sd_rt.timers, 1);
		return err;
	}
	return 0;
}

void sd_sources_timer_delete(timer_t id)
{
	timer_delete(id);
	atomic_fetch_sub(&sd_rt.timers, 1);
}

static int timer_open(struct sd_thread *t, unsigned i, clockid_t clock, pid_t tid)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = sd_rt.cfg.signo;
	sev.sigev_value.sival_int = SD_TIMER_COOKIE + (int)i;
	sev.sigev_notify_thread_id = tid;
	int err = sd_sources_timer_create(clock, &sev, &t->src_timer[i]);
	if (err)
		return err;
	uint64_t p = sd_rt.cfg.sources[i].period_ns * t->mult[i];
	uint64_t first = first_period_ns(tid, i, p);
	struct itimerspec its = {
		.it_interval = {(time_t)(p / 1000000000u), (long)(p % 1000000000u)},
		.it_value = {(time_t)(first / 1000000000u), (long)(first % 1000000000u)},
	};
	if (timer_settime(t->src_timer[i], 0, &its, NULL) < 0) {
		err = -errno;
		sd_sources_timer_delete(t->src_timer[i]);
		return err;
	}
	t->has_timer[i] = 1;
	return 0;
}

/* Thread tid's perf_event task clock for source i, started on its random
 * first period: the probe's descriptor when tid is the thread that probed,
 * else a new one. 0 or -errno; the descriptor in t->src_fd[i]. */
static int clock_start(struct sd_thread *t, unsigned i, pid_t tid)
{
	uint64_t full = sd_rt.cfg.sources[i].period_ns * t->mult[i];
	uint64_t first = first_period_ns(tid, i, full);
	int err;
	if (probe_fd[i] >= 0 && tid == probe_tid) {
		t->src_fd[i] = probe_fd[i]; /* the probe's: this thread's clock already */
		probe_fd[i] = -1;
		err = sd_kernel_period_sigsafe(t->src_fd[i], first);
	} else if (sd_runtime_fd_room_sigsafe(1)) {
		err = sd_kernel_clock_open_sigsafe(tid, first, sd_rt.cfg.signo, sd_rt.fd_floor,
						   &t->src_fd[i]);
	} else {
		err = -EDQUOT; /* sonde's share of descriptors used up (said as such) */
	}
	/* Set before the clock runs: its first sample may come at once. */
	t->phase[i] = first != full;
	if (err == 0) {
		sd_runtime_fd_track_sigsafe(t->src_fd[i], 1); /* counted in sonde's share at once */
		err = sd_kernel_enable_sigsafe(t->src_fd[i], 1);
	}
	if (err && t->src_fd[i] >= 0) {
		sd_runtime_fd_track_sigsafe(t->src_fd[i], 0);
		sd_real_close(t->src_fd[i]);
		t->src_fd[i] = -1;
	}
	if (err)
		t->phase[i] = 0;
	return err;
}

/* Opens and starts every configured source for thread `tid` (the calling
 * thread, or an adopted one), each on its own clock from now: a thread is
 * sampled from its first period, however short it lives. Returns 0 if at
 * least one source runs. */
int sd_sources_open(struct sd_thread *t, pid_t tid)
{
	int running = 0, last_err = 0, papi = 0;
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++) {
		const struct sd_source *s = &sd_rt.cfg.sources[i];
		int err;
		t->src_fd[i] = -1;
		t->has_timer[i] = 0;
		t->phase[i] = 0;
		if (!sd_source_ops_of(s)->clocked) {
			papi++; /* opened by its own mechanism (papi.c) */
			continue;
		}
		if ((int)i == sd_rt.derived_src) {
			running++; /* counted from the primary source's samples (handler.c) */
			continue;
		}
		if (!s->use_timer) {
			err = clock_start(t, i, tid);
			if (err) {
				/* A POSIX timer needs no descriptor and may be allowed
				 * where perf_event no longer is. Tick-bound, but weighted
				 * by its overruns, so totals stay right. */
				int why = err;
				err = timer_open(t, i, sd_kernel_thread_clock(tid), tid);
				if (err == 0 && (why == -EMFILE || why == -ENFILE || why == -EDQUOT))
					sd_say_nofd_sigsafe((int)i, why == -EDQUOT);
				/* ESRCH: a thread already ending (one the writer's scan
				 * adopts as it exits): nothing was refused */
				else if (err == 0 && why != -ESRCH)
					sd_say_refused_sigsafe((int)i, -why);
			}
		} else {
			/* cpu-time, and the on-CPU half of wall-time (its off-CPU half
			 * is accounted by the writer, never signalled). */
			err = timer_open(t, i, sd_kernel_thread_clock(tid), tid);
		}
		if (err)
			last_err = err;
		else
			running++;
	}
	return running || (papi && !last_err) ? 0 : (last_err ? last_err : -EINVAL);
}

/* Stops delivery without releasing anything: used while draining, from any
 * thread, and by the handler once the stream is lost. async-signal-safe (an
 * ioctl and timer_settime). */
void sd_sources_disable_sigsafe(struct sd_thread *t)
{
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++) {
		if (t->src_fd[i] >= 0)
			sd_kernel_enable_sigsafe(t->src_fd[i], 0);
		if (t->has_timer[i]) {
			struct itimerspec off;
			memset(&off, 0, sizeof off);
			timer_settime(t->src_timer[i], 0, &off, NULL);
		}
	}
}

void sd_sources_close(struct sd_thread *t)
{
	for (unsigned i = 0; i < sd_rt.cfg.nsources; i++) {
		if (t->src_fd[i] >= 0) {
			sd_kernel_enable_sigsafe(t->src_fd[i], 0);
			sd_real_close(t->src_fd[i]);
			t->src_fd[i] = -1;
		}
		if (t->has_timer[i]) {
			t->has_timer[i] = 0; /* its signal still queued is stale now */
			sd_sources_timer_delete(t->src_timer[i]);
		}
	}
}
