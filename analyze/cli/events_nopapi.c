/*
 * events_nopapi.c: the PAPI part of `sonde events` when sonde was built without libpapi
 * (chosen by analyze/CMakeLists.txt instead of events_papi.c): one line saying so.
 */
#include "analyze/cli/cli.h"

int sd_events_papi(struct sd_events *ev, int paranoid)
{
	(void)paranoid;
	return sd_events_add(ev, "papi", "PAPI", "unavailable", "",
			     "sonde was built without libpapi (install libpapi-dev and rebuild)");
}
