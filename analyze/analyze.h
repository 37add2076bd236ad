/*
 * analyze/analyze.h: the whole offline analyzer and CLI (`sonde`) in one include, for its
 * tests and fuzz targets only. The analyzer's own files include their folder's header,
 * analyze/FOLDER/FOLDER.h, which includes the headers of the folders below it:
 *
 *   util      exit codes, growing arrays, hash maps, model fitting
 *   read      a stream record by record            (util)
 *   symbols   ELF/DWARF lookup, symbol cache       (util)
 *   profile   the merged profile, --where, observers, the timeline's event list
 *                                                  (read, symbols)
 *   report    emit, the row printer, notes, coverage, -o FILE, neutral trees (profile)
 *   views     one file per view                    (report)
 *   export    pprof, svg, speedscope, trace        (report)
 *   output    the dispatcher and the html page     (views, export)
 *   cli       main, options, one file per subcommand (output)
 *
 * Each folder is one static library linked only with those below it (CMakeLists.txt);
 * analyze/layers.py fails the test analyze_layers on any include or call cycle between
 * folders and prints the graph (`cmake --build BUILD --target analyze_layers`).
 *
 * Everything here runs in one ordinary thread of the `sonde` process; nothing is shared
 * with the runtime (libsonde.so) except docs/FORMAT.md.
 */
#ifndef SONDE_ANALYZE_H
#define SONDE_ANALYZE_H

#include "analyze/cli/cli.h"

#endif
