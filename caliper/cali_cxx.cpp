/* cali_cxx.cpp - the C++ classes Caliper's CALI_CXX_MARK_* macros make (caliper/
 * Annotation.h: cali::Function, cali::ScopeAnnotation, cali::Loop and
 * cali::Loop::Iteration), on top of sonde's annotation API: the C++ part of
 * libsonde_caliper.so, built when a C++ compiler is found (caliper.h says how the
 * library reaches the program, docs/ENV.md "Caliper annotations" what each becomes).
 *
 * The program was compiled against Caliper's header: it allocates the objects itself,
 * with the members that header declares (nothing for Function and ScopeAnnotation, one
 * pointer for Loop and Iteration), and calls the members below by their mangled
 * names. So the declarations here repeat the header's members exactly (names,
 * parameters, const-ness, member layout), and every member of a class is defined here,
 * none left to libcaliper: a Loop made here must never reach Caliper's code, which
 * would read our Impl as its own.
 *
 * Program threads, ordinary context, never a signal handler. No exceptions, no RTTI, no
 * operator new (malloc): the library needs no libstdc++ (a C program preloaded with it
 * maps nothing more). cali::Annotation (begin/set with Caliper's Variant) is not here:
 * it keeps calling Caliper.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caliper/caliper.h"

#define SD_CXX_API __attribute__((visibility("default")))

namespace cali
{

class SD_CXX_API Function
{
	Function(const Function &);
	Function &operator=(const Function &);

public:
	Function(const char *name);
	~Function();
};

class SD_CXX_API ScopeAnnotation
{
public:
	explicit ScopeAnnotation(const char *name);
	ScopeAnnotation(const ScopeAnnotation &) = delete;
	ScopeAnnotation &operator=(const ScopeAnnotation &) = delete;
	~ScopeAnnotation();
};

class SD_CXX_API Loop
{
	struct Impl;
	Impl *pI;

public:
	class SD_CXX_API Iteration
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

/* CALI_CXX_MARK_FUNCTION and CALI_CXX_MARK_SCOPE: sonde regions, as CALI_MARK_BEGIN's
 * (the end closes the innermost open region: C++ scopes nest). */
Function::Function(const char *name)
{
	sonde_begin("region", name);
}

Function::~Function()
{
	sonde_end("region");
}

ScopeAnnotation::ScopeAnnotation(const char *name)
{
	sonde_begin("region", name);
}

ScopeAnnotation::~ScopeAnnotation()
{
	sonde_end("region");
}

/* A loop: value NAME of attribute "loop" while it runs (begun at construction, ended
 * by end() or by the destruction of the last copy), and its iterations values of the
 * integer attribute "iteration#NAME". Copies share the Impl (refs). */
struct Loop::Impl {
	int refs;               /* __atomic */
	int level;              /* 1 while the loop value is open, __atomic */
	sonde_attr_t iter;      /* "iteration#NAME", made when first needed, __atomic */
	char iter_name[80];     /* sonde's attribute names end at 63 bytes: it says so */

	/* The iteration attribute: made the first time libsonde.so is on, then kept. */
	sonde_attr_t iter_attr()
	{
		sonde_attr_t h = __atomic_load_n(&iter, __ATOMIC_ACQUIRE);
		if (!h && (h = sd_cali_attr(iter_name, SONDE_INT)))
			__atomic_store_n(&iter, h, __ATOMIC_RELEASE);
		return h;
	}
};

Loop::Loop(const char *name) : pI(static_cast<Impl *>(calloc(1, sizeof(Impl))))
{
	if (!pI)
		return; /* out of memory: the loop is not annotated */
	pI->refs = 1;
	pI->level = 1;
	snprintf(pI->iter_name, sizeof pI->iter_name, "iteration#%s", name ? name : "");
	sonde_begin("loop", name);
}

Loop::Loop(const Loop &loop) : pI(loop.pI)
{
	if (pI)
		__atomic_add_fetch(&pI->refs, 1, __ATOMIC_RELAXED);
}

Loop::~Loop()
{
	if (pI && __atomic_sub_fetch(&pI->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		end();
		free(pI);
	}
}

/* CALI_CXX_MARK_LOOP_END: closes the loop value once, however many copies call it. */
void Loop::end()
{
	int one = 1;
	if (pI && __atomic_compare_exchange_n(&pI->level, &one, 0, false, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED))
		sonde_end("loop");
}

Loop::Iteration Loop::iteration(int i) const
{
	return Iteration(pI, i);
}

/* CALI_CXX_MARK_LOOP_ITERATION: iteration i open while the object lives. */
Loop::Iteration::Iteration(const Impl *p, int i) : pI(p)
{
	sonde_attr_begin_int(p ? const_cast<Impl *>(p)->iter_attr() : nullptr, i);
}

Loop::Iteration::~Iteration()
{
	sonde_attr_end(pI ? __atomic_load_n(&pI->iter, __ATOMIC_ACQUIRE) : nullptr);
}

} // namespace cali
