/*
 * events_papi.c: the PAPI part of `sonde events` (cmd_events.c), built when libpapi is
 * found (pkg-config `papi`; otherwise events_nopapi.c). Called once from the CLI's only
 * thread; it initialises PAPI in the `sonde` process itself, which is what the runtime
 * does in a profiled one, so what works here works there for the same user.
 *
 * Presets are available when PAPI maps them to at least one native event here
 * (PAPI_query_event and the event info's count). Native events are checked by really
 * creating an event set, adding the event and starting and stopping it: an event can be
 * listed and still be refused at start (perf_event_paranoid, no PMU).
 */
#include "analyze/cli/cli.h"

#include <papi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Does the kernel expose a CPU PMU? (no: a VM without virtual performance counters) */
static int have_pmu(void)
{
	return access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
	       access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0 ||
	       access("/sys/bus/event_source/devices/armv8_pmuv3_0", F_OK) == 0;
}

/* PAPI_library_init failed with r: the row that says why. 0 or -ENOMEM. */
static int add_init_failed(struct sd_events *ev, int r)
{
	char why[2 * PAPI_HUGE_STR_LEN + 256];
	if (r > 0)
		snprintf(why, sizeof(why), "PAPI_library_init: libpapi version %d.%d, sonde "
			 "was built with %d.%d (rebuild sonde)", PAPI_VERSION_MAJOR(r),
			 PAPI_VERSION_MINOR(r), PAPI_VERSION_MAJOR(PAPI_VER_CURRENT),
			 PAPI_VERSION_MINOR(PAPI_VER_CURRENT));
	else
		snprintf(why, sizeof(why), "PAPI_library_init: %s", PAPI_strerror(r));
	return sd_events_add(ev, "papi", "PAPI", "unavailable", "", why);
}

/* The row of the perf_event component, which everything below goes through; when it is
 * missing or disabled, why, in comp_reason (size len; else ""). 0 or -ENOMEM. */
static int add_component(struct sd_events *ev, char *comp_reason, size_t len)
{
	char why[2 * PAPI_HUGE_STR_LEN + 256];
	int cidx = PAPI_get_component_index("perf_event");
	const PAPI_component_info_t *ci = cidx >= 0 ? PAPI_get_component_info(cidx) : NULL;
	comp_reason[0] = 0;
	if (!ci)
		snprintf(comp_reason, len, "PAPI has no perf_event component");
	else if (ci->disabled) {
		/* the runtime says the same (sampler/papi.c): every event of the component
		 * is refused, software ones such as perf::TASK-CLOCK included */
		const char *dr = ci->disabled_reason[0] ? ci->disabled_reason
						       : PAPI_strerror(ci->disabled);
		if (!strncmp(dr, "Error ", 6))
			dr += 6;
		snprintf(comp_reason, len, "PAPI's perf_event component is disabled: %s", dr);
	}
	if (comp_reason[0]) {
		snprintf(why, sizeof(why), "%s; PAPI overflow sampling cannot work here (sample "
			 "with cpu-time@1ms)", comp_reason);
		return sd_events_add(ev, "papi", "perf_event component", "unavailable", "papi",
				     why);
	}
	return sd_events_add(ev, "papi", "perf_event component", "available", "papi",
			     "PAPI_library_init ok");
}

/* A row per preset PAPI knows: available when it maps to a native event here. 0 or
 * -ENOMEM. */
static int add_presets(struct sd_events *ev, const char *comp_reason, int pmu)
{
	int code = PAPI_PRESET_MASK;
	if (PAPI_enum_event(&code, PAPI_ENUM_FIRST) != PAPI_OK)
		return 0;
	do {
		PAPI_event_info_t info;
		if (PAPI_get_event_info(code, &info) != PAPI_OK || !info.symbol[0])
			continue;
		int ok = PAPI_query_event(code) == PAPI_OK && info.count > 0;
		const char *reason = ok ? info.long_descr
				   : comp_reason[0] ? comp_reason
				   : pmu ? "no hardware counter for it on this CPU"
				   : "no hardware counter for it on this CPU; this VM has no PMU";
		if (sd_events_add(ev, "papi-preset", info.symbol, ok ? "available" : "unavailable",
				  ok ? "papi" : "", reason))
			return -ENOMEM;
	} while (PAPI_enum_event(&code, PAPI_ENUM_EVENTS) == PAPI_OK);
	return 0;
}

/* A row per native event that matters, available when an event set of it really
 * started and stopped. 0 or -ENOMEM. */
static int add_natives(struct sd_events *ev, const char *comp_reason, int pmu)
{
	static const char *const natives[] = { "perf::TASK-CLOCK", "perf::CPU-CLOCK",
					       "perf::PAGE-FAULTS", "perf::CONTEXT-SWITCHES",
					       "perf::INSTRUCTIONS", "perf::CYCLES" };
	char why[2 * PAPI_HUGE_STR_LEN + 256];
	for (size_t i = 0; i < sizeof(natives) / sizeof(natives[0]); i++) {
		int es = PAPI_NULL, step = 0;
		long long v[1];
		const char *what = "PAPI_create_eventset";
		int r = PAPI_create_eventset(&es);
		if (r == PAPI_OK && (what = "PAPI_add_named_event", step = 1,
				     r = PAPI_add_named_event(es, natives[i])) == PAPI_OK &&
		    (what = "PAPI_start", step = 2, r = PAPI_start(es)) == PAPI_OK)
			(void)(what = "PAPI_stop", step = 3, r = PAPI_stop(es, v));
		if (step >= 1)
			PAPI_cleanup_eventset(es);
		if (es != PAPI_NULL)
			PAPI_destroy_eventset(&es);
		if (r == PAPI_OK) {
			if (sd_events_add(ev, "papi-native", natives[i], "available", "papi",
					  "event set started and stopped"))
				return -ENOMEM;
			continue;
		}
		if (comp_reason[0]) /* the component's reason is the whole story */
			snprintf(why, sizeof(why), "%s", comp_reason);
		else
			snprintf(why, sizeof(why), "%s: %s%s", what, PAPI_strerror(r),
				 r == PAPI_ENOEVNT && !pmu ? "; this VM has no PMU" : "");
		if (sd_events_add(ev, "papi-native", natives[i], "unavailable", "", why))
			return -ENOMEM;
	}
	return 0;
}

int sd_events_papi(struct sd_events *ev, int paranoid)
{
	char comp_reason[PAPI_HUGE_STR_LEN + 128];
	int r = PAPI_library_init(PAPI_VER_CURRENT);

	(void)paranoid;
	if (r != PAPI_VER_CURRENT)
		return add_init_failed(ev, r);
	if (add_component(ev, comp_reason, sizeof(comp_reason)))
		return -ENOMEM;
	int pmu = have_pmu();
	if (add_presets(ev, comp_reason, pmu) || add_natives(ev, comp_reason, pmu))
		return -ENOMEM;
	PAPI_shutdown();
	return 0;
}
