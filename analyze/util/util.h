/*
 * analyze/util/util.h: the bottom of the analyzer: the CLI's exit codes and errors, said
 * through sonde's one log sink (common/log.c, compiled into this layer: every folder says
 * its messages with sd_msg), growing arrays and two small hash maps (hash.c), and the
 * performance models' fitting (model.c). Depends on nothing else of the analyzer; every
 * folder above may include it.
 */
#ifndef SONDE_ANALYZE_UTIL_H
#define SONDE_ANALYZE_UTIL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "common/log.h"

/* Exit codes of the CLI (listed in `sonde --help`). `sonde run` returns the child's. */
enum sd_exit {
	SD_EXIT_OK = 0,
	SD_EXIT_USAGE = 2,    /* bad command line */
	SD_EXIT_IO = 3,       /* a file or directory could not be read */
	SD_EXIT_BADINPUT = 4, /* the input is not a (valid) sonde stream */
};

/* ---- error.c: the analyzer's one error shape ----------------------------------------
 * An error is said once, where it is found, as one line `sonde: <what>: <why> (<hint>)`
 * on stderr: sd_error() says it and returns a "said" code that carries the exit code
 * the command ends with. Functions return 0, a said code, or a -errno not yet said
 * (-ENOMEM above all); callers pass codes up unchanged, and each command's result goes
 * through sd_exit_code() once, which says what was not said. */
#define SD_SAID_BASE 4096
#define SD_SAID(exit) (-(SD_SAID_BASE + (int)(exit))) /* said; ends with exit code `exit` */
static inline int sd_said(int err) { return err <= -SD_SAID_BASE; }
/* Says "sonde: " and the formatted rest of the line (no newline in fmt), of any length,
 * through the log sink (common/log.h: sd_msg; stderr in the CLI); returns SD_SAID(exit). */
int sd_error(enum sd_exit exit, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The CLI's log sink (common/log.h; cli/main.c sets it, long lines allowed): the line and
 * its newline on stdio's stderr in one call, so that messages keep their order with what
 * else the CLI writes there (profile/load.c's progress line). Messages that are not errors
 * are said with sd_msg("sonde: ...") directly. */
void sd_stderr_sink(const char *line, size_t len);
/* The exit code of a result: an exit code (>= 0) as it is; a said code its exit code;
 * -ENOMEM said as "sonde: CMD: out of memory (...)" and any other -errno as
 * "sonde: CMD: <strerror>", both SD_EXIT_IO. */
int sd_exit_code(int err, const char *cmd);

/* ---- io.c -------------------------------------------------------------------------- */

/* All len bytes of p written to fd (a short write goes on, EINTR is retried): 0 or
 * -errno (-EIO when write returned 0). */
int sd_write_all(int fd, const void *p, size_t len);

/* ---- hash.c ------------------------------------------------------------------------ */

/* Open-addressing map from u64 keys to u32 values. Zero-initialize to init. */
struct sd_u64map { uint64_t *keys; uint32_t *vals; size_t cap, n; };
/* Grows the array *pp (elements of `size` bytes, capacity *cap) to hold at
 * least `need`, doubling, the new part zeroed. 0 or -ENOMEM (array kept). */
int sd_grow(void *pp, size_t *cap, size_t need, size_t size);
int sd_u64map_get(const struct sd_u64map *m, uint64_t key, uint32_t *val); /* 1 found, 0 not */
int sd_u64map_put(struct sd_u64map *m, uint64_t key, uint32_t val);        /* 0 or -ENOMEM */
void sd_u64map_fini(struct sd_u64map *m);

/* Map from byte strings (copied) to u32. Zero-initialize to init. */
struct sd_strmap { char **keys; size_t *klens; uint32_t *vals; size_t cap, n; };
int sd_strmap_get(const struct sd_strmap *m, const void *key, size_t len, uint32_t *val);
int sd_strmap_put(struct sd_strmap *m, const void *key, size_t len, uint32_t val);
void sd_strmap_fini(struct sd_strmap *m);

/* ---- model.c: performance models (--view model) ---------------------------------- */

/* t = c0 + c1 * n^I[i] * log2(n)^j per parameter (Extra-P's normal form; the exponent
 * sets are listed in model.c): with several parameters, a sum of one term each, or one
 * product of them. constant: t = c0. r2 on all points; cv_smape: leave-one-out mean
 * relative error (percent), what chose the model. */
#define SD_MODEL_MAXPARAMS 3
struct sd_term { unsigned i, j; };
struct sd_model {
	size_t nparams;
	int constant, product;
	struct sd_term terms[SD_MODEL_MAXPARAMS];
	double c[SD_MODEL_MAXPARAMS + 1];
	double r2, cv_smape;
};
/* Fits n points (x: nparams values each, y: the measured value) with the hypothesis of
 * least cross-validated error. 0, -EINVAL (fewer than 3 points, or too many params),
 * -ENOMEM. */
int sd_model_fit(const double *x, const double *y, size_t n, size_t nparams,
		 struct sd_model *out);
double sd_model_eval(const struct sd_model *m, const double *x);
/* "c0 + c1 * n^2 * log2(n) UNIT" with the coefficients times scale, into buf. */
void sd_model_text(char *buf, size_t len, const struct sd_model *m, char *const *names,
		   const char *unit, double scale);

#endif
