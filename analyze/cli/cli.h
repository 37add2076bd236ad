/*
 * analyze/cli/cli.h: the `sonde` command line: the command table (main.c), one file
 * per subcommand (cmd_*.c), the options, PATHs and loading that report and diff share
 * (cli.c), `sonde events`' probes (events_*.c), `sonde run`'s earlier streams (run_old.c).
 */
#ifndef SONDE_ANALYZE_CLI_H
#define SONDE_ANALYZE_CLI_H

#include <stddef.h>
#include <sys/types.h>

#include "analyze/output/output.h"

/* ---- subcommands (cmd_*.c): argv[0] is the subcommand name; the result is an exit code,
 * a said error or -ENOMEM (util.h), which main.c turns into the exit code ---- */
int sd_cmd_run(int argc, char **argv);
/* run_old.c: an earlier run's streams in `sonde run`'s directory (dirfd; out as the
 * user named it, abs_out its absolute path) moved to DIR.old when they are over, or
 * kept; either said in one line on stderr. 0 or -ENOMEM. */
int sd_run_old_streams(int dirfd, const char *out, const char *abs_out, mode_t dmode);
/* run_old.c: the pid of stream file `name` (NAME.HOST.[rRANK.]PID[.SEQ].sonde) when it
 * was written on `host`, else 0. */
long sd_run_stream_pid(const char *name, const char *host);
/* run_jit.c: --jit (jit 1, or SONDE_JIT=on in the environment: docs/ENV.md, "JIT
 * code"): the runtimes' perf maps turned on in CMD's environment (PYTHONPERFSUPPORT,
 * NODE_OPTIONS). 0 or -ENOMEM. */
int sd_run_jit_env(int jit);
/* run_jit.c: after CMD: the maps of this host's streams in dirfd written since since_ns
 * (CLOCK_REALTIME, CMD's start) that kept none (killed by a signal), copied beside
 * them from /tmp (sd_jitmap_copy), quietly. */
void sd_run_jit_sweep(int dirfd, int64_t since_ns);
/* run_mpi.c: whether CMD is an MPI program (linked with an MPI library) or an MPI
 * launcher, or SONDE_MPI=on says so: 1 with a short reason in why, else 0. */
int sd_run_is_mpi(const char *cmd, char *why, size_t len);
/* cmd as execvp finds it, into path. 0, or -1. */
int sd_run_which(const char *cmd, char *path, size_t len);
/* run_check.c: whether CMD can be profiled at all (LD_PRELOAD reaches it): SD_EXIT_OK
 * (or CMD not found: the exec says so), or a said error naming why not (a static
 * executable; set-user-ID, set-group-ID or file capabilities: secure execution). */
int sd_run_check(const char *cmd);
int sd_cmd_report(int argc, char **argv);
/* cmd_archive.c: `sonde archive DIR [-o FILE]`. */
int sd_cmd_archive(int argc, char **argv);
/* cmd_archive.c: after `sonde run`'s CMD: the raw locations of every module the streams
 * of out name kept in the build-id archive (docs/REPORT.md "Build-id archive"), quietly;
 * nothing when it is off. */
void sd_archive_after_run(const char *out);

/* ---- pack.c: a profile in one ustar file (docs/REPORT.md "Packs") ---- */
/* Write a pack on fd: sd_pack_begin (TOP/ and TOP/build-id/), sd_pack_add per file (the
 * regular file open on src, as TOP/NAME, or TOP/build-id/NAME when sub), sd_pack_end.
 * 0 or -errno (-ENAMETOOLONG: a name past ustar's fields). */
int sd_pack_begin(int fd, const char *top);
int sd_pack_add(int fd, const char *top, int sub, const char *name, int src);
int sd_pack_end(int fd);
/* 1 if path is a regular file with a ustar header (a pack to unpack), else 0. */
int sd_pack_is(const char *path);
/* Unpack pack `path` into a new private directory (under TMPDIR, removed at exit),
 * checking every entry: SD_EXIT_OK and *dir (malloc'ed), or said (SD_EXIT_BADINPUT: not
 * a pack, truncated, no streams; SD_EXIT_IO), or -ENOMEM. */
int sd_pack_unpack(const char *path, char **dir);
/* PATHs of report or diff with each pack unpacked (its directory in its place) and the
 * build-id/ of each directory (an unpacked pack's) added to sy's archive directories.
 * SD_EXIT_OK and *out (npaths malloc'ed strings in a malloc'ed array), said, or -ENOMEM. */
int sd_pack_paths(char *const *paths, size_t npaths, struct sd_symbolizer *sy, char ***out);
int sd_cmd_dump(int argc, char **argv);
int sd_cmd_events(int argc, char **argv);
int sd_cmd_diff(int argc, char **argv);

/* ---- cmd_events.c, events_papi.c / events_nopapi.c: `sonde events` ---------------- */

/* One probed item: kind (source, counter, papi, papi-preset, papi-native), status
 * (available, unavailable, fallback), where it comes from and why (all owned). */
struct sd_event_row { char *kind, *name, *status, *source, *reason; };
struct sd_events { struct sd_event_row *rows; size_t n, cap; };
/* Append a row (strings copied; source/reason may be NULL): 0 or -ENOMEM. */
int sd_events_add(struct sd_events *ev, const char *kind, const char *name, const char *status,
		  const char *source, const char *reason);
/* Probe PAPI (library, perf_event component, presets, a few native events) and append
 * rows; `paranoid` is /proc/sys/kernel/perf_event_paranoid. 0 or -ENOMEM. */
int sd_events_papi(struct sd_events *ev, int paranoid);

/* ---- cli.c: options, PATHs and loading shared by `sonde report` and `sonde diff` ---- */

enum { SD_CLI_REPORT = 1, SD_CLI_DIFF = 2 };

/* A command line of report or diff. Zeroed, then sd_cli_parse; sd_cli_fini frees. */
struct sd_cli {
	unsigned cmd_bit;       /* SD_CLI_REPORT or SD_CLI_DIFF */
	const char *cmd, *see;  /* "report", "see 'sonde report --help'": for messages */
	int help;               /* -h/--help: usage printed, nothing else to do */
	char **paths;           /* positional arguments, in order */
	size_t npaths;
	struct sd_report_opts o; /* --format, --view, --metric, --group-by, --top, -o and the
				  * rest a view reads: parsed straight into it */
	const char **wheres;    /* --where, in order */
	size_t nwheres;
	const char *source;     /* --source NAME */
	char *group_copy;       /* the storage of o.group_by's names */
	char *param_copy;       /* the storage of o.params' names */
	int absolute;           /* diff */
	int sym;                /* SD_SYM_* flags: --addresses, --[no-]inline, ... */
	int names_given;        /* --short-names or --no-short-names (else: short on a tty) */
	int strict, progress, jobs;
};

/* Parses argv (argv[0] is the subcommand) for command cmd_bit: every option of the one
 * table that this command takes, each error one `sonde: CMD:` line. SD_EXIT_OK (with
 * c->help set after -h), said (SD_EXIT_USAGE), or -ENOMEM. */
int sd_cli_parse(struct sd_cli *c, unsigned cmd_bit, const char *usage, int argc, char **argv);
void sd_cli_fini(struct sd_cli *c);
/* Text as in a pipe even when stdout is a terminal (sonde-mpi: MPI launchers give a
 * rank a pseudo-terminal wherever the job's output goes). Call before sd_cli_parse. */
void sd_cli_no_terminal(void);
/* cli_paths.c: the stream files of PATHs as `sonde report` reads them (a file as is; a
 * directory's *.sonde files and its subdirectories', names sorted). SD_EXIT_OK, or
 * SD_EXIT_IO / SD_EXIT_BADINPUT after saying why, or -ENOMEM. *files (each string and the
 * array, possibly partial on error) belong to the caller. */
int sd_cli_expand_paths(char *const *paths, size_t npaths, char ***files, size_t *nfiles,
			size_t *unreadable);
/* Loads the streams of PATHs into p (initialized here) with the --where filters (parsed
 * into filters), --source and the symbol flags. `label` names the input in messages (a
 * diff side's path; NULL for report). SD_EXIT_OK, said, or -ENOMEM. */
int sd_cli_load(const struct sd_cli *c, char *const *paths, size_t npaths, const char *label,
		struct sd_profile *p, struct sd_filters *filters);
/* --metric COUNTER in a view by code (functions, call paths, files, lines, modules):
 * said in one line (SD_EXIT_USAGE); else 0. */
int sd_cli_counter_by_code(const struct sd_cli *c, const struct sd_report_opts *o);
/* After loading: the filters applied, the metric resolved into o: SD_EXIT_OK, said, or
 * -ENOMEM. */
int sd_cli_resolve(const struct sd_cli *c, const char *label, struct sd_profile *p,
		   const struct sd_filters *filters, struct sd_report_opts *o);

#endif
