/* dl.c - the loader's entry points sonde wraps (dlopen, dlmopen, dlclose,
 * dl_iterate_phdr), so that the module map and the handler's loader
 * snapshot follow the modules the program loads and unloads
 * (sampler/interpose/interpose.h has the index of every wrapper).
 *
 * Ordinary context of the program's threads, but dl_iterate_phdr, which
 * libunwind calls inside sonde's signal handler: there it is served from the
 * snapshot (loader.c), without the loader's lock.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "mem/mem.h"
#include "sampler/interpose/interpose.h"

SONDE_API int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	struct sd_thread *t = sd_tls_thread;
	if (t && t->in_handler)
		return sd_phdr_snapshot_iterate_sigsafe(cb, data);
	RESOLVE(dl_iterate_phdr);
	return REAL(dl_iterate_phdr)(cb, data);
}

static void loader_changed(uint64_t t0)
{
	if (!running() || !our_process())
		return;
	sd_loader_changed(t0);
}

/* Inside dlopen/dlclose (and sonde's bookkeeping after them, with signals
 * blocked) samples are not unwound (the loader may be half-way through a
 * change): they are charged to [dlopen/dlclose] under the caller's stack,
 * taken here. */
static int dl_begin(struct sd_thread *t)
{
	if (!t)
		return 0;
	int ovr = running() && our_process() ? sd_handler_ovr_begin(t, SD_PSEUDO_DL) : 0;
	t->in_dl++;
	return ovr;
}

static void dl_end(struct sd_thread *t, int ovr)
{
	if (!t)
		return;
	t->in_dl--;
	if (ovr)
		sd_handler_ovr_end(t);
}

/* A bare library name is searched along the *caller's* paths (its DT_RPATH
 * and DT_RUNPATH); calling the real dlopen from here would search sonde's
 * instead. So the search is done against the caller's list first. */
static const char *resolve_for_caller(const char *file, void *caller, char *buf, size_t len)
{
	if (!file || strchr(file, '/'))
		return file;
	Dl_info info;
	struct link_map *lm = NULL;
	if (!dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return file;
	Dl_serinfo size;
	if (dlinfo(lm, RTLD_DI_SERINFOSIZE, &size) != 0 || size.dls_size > 65536)
		return file;
	/* On the stack when it fits (it usually does): out of memory, the
	 * real dlopen would search sonde's paths, not the caller's, and fail
	 * the program's dlopen of a library only its DT_RUNPATH finds. */
	union {
		Dl_serinfo si;
		char bytes[1024];
	} small;
	Dl_serinfo *si = size.dls_size <= sizeof small ? &small.si : sd_mem_alloc(size.dls_size);
	if (!si)
		return file;
	const char *found = file;
	*si = size;
	if (dlinfo(lm, RTLD_DI_SERINFO, si) == 0) {
		for (unsigned i = 0; i < si->dls_cnt; i++) {
			snprintf(buf, len, "%s/%s", si->dls_serpath[i].dls_name, file);
			struct stat st;
			if (stat(buf, &st) == 0 && S_ISREG(st.st_mode)) {
				found = buf;
				break;
			}
		}
	}
	if (si != &small.si)
		sd_mem_free(si);
	return found;
}

SONDE_API void *dlopen(const char *file, int mode)
{
	RESOLVE(dlopen);
	struct sd_thread *t = sd_tls_thread;
	char buf[PATH_MAX];
	const char *path = resolve_for_caller(file, __builtin_return_address(0), buf, sizeof buf);
	uint64_t t0 = sd_now_ns_sigsafe();
	int ovr = dl_begin(t);
	void *h = REAL(dlopen)(path, mode);
	if (!h && path != file)
		h = REAL(dlopen)(file, mode);
	int e = errno;
	loader_changed(t0);
	dl_end(t, ovr);
	errno = e;
	return h;
}

SONDE_API void *dlmopen(Lmid_t lmid, const char *file, int mode)
{
	RESOLVE(dlmopen);
	struct sd_thread *t = sd_tls_thread;
	uint64_t t0 = sd_now_ns_sigsafe();
	int ovr = dl_begin(t);
	void *h = REAL(dlmopen)(lmid, file, mode);
	int e = errno;
	loader_changed(t0);
	dl_end(t, ovr);
	errno = e;
	return h;
}

SONDE_API int dlclose(void *h)
{
	RESOLVE(dlclose);
	struct sd_thread *t = sd_tls_thread;
	int ovr = dl_begin(t);
	int r = REAL(dlclose)(h);
	int e = errno;
	loader_changed(sd_now_ns_sigsafe());
	dl_end(t, ovr);
	errno = e;
	return r;
}
