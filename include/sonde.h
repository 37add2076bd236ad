/* sonde.h - the public interface of the sonde runtime (libsonde.so).
 *
 * sonde profiles unmodified programs: `sonde run -- ./app` or
 * `LD_PRELOAD=libsonde.so ./app`. Nothing here is needed for that. This header
 * carries the version and the export macro; the annotation API (phases,
 * iterations, regions) is added here by later work and documented in
 * docs/API.md. Usable from C and C++.
 */
#ifndef SONDE_H
#define SONDE_H

#define SONDE_VERSION_MAJOR 0
#define SONDE_VERSION_MINOR 1
#define SONDE_FORMAT_VERSION 1 /* docs/FORMAT.md */

#if defined(__GNUC__)
#define SONDE_API __attribute__((visibility("default")))
#else
#define SONDE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Returns 1 when the sonde runtime is loaded and sampling this process, 0
 * otherwise. Safe to call from any thread at any time; never fails. */
SONDE_API int sonde_active(void);

#ifdef __cplusplus
}
#endif
#endif
