// sym_long.cpp: a real C++ program whose CPU time is spent in a function with a long
// demangled name (template arguments of standard containers and a long parameter list),
// as C++ codes have them: the terminal tests (test_symbols.sh, sym_terminal) cut it to
// the terminal's width and --short-names shortens it to Table<>::sweep.
// usage: sym_long [SECONDS]   (CPU seconds to spin, default 0.4)
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>
#include <utility>
#include <vector>

template <typename Key, typename Value> struct Table {
	__attribute__((noinline)) double sweep(const std::map<Key, std::vector<Value>> &m,
					       const std::vector<std::pair<Key, Value>> &extra, int n);
	double v = 1;
};

template <typename Key, typename Value>
double Table<Key, Value>::sweep(const std::map<Key, std::vector<Value>> &m,
				const std::vector<std::pair<Key, Value>> &extra, int n)
{
	for (int i = 0; i < n; i++)
		v = v * 1.0000001 + 0.5 + (double)(m.size() + extra.size()) * 1e-12;
	return v;
}

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
	Table<std::string, std::pair<long, double>> t;
	std::map<std::string, std::vector<std::pair<long, double>>> m;
	std::vector<std::pair<std::string, std::pair<long, double>>> extra;

	m["a"].push_back({ 1, 2.0 });
	while (cpu_s() < end)
		sink = t.sweep(m, extra, 200000);
	return 0;
}
