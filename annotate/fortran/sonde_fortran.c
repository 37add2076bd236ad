/* sonde_fortran.c - the C side of the Fortran module `sonde` (include/sonde.f90).
 *
 * Fortran cannot call sonde.h's static inline functions, so the module's
 * bind(C) interfaces call these out-of-line wrappers instead, and each of them
 * calls the inline function of the same name. Built into the static library
 * sonde_fortran together with the module; a Fortran program links that
 * archive, never libsonde.so.
 *
 * Optional linking is kept: the archive holds only weak undefined references
 * to the runtime's sonde_rt_* entry points (from sonde.h), so the program
 * runs unchanged without sonde (each call is a load and a branch) and its
 * annotations are live when libsonde.so is preloaded. Called from the
 * program's threads, never in signal context. Strings arrive NUL-terminated
 * (the module copies them); integers are int64_t (integer(c_int64_t)).
 */
#include <stdint.h>

#include "include/sonde.h"

/* Every function here is a contract-free forwarder: same arguments, same
 * behaviour as the sonde.h function named in its body. Not static, not
 * exported from any shared object: they are linked into the program. */
int sonde_f_active(void);
void sonde_f_begin(const char *attr, const char *value);
void sonde_f_begin_int(const char *attr, int64_t value);
void sonde_f_set(const char *attr, const char *value);
void sonde_f_set_int(const char *attr, int64_t value);
void sonde_f_end(const char *attr);
void sonde_f_region_begin(const char *name);
void sonde_f_region_end(const char *name);
sonde_attr_t sonde_f_attr_create(const char *name, int type, int scope);
void sonde_f_attr_begin_str(sonde_attr_t a, const char *value);
void sonde_f_attr_begin_int(sonde_attr_t a, int64_t value);
void sonde_f_attr_begin_double(sonde_attr_t a, double value);
void sonde_f_attr_set_str(sonde_attr_t a, const char *value);
void sonde_f_attr_set_int(sonde_attr_t a, int64_t value);
void sonde_f_attr_set_double(sonde_attr_t a, double value);
void sonde_f_attr_end(sonde_attr_t a);
int sonde_f_query(const char *attr, const char *value, int scope, struct sonde_region_stats *out);
int sonde_f_query_int(const char *attr, int64_t value, int scope, struct sonde_region_stats *out);
int sonde_f_flush(void);

int sonde_f_active(void) { return sonde_active(); }
void sonde_f_begin(const char *attr, const char *value) { sonde_begin(attr, value); }
void sonde_f_begin_int(const char *attr, int64_t value) { sonde_begin_int(attr, value); }
void sonde_f_set(const char *attr, const char *value) { sonde_set(attr, value); }
void sonde_f_set_int(const char *attr, int64_t value) { sonde_set_int(attr, value); }
void sonde_f_end(const char *attr) { sonde_end(attr); }
void sonde_f_region_begin(const char *name) { sonde_region_begin(name); }
void sonde_f_region_end(const char *name) { sonde_region_end(name); }

sonde_attr_t sonde_f_attr_create(const char *name, int type, int scope)
{
	return sonde_attr_create(name, type, scope);
}

void sonde_f_attr_begin_str(sonde_attr_t a, const char *value) { sonde_attr_begin_str(a, value); }
void sonde_f_attr_begin_int(sonde_attr_t a, int64_t value) { sonde_attr_begin_int(a, value); }
void sonde_f_attr_begin_double(sonde_attr_t a, double value) { sonde_attr_begin_double(a, value); }
void sonde_f_attr_set_str(sonde_attr_t a, const char *value) { sonde_attr_set_str(a, value); }
void sonde_f_attr_set_int(sonde_attr_t a, int64_t value) { sonde_attr_set_int(a, value); }
void sonde_f_attr_set_double(sonde_attr_t a, double value) { sonde_attr_set_double(a, value); }
void sonde_f_attr_end(sonde_attr_t a) { sonde_attr_end(a); }

int sonde_f_query(const char *attr, const char *value, int scope, struct sonde_region_stats *out)
{
	return sonde_query(attr, value, scope, out);
}

int sonde_f_query_int(const char *attr, int64_t value, int scope, struct sonde_region_stats *out)
{
	return sonde_query_int(attr, value, scope, out);
}

int sonde_f_flush(void) { return sonde_flush(); }
