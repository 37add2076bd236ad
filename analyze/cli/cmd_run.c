/*
 * cmd_run.c: `sonde run [-e SPEC]... [-o DIR] [--] CMD [ARGS]`, runs CMD with libsonde.so
 * preloaded and returns CMD's exit status (128+signo if a signal killed it), like a shell.
 *
 * The environment of CMD gets SONDE_SAMPLE (the -e specs joined with commas, only when
 * some were given), SONDE_OUTPUT (-o DIR, else ./sonde-<basename of CMD>, always set so
 * that sonde knows where the profile went; made absolute, so that children that run in
 * another directory (make -C) write there too; docs/ENV.md) and LD_PRELOAD with the absolute path of libsonde.so first
 * ($SONDE_LIB, else the one next to this executable). While CMD runs, sonde ignores
 * SIGINT and SIGQUIT so that a ^C reaches CMD and sonde still reports where the profile
 * went. An exec failure is reported through a close-on-exec pipe, so exactly one of
 * "cannot run" (exit 127) or "profile written" is printed.
 *
 * The output directory is checked and created before CMD starts, by the runtime's own
 * rule (writer/outdir.c, docs/ENV.md "Output directory and permissions"): a refusal is
 * one line and exit 3, CMD never runs. "profile written" means the directory holds more
 * streams after the run than before (streams are never overwritten).
 *
 * --jit (or SONDE_JIT=on) turns on JIT runtimes' perf maps in CMD's environment, and
 * after CMD the maps of processes killed before they kept theirs are copied (run_jit.c).
 *
 * --caliper (or SONDE_CALIPER=on) puts libsonde_caliper.so (caliper/caliper.h) first in
 * LD_PRELOAD, so that a program annotated for Caliper binds its cali_* calls there, not to
 * its libcaliper, and turns on exact region times (SONDE_REGIONS=on, unless set).
 */
#define _GNU_SOURCE /* pipe2 */
#include "analyze/cli/cli.h"
#include "common/common.h"
#include "sampler/sampler.h"
#include "writer/writer.h"


#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SONDE_REL_PKGLIBDIR /* an installation's LIBDIR/sonde from its BINDIR (CMake sets it) */
#define SONDE_REL_PKGLIBDIR "../lib/sonde"
#endif

static const char usage[] = "usage: sonde run [-e SPEC]... [-F HZ] [-o DIR] -- CMD [ARGS]";

static void help(void)
{
	printf("%s\n\n"
	       "  -e, --sample SPEC   sampling source, e.g. cpu-time@1ms, wall-time@10ms, a PAPI\n"
	       "                      event NAME@COUNT (repeatable; sets SONDE_SAMPLE; 'sonde\n"
	       "                      events' lists what works here)\n"
	       "  -F, --freq HZ       sample CPU time HZ times a CPU-second, as perf record -F\n"
	       "                      (the same as -e cpu-time@HZhz)\n"
	       "  -o, --output DIR    where streams go (default ./sonde-<CMD>; sets SONDE_OUTPUT)\n"
	       "      --append        add to the streams DIR holds (else an earlier run's move\n"
	       "                      to DIR.old)\n"
	       "      --jit           turn on the perf maps of JIT runtimes (Python 3.12+, node),\n"
	       "                      so JIT code is named (sets SONDE_JIT=on; docs/ENV.md)\n"
	       "      --caliper       a program annotated for Caliper: its regions and attributes\n"
	       "                      become sonde's (preloads libsonde_caliper.so first; sets\n"
	       "                      SONDE_CALIPER=on and SONDE_REGIONS=on)\n"
	       "  -h, --help          this text\n\n"
	       "Preloads libsonde.so from next to sonde, or from LIBDIR/sonde of an installation\n"
	       "(or $SONDE_LIB). Every variable of docs/ENV.md applies (SONDE_REGIONS,\n"
	       "SONDE_COUNTERS, ...). A program that LD_PRELOAD cannot reach (static, set-user-ID,\n"
	       "set-group-ID, file capabilities) is refused before it starts, exit 4. Exit\n"
	       "status: CMD's (128+N if killed by signal N; 127 if CMD cannot be run).\n",
	       usage);
}

/* Absolute path of libsonde.so into buf: 0, or an exit code after a message. */
static int find_lib(char *buf, size_t len)
{
	const char *env = getenv("SONDE_LIB");
	char exe[PATH_MAX], abs[PATH_MAX];

	if (env && *env) {
		if (!realpath(env, abs) || access(abs, R_OK))
			return sd_error(SD_EXIT_IO, "SONDE_LIB=%s: %s (point SONDE_LIB at a built "
					"libsonde.so)", env, strerror(errno));
		snprintf(buf, len, "%s", abs);
		return 0;
	}
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return sd_error(SD_EXIT_IO, "/proc/self/exe: %s (set SONDE_LIB)", strerror(errno));
	exe[n] = 0;
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", exe);
	dirname(dir);
	/* the build tree: beside the CLI; an installation: its library directory,
	 * relative to the CLI's (cmake/install.cmake) */
	char rel[PATH_MAX + 64];
	snprintf(rel, sizeof(rel), "%s/libsonde.so", dir);
	if (access(rel, R_OK) == 0 && strlen(rel) < len) {
		snprintf(buf, len, "%s", rel);
		return 0;
	}
	snprintf(rel, sizeof(rel), "%s/" SONDE_REL_PKGLIBDIR "/libsonde.so", dir);
	char abs2[PATH_MAX];
	if (realpath(rel, abs2) && access(abs2, R_OK) == 0 && strlen(abs2) < len) {
		snprintf(buf, len, "%s", abs2);
		return 0;
	}
	return sd_error(SD_EXIT_IO, "libsonde.so: not found next to %s nor in %s/" SONDE_REL_PKGLIBDIR
			" (build it, install it with cmake --install, or set SONDE_LIB)", exe, dir);
}

/* Append `s` to the heap string *acc with separator `sep` (NULL acc: start). */
static int append(char **acc, const char *sep, const char *s)
{
	size_t a = *acc ? strlen(*acc) : 0;
	char *n = realloc(*acc, a + strlen(sep) + strlen(s) + 1);

	if (!n)
		return -ENOMEM;
	if (a)
		strcat(strcat(n, sep), s);
	else
		strcpy(n, s);
	*acc = n;
	return 0;
}

/* How many *.sonde files directory dirfd holds (-1: cannot tell). Streams are
 * never overwritten, so more after the run means the run wrote some. */
static int count_streams(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		n += len > 6 && !strcmp(e->d_name + len - 6, ".sonde");
	}
	closedir(d);
	return n;
}

static volatile pid_t child_pid;

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* The runtime's configuration messages, when the CLI runs the runtime's own parser
 * (sampler/config.c) to check -e before starting anything: check_sample sets this log
 * sink (common/log.h) for the parse, keeps them here, prints them, then sets the CLI's
 * sink back (util's sd_stderr_sink, as main.c does). */
static char cfg_msg[8][512];
static int ncfg_msg;

static void keep_cfg_msg(const char *line, size_t len)
{
	(void)len;
	if (ncfg_msg < 8)
		snprintf(cfg_msg[ncfg_msg++], sizeof cfg_msg[0], "%s", line);
}

/* The parser asks which signals are free: in the CLI, the libc's sigaction is the real one. */
int sd_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return sigaction(sig, act, old);
}

/* The -e specs, as the runtime will read them (SONDE_SAMPLE): a spec it would refuse
 * makes `sonde run` refuse before the program starts, with the runtime's own words. */
static int check_sample(const char *sample)
{
	const char *was = getenv("SONDE_SAMPLE");
	char *saved = was ? strdup(was) : NULL;
	struct sd_config cfg;
	int code = SD_EXIT_OK;
	if (setenv("SONDE_SAMPLE", sample, 1)) {
		free(saved);
		return -ENOMEM;
	}
	ncfg_msg = 0;
	sd_log_set(keep_cfg_msg, 0);
	sd_config_parse(&cfg);
	sd_log_set(sd_stderr_sink, 1);
	for (int i = 0; i < ncfg_msg; i++)
		if (!strncmp(cfg_msg[i], "sonde: SONDE_SAMPLE: ", 21) &&
		    !strstr(cfg_msg[i], "no valid source left")) {
			code = sd_error(SD_EXIT_USAGE, "run: -e %s", cfg_msg[i] + 21);
		}
	if (saved)
		setenv("SONDE_SAMPLE", saved, 1);
	else
		unsetenv("SONDE_SAMPLE");
	free(saved);
	return code;
}

/* -e/--sample (repeatable), -o/--output and -a/--append, up to CMD: *cmd is its index
 * in argv. SD_EXIT_OK (help printed: *cmd = 0), SD_EXIT_USAGE, or -ENOMEM. */
static int parse_args(int argc, char **argv, char **sample, const char **out, int *keep_old,
		      int *cmd)
{
	int i;
	*cmd = 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		int is_e = !strcmp(a, "-e") || !strcmp(a, "--sample");
		int is_o = !strcmp(a, "-o") || !strcmp(a, "--output");
		int is_f = !strcmp(a, "-F") || !strcmp(a, "--freq");
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "--append")) {
			*keep_old = 1;
			continue;
		}
		if (!strcmp(a, "--jit") || !strcmp(a, "--caliper")) { /* run_jit.c, add_caliper */
			if (setenv(a[2] == 'j' ? "SONDE_JIT" : "SONDE_CALIPER", "on", 1))
				return -ENOMEM;
			continue;
		}
		if (!strcmp(a, "-a")) /* perf's -a is system-wide: not what this would do */
			return sd_error(SD_EXIT_USAGE, "run: '-a': no such option (--append adds to "
					"the streams DIR holds; sonde profiles CMD and its children, "
					"not the whole system as perf's -a does)");
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			help();
			return SD_EXIT_OK;
		}
		if (is_f) { /* -F HZ: cpu-time@HZhz, checked as -e is */
			if (i + 1 >= argc)
				return sd_error(SD_EXIT_USAGE, "run: option '%s' needs a value (%s)", a,
						usage);
			char spec[64], *end;
			long hz = strtol(argv[++i], &end, 10);
			if (*end || end == argv[i] || hz < 1 || hz > 100000)
				return sd_error(SD_EXIT_USAGE, "run: -F '%s': not a frequency in Hz (e.g. "
						"-F 999; from 1 to 100000)", argv[i]);
			snprintf(spec, sizeof spec, "cpu-time@%ldhz", hz);
			if (append(sample, ",", spec))
				return -ENOMEM;
			continue;
		}
		if (is_e || is_o) {
			if (i + 1 >= argc)
				return sd_error(SD_EXIT_USAGE, "run: option '%s' needs a value (%s)", a,
						usage);
			val = argv[++i];
		} else if (!strncmp(a, "--sample=", 9) || !strncmp(a, "--output=", 9)) {
			is_e = a[2] == 's';
			is_o = !is_e;
			val = a + 9;
		} else if (!strncmp(a, "-e", 2) || !strncmp(a, "-o", 2)) {
			is_e = a[1] == 'e';
			is_o = !is_e;
			val = a + 2;
		} else if (a[0] == '-' && a[1]) {
			static const char *const known[] = { "--sample", "--output", "--help",
							     "--append", "--freq", "--jit",
							     "--caliper" };
			const char *near = sd_nearest(a, known, 7, sizeof(*known));
			if (near)
				return sd_error(SD_EXIT_USAGE, "run: unknown option '%s' (did you mean "
						"'%s'? %s)", a, near, usage);
			return sd_error(SD_EXIT_USAGE, "run: unknown option '%s' (%s)", a, usage);
		} else {
			break; /* CMD */
		}
		if (is_e && append(sample, ",", val))
			return -ENOMEM;
		if (is_o)
			*out = val;
	}
	if (i >= argc)
		return sd_error(SD_EXIT_USAGE, "run: no command given (%s)", usage);
	*cmd = i;
	return SD_EXIT_OK;
}

/* CMD is an MPI program or launcher: libsonde_mpi.so (from next to libsonde.so) joins
 * *preload after it, and exact region times are on (SONDE_REGIONS, unless set), since
 * MPI calls are timed as regions. Without the library, one line says so. 0 or -ENOMEM. */
static int add_mpi(const char *lib, const char *cmd, char **preload)
{
	char why[PATH_MAX + 64], mpi[PATH_MAX];
	if (!sd_run_is_mpi(cmd, why, sizeof why))
		return 0;
	const char *slash = strrchr(lib, '/');
	snprintf(mpi, sizeof mpi, "%.*s/libsonde_mpi.so", (int)(slash ? slash - lib : 1),
		 slash ? lib : ".");
	if (access(mpi, R_OK)) {
		sd_msg("sonde: run: %s, but %s is missing (MPI time is not measured; build sonde "
		       "with MPI's headers: libopenmpi-dev)", why, mpi);
		return 0;
	}
	if (!getenv("SONDE_REGIONS") && setenv("SONDE_REGIONS", "on", 1))
		return -ENOMEM;
	return append(preload, ":", mpi);
}

/* SONDE_CALIPER=on (--caliper): libsonde_caliper.so, from next to libsonde.so, starts
 * *preload (before libsonde.so, and before any library the user preloads: Caliper's
 * own included), and exact region times are on (SONDE_REGIONS, unless set). SD_EXIT_OK,
 * SD_EXIT_IO after one line when the library is not there, or -ENOMEM. */
static int add_caliper(const char *lib, char **preload)
{
	const char *v = getenv("SONDE_CALIPER");
	if (!v || !*v || !strcmp(v, "off") || !strcmp(v, "0"))
		return SD_EXIT_OK;
	if (strcmp(v, "on") && strcmp(v, "1")) {
		sd_msg("sonde: run: SONDE_CALIPER: '%s' is not on or off (keeping off)", v);
		return SD_EXIT_OK;
	}
	char cali[PATH_MAX];
	const char *slash = strrchr(lib, '/');
	snprintf(cali, sizeof cali, "%.*s/libsonde_caliper.so", (int)(slash ? slash - lib : 1),
		 slash ? lib : ".");
	if (access(cali, R_OK))
		return sd_error(SD_EXIT_IO, "run: --caliper: %s: %s (build the target sonde_caliper "
				"or install it beside libsonde.so; the command was not started)",
				cali, strerror(errno));
	if (!getenv("SONDE_REGIONS") && setenv("SONDE_REGIONS", "on", 1))
		return -ENOMEM;
	return append(preload, "", cali) ? -ENOMEM : SD_EXIT_OK;
}

/* The output directory checked by the runtime's own rule (writer/outdir.c) before the
 * command starts, an earlier run's streams in it moved aside unless keep_old
 * (run_old.c), and the command's environment: LD_PRELOAD, SONDE_OUTPUT (absolute: its
 * children may run elsewhere, make -C), SONDE_SAMPLE; for an MPI program or launcher
 * (run_mpi.c), libsonde_mpi.so and SONDE_REGIONS; with --caliper, libsonde_caliper.so
 * first. *dirfd: the directory. */
static int prepare(const char *lib, const char *cmd, const char *out, const char *sample,
		   int keep_old, char **preload, int *dirfd)
{
	mode_t fmode, dmode;
	if (sd_outdir_mode_parse(getenv("SONDE_MODE"), &fmode, &dmode) != 0)
		sd_outdir_mode_parse(NULL, &fmode, &dmode); /* the runtime says why */
	struct sd_outdir_why why = { .knob = "-o" };
	*dirfd = sd_outdir_open(out, dmode, &why);
	if (*dirfd < 0)
		return sd_error(SD_EXIT_IO, "run: %s (%s; the command was not started)", why.what,
				why.hint);
	static char abs_out[PATH_MAX];
	const char *env_out = out; /* messages keep the name the user gave */
	if (sd_outdir_path(*dirfd, abs_out, sizeof abs_out) == 0) {
		env_out = abs_out;
		if (!keep_old && sd_run_old_streams(*dirfd, out, abs_out, dmode))
			return -ENOMEM;
	}
	const char *old = getenv("LD_PRELOAD");
	int code = add_caliper(lib, preload);
	if (code != SD_EXIT_OK)
		return code;
	if (append(preload, ":", lib) || add_mpi(lib, cmd, preload) ||
	    (old && *old && append(preload, ":", old)))
		return -ENOMEM;
	if ((sample && setenv("SONDE_SAMPLE", sample, 1)) || setenv("SONDE_OUTPUT", env_out, 1) ||
	    setenv("LD_PRELOAD", *preload, 1))
		return -ENOMEM;
	return SD_EXIT_OK;
}

/* Runs cmdv and waits for it, like a shell running a command: Ctrl-C and Ctrl-\
 * reach the whole process group, so sonde ignores them and reports how CMD ended;
 * SIGTERM and SIGHUP sent to sonde alone are passed on to CMD. 0 when CMD ran, with
 * its exit status in *code (128+N if killed by signal N); else the exit code after
 * saying why (127: CMD cannot be run). */
static int spawn_wait(char **cmdv, int *code)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return sd_error(SD_EXIT_IO, "run: pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(pfd[0]);
		close(pfd[1]);
		return sd_error(SD_EXIT_IO, "run: fork: %s (too many processes?)", strerror(e));
	}
	if (pid == 0) {
		close(pfd[0]);
		execvp(cmdv[0], cmdv);
		int err = errno;
		if (write(pfd[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pfd[1]);
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit, oterm, ohup;
	struct sigaction fwd = { .sa_handler = forward_signal };
	sigemptyset(&fwd.sa_mask);
	child_pid = pid;
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	sigaction(SIGTERM, &fwd, &oterm);
	sigaction(SIGHUP, &fwd, &ohup);
	int exec_err = 0, status = 0;
	ssize_t n;
	while ((n = read(pfd[0], &exec_err, sizeof(exec_err))) < 0 && errno == EINTR)
		;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	sigaction(SIGTERM, &oterm, NULL);
	sigaction(SIGHUP, &ohup, NULL);
	close(pfd[0]);
	if (n == (ssize_t)sizeof(exec_err))
		return sd_error(127, "run: %s: %s (check the command name and PATH)", cmdv[0],
				strerror(exec_err));
	*code = WIFEXITED(status) ? WEXITSTATUS(status)
	      : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
	return 0;
}

int sd_cmd_run(int argc, char **argv)
{
	char *sample = NULL, *preload = NULL, *outdir = NULL;
	const char *out = NULL;
	char lib[PATH_MAX];
	int cmd, dirfd = -1;
	int keep_old = 0;
	int code = parse_args(argc, argv, &sample, &out, &keep_old, &cmd);

	if (code != SD_EXIT_OK || !cmd)
		goto out;
	if (sample && (code = check_sample(sample)) != SD_EXIT_OK)
		goto out;
	if ((code = find_lib(lib, sizeof(lib))) || (code = sd_run_check(argv[cmd])))
		goto out;
	if (!out) {
		const char *base = strrchr(argv[cmd], '/');
		code = -ENOMEM;
		if (append(&outdir, "", "./sonde-") ||
		    append(&outdir, "", base ? base + 1 : argv[cmd]))
			goto out;
		out = outdir;
	}
	if ((code = prepare(lib, argv[cmd], out, sample, keep_old, &preload, &dirfd)) != SD_EXIT_OK)
		goto out;
	if ((code = sd_run_jit_env(0)) != SD_EXIT_OK)
		goto out;
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME, &t0);
	int before = count_streams(dirfd), failed = spawn_wait(argv + cmd, &code);
	if (failed) {
		code = failed;
		goto out;
	}
	/* JIT maps of processes killed before they could keep theirs (run_jit.c); a second
	 * early: file times lag the clock by up to a tick */
	sd_run_jit_sweep(dirfd, (int64_t)t0.tv_sec * 1000000000 + t0.tv_nsec - 1000000000);
	/* ranks of an MPI job started each with sonde run: one line for the job, rank 0's */
	const char *rank = sd_mpi_rank_env();
	if (count_streams(dirfd) > before) {
		if (!rank || strtol(rank, NULL, 10) == 0) {
			/* the modules' names kept by build-id, for when their files change */
			sd_archive_after_run(out);
			sd_msg("sonde: profile written to %s (sonde report %s)", out, out);
		}
	}
	else
		sd_msg("sonde: %s: no profile was written (is %s static, setuid or "
			"setgid, or does it clear LD_PRELOAD?)", out, argv[cmd]);
out:
	if (dirfd >= 0)
		close(dirfd);
	free(sample);
	free(preload);
	free(outdir);
	return code;
}
