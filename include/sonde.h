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
 * Every call returns void and never fails the program: misuse (ending what is
 * not open, values too long, too many distinct values) is reported once on
 * stderr as `sonde: ...` and recovered from. All calls are thread-safe; thread
 * scope (the default) keeps a value in the thread that set it, process scope
 * shows it in every thread's samples.
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
#endif /* SONDE_BUILDING_RUNTIME */

#ifdef __cplusplus
}
#endif
#endif
