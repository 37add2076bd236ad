/* papi_none.c - what stands for papi_dl.c when sonde is built without PAPI's and
 * libpfm4's headers (CMake: SONDE_PAPI=OFF, or AUTO without libpapi-dev and
 * libpfm4-dev): a PAPI or libpfm4 counter is unavailable, and says why. Ordinary
 * context, like papi_dl.c.
 */
#include <stdio.h>

#include "kernel/kernel.h"

int sd_kernel_papi_encode(const char *tok, struct perf_event_attr *attr, char *native,
			  size_t nlen, char *reason, size_t rlen)
{
	(void)attr;
	snprintf(native, nlen, "%.120s", tok);
	snprintf(reason, rlen, "this sonde was built without PAPI (rebuild with libpapi-dev and "
		 "libpfm4-dev)");
	return -1;
}
