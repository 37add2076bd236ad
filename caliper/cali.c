/* cali.c - Caliper's C annotation API (caliper/cali.h, and what the CALI_MARK_* macros
 * of caliper/cali_macros.h call) on top of sonde's: the C part of libsonde_caliper.so,
 * preloaded by `sonde run --caliper` ahead of the program's libcaliper (caliper.h says
 * how it gets there, docs/ENV.md "Caliper annotations" what each call becomes).
 *
 * Called from the program's threads, ordinary context, never from a signal handler;
 * thread-safe. Every entry point ends in the libsonde.so call that does its work (a
 * tail call: caliper.h, "Tail calls"), through sonde.h's weak references, so each is a
 * load and a branch when libsonde.so is not loaded. Misuse (ending what is not open,
 * misnesting, values too long) is libsonde.so's to say and repair, once per message;
 * this file says only what sonde cannot see: an attribute id that is none of
 * cali_create_attribute's (one line, the first time).
 *
 * State: the attributes made by id (cali_create_attribute, cali_init's built-ins,
 * cali_make_loop_iteration_attribute) in one table. Invariant: entries below `n` are
 * complete and never change but for their sonde handle, which is made the first time
 * the attribute is used while libsonde.so is on (a C++ static constructor may create
 * attributes before libsonde.so has started) and then kept.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "caliper/caliper.h"

#define ATTRS_MAX 256 /* libsonde.so's own limit (annotate.h SD_ATTR_MAX) */

struct cattr {
	char *name;
	cali_attr_type type;
	int props;
	int stype, scope;          /* as sonde has it: SONDE_INT ..., SONDE_THREAD ... */
	_Atomic(sonde_attr_t) h;   /* NULL until made */
};

static struct {
	pthread_once_t once;
	_Atomic int ready;         /* cali_init's attributes made */
	pthread_mutex_t lock;      /* creation */
	_Atomic unsigned n;
	struct cattr a[ATTRS_MAX];
	_Atomic int said_bad_id, said_full;
} cali = { .once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER };

SD_CALI_API cali_id_t cali_annotation_attr_id = CALI_INV_ID;
SD_CALI_API cali_id_t cali_function_attr_id = CALI_INV_ID;
SD_CALI_API cali_id_t cali_loop_attr_id = CALI_INV_ID;
SD_CALI_API cali_id_t cali_statement_attr_id = CALI_INV_ID;

/* One line on stderr, the first time `flag` is raised. */
static void say_once(_Atomic int *flag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say_once(_Atomic int *flag, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	if (atomic_exchange(flag, 1))
		return;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof buf - 2)
		n = (int)sizeof buf - 2;
	buf[n++] = '\n';
	if (write(2, buf, (size_t)n) < 0)
		return;
}

/* ---- regions -------------------------------------------------------------------- */

/* The end of a named value of attr: libsonde.so checks that `name` is the innermost
 * open value, and says fn's misuse in fn's name. */
static void end_named(const char *attr, const char *name, const char *fn)
{
	if (sonde_rt_end_named)
		sonde_rt_end_named(attr, name ? name : "", fn);
	else if (sonde_rt_end) /* a libsonde.so older than this library */
		sonde_rt_end(attr);
}

SD_CALI_API void cali_begin_region(const char *name)
{
	sonde_begin("region", name);
}

SD_CALI_API void cali_end_region(const char *name)
{
	end_named("region", name, "cali_end_region");
}

SD_CALI_API void cali_begin_phase(const char *name)
{
	sonde_begin("phase", name);
}

SD_CALI_API void cali_end_phase(const char *name)
{
	end_named("phase", name, "cali_end_phase");
}

SD_CALI_API void cali_begin_comm_region(const char *name)
{
	sonde_begin("comm_region", name);
}

SD_CALI_API void cali_end_comm_region(const char *name)
{
	end_named("comm_region", name, "cali_end_comm_region");
}

/* ---- attributes by name ------------------------------------------------------------ */

sonde_attr_t sd_cali_attr(const char *name, int type)
{
	return sonde_attr_create(name, type, SONDE_THREAD);
}

/* Caliper's value `true` (a boolean attribute): the string "true" here, as Caliper
 * prints it. */
SD_CALI_API void cali_begin_byname(const char *attr_name)
{
	sonde_begin(attr_name, "true");
}

SD_CALI_API void cali_begin_double_byname(const char *attr_name, double val)
{
	sonde_attr_begin_double(sd_cali_attr(attr_name, SONDE_DOUBLE), val);
}

SD_CALI_API void cali_begin_int_byname(const char *attr_name, int val)
{
	sonde_begin_int(attr_name, val);
}

SD_CALI_API void cali_begin_string_byname(const char *attr_name, const char *val)
{
	sonde_begin(attr_name, val);
}

SD_CALI_API void cali_set_double_byname(const char *attr_name, double val)
{
	sonde_attr_set_double(sd_cali_attr(attr_name, SONDE_DOUBLE), val);
}

SD_CALI_API void cali_set_int_byname(const char *attr_name, int val)
{
	sonde_set_int(attr_name, val);
}

SD_CALI_API void cali_set_string_byname(const char *attr_name, const char *val)
{
	sonde_set(attr_name, val);
}

SD_CALI_API void cali_end_byname(const char *attr_name)
{
	sonde_end(attr_name);
}

/* Global attributes describe the run: process scope, so every thread's samples
 * carry them. */
static sonde_attr_t global_attr(const char *name, int type)
{
	return sonde_attr_create(name, type, SONDE_PROCESS);
}

SD_CALI_API void cali_set_global_double_byname(const char *attr_name, double val)
{
	sonde_attr_set_double(global_attr(attr_name, SONDE_DOUBLE), val);
}

SD_CALI_API void cali_set_global_int_byname(const char *attr_name, int val)
{
	sonde_attr_set_int(global_attr(attr_name, SONDE_INT), val);
}

SD_CALI_API void cali_set_global_string_byname(const char *attr_name, const char *val)
{
	sonde_attr_set_str(global_attr(attr_name, SONDE_STRING), val);
}

SD_CALI_API void cali_set_global_uint_byname(const char *attr_name, uint64_t val)
{
	sonde_attr_set_int(global_attr(attr_name, SONDE_INT), (int64_t)val);
}

/* ---- attributes by id ------------------------------------------------------------- */

/* Caliper's type as sonde's: integers, unsigned integers and addresses are integers,
 * booleans the strings "true" and "false", user data and pointers strings (their
 * values are not shown: cali_set of such an attribute is ignored). */
static int sonde_type(cali_attr_type t)
{
	switch (t) {
	case CALI_TYPE_INT:
	case CALI_TYPE_UINT:
	case CALI_TYPE_ADDR:
		return SONDE_INT;
	case CALI_TYPE_DOUBLE:
		return SONDE_DOUBLE;
	default:
		return SONDE_STRING;
	}
}

SD_CALI_API cali_id_t cali_create_attribute(const char *name, cali_attr_type type,
					    int properties)
{
	if (!name)
		return CALI_INV_ID;
	pthread_mutex_lock(&cali.lock);
	unsigned n = atomic_load_explicit(&cali.n, memory_order_relaxed);
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(cali.a[i].name, name)) { /* Caliper gives the existing one */
			pthread_mutex_unlock(&cali.lock);
			return i;
		}
	char *copy = n < ATTRS_MAX ? strdup(name) : NULL;
	if (!copy) {
		pthread_mutex_unlock(&cali.lock);
		say_once(&cali.said_full, "sonde: cali_create_attribute(\"%s\"): %s (its "
			 "annotations are ignored; see docs/ENV.md, Caliper annotations)", name,
			 n < ATTRS_MAX ? "out of memory" : "more than 256 attributes");
		return CALI_INV_ID;
	}
	struct cattr *e = &cali.a[n];
	e->name = copy;
	e->type = type;
	e->props = properties;
	e->stype = sonde_type(type);
	e->scope = (properties & CALI_ATTR_SCOPE_MASK) == CALI_ATTR_SCOPE_PROCESS ? SONDE_PROCESS
										 : SONDE_THREAD;
	atomic_store_explicit(&e->h, NULL, memory_order_relaxed);
	atomic_store_explicit(&cali.n, n + 1, memory_order_release);
	pthread_mutex_unlock(&cali.lock);
	return n;
}

SD_CALI_API cali_id_t cali_create_attribute_with_metadata(
	const char *name, cali_attr_type type, int properties, int n,
	const cali_id_t meta_attr_list[], const void *meta_val_list[],
	const size_t meta_size_list[])
{
	(void)n, (void)meta_attr_list, (void)meta_val_list, (void)meta_size_list;
	return cali_create_attribute(name, type, properties);
}

SD_CALI_API cali_id_t cali_find_attribute(const char *name)
{
	unsigned n = atomic_load_explicit(&cali.n, memory_order_acquire);
	for (unsigned i = 0; name && i < n; i++)
		if (!strcmp(cali.a[i].name, name))
			return i;
	return CALI_INV_ID;
}

/* The entry of id, or NULL after saying (once) that fn was given an id that is none. */
static struct cattr *entry(cali_id_t id, const char *fn)
{
	if (id < atomic_load_explicit(&cali.n, memory_order_acquire))
		return &cali.a[id];
	say_once(&cali.said_bad_id, "sonde: %s(%lld): not an attribute id of "
		 "cali_create_attribute (ignored, and any other such call; check the program's "
		 "attribute ids)", fn, id == CALI_INV_ID ? -1ll : (long long)id);
	return NULL;
}

SD_CALI_API const char *cali_attribute_name(cali_id_t attr_id)
{
	return attr_id < atomic_load_explicit(&cali.n, memory_order_acquire) ? cali.a[attr_id].name
									     : NULL;
}

SD_CALI_API cali_attr_type cali_attribute_type(cali_id_t attr_id)
{
	return attr_id < atomic_load_explicit(&cali.n, memory_order_acquire) ? cali.a[attr_id].type
									     : CALI_TYPE_INV;
}

SD_CALI_API int cali_attribute_properties(cali_id_t attr_id)
{
	return attr_id < atomic_load_explicit(&cali.n, memory_order_acquire) ? cali.a[attr_id].props
									     : 0;
}

/* e's sonde attribute: made the first time libsonde.so is on for it, then kept. */
static sonde_attr_t handle(struct cattr *e)
{
	sonde_attr_t h = atomic_load_explicit(&e->h, memory_order_acquire);
	if (!h && (h = sonde_attr_create(e->name, e->stype, e->scope)))
		atomic_store_explicit(&e->h, h, memory_order_release);
	return h;
}

enum kind { K_TRUE, K_INT, K_DOUBLE, K_STRING };

/* A number, or true, for a string attribute: as text. Not a tail call (its buffer). */
static __attribute__((noinline)) void put_text(sonde_attr_t h, int set, enum kind k, int64_t i,
					       double d, cali_attr_type type)
{
	char num[32];
	const char *s = num;
	if (k == K_TRUE || (k == K_INT && type == CALI_TYPE_BOOL))
		s = k == K_TRUE || i ? "true" : "false";
	else if (k == K_INT)
		snprintf(num, sizeof num, "%lld", (long long)i);
	else
		snprintf(num, sizeof num, "%.17g", d);
	if (set)
		sonde_attr_set_str(h, s);
	else
		sonde_attr_begin_str(h, s);
}

/* Begins (set = 0) or sets a value of attribute id, given as kind k (i, d or s),
 * converted to the attribute's type; fn names the call for a bad id. A string for a
 * number attribute is kept as a string. */
static void put(cali_id_t id, int set, enum kind k, int64_t i, double d, const char *s,
		const char *fn)
{
	struct cattr *e = entry(id, fn);
	sonde_attr_t h = e ? handle(e) : NULL;
	if (!h)
		return;
	if (k == K_STRING) {
		if (set)
			sonde_attr_set_str(h, s);
		else
			sonde_attr_begin_str(h, s);
	} else if (e->stype == SONDE_INT) {
		int64_t v = k == K_TRUE ? 1 : k == K_DOUBLE ? (int64_t)d : i;
		if (set)
			sonde_attr_set_int(h, v);
		else
			sonde_attr_begin_int(h, v);
	} else if (e->stype == SONDE_DOUBLE) {
		double v = k == K_TRUE ? 1.0 : k == K_INT ? (double)i : d;
		if (set)
			sonde_attr_set_double(h, v);
		else
			sonde_attr_begin_double(h, v);
	} else {
		put_text(h, set, k, i, d, e->type);
	}
}

SD_CALI_API void cali_begin(cali_id_t attr)
{
	put(attr, 0, K_TRUE, 0, 0, NULL, "cali_begin");
}

SD_CALI_API void cali_begin_double(cali_id_t attr, double val)
{
	put(attr, 0, K_DOUBLE, 0, val, NULL, "cali_begin_double");
}

SD_CALI_API void cali_begin_int(cali_id_t attr, int val)
{
	put(attr, 0, K_INT, val, 0, NULL, "cali_begin_int");
}

SD_CALI_API void cali_begin_string(cali_id_t attr, const char *val)
{
	put(attr, 0, K_STRING, 0, 0, val, "cali_begin_string");
}

SD_CALI_API void cali_set_double(cali_id_t attr, double val)
{
	put(attr, 1, K_DOUBLE, 0, val, NULL, "cali_set_double");
}

SD_CALI_API void cali_set_int(cali_id_t attr, int val)
{
	put(attr, 1, K_INT, val, 0, NULL, "cali_set_int");
}

SD_CALI_API void cali_set_string(cali_id_t attr, const char *val)
{
	put(attr, 1, K_STRING, 0, 0, val, "cali_set_string");
}

/* A value in memory, read as the attribute's type says (Caliper's own rule). */
SD_CALI_API void cali_set(cali_id_t attr, const void *value, size_t size)
{
	struct cattr *e = entry(attr, "cali_set");
	char s[256];
	int64_t i = 0;
	double d = 0;
	if (!e || !value)
		return;
	switch (e->type) {
	case CALI_TYPE_STRING:
		size = size < sizeof s - 1 ? size : sizeof s - 1;
		memcpy(s, value, size);
		s[size] = 0;
		s[strnlen(s, size)] = 0;
		put(attr, 1, K_STRING, 0, 0, s, "cali_set");
		return;
	case CALI_TYPE_INT:
	case CALI_TYPE_UINT:
	case CALI_TYPE_ADDR:
	case CALI_TYPE_BOOL:
		if (size == 8)
			memcpy(&i, value, 8);
		else if (size == 4)
			i = *(const int32_t *)value;
		else if (size == 1)
			i = *(const uint8_t *)value;
		else
			return;
		put(attr, 1, K_INT, i, 0, NULL, "cali_set");
		return;
	case CALI_TYPE_DOUBLE:
		if (size != sizeof d)
			return;
		memcpy(&d, value, sizeof d);
		put(attr, 1, K_DOUBLE, 0, d, NULL, "cali_set");
		return;
	default:
		return;
	}
}

SD_CALI_API void cali_end(cali_id_t attr)
{
	struct cattr *e = entry(attr, "cali_end");
	sonde_attr_t h = e ? handle(e) : NULL;
	sonde_attr_end(h);
}

SD_CALI_API void cali_safe_end_string(cali_id_t attr, const char *val)
{
	struct cattr *e = entry(attr, "cali_safe_end_string");
	if (e && handle(e))
		end_named(e->name, val, "cali_safe_end_string");
}

/* ---- setup --------------------------------------------------------------------------- */

/* The attributes the macros use. cali_annotation_attr_id and cali_function_attr_id are
 * one: Caliper's regions and marked functions are both sonde regions ("function" is
 * sonde's name for the symbol of a frame). */
static void init_once(void)
{
	cali_annotation_attr_id = cali_create_attribute("region", CALI_TYPE_STRING, 256);
	cali_function_attr_id = cali_annotation_attr_id;
	cali_loop_attr_id = cali_create_attribute("loop", CALI_TYPE_STRING, 256);
	cali_statement_attr_id = cali_create_attribute("statement", CALI_TYPE_STRING, 256);
	atomic_store(&cali.ready, 1);
}

SD_CALI_API void cali_init(void)
{
	pthread_once(&cali.once, init_once);
}

SD_CALI_API int cali_is_initialized(void)
{
	return atomic_load(&cali.ready);
}

/* CALI_MARK_LOOP_BEGIN's iteration attribute: "iteration#NAME", integers. */
SD_CALI_API cali_id_t cali_make_loop_iteration_attribute(const char *name)
{
	char full[300];
	snprintf(full, sizeof full, "iteration#%s", name ? name : "");
	return cali_create_attribute(full, CALI_TYPE_INT, 1);
}
