#!/bin/bash
# libfuzz.sh - runs the stream fuzz target under libFuzzer for a short, fixed budget.
#
# usage: libfuzz.sh SOURCE_DIR BUILD_DIR "ANALYZE_SOURCES"
# Builds tests/cli/fuzz_stream.c with the analyzer's sources using clang
# -fsanitize=fuzzer,address,undefined, seeds it with tests/cli/corpus/ (real
# streams, kept: every crash input ever found goes there too) and fuzzes for
# FUZZ_SECONDS (default 20). A crash, leak or timeout fails the test; its input is
# left in BUILD_DIR/fuzz-artifacts/. Skips (77) without clang's libFuzzer.
set -u
SRC=$1 BUILD=$2 SOURCES=$3
CLANG=${CLANG:-clang}
command -v "$CLANG" >/dev/null || { echo "SKIP: no clang"; exit 77; }
W=$BUILD/fuzz-work
mkdir -p "$W" "$BUILD/fuzz-artifacts"
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' >"$W/probe.c"
"$CLANG" -fsanitize=fuzzer "$W/probe.c" -o "$W/probe" 2>/dev/null || { echo "SKIP: clang has no libFuzzer"; exit 77; }
srcs=()
for s in ${SOURCES//;/ }; do
	case $s in main.c) ;; /*) srcs+=("$s") ;; *) srcs+=("$SRC/analyze/$s") ;; esac
done
flags=$(pkg-config --cflags --libs msgpack libdw libelf papi 2>/dev/null)
"$CLANG" -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$SRC" "$SRC/tests/cli/fuzz_stream.c" "${srcs[@]}" $flags -lm -lz -lpthread -liberty \
	-o "$W/fuzz_stream" 2>"$W/build.log" || { echo "FAIL: build"; tail -20 "$W/build.log"; exit 1; }
rm -rf "$W/corpus"
cp -r "$SRC/tests/cli/corpus" "$W/corpus"
cd "$W" || exit 1
ASAN_OPTIONS=detect_leaks=1 ./fuzz_stream -max_total_time="${FUZZ_SECONDS:-20}" -timeout=10 \
	-rss_limit_mb=1024 -malloc_limit_mb=512 -artifact_prefix="$BUILD/fuzz-artifacts/" \
	-print_final_stats=1 corpus >fuzz.log 2>&1
rc=$?
tail -n 12 fuzz.log
[ $rc -eq 0 ] || { echo "FAIL: libFuzzer found a problem; input in $BUILD/fuzz-artifacts/ (add it to tests/cli/corpus/)"; exit 1; }
echo "ok: libFuzzer ran ${FUZZ_SECONDS:-20} s without a crash, leak or timeout"
