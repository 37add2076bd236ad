/* papi_dl.c - PAPI and libpfm4, loaded only when a PAPI event is asked for.
 *
 * libsonde is not linked against them: loading and relocating both costs
 * about 0.3 ms of CPU in every process (libpfm4 alone maps 2.7 MB with
 * a large relocated table), and most processes ask for no PAPI event. The
 * first caller that needs them (a PAPI sampling source, a PAPI or libpfm
 * counter) loads them with dlopen and resolves every function sonde calls
 * into one table; a library that cannot be loaded is said once by the
 * caller, with dlerror's reason. Ordinary context; the table is read in
 * signal context afterwards (PAPI's overflow dispatch), never changed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <papi.h>
#include <perfmon/pfmlib_perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "kernel/kernel.h"

static struct sd_papi_lib papi_lib;
static struct sd_pfm_lib pfm_lib;
static char papi_err[256], pfm_err[256];
static int papi_state, pfm_state; /* 0 not tried, 1 loaded, -1 failed */
/* Each library is loaded once, by its first caller; the others wait for
 * it. pthread_once, not a mutex: libsonde wraps pthread_mutex_lock for the
 * program (sampler/interpose/blocking.c), and these objects are the analyzer's too,
 * which has no sd_real_pthread_mutex_lock (common/real.h). */
static pthread_once_t papi_once = PTHREAD_ONCE_INIT, pfm_once = PTHREAD_ONCE_INIT;

static const char *const papi_names[] = {
#define X(f) #f,
	SD_PAPI_FUNCTIONS(X)
#undef X
};

static const char *const pfm_names[] = {
#define X(f) #f,
	SD_PFM_FUNCTIONS(X)
#undef X
};

/* Resolves n names from handle into fns; the name that is missing, or NULL. */
static const char *resolve(void *h, const char *const *names, void **fns, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!(fns[i] = dlsym(h, names[i])))
			return names[i];
	return NULL;
}

/* Loads the library (*state: 1 loaded, -1 failed, with err saying why).
 * dlopen by name on purpose: inside libsonde that is its own wrapper, which
 * records the new modules and has the handler's loader snapshot follow at
 * once (samples in PAPI's code are unwound from then on); in the analyzer,
 * libc's. */
static void load(int *state, const char *soname, const char *const *names, void **fns,
		 unsigned n, char *err, size_t errlen)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	const char *missing = h ? resolve(h, names, fns, n) : NULL;
	if (!h) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s", e ? e : soname);
	} else if (missing) {
		snprintf(err, errlen, "%s: no symbol %s", soname, missing);
	}
	*state = h && !missing ? 1 : -1;
}

static void load_papi(void)
{
	load(&papi_state, SD_PAPI_SONAME, papi_names, (void **)&papi_lib,
	     sizeof papi_names / sizeof papi_names[0], papi_err, sizeof papi_err);
}

static void load_pfm(void)
{
	load(&pfm_state, SD_PFM_SONAME, pfm_names, (void **)&pfm_lib,
	     sizeof pfm_names / sizeof pfm_names[0], pfm_err, sizeof pfm_err);
}

/* The table once loaded, or NULL and *why. */
static void *result(int state, void *fns, const char *err, const char **why)
{
	if (state < 0 && why)
		*why = err;
	return state > 0 ? fns : NULL;
}

const struct sd_papi_lib *sd_kernel_papi_lib(const char **why)
{
	pthread_once(&papi_once, load_papi);
	return result(papi_state, &papi_lib, papi_err, why);
}

const struct sd_pfm_lib *sd_kernel_pfm_lib(const char **why)
{
	pthread_once(&pfm_once, load_pfm);
	return result(pfm_state, &pfm_lib, pfm_err, why);
}

int sd_kernel_papi_encode(const char *tok, struct perf_event_attr *attr, char *native,
			  size_t nlen, char *reason, size_t rlen)
{
	snprintf(native, nlen, "%.120s", tok);
	if (!strncmp(tok, "PAPI_", 5)) {
		int code;
		PAPI_event_info_t info;
		const char *why = NULL;
		const struct sd_papi_lib *P = sd_kernel_papi_lib(&why);
		if (!P)
			return snprintf(reason, rlen, "PAPI cannot be loaded: %.100s", why), -1;
		if (P->PAPI_is_initialized() == PAPI_NOT_INITED &&
		    P->PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT)
			return snprintf(reason, rlen, "PAPI cannot be initialised"), -1;
		if (P->PAPI_event_name_to_code(tok, &code) != PAPI_OK ||
		    P->PAPI_get_event_info(code, &info) != PAPI_OK)
			return snprintf(reason, rlen, "unknown PAPI event"), -1;
		if (info.count == 0)
			return snprintf(reason, rlen, "no hardware counter for it on this CPU"), -1;
		if (info.count > 1)
			return snprintf(reason, rlen, "a derived PAPI event (%u counters); count its "
					"parts instead", info.count), -1;
		snprintf(native, nlen, "%.120s", info.name[0]);
	}
	const char *why = NULL;
	const struct sd_pfm_lib *F = sd_kernel_pfm_lib(&why);
	if (!F)
		return snprintf(reason, rlen, "libpfm4 cannot be loaded: %.100s", why), -1;
	if (F->pfm_initialize() != PFM_SUCCESS)
		return snprintf(reason, rlen, "libpfm4 cannot be initialised"), -1;
	pfm_perf_encode_arg_t arg;
	memset(&arg, 0, sizeof arg);
	arg.attr = attr;
	arg.size = sizeof arg;
	int r = F->pfm_get_os_event_encoding(native, PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
	if (r != PFM_SUCCESS)
		return snprintf(reason, rlen, "%s", F->pfm_strerror(r)), -1;
	return 0;
}
