/* warn.c - the annotation API's warnings (docs/API.md, the table of
 * warnings): each distinct text said once, through sonde's log (sd_msg).
 *
 * Program threads, ordinary context (the annotation entry points, api.c,
 * and the context tree, context.c). Lock-free: the first 64 distinct texts
 * are remembered by hash and said once, the 65th is said, and new ones
 * after it stay quiet.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "annotate/annotate_int.h"
#include "common/log.h"

void sd_ann_warn(const char *fmt, ...)
{
	static _Atomic uint64_t said[64];
	static _Atomic unsigned nsaid;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof buf - 2)
		n = (int)sizeof buf - 2;
	uint64_t h = sd_ann_hash_str(buf, (size_t)n) | 1;
	unsigned k = atomic_load(&nsaid);
	for (unsigned i = 0; i < k && i < 64; i++)
		if (atomic_load(&said[i]) == h)
			return;
	unsigned slot = atomic_fetch_add(&nsaid, 1);
	if (slot < 64)
		atomic_store(&said[slot], h);
	else if (slot > 64)
		return; /* too many distinct warnings: stay quiet */
	sd_msg("%s", buf);
}
