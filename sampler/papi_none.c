/* papi_none.c - what stands for papi.c when sonde is built without PAPI's headers
 * (CMake: SONDE_PAPI=OFF, or AUTO without libpapi-dev and libpfm4-dev): a PAPI
 * sampling source is dropped at start with one line saying why, as papi.c drops one
 * whose library cannot be loaded; no thread ever has a PAPI event set. Ordinary
 * context (start), like papi.c.
 */
#define _GNU_SOURCE /* sampler.h: struct dl_phdr_info */
#include "sampler/sampler.h"

void sd_papi_probe(struct sd_config *cfg)
{
	for (unsigned i = cfg->nsources; i-- > 0;) {
		if (cfg->sources[i].kind != SD_SRC_PAPI)
			continue;
		sd_msg("sonde: %s: this sonde was built without PAPI (PAPI sources dropped; "
		       "rebuild with libpapi-dev and libpfm4-dev, or sample with cpu-time)",
		       cfg->sources[i].event);
		sd_source_drop(cfg, i);
	}
}

int sd_papi_thread_open(struct sd_thread *t)
{
	t->papi_es = -1;
	for (unsigned i = 0; i < SD_MAX_SOURCES; i++)
		t->papi_src[i] = -1, t->papi_seen[i] = 0;
	return 0;
}

void sd_papi_thread_account(struct sd_thread *t)
{
	(void)t;
}

void sd_papi_thread_close(struct sd_thread *t)
{
	(void)t;
}

void sd_papi_exec_prepare(struct sd_thread *t, int stop)
{
	(void)t, (void)stop;
}

void sd_papi_fork_child(void)
{
}
