/*
 * debuginfod.c: separate debug info fetched from debuginfod servers, for symfile.c, when
 * DEBUGINFOD_URLS is set (docs/REPORT.md, "Symbols"; docs/ENV.md): the Dwfl's
 * find_debuginfo callback (symbols.c sets it) and what the symbol cache must forget.
 *
 * elfutils >= 0.178 asks debuginfod by itself, at the end of
 * dwfl_standard_find_debuginfo, with no bound but curl's (DEBUGINFOD_TIMEOUT, 90 s) and
 * without a word: a dead server and a 404 look alike. So with DEBUGINFOD_URLS set the
 * callback is sd_dbgd_find_debuginfo, which for a module with a build-id looks where
 * elfutils looks locally (the build-id tree of /usr/lib/debug, then the .gnu_debuglink
 * name beside the file, in its .debug/ and under /usr/lib/debug), and only then asks the
 * servers itself: through the Dwfl's own libdebuginfod client (dwfl_get_debuginfod_client,
 * elfutils 0.188; libdebuginfod.so.1 is loaded by libdw, and looked up here with dlsym, so
 * building needs no libdebuginfod-dev), watched by a progress function that cuts a fetch
 * that has received nothing for DEBUGINFOD_TIMEOUT seconds (30 when unset). Each build-id
 * is asked at most once per report; the first failure other than "not there" (server
 * down, cut) stops every later fetch of the report. Each outcome is one line. A dwz
 * supplementary file (asked for after the main debug file was found) goes through
 * dwfl_standard_find_debuginfo, whose own query uses the same watched client.
 *
 * The fetched file stays in libdebuginfod's cache (DEBUGINFOD_CACHE_PATH, else
 * $XDG_CACHE_HOME/debuginfod_client, else ~/.cache/debuginfod_client), which later
 * reports read without the network. sd_dbgd_cache_stale makes the symbol cache
 * (symcache.c) forget what it learned of a file without debug info, when debug info may
 * now be had.
 *
 * Without DEBUGINFOD_URLS sd_dbgd_find_debuginfo looks in the same local places and asks
 * no server; unlike dwfl_standard_find_debuginfo it then does not load libdebuginfod (and
 * libcurl) for a module without debug info.
 *
 * Runs in the one thread that merges streams (elfutils calls back from symfile.c's
 * calls); not thread-safe.
 */
#define _GNU_SOURCE /* RTLD_NOLOAD */
#include "analyze/symbols/symbols_int.h"

#include <dlfcn.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"

/* libdebuginfod's API (debuginfod.h, elfutils >= 0.179), found with dlsym in the library
 * libdw loaded for the Dwfl's client: the process's functions, looked up once (state: 0
 * not yet, 1 found, -1 not there) and never changed after. */
typedef int (*progressfn_t)(debuginfod_client *c, long a, long b);
static struct {
	int state;
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *bid, int len,
			      char **path);
	void (*set_progressfn)(debuginfod_client *c, progressfn_t fn);
	void (*set_user_data)(debuginfod_client *c, void *data);
	void *(*get_user_data)(debuginfod_client *c);
	const char *(*get_url)(debuginfod_client *c);
} api;

enum { DEFAULT_TIMEOUT_S = 30 };

struct sd_dbgd {
	char *urls;                /* DEBUGINFOD_URLS when the symbolizer was made */
	unsigned timeout_s;        /* a fetch that receives nothing this long is cut */
	int nolib;                 /* libdebuginfod could not be used (said once) */
	int down;                  /* a fetch failed other than by 404: no more fetches */
	struct sd_strmap asked;    /* build-ids asked for in this report */
	double start_s, last_s;    /* the fetch under way: its start, its last new bytes */
	long last_bytes;
	int cut;                   /* progress() cut it */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct sd_dbgd *sd_dbgd_new(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS"), *t = getenv("DEBUGINFOD_TIMEOUT");
	struct sd_dbgd *d;
	char *end = NULL;

	if (!urls || !urls[0] || !(d = calloc(1, sizeof(*d))))
		return NULL;
	if (!(d->urls = strdup(urls))) {
		free(d);
		return NULL;
	}
	long v = t && t[0] ? strtol(t, &end, 10) : 0;
	d->timeout_s = v > 0 && v < 86400 && !*end ? (unsigned)v : DEFAULT_TIMEOUT_S;
	return d;
}

void sd_dbgd_free(struct sd_dbgd *d)
{
	if (!d)
		return;
	sd_strmap_fini(&d->asked);
	free(d->urls);
	free(d);
}

static int load_api(void)
{
	if (api.state)
		return api.state > 0;
	api.state = -1;
	/* libdw has loaded it for the client; kept loaded for the process */
	void *h = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
	if (!h && !(h = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL)))
		return 0;
	*(void **)&api.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&api.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	*(void **)&api.set_user_data = dlsym(h, "debuginfod_set_user_data");
	*(void **)&api.get_user_data = dlsym(h, "debuginfod_get_user_data");
	*(void **)&api.get_url = dlsym(h, "debuginfod_get_url");
	if (api.find_debuginfo && api.set_progressfn && api.set_user_data &&
	    api.get_user_data && api.get_url)
		api.state = 1;
	return api.state > 0;
}

/* Called by libdebuginfod about once a second while it fetches (a: the bytes received,
 * once a server has answered with the size b > 0; until then a count of calls): nonzero
 * cuts the fetch. The wait restarts at each new byte. */
static int progress(debuginfod_client *c, long a, long b)
{
	struct sd_dbgd *d = api.get_user_data(c);
	double t = now_s();

	if (!d)
		return 0;
	if (b > 0 && a != d->last_bytes) {
		d->last_bytes = a;
		d->last_s = t;
	}
	if (d->down || t - d->last_s >= d->timeout_s)
		d->cut = 1;
	return d->cut;
}

static void watch_start(struct sd_dbgd *d)
{
	d->start_s = d->last_s = now_s();
	d->last_bytes = -1;
	d->cut = 0;
}

/* The Dwfl's libdebuginfod client (libdw makes it once, loading libdebuginfod.so.1),
 * watched by progress(); NULL when there is none (said once per report). */
static debuginfod_client *client_of(struct sd_dbgd *d, Dwfl *dwfl)
{
	debuginfod_client *c = dwfl_get_debuginfod_client(dwfl);

	if (c && load_api()) {
		api.set_user_data(c, d);
		api.set_progressfn(c, progress);
		return c;
	}
	if (!d->nolib++)
		sd_msg("sonde: DEBUGINFOD_URLS: libdebuginfod.so.1 cannot be loaded, so no debug "
			"info is fetched (install libdebuginfod1, or unset DEBUGINFOD_URLS)");
	return NULL;
}

/* The symfile whose Dwfl holds mod (NULL: none). */
static struct symfile *file_of_mod(struct sd_symbolizer *sy, Dwfl_Module *mod)
{
	for (size_t i = 0; i < sy->nsfiles; i++)
		if (sy->sfiles[i].mod == mod)
			return &sy->sfiles[i];
	return NULL;
}

/* 1 if the file open on fd is an ELF file with GNU build-id bid (len bytes). */
static int has_bid(int fd, const unsigned char *bid, int len)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *p;
	ssize_t n = e ? dwelf_elf_gnu_build_id(e, &p) : -1;
	int same = n == len && !memcmp(p, bid, (size_t)len);

	if (e)
		elf_end(e);
	return same;
}

/* The debug file that the .gnu_debuglink of file (else FILE.debug) names, where elfutils
 * looks for it by default: beside file (or what it links to), in its .debug/, under
 * /usr/lib/debug/DIR; only a file of the module's build-id. An fd and *name, or -1. */
static int debuglink_local(const struct symfile *f, const char *file, const char *link,
			   const unsigned char *bid, int len, char **name)
{
	static const char *const pre[] = { "", "", "/usr/lib/debug" };
	static const char *const mid[] = { "/", "/.debug/", "/" };
	char *real = file && file[0] == '/' ? realpath(file, NULL) : NULL;
	const char *names[2] = { file, real && strcmp(real, file) ? real : NULL };
	int fd = -1;

	for (int n = 0; n < 2 && fd < 0 && file && file[0] == '/'; n++) {
		const char *slash = names[n] ? strrchr(names[n], '/') : NULL;
		if (!slash)
			continue;
		for (int k = 0; k < 3 && fd < 0; k++) {
			char *p = NULL;
			struct stat st;
			if (asprintf(&p, "%s%.*s%s%s%s", pre[k], (int)(slash - names[n]), names[n],
				     mid[k], link ? link : slash + 1, link ? "" : ".debug") < 0)
				break;
			fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
			if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
					(st.st_dev == f->id.dev && st.st_ino == f->id.ino) ||
					!has_bid(fd, bid, len))) {
				close(fd);
				fd = -1;
			}
			if (fd >= 0)
				*name = p;
			else
				free(p);
		}
	}
	free(real);
	return fd;
}

/* After a cut fetch, libdebuginfod (0.188) has marked build-id hex as missing in its cache
 * (an empty CACHE/HEX/debuginfo, believed for cache_miss_s, 600 s): that file is removed,
 * so that the next report asks again rather than say the server lacks it. CACHE as
 * libdebuginfod finds it: DEBUGINFOD_CACHE_PATH, else ~/.debuginfod_client_cache when it
 * is there, else $XDG_CACHE_HOME/debuginfod_client, else ~/.cache/debuginfod_client. */
static void forget_miss(const char *hex)
{
	const char *env = getenv("DEBUGINFOD_CACHE_PATH"), *home = getenv("HOME");
	const char *xdg = getenv("XDG_CACHE_HOME");
	char *p = NULL;
	struct stat st;

	if (!home)
		home = "/";
	if (env && env[0])
		p = strdup(env);
	else if (asprintf(&p, "%s/.debuginfod_client_cache", home) >= 0 && stat(p, &st)) {
		free(p);
		p = NULL;
		if (asprintf(&p, "%s%s/debuginfod_client", xdg && xdg[0] ? xdg : home,
			     xdg && xdg[0] ? "" : "/.cache") < 0)
			p = NULL;
	}
	char *miss = NULL;
	if (p && asprintf(&miss, "%s/%s/debuginfo", p, hex) >= 0 &&
	    !lstat(miss, &st) && S_ISREG(st.st_mode) && st.st_size == 0)
		unlink(miss);
	free(miss);
	free(p);
}

/* Ask the servers for the debug file of build-id bid (len bytes) of f, once per build-id
 * per report and not after a failure other than 404: an fd and *name, or -1; says how it
 * went in one line. */
static int fetch(struct sd_dbgd *d, struct symfile *f, const unsigned char *bid, int len,
		 char **name)
{
	char hex[2 * SD_BUILD_ID_MAX + 1] = "";
	char *path = NULL;
	uint32_t v;
	debuginfod_client *c = d->down ? NULL : client_of(d, f->dwfl);

	if (!c || sd_strmap_get(&d->asked, bid, (size_t)len, &v) ||
	    sd_strmap_put(&d->asked, bid, (size_t)len, 1))
		return -1;
	for (int i = 0; i < len && i < SD_BUILD_ID_MAX; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	watch_start(d);
	int fd = api.find_debuginfo(c, bid, len, &path);
	double secs = now_s() - d->start_s;
	if (fd >= 0) {
		const char *url = api.get_url(c);
		if (url)
			sd_msg("sonde: %s: debug info fetched from debuginfod (%s in %.1f s; kept "
				"in %s)", f->path, url, secs, path ? path : "its cache");
		else
			sd_msg("sonde: %s: debug info from debuginfod's cache (%s)", f->path,
				path ? path : "DEBUGINFOD_CACHE_PATH");
		*name = path;
		return fd;
	}
	free(path);
	if (fd == -ENOENT && !d->cut) {
		sd_msg("sonde: %s: no debug info from debuginfod: build-id %s is not on %s "
			"(its frames are named from its symbol table)", f->path, hex, d->urls);
		return -1;
	}
	d->down = 1;
	if (d->cut)
		forget_miss(hex);
	if (d->cut || fd == -ETIME)
		sd_msg("sonde: %s: debug info not fetched: debuginfod sent nothing for %u s "
			"(its frames are named from its symbol table, no other module is "
			"fetched in this report; DEBUGINFOD_TIMEOUT sets the wait)", f->path,
			d->timeout_s);
	else
		sd_msg("sonde: %s: debug info not fetched from %s: %s (its frames are named "
			"from its symbol table, no other module is fetched in this report; "
			"check DEBUGINFOD_URLS)", f->path, d->urls, strerror(-fd));
	return -1;
}

int sd_dbgd_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, const char *file, const char *link, GElf_Word crc,
			   char **name)
{
	struct sd_symbolizer *sy = *userdata;
	struct symfile *f = sy ? file_of_mod(sy, mod) : NULL;
	const unsigned char *bid = NULL;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bid, &vaddr), fd;

	if (!f || len <= 0 || len > SD_BUILD_ID_MAX || f->dbgd_main == 1) {
		/* no build-id: no server can be asked for it; after the main debug file:
		 * its dwz file, which elfutils asks the servers for through the client */
		if (f && sy->dbgd && client_of(sy->dbgd, f->dwfl))
			watch_start(sy->dbgd);
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file, link,
						    crc, name);
	}
	/* elfutils' local places, without its query of the servers at the end (and so
	 * without loading libdebuginfod and libcurl when DEBUGINFOD_URLS is unset) */
	fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file, link, crc, name);
	if (fd < 0)
		fd = debuglink_local(f, file, link, bid, len, name);
	if (fd < 0 && !f->dbgd_main && sy->dbgd)
		fd = fetch(sy->dbgd, f, bid, len, name);
	f->dbgd_main = fd >= 0 ? 1 : 2;
	return fd;
}

int sd_dbgd_cache_stale(const struct sd_symbolizer *sy, const struct sd_fileid *id,
			const struct sd_symcache *c)
{
	char p[64 + 2 * SD_BUILD_ID_MAX];
	struct stat st;

	if (!id->bid_len || !sd_symcache_lacks_debug(c))
		return 0;
	if (sy->dbgd && !sy->dbgd->down)
		return 1;
	/* a debug file installed since, where elfutils finds it by build-id */
	int o = snprintf(p, sizeof(p), "/usr/lib/debug/.build-id/%02x/", id->bid[0]);
	for (uint32_t i = 1; i < id->bid_len && i < SD_BUILD_ID_MAX; i++)
		o += snprintf(p + o, sizeof(p) - (size_t)o, "%02x", id->bid[i]);
	snprintf(p + o, sizeof(p) - (size_t)o, ".debug");
	return stat(p, &st) == 0;
}
