/* dlns.h - dl_iterate_phdr over every link-map namespace, for the runtime's
 * own use (the module map, the handler's loader snapshot).
 *
 * glibc's dl_iterate_phdr visits only the caller's namespace (the base, for
 * sonde): a library the program dlmopen()s into a new namespace would have no
 * MODULE record and no unwind tables, and its samples would be single
 * unsymbolized frames. The other namespaces are walked through the debugger
 * interface (_r_debug with r_version 2: one r_debug per namespace, glibc >=
 * 2.35), right after the base's first object (the program), from inside the
 * base walk's callback, while the loader's
 * list lock is held (no object comes or goes meanwhile; no other loader lock
 * is taken). Each object's program headers are read from its ELF header at
 * its load address through the kernel (process_vm_readv on this process: an
 * unreadable address fails, never faults). The program's own calls of
 * dl_iterate_phdr are never changed. Ordinary context only.
 */
#ifndef SONDE_COMMON_DLNS_H
#define SONDE_COMMON_DLNS_H

#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "common/sys.h"

typedef int (*sd_phdr_cb)(struct dl_phdr_info *, size_t, void *);
typedef int (*sd_phdr_iter)(sd_phdr_cb, void *);

#define SD_DLNS_MAX_PHDRS 64

struct sd_dlns_walk {
	sd_phdr_cb cb;
	void *data;
	int started, ret;
};

static inline int sd_dlns_read(void *dst, const void *src, size_t n)
{
	struct iovec local = {.iov_base = dst, .iov_len = n};
	struct iovec remote = {.iov_base = (void *)src, .iov_len = n};
	return sd_sys(SYS_process_vm_readv, sd_sys(SYS_getpid), &local, 1, &remote, 1, 0) ==
			       (long)n
		       ? 0
		       : -1;
}

/* The objects of the namespaces other than the base, to w->cb. */
/* The loader's _r_debug is an r_debug_extended when r_version >= 2. */
extern struct r_debug_extended sd_r_debug_ext __asm__("_r_debug");

static inline int sd_dlns_others(struct sd_dlns_walk *w, const struct dl_phdr_info *base)
{
	if (sd_r_debug_ext.base.r_version < 2)
		return 0;
	const struct r_debug_extended *ns = sd_r_debug_ext.r_next;
	for (int k = 0; ns && k < 64; ns = ns->r_next, k++) {
		for (const struct link_map *l = ns->base.r_map; l; l = l->l_next) {
			ElfW(Ehdr) eh;
			ElfW(Phdr) ph[SD_DLNS_MAX_PHDRS];
			if (!l->l_addr || sd_dlns_read(&eh, (const void *)l->l_addr, sizeof eh) != 0 ||
			    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
			    eh.e_phentsize != sizeof(ElfW(Phdr)) || !eh.e_phnum ||
			    eh.e_phnum > SD_DLNS_MAX_PHDRS ||
			    sd_dlns_read(ph, (const char *)l->l_addr + eh.e_phoff,
					 eh.e_phnum * sizeof ph[0]) != 0)
				continue;
			struct dl_phdr_info info;
			memset(&info, 0, sizeof info);
			info.dlpi_addr = l->l_addr;
			info.dlpi_name = l->l_name ? l->l_name : "";
			info.dlpi_phdr = ph;
			info.dlpi_phnum = eh.e_phnum;
			info.dlpi_adds = base->dlpi_adds;
			info.dlpi_subs = base->dlpi_subs;
			int r = w->cb(&info, sizeof info, w->data);
			if (r)
				return r;
		}
	}
	return 0;
}

static inline int sd_dlns_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct sd_dlns_walk *w = data;
	if ((w->ret = w->cb(info, size, w->data)) != 0 || w->started)
		return w->ret;
	w->started = 1; /* after the base's first object (the program) */
	return w->ret = sd_dlns_others(w, info);
}

/* iter (the real dl_iterate_phdr) over the base namespace, and the others. */
static inline int sd_dl_iterate_all(sd_phdr_iter iter, sd_phdr_cb cb, void *data)
{
	struct sd_dlns_walk w = {.cb = cb, .data = data};
	int r = iter(sd_dlns_cb, &w);
	return r ? r : w.ret;
}

#endif
