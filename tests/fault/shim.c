/* shim.c - fault injection for the sonde runtime (tests/fault).
 *
 * Preloaded together with libsonde, first:
 *
 *     LD_PRELOAD=libsonde_fault.so:libsonde.so SD_FAULT=write:1 ./program
 *
 * so that its definitions come first in the global scope and are what
 * libsonde's calls reach. It fails chosen calls that libsonde makes and
 * passes every other call on unchanged. Used by tests/fault/run.sh.
 *
 * SD_FAULT is a comma-separated list of NAME[/MATCH]:N[+][=ERRNO]: fail the
 * Nth counted call of NAME (with "+", that call and every later one) with
 * ERRNO (a name such as EIO; by default the one listed below). With MATCH,
 * only the calls that match it are counted for that rule: for open, openat
 * and write, a path containing MATCH (write: the file its descriptor names,
 * from /proc/self/fd); for the others, a number equal to MATCH (mmap and
 * malloc: the length; timer_create: the clock id; perf_event_open: the
 * tid). E.g. "openat/.sonde:1" fails the creation of the stream file,
 * "mmap/524288:2" the second 512 KiB ring, "write/.sonde:3+=EIO" the third
 * write of the stream and every later one. NAMEs and what a failure returns:
 *
 *   open, openat     -1, EACCES           (separate counts)
 *   write            -1, ENOSPC
 *   mmap             MAP_FAILED, ENOMEM
 *   malloc           NULL, ENOMEM         (malloc, calloc and realloc: one
 *                                          count, the Nth allocation)
 *   timer_create     -1, EAGAIN
 *   perf_event_open  -1, EACCES           (syscall(SYS_perf_event_open, ...))
 *
 * Which calls are counted (SD_FAULT_FROM): by default only calls made by
 * code inside libsonde.so, so that the profiled program is never failed.
 * Each wrapper looks up its own return address with _dl_find_object (glibc
 * 2.35; lock-free and async-signal-safe) and counts the call only when the
 * object containing that address is named libsonde.so (its mapping start is
 * then cached and compared). SD_FAULT_FROM=any counts every caller, the
 * program's too.
 *
 * What is intercepted, and why (checked with readelf -r on libsonde.so: it
 * reaches each of these through a PLT slot bound, -z now, in the global
 * scope; it is linked without -Bsymbolic):
 *
 *   - libsonde's own calls of open, openat, mmap (every allocation of its
 *     own comes from mmap: mem/mem.h), malloc, calloc, realloc (it makes
 *     none: run.sh, case nomalloc), timer_create: the slot binds to the
 *     first definition in the global scope, this shim's.
 *   - write and syscall: libsonde defines and exports wrappers of its own
 *     (sampler/interpose/fds.c), but its own calls of them still go through its
 *     PLT, so they reach this shim first; the shim passes every call on to
 *     the next definition (dlsym(RTLD_NEXT)): libsonde's wrapper, which
 *     calls libc. perf_event_open has no libc wrapper: libsonde calls
 *     syscall(SYS_perf_event_open, ...) (kernel/perf.c, kernel/counters.c),
 *     which this shim's syscall() sees (the test fault.perf_probe shows it).
 *
 * What is NOT intercepted:
 *
 *   - what libsonde calls through pointers it resolved with
 *     dlsym(RTLD_NEXT) (its wrappers' REAL() and its sd_real_* functions,
 *     common/real.h: pthread_mutex_lock, sigaction, sigaltstack,
 *     pthread_create, ...: they skip every object loaded before it, this
 *     shim too; none of them is a function above), and the system calls it
 *     makes itself (common/sys.h: close, read, nanosleep, ...): the
 *     functions above are the ones it calls by name so that this shim sees
 *     them (tests/unit/sampler/no_self_interpose.sh lists those it wraps
 *     too);
 *   - calls libc makes inside the functions libsonde calls: the open inside
 *     fopen and opendir, the malloc inside strdup, opendir and
 *     pthread_create, the mmap of a new thread's stack, the write inside
 *     stdio: libc binds them internally, never through a PLT;
 *   - calls made by other libraries on libsonde's behalf (libunwind's
 *     allocations and pipe, PAPI's perf_event_open, the loader's): their
 *     return address is in those libraries, so they are not counted unless
 *     SD_FAULT_FROM=any.
 *
 * Contexts: the wrappers run wherever libsonde calls them, including its
 * signal handler (a lazy clock's perf_event_open, a message's write). The
 * first call of any wrapper resolves everything, in ordinary context: it
 * may come from libsonde's constructor (which runs before this object's
 * constructors would), from the loader, or, under AddressSanitizer, from
 * inside the sanitizer's own start-up, before libc has set up environ:
 * hence dlsym(RTLD_NEXT) only, libc's own aliases (__open, __read, __write,
 * __close) for files, and the environment read from /proc/self/environ.
 * Allocations made while dlsym resolves are served from a small static
 * arena, never freed. From then on the wrappers only use atomics,
 * _dl_find_object, readlink and the functions they pass calls on to:
 * async-signal-safe. The shim is never built with sanitizers (its code
 * runs before their shadow memory exists).
 *
 * SD_FAULT_LOG=FILE: each injected fault appends one line to FILE,
 * "fault NAME N (WHAT) libsonde.so+0xOFFSET: ERRNO" (N: the rule's count;
 * WHAT: the path, length, clock or tid; OFFSET: the return address in
 * libsonde, for addr2line), opened, written and closed each time with
 * libc's own functions: no descriptor of the program's is ever taken.
 * SD_FAULT_TRACE=1 appends "call NAME N (WHAT) libsonde.so+0xOFFSET" for
 * every counted call (N: the count of all of NAME's calls).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

enum fn { F_OPEN, F_OPENAT, F_WRITE, F_MMAP, F_MALLOC, F_TIMER_CREATE, F_PERF_EVENT_OPEN, F_N };

static const char *const fn_name[F_N] = {"open",   "openat",       "write",          "mmap",
					 "malloc", "timer_create", "perf_event_open"};
static const int fn_errno[F_N] = {EACCES, EACCES, ENOSPC, ENOMEM, ENOMEM, EAGAIN, EACCES};

static const struct {
	const char *name;
	int no;
} errnos[] = {
	{"EACCES", EACCES}, {"EPERM", EPERM},   {"ENOENT", ENOENT}, {"EMFILE", EMFILE},
	{"ENFILE", ENFILE}, {"ENOSPC", ENOSPC}, {"EIO", EIO},       {"EDQUOT", EDQUOT},
	{"ENOMEM", ENOMEM}, {"EAGAIN", EAGAIN}, {"EINVAL", EINVAL}, {"EBADF", EBADF},
	{"ENODEV", ENODEV}, {"EFBIG", EFBIG},
};

struct rule {
	unsigned long nth; /* 0: no fault for this function */
	int and_after;
	int err;
	char match[64]; /* open/openat: count only paths containing this */
};

static struct rule rules[F_N];
static _Atomic unsigned long calls[F_N], matched[F_N];
static int from_any, trace;
static char log_path[512];

static _Atomic int state; /* 0 not resolved, 1 resolving, 2 ready */
static __thread int resolving_here __attribute__((tls_model("initial-exec")));
static _Atomic uintptr_t sonde_start;

static int (*next_open)(const char *, int, ...);
static int (*next_openat)(int, const char *, int, ...);
static ssize_t (*next_write)(int, const void *, size_t);
static void *(*next_mmap)(void *, size_t, int, int, int, off_t);
static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static int (*next_timer_create)(clockid_t, struct sigevent *, timer_t *);
static long (*next_syscall)(long, ...);
/* libc's own, for the log: never libsonde's wrappers (its close spares
 * descriptors inside its signal handler, its write checks them). */
static int (*libc_open)(const char *, int, ...);
static ssize_t (*libc_write)(int, const void *, size_t);
static ssize_t (*libc_read)(int, void *, size_t);
static int (*libc_close)(int);

/* ---- allocations while dlsym resolves ----------------------------------- */

static _Alignas(16) char arena[64 << 10];
static _Atomic size_t arena_used;

static void *arena_alloc(size_t n)
{
	n = (n + 15) & ~(size_t)15;
	size_t at = atomic_fetch_add(&arena_used, n);
	if (at + n > sizeof arena)
		return NULL;
	return arena + at;
}

static int in_arena(const void *p)
{
	return (const char *)p >= arena && (const char *)p < arena + sizeof arena;
}

/* ---- configuration ------------------------------------------------------ */

static int errno_by_name(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++)
		if (strlen(errnos[i].name) == n && !strncmp(errnos[i].name, s, n))
			return errnos[i].no;
	return 0;
}

static void parse(const char *spec)
{
	const char *p = spec;
	while (p && *p) {
		const char *end = strchrnul(p, ',');
		const char *colon = memchr(p, ':', (size_t)(end - p));
		if (colon) {
			const char *slash = memchr(p, '/', (size_t)(colon - p));
			const char *name_end = slash ? slash : colon;
			for (int f = 0; f < F_N; f++) {
				size_t n = strlen(fn_name[f]);
				if ((size_t)(name_end - p) != n || strncmp(p, fn_name[f], n))
					continue;
				char *q;
				unsigned long nth = strtoul(colon + 1, &q, 10);
				struct rule r = {nth, 0, fn_errno[f], ""};
				if (slash && (size_t)(colon - slash - 1) < sizeof r.match)
					memcpy(r.match, slash + 1, (size_t)(colon - slash - 1));
				if (*q == '+')
					r.and_after = 1, q++;
				if (*q == '=') {
					int e = errno_by_name(q + 1, (size_t)(end - q - 1));
					if (e)
						r.err = e;
				}
				rules[f] = r;
			}
		}
		p = *end ? end + 1 : NULL;
	}
}

/* The environment as the process started with it, from /proc/self/environ:
 * the first call may come before libc has set up environ (under
 * AddressSanitizer, from inside the sanitizer's start-up, getenv finds
 * nothing). */
static char environ_buf[64 << 10];
static size_t environ_len;

static void load_environ(void)
{
	if (!libc_open || !libc_read || !libc_close)
		return;
	int fd = libc_open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n;
	while (environ_len < sizeof environ_buf - 1 &&
	       (n = libc_read(fd, environ_buf + environ_len, sizeof environ_buf - 1 - environ_len)) > 0)
		environ_len += (size_t)n;
	environ_buf[environ_len] = 0;
	libc_close(fd);
}

static const char *env(const char *name)
{
	size_t k = strlen(name);
	for (size_t at = 0; at < environ_len; at += strlen(environ_buf + at) + 1)
		if (!strncmp(environ_buf + at, name, k) && environ_buf[at + k] == '=')
			return environ_buf + at + k + 1;
	return NULL;
}

/* First call of any wrapper, ordinary context (see the header). */
static void resolve(void)
{
	int expect = 0;
	if (!atomic_compare_exchange_strong(&state, &expect, 1)) {
		/* Ready; or resolving on this thread (a call from inside dlsym:
		 * the caller copes); or on another one: wait for it. */
		while (!resolving_here && atomic_load(&state) != 2)
			sched_yield();
		return;
	}
	resolving_here = 1;
	*(void **)&next_malloc = dlsym(RTLD_NEXT, "malloc");
	*(void **)&next_calloc = dlsym(RTLD_NEXT, "calloc");
	*(void **)&next_realloc = dlsym(RTLD_NEXT, "realloc");
	*(void **)&next_free = dlsym(RTLD_NEXT, "free");
	*(void **)&next_open = dlsym(RTLD_NEXT, "open");
	*(void **)&next_openat = dlsym(RTLD_NEXT, "openat");
	*(void **)&next_write = dlsym(RTLD_NEXT, "write");
	*(void **)&next_mmap = dlsym(RTLD_NEXT, "mmap");
	*(void **)&next_timer_create = dlsym(RTLD_NEXT, "timer_create");
	*(void **)&next_syscall = dlsym(RTLD_NEXT, "syscall");
	/* libc's own aliases, which nothing interposes (a dlopen of libc here
	 * would go through libsonde's dlopen wrapper, and under AddressSanitizer
	 * this can run inside the sanitizer's start-up) */
	*(void **)&libc_open = dlsym(RTLD_NEXT, "__open");
	*(void **)&libc_write = dlsym(RTLD_NEXT, "__write");
	*(void **)&libc_close = dlsym(RTLD_NEXT, "__close");
	*(void **)&libc_read = dlsym(RTLD_NEXT, "__read");
	load_environ();
	const char *s = env("SD_FAULT");
	if (s)
		parse(s);
	s = env("SD_FAULT_FROM");
	from_any = s && !strcmp(s, "any");
	s = env("SD_FAULT_TRACE");
	trace = s && *s && strcmp(s, "0");
	s = env("SD_FAULT_LOG");
	if (s && strlen(s) < sizeof log_path)
		strcpy(log_path, s);
	atomic_store(&state, 2);
	resolving_here = 0;
}

static int ready(void)
{
	if (atomic_load_explicit(&state, memory_order_acquire) == 2)
		return 1;
	resolve();
	return atomic_load(&state) == 2;
}

/* ---- which caller -------------------------------------------------------- */

static int from_sonde(const void *ra)
{
	if (from_any)
		return 1;
	struct dl_find_object fo;
	if (_dl_find_object((void *)ra, &fo) != 0)
		return 0;
	uintptr_t start = (uintptr_t)fo.dlfo_map_start;
	uintptr_t known = atomic_load_explicit(&sonde_start, memory_order_relaxed);
	if (known)
		return start == known;
	const char *name = fo.dlfo_link_map ? fo.dlfo_link_map->l_name : NULL;
	if (!name)
		return 0;
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (strcmp(base, "libsonde.so"))
		return 0;
	atomic_store(&sonde_start, start);
	return 1;
}

/* ---- the log: async-signal-safe ------------------------------------------ */

static size_t put_str(char *b, size_t at, size_t cap, const char *s)
{
	while (*s && at < cap)
		b[at++] = *s++;
	return at;
}

static size_t put_num(char *b, size_t at, size_t cap, unsigned long v)
{
	char d[24];
	int n = 0;
	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < 24);
	while (n && at < cap)
		b[at++] = d[--n];
	return at;
}

static size_t put_hex(char *b, size_t at, size_t cap, uintptr_t v)
{
	char d[20];
	int n = 0;
	do
		d[n++] = "0123456789abcdef"[v % 16];
	while ((v /= 16) && n < 20);
	at = put_str(b, at, cap, "0x");
	while (n && at < cap)
		b[at++] = d[--n];
	return at;
}

static void log_line(const char *what, enum fn f, unsigned long nth, int err, const char *detail,
		     long num, const void *ra)
{
	if (!log_path[0] || !libc_open || !libc_write || !libc_close)
		return;
	int saved = errno;
	char b[256];
	size_t n = put_str(b, 0, sizeof b, what);
	n = put_str(b, n, sizeof b, fn_name[f]);
	n = put_str(b, n, sizeof b, " ");
	n = put_num(b, n, sizeof b, nth);
	n = put_str(b, n, sizeof b, " (");
	if (detail)
		n = put_str(b, n, sizeof b - 40, detail);
	else if (num < 0)
		n = put_str(b, n, sizeof b, "-"), n = put_num(b, n, sizeof b, (unsigned long)-num);
	else
		n = put_num(b, n, sizeof b, (unsigned long)num);
	n = put_str(b, n, sizeof b, ")");
	uintptr_t base = atomic_load_explicit(&sonde_start, memory_order_relaxed);
	if (base && (uintptr_t)ra >= base) {
		n = put_str(b, n, sizeof b, " libsonde.so+");
		n = put_hex(b, n, sizeof b, (uintptr_t)ra - base);
	}
	if (err) {
		const char *name = "?";
		for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++)
			if (errnos[i].no == err)
				name = errnos[i].name;
		n = put_str(b, n, sizeof b, ": ");
		n = put_str(b, n, sizeof b, name);
	}
	n = put_str(b, n, sizeof b - 1, "\n");
	int fd = libc_open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		ssize_t w = libc_write(fd, b, n);
		(void)w;
		libc_close(fd);
	}
	errno = saved;
}

/* Counts the call if it is libsonde's; returns the errno to fail it with,
 * or 0 to pass it on. `detail` (a path) or `num` (a descriptor, a length)
 * is what the log shows of the call; a rule with a match counts only the
 * calls whose `detail` contains it. */
static int fault(enum fn f, const void *ra, const char *detail, long num)
{
	if (!from_sonde(ra))
		return 0;
	const struct rule *r = &rules[f];
	unsigned long n = atomic_fetch_add(&calls[f], 1) + 1;
	if (trace)
		log_line("call ", f, n, 0, detail, num, ra);
	if (r->match[0]) {
		char num_s[24];
		if (!detail) { /* a length or a descriptor: matched whole */
			size_t k = num < 0 ? put_num(num_s, put_str(num_s, 0, 1, "-"), 22,
						     (unsigned long)-num)
					   : put_num(num_s, 0, 22, (unsigned long)num);
			num_s[k] = 0;
			if (strcmp(num_s, r->match))
				return 0;
		} else if (!strstr(detail, r->match)) {
			return 0;
		}
		n = atomic_fetch_add(&matched[f], 1) + 1;
	}
	if (!r->nth || n < r->nth || (n > r->nth && !r->and_after))
		return 0;
	log_line("fault ", f, n, r->err, detail, num, ra);
	return r->err;
}

/* ---- the wrappers --------------------------------------------------------- */

/* What descriptor fd names ("/proc/self/fd/N" read as a link), for the log
 * and for matching a write by its file. async-signal-safe. */
static const char *fd_path(int fd, char *buf, size_t len)
{
	char proc[32] = "/proc/self/fd/";
	size_t n = put_num(proc, strlen(proc), sizeof proc - 1, (unsigned long)(fd < 0 ? 0 : fd));
	proc[n] = 0;
	ssize_t k = readlink(proc, buf, len - 1);
	if (k < 0)
		return NULL;
	buf[k] = 0;
	return buf;
}

#define RA __builtin_return_address(0)

EXPORT void *malloc(size_t n)
{
	if (!ready())
		return arena_alloc(n);
	int e = fault(F_MALLOC, RA, NULL, (long)n);
	if (e) {
		errno = e;
		return NULL;
	}
	return next_malloc(n);
}

EXPORT void *calloc(size_t k, size_t n)
{
	if (!ready()) {
		if (n && k > (size_t)-1 / n)
			return NULL;
		return arena_alloc(k * n); /* static: zeroed */
	}
	int e = fault(F_MALLOC, RA, NULL, (long)(k * n));
	if (e) {
		errno = e;
		return NULL;
	}
	return next_calloc(k, n);
}

EXPORT void *realloc(void *p, size_t n)
{
	if (!ready() || in_arena(p)) {
		void *q = ready() ? next_malloc(n) : arena_alloc(n);
		if (q && p) {
			size_t room = (size_t)(arena + sizeof arena - (char *)p);
			memcpy(q, p, n < room ? n : room);
		}
		return q;
	}
	int e = fault(F_MALLOC, RA, NULL, (long)n);
	if (e) {
		errno = e;
		return NULL;
	}
	return next_realloc(p, n);
}

EXPORT void free(void *p)
{
	if (!p || in_arena(p))
		return;
	if (!ready())
		return; /* cannot happen: nothing was allocated elsewhere yet */
	next_free(p);
}

EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (!ready()) {
		errno = ENOSYS;
		return -1;
	}
	int e = fault(F_OPEN, RA, path, 0);
	if (e) {
		errno = e;
		return -1;
	}
	return next_open(path, flags, mode);
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (!ready()) {
		errno = ENOSYS;
		return -1;
	}
	int e = fault(F_OPENAT, RA, path, 0);
	if (e) {
		errno = e;
		return -1;
	}
	return next_openat(dirfd, path, flags, mode);
}

EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	if (!ready()) {
		errno = ENOSYS;
		return -1;
	}
	char path[160];
	const char *d = from_sonde(RA) ? fd_path(fd, path, sizeof path) : NULL;
	int e = fault(F_WRITE, RA, d, fd);
	if (e) {
		errno = e;
		return -1;
	}
	return next_write(fd, buf, n);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (!ready()) {
		errno = ENOSYS;
		return MAP_FAILED;
	}
	int e = fault(F_MMAP, RA, NULL, (long)len);
	if (e) {
		errno = e;
		return MAP_FAILED;
	}
	return next_mmap(addr, len, prot, flags, fd, off);
}

EXPORT int timer_create(clockid_t clock, struct sigevent *sev, timer_t *id)
{
	if (!ready()) {
		errno = ENOSYS;
		return -1;
	}
	int e = fault(F_TIMER_CREATE, RA, NULL, (long)clock);
	if (e) {
		errno = e;
		return -1;
	}
	return next_timer_create(clock, sev, id);
}

/* Six arguments are always passed on, as syscall() itself does. */
EXPORT long syscall(long no, ...)
{
	va_list ap;
	long a[6];
	va_start(ap, no);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!ready()) {
		errno = ENOSYS;
		return -1;
	}
	if (no == SYS_perf_event_open) {
		int e = fault(F_PERF_EVENT_OPEN, RA, NULL, a[1]);
		if (e) {
			errno = e;
			return -1;
		}
	}
	return next_syscall(no, a[0], a[1], a[2], a[3], a[4], a[5]);
}
