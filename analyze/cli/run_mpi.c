/*
 * run_mpi.c: whether `sonde run` starts an MPI program, so that it preloads
 * libsonde_mpi.so (MPI calls timed through PMPI, mpi/wrap.c) beside libsonde.so and
 * turns exact region times on (docs/ENV.md, "MPI").
 *
 * An MPI program: an ELF file whose own DT_NEEDED names an MPI library (libmpi*,
 * libmpich*: C, C++, and the Fortran bindings' libmpi_mpifh/libmpi_usempif08, which
 * Fortran programs list instead of libmpi). A launcher (mpirun, mpiexec, orterun,
 * prterun, srun, ...): its ranks inherit LD_PRELOAD. SONDE_MPI=on/off decides instead.
 */
#define _GNU_SOURCE
#include "analyze/cli/cli.h"
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sd_run_which(const char *cmd, char *path, size_t len)
{
	if (strchr(cmd, '/')) {
		snprintf(path, len, "%s", cmd);
		return access(path, X_OK) ? -1 : 0;
	}
	const char *p = getenv("PATH");
	if (!p || !*p)
		p = "/usr/local/bin:/usr/bin:/bin";
	while (*p) {
		const char *end = strchrnul(p, ':');
		int n = (int)(end - p);
		snprintf(path, len, "%.*s%s%s", n, p, n ? "/" : "", cmd);
		if (!access(path, X_OK))
			return 0;
		p = *end ? end + 1 : end;
	}
	return -1;
}

/* The first DT_NEEDED of elf that names an MPI library, or NULL. */
static const char *mpi_needed(Elf *elf)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (name && (!strncmp(name, "libmpi", 6) || !strncmp(name, "libpmpi", 7)))
				return name;
		}
	}
	return NULL;
}

int sd_run_is_mpi(const char *cmd, char *why, size_t len)
{
	const char *mode = getenv("SONDE_MPI");
	if (mode && (!strcmp(mode, "on") || !strcmp(mode, "1"))) {
		snprintf(why, len, "SONDE_MPI=%s", mode);
		return 1;
	}
	if (mode && (!strcmp(mode, "off") || !strcmp(mode, "0")))
		return 0;
	const char *base = strrchr(cmd, '/');
	base = base ? base + 1 : cmd;
	if (sd_mpi_is_launcher(base)) {
		snprintf(why, len, "%s is an MPI launcher", base);
		return 1;
	}
	char path[PATH_MAX];
	if (sd_run_which(cmd, path, sizeof path))
		return 0; /* the exec says why */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int found = 0;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	const char *lib = elf && elf_kind(elf) == ELF_K_ELF ? mpi_needed(elf) : NULL;
	if (lib) {
		snprintf(why, len, "%s needs %s", base, lib);
		found = 1;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}
