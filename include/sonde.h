/* sonde.h - the public interface of the sonde runtime (libsonde.so): the
 * annotation API. Usable from C and C++ (C++ scope guards: sonde.hpp;
 * Fortran: sonde.f90). Documented with examples in docs/API.md.
 *
 * sonde profiles unmodified programs; annotations add the program's own
 * context to every sample (phase, iteration, problem size, named regions),
 * so that `sonde report --group-by phase` splits the time by them.
 *
 * Optional linking. Every call below is a static inline function that calls
 * the runtime through a weak reference: a program compiled with annotations
 * needs no library at link time and runs unchanged without sonde (each call
 * is a load and a branch); when libsonde.so is preloaded (`sonde run`), the
 * same binary's annotations are live. (Position-independent executables, the
 * Debian default, resolve the weak references at load time; a non-PIE
 * program must link libsonde.so to see them.)
 *
 * Every annotation call returns void and never fails the program: misuse
 * (ending what is not open, values too long, too many distinct values) is
 * reported once on stderr as `sonde: ...` and recovered from. All calls are
 * thread-safe; thread scope (the default) keeps a value in the thread that set
 * it, process scope shows it in every thread's samples.
 *
 * Queries (sonde_query, sonde_profile_top, sonde_flush) let a running
 * program ask what sonde measured so far, to adapt (pick the faster of two
 * implementations, rebalance, change its output frequency). They return
 * SONDE_UNAVAILABLE when the runtime is not loaded (or, for regions, when it
 * does not time them: SONDE_REGIONS=on), and are not for hot loops: a region
 * query walks the thread's (or every thread's) region table, a few
 * microseconds for a few hundred regions; it never waits for the sampler or
 * the writer thread.
 */
#ifndef SONDE_H
#define SONDE_H

#include <stdint.h>

/* The version of sonde (library, CLI and this header; CMake reads it here). */
#define SONDE_VERSION_MAJOR 0
#define SONDE_VERSION_MINOR 2

#if defined(__GNUC__) && defined(SONDE_BUILDING_RUNTIME)
#define SONDE_API __attribute__((visibility("default")))
#define SONDE_WEAK
#elif defined(__GNUC__)
#define SONDE_API __attribute__((visibility("default")))
#define SONDE_WEAK __attribute__((weak))
#else
#define SONDE_API
#define SONDE_WEAK
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Attribute value types and scopes (sonde_attr_create). */
enum { SONDE_STRING = 0, SONDE_INT = 1, SONDE_DOUBLE = 2 };
enum { SONDE_THREAD = 0, SONDE_PROCESS = 1 };

/* An attribute handle, for hot loops: no string hashing per call. NULL when
 * sonde is not loaded; every call accepts NULL and does nothing. */
typedef struct sonde_attr *sonde_attr_t;

/* Query results. */
enum { SONDE_OK = 0, SONDE_NONE = 1, SONDE_UNAVAILABLE = -1 };

/* What sonde_query answers: every ended call of the levels asked for
 * (forced ends included), times in nanoseconds. */
struct sonde_region_stats {
	uint64_t calls;
	uint64_t forced;      /* calls sonde ended (misnested, or open at thread end) */
	double incl_ns;       /* total inclusive time */
	double excl_ns;       /* total exclusive time (less the levels opened inside) */
	double min_ns, max_ns, mean_ns, stddev_ns; /* inclusive time per call */
	int ncounters;        /* counter deltas below (SONDE_REGION_COUNTERS=on) */
	uint64_t counters[8]; /* inclusive, in the order of SONDE_COUNTERS */
};

/* One function of the profile so far (sonde_profile_top). */
struct sonde_func {
	char name[120];       /* the function, or "module+0xOFFSET" without a symbol */
	uint64_t samples;     /* samples whose innermost frame is in it */
};

/* ---- the runtime's entry points (weak: may be absent) ----------------- */
SONDE_API SONDE_WEAK int sonde_rt_active(void);
SONDE_API SONDE_WEAK void sonde_rt_begin(const char *attr, const char *value);
SONDE_API SONDE_WEAK void sonde_rt_begin_int(const char *attr, int64_t value);
SONDE_API SONDE_WEAK void sonde_rt_set(const char *attr, const char *value);
SONDE_API SONDE_WEAK void sonde_rt_set_int(const char *attr, int64_t value);
SONDE_API SONDE_WEAK void sonde_rt_end(const char *attr);
SONDE_API SONDE_WEAK sonde_attr_t sonde_rt_attr_create(const char *name, int type, int scope);
SONDE_API SONDE_WEAK void sonde_rt_attr_begin_str(sonde_attr_t a, const char *value);
SONDE_API SONDE_WEAK void sonde_rt_attr_begin_int(sonde_attr_t a, int64_t value);
SONDE_API SONDE_WEAK void sonde_rt_attr_begin_double(sonde_attr_t a, double value);
SONDE_API SONDE_WEAK void sonde_rt_attr_set_str(sonde_attr_t a, const char *value);
SONDE_API SONDE_WEAK void sonde_rt_attr_set_int(sonde_attr_t a, int64_t value);
SONDE_API SONDE_WEAK void sonde_rt_attr_set_double(sonde_attr_t a, double value);
SONDE_API SONDE_WEAK void sonde_rt_attr_end(sonde_attr_t a);
SONDE_API SONDE_WEAK void sonde_rt_region_end(const char *name);
SONDE_API SONDE_WEAK int sonde_rt_region_query(const char *attr, int type, const char *s,
					       int64_t i, int scope,
					       struct sonde_region_stats *out);
SONDE_API SONDE_WEAK int sonde_rt_profile_top(struct sonde_func *out, int n);
SONDE_API SONDE_WEAK int sonde_rt_flush(void);

/* ---- the API ------------------------------------------------------------ */
#ifndef SONDE_BUILDING_RUNTIME

/* 1 when the sonde runtime is loaded and sampling this process, else 0. */
static inline int sonde_active(void)
{
	return sonde_rt_active ? sonde_rt_active() : 0;
}

/* Opens `value` of attribute `attr` (thread scope, string type), nested
 * inside whatever is open: values of one attribute form a stack. */
static inline void sonde_begin(const char *attr, const char *value)
{
	if (sonde_rt_begin)
		sonde_rt_begin(attr, value);
}

static inline void sonde_begin_int(const char *attr, int64_t value)
{
	if (sonde_rt_begin_int)
		sonde_rt_begin_int(attr, value);
}

/* Replaces the innermost open value of `attr` (opens it if none is open):
 * the loop-iteration case. */
static inline void sonde_set(const char *attr, const char *value)
{
	if (sonde_rt_set)
		sonde_rt_set(attr, value);
}

static inline void sonde_set_int(const char *attr, int64_t value)
{
	if (sonde_rt_set_int)
		sonde_rt_set_int(attr, value);
}

/* Closes the innermost open value of `attr`. */
static inline void sonde_end(const char *attr)
{
	if (sonde_rt_end)
		sonde_rt_end(attr);
}

/* The common case: a named region, attribute "region". region_end names the
 * region it closes, and sonde checks that it is the innermost open one. */
static inline void sonde_region_begin(const char *name)
{
	if (sonde_rt_begin)
		sonde_rt_begin("region", name);
}

static inline void sonde_region_end(const char *name)
{
	if (sonde_rt_region_end)
		sonde_rt_region_end(name);
}

/* Creates (or finds) attribute `name` with a value type (SONDE_STRING,
 * SONDE_INT, SONDE_DOUBLE) and a scope (SONDE_THREAD, SONDE_PROCESS). Call
 * once, outside the hot loop. A name keeps the type and scope it was first
 * created with. */
static inline sonde_attr_t sonde_attr_create(const char *name, int type, int scope)
{
	return sonde_rt_attr_create ? sonde_rt_attr_create(name, type, scope) : (sonde_attr_t)0;
}

static inline void sonde_attr_begin_str(sonde_attr_t a, const char *value)
{
	if (a)
		sonde_rt_attr_begin_str(a, value);
}

static inline void sonde_attr_begin_int(sonde_attr_t a, int64_t value)
{
	if (a)
		sonde_rt_attr_begin_int(a, value);
}

static inline void sonde_attr_begin_double(sonde_attr_t a, double value)
{
	if (a)
		sonde_rt_attr_begin_double(a, value);
}

static inline void sonde_attr_set_str(sonde_attr_t a, const char *value)
{
	if (a)
		sonde_rt_attr_set_str(a, value);
}

static inline void sonde_attr_set_int(sonde_attr_t a, int64_t value)
{
	if (a)
		sonde_rt_attr_set_int(a, value);
}

static inline void sonde_attr_set_double(sonde_attr_t a, double value)
{
	if (a)
		sonde_rt_attr_set_double(a, value);
}

static inline void sonde_attr_end(sonde_attr_t a)
{
	if (a)
		sonde_rt_attr_end(a);
}

/* ---- queries ------------------------------------------------------------ */

/* The totals so far of every level `attr`=`value` of the context, wherever it
 * is in the path (under any iteration, inside any region), in the calling
 * thread (SONDE_THREAD) or the whole process (SONDE_PROCESS: every thread,
 * finished ones included). SONDE_OK and *out filled; SONDE_NONE (*out zeroed)
 * when no such level ended yet; SONDE_UNAVAILABLE when sonde is not loaded or
 * SONDE_REGIONS is not on. */
static inline int sonde_query(const char *attr, const char *value, int scope,
			      struct sonde_region_stats *out)
{
	return sonde_rt_region_query ? sonde_rt_region_query(attr, SONDE_STRING, value, 0, scope, out)
				     : SONDE_UNAVAILABLE;
}

static inline int sonde_query_int(const char *attr, int64_t value, int scope,
				  struct sonde_region_stats *out)
{
	return sonde_rt_region_query ? sonde_rt_region_query(attr, SONDE_INT, 0, value, scope, out)
				     : SONDE_UNAVAILABLE;
}

/* A named region (sonde_region_begin(name)): sonde_query("region", name, ...). */
static inline int sonde_query_region(const char *name, int scope, struct sonde_region_stats *out)
{
	return sonde_query("region", name, scope, out);
}

/* The n functions with the most samples so far in the whole process (every
 * source, by innermost frame), most first: how many were written (0 before the
 * first sample), or SONDE_UNAVAILABLE. Names are the loader's (dladdr: exported
 * symbols; a static function shows as "module+0xOFFSET"); `sonde report` has them
 * all. Takes the writer's lock for a copy of the counts: milliseconds at most. */
static inline int sonde_profile_top(struct sonde_func *out, int n)
{
	return sonde_rt_profile_top ? sonde_rt_profile_top(out, n) : SONDE_UNAVAILABLE;
}

/* Writes everything recorded so far to the stream now, region totals
 * included (as a flush period would): SONDE_OK, or SONDE_UNAVAILABLE. */
static inline int sonde_flush(void)
{
	return sonde_rt_flush ? sonde_rt_flush() : SONDE_UNAVAILABLE;
}
#endif /* SONDE_BUILDING_RUNTIME */

#ifdef __cplusplus
}
#endif
#endif
