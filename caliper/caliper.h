/* caliper.h - the interface of libsonde_caliper.so: Caliper's public annotation entry
 * points, defined again so that a program built and linked against Caliper
 * (libcaliper) runs under sonde unchanged, its regions and attributes becoming sonde's.
 *
 * How it reaches the program: `sonde run --caliper` puts libsonde_caliper.so first in
 * LD_PRELOAD. The dynamic linker binds every symbol to its first definition in load
 * order (the executable, then the preloaded libraries, then the DT_NEEDED ones), so the
 * program's calls to cali_begin_region & co., and its references to the variables the
 * CALI_MARK_* macros read, bind here and never reach libcaliper. A program linked with
 * a static Caliper (libcaliper.a) defines them itself and is not reached.
 *
 * The names, types and signatures below are those of Caliper's caliper/cali.h,
 * caliper/cali_macros.h and caliper/Annotation.h (types and values from
 * caliper/common/cali_types.h), declared here from its documented API; the bodies
 * (cali.c, cali_cxx.cpp) are sonde's own. What each call becomes is docs/ENV.md,
 * "Caliper annotations". Everything is forwarded to libsonde.so's annotation API
 * through the weak references of include/sonde.h: without libsonde.so loaded each call
 * does nothing. Program threads, ordinary context; thread-safe; never in a signal
 * handler.
 *
 * Tail calls: each entry point ends in the sonde_rt_* call that does the work, and the
 * library is built with sibling-call optimisation (CMakeLists.txt), so libsonde.so sees
 * the program's return address as the place a region was opened (the splice of `sonde
 * report --view tree`), not this library's.
 */
#ifndef SONDE_CALIPER_H
#define SONDE_CALIPER_H

#include <stddef.h>
#include <stdint.h>

#include "include/sonde.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SD_CALI_API __attribute__((visibility("default")))

/* caliper/common/cali_types.h */
typedef uint64_t cali_id_t;
#define CALI_INV_ID ((cali_id_t)0xFFFFFFFFFFFFFFFFull)
typedef enum {
	CALI_TYPE_INV = 0,
	CALI_TYPE_USR = 1,
	CALI_TYPE_INT = 2,
	CALI_TYPE_UINT = 3,
	CALI_TYPE_STRING = 4,
	CALI_TYPE_ADDR = 5,
	CALI_TYPE_DOUBLE = 6,
	CALI_TYPE_BOOL = 7,
	CALI_TYPE_TYPE = 8,
	CALI_TYPE_PTR = 9
} cali_attr_type;
#define CALI_ATTR_SCOPE_PROCESS 12
#define CALI_ATTR_SCOPE_MASK 60

/* The attribute ids the C macros of caliper/cali_macros.h read (CALI_MARK_LOOP_BEGIN:
 * `if (cali_loop_attr_id == CALI_INV_ID) cali_init();`). CALI_INV_ID until cali_init. */
SD_CALI_API extern cali_id_t cali_annotation_attr_id, cali_function_attr_id,
	cali_loop_attr_id, cali_statement_attr_id;

/* regions: attribute "region"; phases "phase"; communication regions "comm_region".
 * An end names the region it closes; sonde checks it is the innermost open one. */
SD_CALI_API void cali_begin_region(const char *name);
SD_CALI_API void cali_end_region(const char *name);
SD_CALI_API void cali_begin_phase(const char *name);
SD_CALI_API void cali_end_phase(const char *name);
SD_CALI_API void cali_begin_comm_region(const char *name);
SD_CALI_API void cali_end_comm_region(const char *name);

/* attributes by name: sonde attributes of the same name (thread scope), nested values */
SD_CALI_API void cali_begin_byname(const char *attr_name);
SD_CALI_API void cali_begin_double_byname(const char *attr_name, double val);
SD_CALI_API void cali_begin_int_byname(const char *attr_name, int val);
SD_CALI_API void cali_begin_string_byname(const char *attr_name, const char *val);
SD_CALI_API void cali_set_double_byname(const char *attr_name, double val);
SD_CALI_API void cali_set_int_byname(const char *attr_name, int val);
SD_CALI_API void cali_set_string_byname(const char *attr_name, const char *val);
SD_CALI_API void cali_end_byname(const char *attr_name);
/* global attributes: process scope, set (every thread's samples carry them) */
SD_CALI_API void cali_set_global_double_byname(const char *attr_name, double val);
SD_CALI_API void cali_set_global_int_byname(const char *attr_name, int val);
SD_CALI_API void cali_set_global_string_byname(const char *attr_name, const char *val);
SD_CALI_API void cali_set_global_uint_byname(const char *attr_name, uint64_t val);

/* attributes by id: ids are this library's (0, 1, ...), CALI_INV_ID for none */
SD_CALI_API cali_id_t cali_create_attribute(const char *name, cali_attr_type type,
					    int properties);
SD_CALI_API cali_id_t cali_create_attribute_with_metadata(
	const char *name, cali_attr_type type, int properties, int n,
	const cali_id_t meta_attr_list[], const void *meta_val_list[],
	const size_t meta_size_list[]);
SD_CALI_API cali_id_t cali_find_attribute(const char *name);
SD_CALI_API const char *cali_attribute_name(cali_id_t attr_id);
SD_CALI_API cali_attr_type cali_attribute_type(cali_id_t attr_id);
SD_CALI_API int cali_attribute_properties(cali_id_t attr_id);
SD_CALI_API void cali_begin(cali_id_t attr);
SD_CALI_API void cali_begin_double(cali_id_t attr, double val);
SD_CALI_API void cali_begin_int(cali_id_t attr, int val);
SD_CALI_API void cali_begin_string(cali_id_t attr, const char *val);
SD_CALI_API void cali_end(cali_id_t attr);
SD_CALI_API void cali_safe_end_string(cali_id_t attr, const char *val);
SD_CALI_API void cali_set(cali_id_t attr, const void *value, size_t size);
SD_CALI_API void cali_set_double(cali_id_t attr, double val);
SD_CALI_API void cali_set_int(cali_id_t attr, int val);
SD_CALI_API void cali_set_string(cali_id_t attr, const char *val);

/* setup (Caliper's cali_init() has unspecified arguments in C: the same call) */
SD_CALI_API void cali_init(void);
SD_CALI_API int cali_is_initialized(void);
SD_CALI_API cali_id_t cali_make_loop_iteration_attribute(const char *name);

/* ---- shared by cali.c and cali_cxx.cpp (hidden) ------------------------------ */

/* The sonde attribute `name` of sonde type `type` (SONDE_STRING, SONDE_INT,
 * SONDE_DOUBLE), thread scope: NULL while libsonde.so is not loaded or not on. */
sonde_attr_t sd_cali_attr(const char *name, int type);

/* Not in sonde.h's API: libsonde.so's end of a named value (annotate/api.c). Weak. */
extern void sonde_rt_end_named(const char *attr, const char *value, const char *fn)
	__attribute__((weak));

#ifdef __cplusplus
}
#endif
#endif
