/* cali_decl.h - what a program annotated for Caliper sees of it, for the tests of
 * libsonde_caliper.so (tests/e2e/caliper.sh): Caliper's C prototypes and the
 * classes of its C++ macros, declared here as the program's own (Caliper's headers are
 * not installed here), and the calls its CALI_MARK_* / CALI_CXX_MARK_* macros expand
 * to, written out. The stand-in libcaliper (stub.c, stub_cxx.cpp) and the programs
 * (prog.c, prog_cxx.cpp) include it.
 */
#ifndef CALI_DECL_H
#define CALI_DECL_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
typedef uint64_t cali_id_t;
#define CALI_INV_ID 0xFFFFFFFFFFFFFFFF
typedef enum { CALI_TYPE_INT = 2, CALI_TYPE_STRING = 4, CALI_TYPE_DOUBLE = 6 } cali_attr_type;
extern cali_id_t cali_loop_attr_id;
extern cali_id_t cali_annotation_attr_id;
void cali_begin_region(const char *name);
void cali_end_region(const char *name);
void cali_begin_phase(const char *name);
void cali_end_phase(const char *name);
void cali_begin_byname(const char *attr_name);
void cali_begin_int_byname(const char *attr_name, int val);
void cali_begin_double_byname(const char *attr_name, double val);
void cali_begin_string_byname(const char *attr_name, const char *val);
void cali_set_int_byname(const char *attr_name, int val);
void cali_set_string_byname(const char *attr_name, const char *val);
void cali_set_global_string_byname(const char *attr_name, const char *val);
void cali_end_byname(const char *attr_name);
cali_id_t cali_create_attribute(const char *name, cali_attr_type type, int properties);
void cali_begin_int(cali_id_t attr, int val);
void cali_begin_string(cali_id_t attr, const char *val);
void cali_end(cali_id_t attr);
void cali_init(void);
cali_id_t cali_make_loop_iteration_attribute(const char *name);
#ifdef __cplusplus
}

/* caliper/Annotation.h's classes, as a program compiled against it declares them */
namespace cali
{
class Function
{
	Function(const Function &);
	Function &operator=(const Function &);

public:
	Function(const char *name);
	~Function();
};
class ScopeAnnotation
{
public:
	explicit ScopeAnnotation(const char *name);
	ScopeAnnotation(const ScopeAnnotation &) = delete;
	ScopeAnnotation &operator=(const ScopeAnnotation &) = delete;
	~ScopeAnnotation();
};
class Loop
{
	struct Impl;
	Impl *pI;

public:
	class Iteration
	{
		const Impl *pI;

	public:
		Iteration(const Impl *, int);
		~Iteration();
	};
	Loop(const char *name);
	Loop(const Loop &loop);
	~Loop();
	Iteration iteration(int i) const;
	void end();
};
} // namespace cali
#define CALI_CXX_MARK_FUNCTION cali::Function cali_fn_ann_(__func__)
#define CALI_CXX_MARK_SCOPE(name) cali::ScopeAnnotation cali_scope_ann_(name)
#define CALI_CXX_MARK_LOOP_BEGIN(id, name) cali::Loop cali_loop_##id(name)
#define CALI_CXX_MARK_LOOP_END(id) cali_loop_##id.end()
#define CALI_CXX_MARK_LOOP_ITERATION(id, i) \
	cali::Loop::Iteration cali_iter_##id(cali_loop_##id.iteration(static_cast<int>(i)))
#endif

/* caliper/cali_macros.h's C macros, as they expand */
#define CALI_MARK_BEGIN(name) cali_begin_region(name)
#define CALI_MARK_END(name) cali_end_region(name)
#define CALI_MARK_PHASE_BEGIN(name) cali_begin_phase(name)
#define CALI_MARK_PHASE_END(name) cali_end_phase(name)
#define CALI_MARK_LOOP_BEGIN(id, name)                \
	if (cali_loop_attr_id == CALI_INV_ID)         \
		cali_init();                          \
	cali_begin_string(cali_loop_attr_id, (name)); \
	cali_id_t cali_iter_##id = cali_make_loop_iteration_attribute(name)
#define CALI_MARK_LOOP_END(id) cali_end(cali_loop_attr_id)
#define CALI_MARK_ITERATION_BEGIN(id, i) cali_begin_int(cali_iter_##id, ((int)(i)))
#define CALI_MARK_ITERATION_END(id) cali_end(cali_iter_##id)
#endif
