/* dlrpath.c - dlopen()s a plugin by bare name that only the program's own
 * DT_RUNPATH can find: a preloaded dlopen wrapper must keep the caller's
 * search path. Prints "loaded" and the plugin's result.
 *
 * usage: dlrpath NAME
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "libsonde_rpath_plug.so";
	void *h = dlopen(name, RTLD_NOW);
	if (!h) {
		printf("dlopen failed: %s\n", dlerror());
		return 1;
	}
	uint64_t (*fn)(uint64_t, uint64_t) = (uint64_t(*)(uint64_t, uint64_t))dlsym(h, "plug_work");
	if (!fn) {
		printf("dlsym failed\n");
		return 1;
	}
	printf("loaded %llu\n", (unsigned long long)(fn(1, 1) & 0xff));
	dlclose(h);
	return 0;
}
