/* test_names.c - --short-names (analyze/symbols/symbols.c sd_sym_short_name) on C++ names
 * as __cxa_demangle writes them, and on C names it must leave alone. */
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "tests/unit/unit.h"

static void is(const char *in, const char *want)
{
	char *s = sd_sym_short_name(in);
	CHECK_STR(s, want);
	free(s);
}

static void test_short(void)
{
	is("heat_compute", "heat_compute");
	is("Box<int>::burn(long) [clone .isra.0]", "Box<>::burn");
	is("std::vector<int, std::allocator<int> >::push_back(int const&)", "std::vector<>::push_back");
	is("std::map<std::pair<int, int>, double, std::less<std::pair<int, int> > >::find(std::pair<int, int> const&) const",
	   "std::map<>::find");
	is("ns::operator<(ns::A const&, ns::A const&)", "ns::operator<");
	is("std::ostream::operator<<(int)", "std::ostream::operator<<");
	is("Functor::operator()(int) const", "Functor::operator()");
	is("void run<double>(double*, long)", "void run<>");
	is("main", "main");
}

UNIT_MAIN({ "short", test_short })
