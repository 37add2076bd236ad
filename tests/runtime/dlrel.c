/* dlrel.c - dlopen()s a plugin by the path given (a relative one such as
 * "./libplug.so", as programs load their plugins from the directory they run
 * in) and runs UNITS work units in it (plug_work, about 28 us each), so that
 * samples land in a module the stream names by a relative path.
 * Prints "plug CHECKSUM".
 *
 * usage: dlrel PATH UNITS
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: dlrel PATH UNITS\n");
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		printf("dlopen failed: %s\n", dlerror());
		return 1;
	}
	uint64_t (*fn)(uint64_t, uint64_t) = (uint64_t(*)(uint64_t, uint64_t))dlsym(h, "plug_work");
	if (!fn) {
		printf("dlsym failed\n");
		return 1;
	}
	printf("plug %llu\n", (unsigned long long)fn(1, strtoull(argv[2], NULL, 10)));
	dlclose(h);
	return 0;
}
