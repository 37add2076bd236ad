/* stub_cxx.cpp - the stand-in libcaliper's C++ classes (stub.c says why): they do
 * nothing. */
#include "cali_decl.h"

namespace cali
{
Function::Function(const char *name) { (void)name; }
Function::~Function() {}
ScopeAnnotation::ScopeAnnotation(const char *name) { (void)name; }
ScopeAnnotation::~ScopeAnnotation() {}
Loop::Loop(const char *name) : pI(nullptr) { (void)name; }
Loop::Loop(const Loop &loop) : pI(loop.pI) {}
Loop::~Loop() {}
Loop::Iteration Loop::iteration(int i) const { return Iteration(pI, i); }
void Loop::end() {}
Loop::Iteration::Iteration(const Impl *p, int i) : pI(p) { (void)i; }
Loop::Iteration::~Iteration() {}
} // namespace cali
