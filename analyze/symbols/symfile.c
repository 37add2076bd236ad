/*
 * symfile.c: the ELF files behind the symbolizer's modules (symbols_int.h: struct
 * symfile), for symbols.c: a module's file opened only if it is a regular ELF file
 * (checked on the descriptor), identified by build-id or by identity so that modules
 * share it, its symbol cache found (the cache directory, SONDE_CACHE) and checked, the
 * vDSO of the analyzer's own kernel copied into a memory file, its symbol table read once
 * and searched as elfutils would, and an address's raw location read from DWARF (the
 * function, file:line and inlined calls). Each failure is one warning naming the module
 * (it is then shown as module+0xADDR). The design is described at the top of symbols.c.
 * Runs in the one thread that merges streams; not thread-safe.
 */
#define _GNU_SOURCE /* O_PATH, memfd_create */
#include "analyze/symbols/symbols_int.h"

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/common.h"

/* ---- opening files ------------------------------------------------------------------ */

/* Open path for reading if it is a regular ELF file on disk: an fd (O_CLOEXEC) and *st,
 * or -1 with the reason in *why. Nothing but a regular file is ever opened for reading:
 * the type is checked on an O_PATH descriptor (opening no device, waiting for no FIFO
 * writer), then on the O_RDONLY|O_NONBLOCK one, which must be the same inode. */
static int open_elf(const char *path, struct stat *st, const char **why)
{
	struct stat st2;
	struct statfs sfs;
	unsigned char magic[4];
	int fd = -1, pfd = open(path, O_PATH | O_CLOEXEC);

	if (pfd < 0) {
		*why = strerror(errno);
		return -1;
	}
	*why = "not a regular file";
	if (fstat(pfd, st) < 0 || !S_ISREG(st->st_mode))
		goto bad;
	if (fstatfs(pfd, &sfs) == 0 && (sfs.f_type == PROC_SUPER_MAGIC ||
					sfs.f_type == SYSFS_MAGIC)) {
		*why = "a file of /proc or /sys, not an object file";
		goto bad;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		*why = strerror(errno);
		goto bad;
	}
	if (fstat(fd, &st2) < 0 || !S_ISREG(st2.st_mode) || st2.st_dev != st->st_dev ||
	    st2.st_ino != st->st_ino) {
		*why = "replaced while being opened";
		goto bad;
	}
	*st = st2;
	if (pread(fd, magic, sizeof(magic), 0) != (ssize_t)sizeof(magic) ||
	    memcmp(magic, "\177ELF", 4)) {
		*why = "not an ELF file";
		goto bad;
	}
	close(pfd);
	return fd;
bad:
	if (fd >= 0)
		close(fd);
	close(pfd);
	return -1;
}

static void fileid_of(struct sd_fileid *id, const struct stat *st, const uint8_t *bid,
		      size_t bid_len)
{
	memset(id, 0, sizeof(*id));
	if (bid_len) /* a module without a build-id: bid may be NULL */
		memcpy(id->bid, bid, bid_len);
	id->bid_len = (uint32_t)bid_len;
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->size = (uint64_t)st->st_size;
	id->mtime_s = st->st_mtim.tv_sec;
	id->mtime_ns = st->st_mtim.tv_nsec;
	id->ctime_s = st->st_ctim.tv_sec;
	id->ctime_ns = st->st_ctim.tv_nsec;
}

static int same_identity(const struct sd_fileid *a, const struct sd_fileid *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_s == b->mtime_s && a->mtime_ns == b->mtime_ns &&
	       a->ctime_s == b->ctime_s && a->ctime_ns == b->ctime_ns;
}

/* 1 if the ELF file open on fd has GNU build-id bid, 0 if not (another or none). */
static int has_build_id(int fd, const uint8_t *bid, size_t len)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *p;
	ssize_t n = e ? dwelf_elf_gnu_build_id(e, &p) : -1;
	int same = n == (ssize_t)len && !memcmp(p, bid, len);

	if (e)
		elf_end(e);
	return same;
}

/* The cache directory, opened on first use: fd >= 0, or -1 (off, or unusable: one
 * warning). SONDE_CACHE: "off" (none), a directory, or unset/empty (the default). */
static int cache_dir(struct sd_symbolizer *sy)
{
	const char *env = getenv("SONDE_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char why[160];

	if (sy->cachefd != -2)
		return sy->cachefd;
	sy->cachefd = -1;
	if (env && !strcmp(env, "off"))
		return -1;
	size_t l = 64 + (env ? strlen(env) : 0) + (xdg ? strlen(xdg) : 0) +
		   (home ? strlen(home) : 0);
	if (!(sy->cachedir = malloc(l)))
		return -1;
	if (env && env[0])
		snprintf(sy->cachedir, l, "%s", env);
	else if (xdg && xdg[0] == '/')
		snprintf(sy->cachedir, l, "%s/sonde", xdg);
	else if (home && home[0] == '/')
		snprintf(sy->cachedir, l, "%s/.cache/sonde", home);
	else
		return -1;
	sy->cachefd = sd_symcache_dir_open(sy->cachedir, why, sizeof(why));
	/* the default place goes unused quietly where it cannot be made (no home: a
	 * daemon's user); a place that is there but unsafe, or one asked for, is said */
	if (sy->cachefd < 0 && (env && env[0] ? 1 : errno != ENOENT && errno != EACCES &&
				errno != EROFS && errno != ENOTDIR))
		sd_msg("sonde: %s: symbol cache not used: %s (set SONDE_CACHE to "
			"another directory, or to off)", sy->cachedir, why);
	return sy->cachefd;
}

/* Name of f's cache file into buf: the build-id in hex and the size (a stripped copy of
 * a file has its build-id, not its symbols), else a hash of the path and identity (a
 * file without build-id is known by those alone). */
static void cache_name(const struct symfile *f, char *buf, size_t len)
{
	if (f->id.bid_len) {
		size_t o = 0;
		for (uint32_t i = 0; i < f->id.bid_len && o + 3 < len; i++)
			o += (size_t)snprintf(buf + o, len - o, "%02x", f->id.bid[i]);
		snprintf(buf + o, len - o, "-%" PRIx64 ".sym", f->id.size);
		return;
	}
	uint64_t h = sd_fnv1a(f->path, strlen(f->path));
	h = sd_fnv1a_more(h, &f->id.dev, sizeof(f->id) - offsetof(struct sd_fileid, dev));
	snprintf(buf, len, "noid-%016" PRIx64 ".sym", h);
}

static int fsym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank; /* best last: met first going down */
}

static int bind_rank(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

/* ---- PLT entries: func@plt, as perf names them ---------------------------------------- */

/* The section of elf named name (NULL: none), its header in *sh. */
static Elf_Scn *section(Elf *elf, size_t shstr, const char *name, GElf_Shdr *sh)
{
	for (Elf_Scn *s = elf_nextscn(elf, NULL); s; s = elf_nextscn(elf, s)) {
		const char *n = gelf_getshdr(s, sh) ? elf_strptr(elf, shstr, sh->sh_name) : NULL;
		if (n && !strcmp(n, name))
			return s;
	}
	return NULL;
}

/* PLT symbols of f (x86-64, aarch64): entry k of .plt.sec (16 bytes), or entry k of .plt
 * after its header (16 bytes on x86-64, 32 on aarch64), calls the function of .rela.plt's
 * k-th relocation: a symbol NAME@plt of the entry's size each. Appended to *syms (grown);
 * how many, 0 when there are none or on ENOMEM (the entries keep the nearest name). */
static size_t plt_syms(struct symfile *f, struct fsym **syms, size_t n)
{
	GElf_Addr bias;
	GElf_Shdr rsh, dsh, psh, ssh, ehs;
	size_t shstr, total = 0, used = 0;
	Elf *elf = dwfl_module_getelf(f->mod, &bias);
	GElf_Ehdr eh;
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstr))
		return 0;
	size_t head = eh.e_machine == EM_X86_64 ? 16 : eh.e_machine == EM_AARCH64 ? 32 : 0;
	Elf_Scn *rs = section(elf, shstr, ".rela.plt", &rsh);
	Elf_Scn *ds = rs ? elf_getscn(elf, rsh.sh_link) : NULL;
	Elf_Scn *ps = section(elf, shstr, ".plt.sec", &ssh);
	int sec = ps != NULL;
	if (!ps)
		ps = section(elf, shstr, ".plt", &ssh);
	psh = ssh;
	Elf_Data *rd = rs ? elf_getdata(rs, NULL) : NULL, *dd = ds ? elf_getdata(ds, NULL) : NULL;
	if (!head || !ps || !rd || !dd || !gelf_getshdr(ds, &dsh) || !rsh.sh_entsize ||
	    !gelf_getshdr(elf_getscn(elf, dsh.sh_link), &ehs))
		return 0;
	size_t nrel = rsh.sh_size / rsh.sh_entsize, first = sec ? 0 : head;
	if (psh.sh_size <= first || nrel > (psh.sh_size - first) / 16)
		nrel = psh.sh_size > first ? (psh.sh_size - first) / 16 : 0;
	for (size_t k = 0; k < nrel; k++) {
		GElf_Rela r;
		GElf_Sym s;
		const char *name = gelf_getrela(rd, (int)k, &r) &&
				   gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &s)
				   ? elf_strptr(elf, dsh.sh_link, s.st_name) : NULL;
		total += name ? strlen(name) + 5 : 0;
	}
	struct fsym *g = nrel ? realloc(*syms, (n + nrel) * sizeof(*g)) : NULL;
	if (g)
		*syms = g;
	if (!g || !(f->plt_names = malloc(total + 1)))
		return 0;
	size_t m = 0;
	for (size_t k = 0; k < nrel; k++) {
		GElf_Rela r;
		GElf_Sym s;
		const char *name = gelf_getrela(rd, (int)k, &r) &&
				   gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &s)
				   ? elf_strptr(elf, dsh.sh_link, s.st_name) : NULL;
		if (!name || !name[0] || used + strlen(name) + 5 > total)
			continue;
		char *p = f->plt_names + used;
		used += (size_t)sprintf(p, "%s@plt", name) + 1;
		g[n + m++] = (struct fsym){ psh.sh_addr + bias + first + 16 * k, 16, p, 3u << 24 };
	}
	return m;
}

/* Read f's symbols into the sorted table: 1 if it has a defined function symbol, 0 if
 * not (stripped), -ENOMEM. */
static int load_symtab(struct symfile *f)
{
	int nsyms = dwfl_module_getsymtab(f->mod), funcs = 0;
	size_t n = 0;

	if (nsyms <= 1)
		return 0;
	if (!(f->syms = malloc((size_t)nsyms * sizeof(*f->syms))))
		return -ENOMEM;
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym(f->mod, i, &sym, &shndx);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		if (type == STT_FUNC)
			funcs = 1;
		/* symbols read first win ties, as in elfutils: globals come after locals in
		 * a table, so the order counts down from the end */
		f->syms[n++] = (struct fsym){ sym.st_value, sym.st_size, name,
			(uint32_t)bind_rank(&sym) << 24 | (uint32_t)(0xffffff - (i & 0xffffff)) };
	}
	n += plt_syms(f, &f->syms, n);
	f->nsyms = n;
	if (!n)
		return funcs;
	qsort(f->syms, n, sizeof(*f->syms), fsym_cmp);
	if (!(f->maxend = malloc(n * sizeof(*f->maxend))))
		return -ENOMEM;
	uint64_t mx = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t e = f->syms[i].addr + f->syms[i].size;
		mx = e > mx ? e : mx;
		f->maxend[i] = mx;
	}
	return funcs;
}

/* The symbol table's name for addr (NULL: none), as dwfl_module_addrinfo chooses it. */
static const char *symtab_name(const struct symfile *f, uint64_t addr)
{
	size_t lo = 0, hi = f->nsyms;

	while (lo < hi) { /* first symbol above addr */
		size_t mid = lo + (hi - lo) / 2;
		if (f->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* the closest sized symbol that covers addr: only symbols whose running maximum
	 * end is above addr can (at one address the best is met first) */
	for (size_t i = lo; i-- > 0 && f->maxend[i] > addr;) {
		const struct fsym *s = &f->syms[i];
		if (s->size && addr - s->addr < s->size)
			return s->name;
	}
	/* else the closest sizeless label at or above the end of every symbol below */
	uint64_t min_label = f->maxend[lo - 1];
	for (size_t i = lo; i-- > 0 && f->syms[i].addr >= min_label;)
		if (!f->syms[i].size)
			return f->syms[i].name;
	return NULL;
}

/* Hand f's descriptor to elfutils and read its symbol table (at the first address not in
 * its cache). f->ok tells whether it can be used; a warning names the module path. */
void sd_symfile_open(struct sd_symbolizer *sy, struct symfile *f, const char *base)
{
	const unsigned char *bits;
	GElf_Addr vaddr;

	if (f->opened)
		return;
	f->opened = 1;
	f->ok = 0;
	if (f->fd < 0)
		return;
	f->dwfl = dwfl_begin(&sy->cb);
	if (f->dwfl)
		f->mod = dwfl_report_elf(f->dwfl, base, f->path, f->fd, 0, true);
	void **ud;
	if (f->mod && dwfl_module_info(f->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
		*ud = sy; /* for debuginfod.c's find_debuginfo */
	if (f->mod)
		f->fd = -1; /* the Dwfl's now */
	if (f->dwfl)
		dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod) {
		sd_msg("sonde: %s: %s (cannot symbolize; showing %s+0xADDR)", f->path,
			dwfl_errmsg(-1), base);
		return;
	}
	if (f->id.bid_len) {
		int n = dwfl_module_build_id(f->mod, &bits, &vaddr);
		if (n != (int)f->id.bid_len || memcmp(bits, f->id.bid, f->id.bid_len)) {
			sd_msg("sonde: %s: build-id differs from the profiled file (it "
				"was rebuilt or replaced since the run; showing %s+0xADDR)",
				f->path, base);
			return;
		}
	}
	int r = load_symtab(f);
	if (r == 0)
		sd_msg("sonde: %s: no symbols (stripped?; showing %s+0xENTRY, each function by the "
			"entry of its unwind table's range)", f->path, base);
	/* 1: symbols; 2: none, but usable: debug info, or the unwind table's ranges */
	f->ok = r > 0 ? 1 : r == 0 ? 2 : 0;
	Dwarf_Addr dbias;
	if (f->ok && !dwfl_module_getdwarf(f->mod, &dbias))
		sd_symcache_lacks_debug_set(f->cache); /* sd_dbgd_cache_stale */
}

/* The symfile of a module whose file is open on fd (taken), registered if new: its index,
 * or -1 (the module falls back: a build-id that differs, no memory). */
static long file_of(struct sd_symbolizer *sy, struct symmod *m, int fd, const struct stat *st)
{
	struct sd_fileid id;
	char key[16 + sizeof(id)], name[2 * SD_BUILD_ID_MAX + 32];
	size_t klen;
	uint32_t idx;
	int same = 0;
	struct sd_symcache *c = NULL;

	fileid_of(&id, st, m->build_id, m->build_id_len);
	if (id.bid_len) { /* and size: a stripped copy keeps its build-id */
		memcpy(key, id.bid, id.bid_len);
		memcpy(key + id.bid_len, &id.size, sizeof(id.size));
		klen = id.bid_len + sizeof(id.size);
	} else { /* its identity: hard links to one file share it */
		memcpy(key, "noid", 4);
		memcpy(key + 4, &id.dev, sizeof(id) - offsetof(struct sd_fileid, dev));
		klen = 4 + sizeof(id) - offsetof(struct sd_fileid, dev);
	}
	if (sd_strmap_get(&sy->sfilekeys, key, klen, &idx)) {
		struct symfile *f = &sy->sfiles[idx];
		/* another path (or the same one, replaced) with this build-id and size: its
		 * own file must have the build-id too */
		if (id.bid_len && !same_identity(&id, &f->id) && !has_build_id(fd, id.bid, id.bid_len))
			goto differs;
		close(fd);
		return idx;
	}
	struct symfile nf = { .fd = fd, .id = id };
	nf.path = strdup(m->path);
	if (!nf.path)
		goto nomem;
	int cfd = cache_dir(sy);
	if (cfd >= 0) {
		cache_name(&nf, name, sizeof(name));
		int r = sd_symcache_load(cfd, name, &id, &c, &same);
		if (r == -EINVAL)
			sd_msg("sonde: %s/%s: not a valid symbol cache file (ignored; it "
				"will be rewritten)", sy->cachedir, name);
		if (!(nf.cache_name = strdup(name)))
			goto nomem;
		if (!id.bid_len && c && !same) { /* identity is all a file without build-id has */
			sd_symcache_free(c);
			c = NULL;
		}
		if (c && sd_dbgd_cache_stale(sy, &id, c)) { /* made without debug info */
			sd_symcache_free(c);
			c = NULL;
		}
	}
	/* the recorded build-id is checked unless a cache made from this very file says so */
	if (id.bid_len && !(c && same) && !has_build_id(fd, id.bid, id.bid_len)) {
		free(nf.path);
		free(nf.cache_name);
		sd_symcache_free(c);
		goto differs;
	}
	if (c && !same)
		sd_symcache_touch(c); /* same build-id, another file: save its identity */
	nf.cache = c ? c : sd_symcache_new();
	if (!nf.cache || sd_grow(&sy->sfiles, &sy->capsfiles, sy->nsfiles + 1, sizeof(nf)) ||
	    sd_strmap_put(&sy->sfilekeys, key, klen, (uint32_t)sy->nsfiles)) {
		free(nf.path);
		free(nf.cache_name);
		sd_symcache_free(nf.cache);
		goto nomem;
	}
	sy->sfiles[sy->nsfiles] = nf;
	return (long)sy->nsfiles++;
differs:
	close(fd);
	long a = sd_archive_file(sy, m, "rebuilt or replaced since the run");
	if (a >= 0)
		return a;
	sd_msg("sonde: %s: build-id differs from the profiled file (it was rebuilt or "
		"replaced since the run; showing %s+0xADDR)", m->path, m->base);
	return -1;
nomem:
	close(fd);
	return -1;
}

/* A module without build-id whose file is not the one the stream recorded (another size
 * or mtime): 1 after saying so (its names would be the new file's), else 0. */
static int changed(const struct symmod *m, const struct stat *st)
{
	uint64_t mt = (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
	if ((uint64_t)st->st_size == m->fsize && mt == m->fmtime_ns)
		return 0;
	sd_msg("sonde: %s: changed since the run (size %" PRIu64 " then, %" PRIu64 " now; "
		"modified %+.3f s later) and it has no build-id to find the profiled file's names by "
		"(showing %s+0xADDR; link with -Wl,--build-id to keep profiles readable)", m->path,
		m->fsize, (uint64_t)st->st_size, ((double)mt - (double)m->fmtime_ns) / 1e9, m->base);
	return 1;
}

/* The vDSO is no file, but the kernel maps the same image into every process: when the
 * stream's [vdso] has the build-id of the analyzer's own vDSO (the same kernel), a copy
 * of that image in a memory file is symbolized like any ELF file. A descriptor, or -1. */
static int own_vdso(const struct symmod *m)
{
	const ElfW(Ehdr) *e = (const void *)getauxval(AT_SYSINFO_EHDR);
	uint8_t bid[SD_BUILD_ID_MAX];
	if (!e || !m->build_id_len || memcmp(e->e_ident, ELFMAG, SELFMAG) ||
	    e->e_phentsize != sizeof(ElfW(Phdr)))
		return -1;
	const ElfW(Phdr) *ph = (const void *)((const char *)e + e->e_phoff);
	uintptr_t bias = (uintptr_t)e;
	size_t size = (size_t)e->e_shoff + (size_t)e->e_shnum * e->e_shentsize;
	for (unsigned i = 0; i < e->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !ph[i].p_offset)
			bias = (uintptr_t)e - ph[i].p_vaddr;
		if (ph[i].p_offset + ph[i].p_filesz > size)
			size = ph[i].p_offset + ph[i].p_filesz;
	}
	size_t n = sd_build_id_of(ph, e->e_phnum, bias, bid, sizeof bid);
	if (n != m->build_id_len || memcmp(bid, m->build_id, n) || size > (1u << 20))
		return -1;
	int fd = memfd_create("sonde-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, e, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Decide whether module m is symbolized (MOD_OPEN, with its symfile) or falls back to
 * module+offset names (with one warning, unless it is no file: [vdso] of another
 * kernel). */
void sd_symmod_open(struct sd_symbolizer *sy, struct symmod *m)
{
	struct stat st;
	const char *why;

	m->state = MOD_FALLBACK;
	if (!sy->addresses && !strcmp(m->path, "[vdso]")) {
		int fd = own_vdso(m);
		int ok = fd >= 0 && fstat(fd, &st) == 0;
		/* a memory file is new each time: its build-id and size are its identity, so
		 * that its symbol cache stays valid from one report to the next */
		st.st_dev = 0, st.st_ino = 0;
		st.st_mtim = st.st_ctim = (struct timespec){ 0, 0 };
		long f = ok ? file_of(sy, m, fd, &st) : -1;
		if (fd >= 0 && f < 0)
			close(fd);
		if (f >= 0) {
			m->file = (uint32_t)f;
			m->state = MOD_OPEN;
		}
		return;
	}
	if (sy->addresses || sd_sym_pseudo_path(m->path))
		return;
	if (m->rel_nocwd) {
		sd_msg("sonde: %s: relative module path and no working directory in the "
			"stream (the runtime that wrote it did not record `cwd`; showing %s+0xADDR)",
			m->path, m->base);
		return;
	}
	int fd = open_elf(m->path, &st, &why);
	long f = fd < 0 ? sd_archive_file(sy, m, why) : -1;
	if (f >= 0)
		goto named;
	if (fd < 0) {
		sd_msg("sonde: %s: %s (cannot symbolize; showing %s+0xADDR)", m->path,
			why, m->base);
		return;
	}
	if (!m->build_id_len && m->has_stat && changed(m, &st)) {
		close(fd);
		return;
	}
	f = file_of(sy, m, fd, &st);
	if (f < 0)
		return;
named:
	m->file = (uint32_t)f;
	m->state = MOD_OPEN;
}

/* Write every cache that gained addresses (one warning for the first failure). */
void sd_sym_save_caches(struct sd_symbolizer *sy)
{
	int warned = 0;

	sd_archive_save(sy); /* first: a saved cache is no longer dirty */
	for (size_t i = 0; i < sy->nsfiles; i++) {
		struct symfile *f = &sy->sfiles[i];
		if (!f->cache_name || sy->cachefd < 0 || !sd_symcache_dirty(f->cache))
			continue;
		int r = sd_symcache_save(sy->cachefd, f->cache_name, f->cache, &f->id);
		if (r && !warned++)
			sd_msg("sonde: %s/%s: cannot write the symbol cache: %s (set "
				"SONDE_CACHE to another directory, or to off)", sy->cachedir,
				f->cache_name, strerror(-r));
	}
}

/* Names made by qualified() for the address being resolved: they live until the next
 * sd_symfile_resolve (the cache copies them first). The merging thread only. */
static char qarena[8192];
static size_t qused;

/* The declaration d stands for (through DW_AT_abstract_origin and DW_AT_specification). */
static Dwarf_Die declaration(Dwarf_Die *d)
{
	Dwarf_Die decl = *d, next;
	Dwarf_Attribute a;
	for (int k = 0; k < 8; k++) {
		if ((dwarf_attr(&decl, DW_AT_abstract_origin, &a) ||
		     dwarf_attr(&decl, DW_AT_specification, &a)) && dwarf_formref_die(&a, &next))
			decl = next;
		else
			break;
	}
	return decl;
}

/* plain (a DIE's DW_AT_name, for want of a linkage name) qualified by the scopes that
 * declare it: a namespace, a class, a function (a lambda's operator(), inlined, has no
 * linkage name: alpha::{lambda:5}::operator(), not operator(), so that the lambdas of
 * two functions stay two). plain itself when nothing encloses it (C). */
static const char *qualified(Dwarf_Die *d, const char *plain)
{
	Dwarf_Die decl = declaration(d), *sc = NULL;
	int n = dwarf_getscopes_die(&decl, &sc);
	char buf[1024];
	size_t len = 0;
	for (int i = n - 1; i >= 1 && len < sizeof buf - 64; i--) {
		int tag = dwarf_tag(&sc[i]);
		const char *name = dwarf_diename(&sc[i]);
		Dwarf_Word line = 0;
		Dwarf_Attribute a;
		if (tag != DW_TAG_namespace && tag != DW_TAG_class_type && tag != DW_TAG_structure_type &&
		    tag != DW_TAG_union_type && tag != DW_TAG_subprogram)
			continue;
		dwarf_formudata(dwarf_attr(&sc[i], DW_AT_decl_line, &a), &line);
		if (name)
			len += (size_t)snprintf(buf + len, sizeof buf - len, "%s::", name);
		else if (tag == DW_TAG_namespace)
			len += (size_t)snprintf(buf + len, sizeof buf - len, "(anonymous namespace)::");
		else
			len += (size_t)snprintf(buf + len, sizeof buf - len, "{%s:%llu}::",
						!strcmp(plain, "operator()") ? "lambda" : "unnamed",
						(unsigned long long)line);
	}
	free(sc);
	if (!len || len >= sizeof buf - 64 || qused + len + strlen(plain) + 1 > sizeof qarena)
		return plain;
	char *q = qarena + qused;
	qused += (size_t)snprintf(q, sizeof qarena - qused, "%.*s%s", (int)len, buf, plain) + 1;
	return q;
}

/* Name of a subprogram or inlined-subroutine DIE: linkage name, else DW_AT_name qualified
 * by its scopes. */
static const char *die_name(Dwarf_Die *d)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_linkage_name, &a));

	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_MIPS_linkage_name, &a));
	if (n)
		return n;
	n = dwarf_diename(d);
	return n ? qualified(d, n) : NULL;
}

/* A function no symbol or DWARF names (a static function of a stripped library): named
 * by its entry, "BASE+0xENTRY", the start of the range that the unwind table (.eh_frame,
 * else .debug_frame) gives for addr, so that its addresses make one row; NULL when no
 * table covers addr (then each address is its own "BASE+0xADDR"). */
static const char *entry_name(const struct symfile *f, uint64_t addr, char *buf, size_t len)
{
	Dwarf_Addr bias = 0, start, end;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(f->mod, &bias);
	Dwarf_Frame *fr = NULL;
	const char *base = strrchr(f->path, '/');

	if (!cfi)
		cfi = dwfl_module_dwarf_cfi(f->mod, &bias);
	if (!cfi || addr < bias || dwarf_cfi_addrframe(cfi, addr - bias, &fr) || !fr)
		return NULL;
	int ok = dwarf_frame_info(fr, &start, &end, NULL) >= 0 && start + bias <= addr;
	free(fr);
	if (!ok)
		return NULL;
	snprintf(buf, len, "%.400s+0x%" PRIx64, base ? base + 1 : f->path, (uint64_t)(start + bias));
	return buf;
}

/* Up to this many inlined frames per address are kept (the outermost ones dropped). */

/* The raw location of addr in open file f, with elfutils, into *l (whose strings point
 * into f's Dwfl or into symbuf). */
void sd_symfile_resolve(struct symfile *f, uint64_t addr, struct sd_rawloc *l,
			char *symbuf, size_t symlen)
{
	Dwarf_Die *scopes = NULL;
	int line = 0;

	qused = 0;
	l->sym = symtab_name(f, addr);
	/* drop the symbol version ("memcpy@@GLIBC_2.14"): one function, one row; a PLT
	 * entry's "@plt" (plt_syms) stays */
	const char *at = l->sym ? strchr(l->sym, '@') : NULL;
	if (at && at > l->sym && strcmp(at, "@plt")) {
		snprintf(symbuf, symlen, "%.*s", (int)(at - l->sym), l->sym);
		l->sym = symbuf;
	}
	l->outer = NULL;
	l->ninl = 0;
	Dwfl_Line *dl = dwfl_module_getsrc(f->mod, addr);
	l->file = dl ? dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL) : NULL;
	l->line = l->file && line > 0 ? (uint32_t)line : 0;
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(f->mod, addr, &bias);
	int ns = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
	if (ns > 0) {
		/* the DIE chain from the innermost scope: concrete inlined instances nest in
		 * their callers, up to the subprogram */
		Dwarf_Die inner = scopes[0];
		free(scopes);
		scopes = NULL;
		ns = dwarf_getscopes_die(&inner, &scopes);
	}
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	if (ns > 0 && dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;
	for (int i = 0; i < ns; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram) {
			l->outer = die_name(&scopes[i]);
			break;
		}
		if (tag != DW_TAG_inlined_subroutine || l->ninl == MAX_INLINE)
			continue;
		/* the caller is at the call site */
		Dwarf_Attribute a;
		Dwarf_Word cf = 0, cl = 0;
		const char *fname = NULL;
		if (files && !dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &cf))
			fname = dwarf_filesrc(files, cf, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl) || cl > UINT32_MAX)
			cl = 0;
		l->inl[l->ninl++] = (struct sd_rawinl){ die_name(&scopes[i]), fname, (uint32_t)cl };
	}
	free(scopes);
	if (!l->sym && !l->outer)
		l->sym = entry_name(f, addr, symbuf, symlen);
}
