/* kernel.h - the kernel component's interface: what sonde asks of the
 * kernel per thread. perf_event task clocks (the cpu-time sampling source)
 * and counter groups, thread CPU clocks, the counters read from getrusage,
 * the probe of what this machine allows (perf_event_paranoid), descriptor
 * marks that survive a program closing sonde's descriptors, and PAPI and
 * libpfm4 loaded on first use (papi_dl.c).
 *
 * All functions run in ordinary context unless marked _sigsafe.
 */
#ifndef SONDE_KERNEL_H
#define SONDE_KERNEL_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Opens a task-clock (user time only) event on thread `tid` that overflows
 * every period_ns and delivers signal `signo` to that very thread. The fd is
 * close-on-exec and moved to >= fd_floor when possible. Returns 0 and the fd
 * in *fd_out, or -errno (EACCES/EPERM: refused by perf_event_paranoid or
 * seccomp; ENOENT/ENOSYS: no perf_event; EMFILE: out of descriptors).
 * async-signal-safe (system calls only). */
int sd_kernel_clock_open_sigsafe(pid_t tid, uint64_t period_ns, int signo, int fd_floor, int *fd_out);

/* Starts or stops the event without closing it. async-signal-safe (ioctl). */
int sd_kernel_enable_sigsafe(int fd, int on);
/* Changes the sampling period of a running event (PERF_EVENT_IOC_PERIOD).
 * 0 or -errno. async-signal-safe (ioctl). */
int sd_kernel_period_sigsafe(int fd, uint64_t period);

/* The CPU-time clock (user + system) of any thread of this process, by tid
 * (the kernel's MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)), and its reading in
 * ns: 0, or -errno (EINVAL: the thread is gone). async-signal-safe. */
static inline clockid_t sd_kernel_thread_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 6u);
}
int sd_kernel_thread_cpu_ns(pid_t tid, uint64_t *out);
/* cpu_ns of thread tid (of this process) split into user and system time in
 * the proportion of the kernel's own split (/proc/self/task/TID/stat utime
 * and stime, what getrusage(RUSAGE_THREAD) reports on the thread itself):
 * for threads still running when the process ends. 0, or -errno (-ENODATA
 * when the kernel has no split yet). Ordinary context. */
int sd_kernel_thread_cpu_split(pid_t tid, uint64_t cpu_ns, uint64_t *user_ns, uint64_t *sys_ns);

/* Moves sonde's descriptor fd to at least floor (close-on-exec), out of the
 * program's low range; a floor at or above the soft RLIMIT_NOFILE (below the
 * hard one) is reached by raising the soft limit for that one call (perf.c);
 * returns the descriptor to use (fd itself if it cannot be moved). Ordinary
 * context. */
int sd_kernel_fd_high(int fd, int floor);

/* Is fd one of sonde's descriptors for thread tid: F_SETSIG sig and owner
 * F_OWNER_TID tid, as sd_kernel_clock_open_sigsafe and sd_kernel_counters_open leave
 * them? 1 or 0. The signal alone tells sonde's perf descriptors from the
 * program's; the owner tells one thread's from another's: after a raw
 * close_range, a descriptor re-armed or opened for one thread may take the
 * number another thread's record still holds. An owner that has exited
 * reads as 0: taken as tid's when tid is gone too. async-signal-safe (fcntl,
 * tgkill; may set errno). */
int sd_kernel_fd_marked_sigsafe(int fd, int sig, pid_t tid);

/* Reads /proc/sys/kernel/perf_event_paranoid; returns the level (-1 is one)
 * or SD_PARANOID_UNKNOWN (errno says why: out of descriptors, say). */
#define SD_PARANOID_UNKNOWN (-1000)
int sd_kernel_paranoid(void);
/* "perf_event_paranoid=N", or "perf_event_paranoid unreadable: WHY", in buf. */
const char *sd_kernel_paranoid_text(char *buf, size_t len);

/* A disabled software perf_event of the calling thread (kernel-side counts
 * too unless exclude_kernel): the descriptor, or -errno. What a probe opens
 * to learn whether this user may count it (`sonde events`). */
int sd_kernel_sw_open(uint64_t config, int exclude_kernel);

/* The counters sonde knows by name (SONDE_COUNTERS, `sonde events`), i from
 * 0 up; NULL past the last. `rusage`: where getrusage(RUSAGE_THREAD) has it
 * ("getrusage:ru_minflt+ru_majflt"), NULL when only a perf_event counts it;
 * `kernel_side`: it happens in the kernel, so with exclude_kernel it reads 0. */
struct sd_counter_known {
	const char *name;
	uint64_t perf_config;
	int kernel_side;
	const char *rusage;
};
const struct sd_counter_known *sd_kernel_counter_known(size_t i);

/* ---- counters in every sample ------------------------------------------ */

#define SD_MAX_COUNTERS 8

enum sd_counter_kind { SD_CTR_PERF, SD_CTR_RUSAGE };
enum sd_rusage_field { SD_RU_NVCSW, SD_RU_NIVCSW, SD_RU_MINFLT, SD_RU_MAJFLT, SD_RU_FAULTS };

struct sd_counter {
	char name[48];   /* as written in the stream, e.g. context-switches.voluntary */
	char group[32];  /* as asked for in SONDE_COUNTERS */
	char source[48]; /* perf_event:context-switches, getrusage:ru_nvcsw, ... */
	int kind;        /* enum sd_counter_kind */
	uint32_t type;   /* perf: PERF_TYPE_* */
	uint64_t config; /* perf: event config; rusage: enum sd_rusage_field */
	uint64_t config1, config2;
	int exclude_kernel;
};

struct sd_counters {
	unsigned n;
	struct sd_counter c[SD_MAX_COUNTERS];
	unsigned nperf;          /* how many are perf_event (read as one group) */
	unsigned nunavail;
	char unavail_name[SD_MAX_COUNTERS][32];
	char unavail_reason[SD_MAX_COUNTERS][192];
	int probe_fd[SD_MAX_COUNTERS]; /* kept open until the first thread's are */
	unsigned nprobe_fd;
};

/* Every counter descriptor carries this F_SETSIG value as a mark (never
 * delivered: O_ASYNC is not set on them), and every sampling descriptor the
 * sampling signal: a descriptor number that no longer carries it was closed
 * behind sonde's back (a raw close_range) and may be the program's now. Both
 * also carry their thread as owner (F_SETOWN_EX F_OWNER_TID): a number that
 * carries the mark with another owner is another thread's (see
 * sd_kernel_fd_marked_sigsafe). */
#define SD_KERNEL_MARK_SIG 64

/* A thread's counter descriptors and last values. */
struct sd_counters_thread {
	pid_t tid;               /* the thread they count (owner of every fd) */
	int group_fd;            /* -1 when the perf counters are not open */
	int fds[SD_MAX_COUNTERS];
	int ok;                  /* every configured counter can be read */
	uint64_t last[SD_MAX_COUNTERS];
};

/* Parses SONDE_COUNTERS (NULL: the default set) and decides, by probing on
 * the calling thread, where each counter comes from. Problems are reported
 * through say() (one line each); unavailable counters are listed in
 * out->unavail_*. Ordinary context. */
void sd_kernel_counters_probe(const char *spec, struct sd_counters *out,
			      void (*say)(const char *fmt, ...));
/* Closes the descriptors the probe kept open (call once the first thread's
 * counters are open). */
void sd_kernel_counters_probe_release(struct sd_counters *out);

struct rusage;

/* Opens the perf group of thread tid (its own thread, or an adopted one),
 * descriptors close-on-exec and at or above fd_floor. Perf counts start at
 * 0; rusage counts are since the thread began, so `read_start` (the calling
 * thread's own, begun before sonde: the process's first thread) reads the
 * starting values, and a thread just created starts from 0 without a system
 * call. Returns 0 or -errno (t->ok = 0 then). Ordinary context. */
int sd_kernel_counters_open(const struct sd_counters *c, pid_t tid, int fd_floor, int read_start,
			    struct sd_counters_thread *t);
void sd_kernel_counters_close(struct sd_counters_thread *t);

/* Current totals of every counter for the calling thread (one group read()
 * and at most one getrusage; none when `ru` is the thread's own rusage, just
 * read). The group descriptor is checked to carry
 * SD_KERNEL_MARK_SIG and t->tid as owner first, so a number the program
 * closed and reused is never read (a read would take bytes from its pipe or
 * move its file offset), nor another thread's group that took the number. Returns 0, or -1 if they cannot be read. async-signal-safe. */
int sd_kernel_counters_read_sigsafe(const struct sd_counters *c, const struct sd_counters_thread *t,
				    const struct rusage *ru, uint64_t *now);

/* A PAPI preset (through PAPI, to its one native event) or a libpfm4 native event
 * NAME as a perf_event attr (type, config, config1, config2 set; the rest left as the
 * caller zeroed it): 0, and the native event's name in native; or -1 and why in reason
 * (papi_dl.c; papi_none.c when sonde was built without PAPI: always -1). Ordinary
 * context. */
struct perf_event_attr;
int sd_kernel_papi_encode(const char *tok, struct perf_event_attr *attr, char *native,
			  size_t nlen, char *reason, size_t rlen);

/* PAPI and libpfm4 are loaded on first use (papi_dl.c): the functions sonde
 * calls, as one table each. Visible to files that include papi.h (and
 * perfmon/pfmlib_perf_event.h) before this header. NULL and *why (dlerror's
 * reason) when the library cannot be loaded. Ordinary context. */
#ifdef PAPI_VER_CURRENT
#define SD_PAPI_FUNCTIONS(X)                                                              \
	X(PAPI_library_init) X(PAPI_thread_init) X(PAPI_is_initialized) X(PAPI_shutdown)  \
	X(PAPI_strerror) X(PAPI_event_name_to_code) X(PAPI_get_event_info)                \
	X(PAPI_get_event_component) X(PAPI_get_component_index) X(PAPI_num_components)    \
	X(PAPI_get_component_info) X(PAPI_create_eventset) X(PAPI_add_event)              \
	X(PAPI_overflow) X(PAPI_get_overflow_event_index) X(PAPI_start) X(PAPI_stop)      \
	X(PAPI_read)                                                                      \
	X(PAPI_cleanup_eventset) X(PAPI_destroy_eventset) X(PAPI_register_thread)         \
	X(PAPI_unregister_thread)
struct sd_papi_lib {
#define X(f) __typeof__(f) *f;
	SD_PAPI_FUNCTIONS(X)
#undef X
};
const struct sd_papi_lib *sd_kernel_papi_lib(const char **why);
#endif
#ifdef __PFMLIB_PERF_EVENTS_H__
#define SD_PFM_FUNCTIONS(X) X(pfm_initialize) X(pfm_get_os_event_encoding) X(pfm_strerror)
struct sd_pfm_lib {
#define X(f) __typeof__(f) *f;
	SD_PFM_FUNCTIONS(X)
#undef X
};
const struct sd_pfm_lib *sd_kernel_pfm_lib(const char **why);
#endif

#endif
