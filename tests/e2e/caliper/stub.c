/* stub.c - a stand-in for the real libcaliper in the tests of libsonde_caliper.so
 * (tests/e2e/caliper.sh): the library an annotated program was built against, whose
 * annotation calls here do nothing (Caliper with no service on records nothing
 * either). Linked as libcaliper.so; `sonde run --caliper` must take the program's
 * calls away from it.
 */
#include "cali_decl.h"

cali_id_t cali_loop_attr_id = CALI_INV_ID;
cali_id_t cali_annotation_attr_id = CALI_INV_ID;

void cali_begin_region(const char *name) { (void)name; }
void cali_end_region(const char *name) { (void)name; }
void cali_begin_phase(const char *name) { (void)name; }
void cali_end_phase(const char *name) { (void)name; }
void cali_begin_byname(const char *a) { (void)a; }
void cali_begin_int_byname(const char *a, int v) { (void)a, (void)v; }
void cali_begin_double_byname(const char *a, double v) { (void)a, (void)v; }
void cali_begin_string_byname(const char *a, const char *v) { (void)a, (void)v; }
void cali_set_int_byname(const char *a, int v) { (void)a, (void)v; }
void cali_set_string_byname(const char *a, const char *v) { (void)a, (void)v; }
void cali_set_global_string_byname(const char *a, const char *v) { (void)a, (void)v; }
void cali_end_byname(const char *a) { (void)a; }
cali_id_t cali_create_attribute(const char *n, cali_attr_type t, int p)
{
	(void)n, (void)t, (void)p;
	return CALI_INV_ID;
}
void cali_begin_int(cali_id_t a, int v) { (void)a, (void)v; }
void cali_begin_string(cali_id_t a, const char *v) { (void)a, (void)v; }
void cali_end(cali_id_t a) { (void)a; }
void cali_init(void) {}
cali_id_t cali_make_loop_iteration_attribute(const char *n)
{
	(void)n;
	return CALI_INV_ID;
}
