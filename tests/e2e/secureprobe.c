/* secureprobe.c - says what the runtime decided in this process, for
 * tests/e2e/secure.sh: "secure S loaded L active A", where S is the kernel's
 * AT_SECURE (setuid/setgid execution), L whether libsonde is mapped here
 * (sonde_rt_active can be found) and A what it returns (1: profiling). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <sys/auxv.h>

int main(void)
{
	int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "sonde_rt_active");
	printf("secure %lu loaded %d active %d\n", getauxval(AT_SECURE), active != NULL,
	       active ? active() : 0);
	return 0;
}
