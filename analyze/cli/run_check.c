/*
 * run_check.c: before `sonde run` starts CMD, whether LD_PRELOAD can reach it at all
 * (docs/ENV.md, "sonde run"). Two things stop it, and each is said in one line, CMD not
 * started, exit 4, instead of a run that leaves no profile and a guess:
 *   - a static executable: an ELF program without PT_INTERP has no dynamic loader, so
 *     nothing reads LD_PRELOAD (static-pie included);
 *   - secure execution: the loader ignores LD_PRELOAD (AT_SECURE) when the program is
 *     set-user-ID to another user, set-group-ID to another group, or has file
 *     capabilities (for a user other than root).
 * A script is checked as what the kernel runs: its interpreter (#!), once.
 */
#define _GNU_SOURCE
#include "analyze/cli/cli.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* Is fd an ELF program without an interpreter? 1 yes, 0 no (or not ELF). */
static int is_static(int fd)
{
	int st = 0;
	size_t n = 0;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &n) == 0 && n) {
		st = 1;
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
				st = 0;
		}
	}
	if (elf)
		elf_end(elf);
	return st;
}

/* A script's interpreter (#!PATH), into path: 0, or -1 when fd is no such script. */
static int interpreter(int fd, char *path, size_t len)
{
	char head[PATH_MAX + 3];
	ssize_t n = pread(fd, head, sizeof head - 1, 0);
	if (n < 3 || head[0] != '#' || head[1] != '!')
		return -1;
	head[n] = 0;
	char *p = head + 2;
	p += strspn(p, " \t");
	size_t k = strcspn(p, " \t\n");
	if (!k || k >= len)
		return -1;
	memcpy(path, p, k);
	path[k] = 0;
	return 0;
}

/* what: "it" (CMD itself) or "its interpreter PATH" (a script's) */
static int refuse(const char *cmd, const char *what, const char *why, const char *hint)
{
	return sd_error(SD_EXIT_BADINPUT, "run: %s: %s %s, so sonde cannot be loaded into it (%s)",
			cmd, what, why, hint);
}

/* The check of one file (path), as CMD names it; depth: scripts followed so far. */
static int check_file(const char *cmd, const char *path, int depth)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		if (fd >= 0)
			close(fd);
		return SD_EXIT_OK; /* not readable here: the exec says what it says */
	}
	char interp[PATH_MAX], what[PATH_MAX + 24];
	snprintf(what, sizeof what, depth ? "its interpreter %s" : "it", path);
	int stat_elf = is_static(fd), script = depth == 0 && interpreter(fd, interp, sizeof interp) == 0;
	int caps = getuid() != 0 && fgetxattr(fd, "security.capability", NULL, 0) > 0;
	close(fd);
	if ((st.st_mode & S_ISUID) && st.st_uid != getuid())
		return refuse(cmd, what, "is set-user-ID (the loader ignores LD_PRELOAD for it)",
			      "profile a copy without the set-user-ID bit, or run it as its owner");
	if ((st.st_mode & S_ISGID) && st.st_gid != getgid())
		return refuse(cmd, what, "is set-group-ID (the loader ignores LD_PRELOAD for it)",
			      "profile a copy without the set-group-ID bit, or run it in its group");
	if (caps)
		return refuse(cmd, what, "has file capabilities (the loader ignores LD_PRELOAD for it)",
			      "profile a copy without them (cp drops them), or run it as root");
	if (stat_elf)
		return refuse(cmd, what, "is a static executable (no PT_INTERP: no dynamic loader "
			      "runs, and nothing reads LD_PRELOAD)",
			      "link it dynamically, or profile it with perf record");
	if (script)
		return check_file(cmd, interp, depth + 1);
	return SD_EXIT_OK;
}

int sd_run_check(const char *cmd)
{
	char path[PATH_MAX];
	if (sd_run_which(cmd, path, sizeof path))
		return SD_EXIT_OK; /* not found: the exec says so */
	return check_file(cmd, path, 0);
}
