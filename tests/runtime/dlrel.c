/* dlrel.c - dlopen()s a plugin by the path given (a relative one such as
 * "./libplug.so", as programs load their plugins from the directory they run
 * in) and runs UNITS work units in it (plug_work, about 28 us each), so that
 * samples land in a module the stream names by a relative path.
 * Prints "plug CHECKSUM". With "newns", the plugin is loaded with
 * dlmopen(LM_ID_NEWLM) into a link-map namespace of its own, with its own
 * copy of libc (tests/e2e/round3.sh, case dlmopen).
 *
 * usage: dlrel PATH UNITS [newns]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: dlrel PATH UNITS\n");
		return 2;
	}
	int newns = argc > 3 && !strcmp(argv[3], "newns");
	void *h = newns ? dlmopen(LM_ID_NEWLM, argv[1], RTLD_NOW) : dlopen(argv[1], RTLD_NOW);
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
