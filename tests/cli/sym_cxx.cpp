// sym_cxx.cpp: a real C++ program for the symbol tests (test_symbols.sh): its CPU time
// is spent in the method ns::Klass::method(int) (compiled -O1 -g, not inlined), whose
// symbol is mangled (_ZN2ns5Klass6methodEi).
// usage: sym_cxx [SECONDS]   (CPU seconds to spin, default 0.4)
#include <cstdlib>
#include <ctime>

namespace ns {
class Klass {
public:
	__attribute__((noinline)) double method(int n);
	double v = 1;
};

double Klass::method(int n)
{
	for (int i = 0; i < n; i++)
		v = v * 1.0000001 + 0.5;
	return v;
}
} // namespace ns

static double cpu_s()
{
	timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	static volatile double sink;
	double secs = argc > 1 ? std::atof(argv[1]) : 0.4, end = cpu_s() + secs;
	ns::Klass k;

	while (cpu_s() < end)
		sink = k.method(200000);
	return 0;
}
