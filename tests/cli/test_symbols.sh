#!/bin/bash
# Symbol tests: real programs (sym_inline.c, sym_cxx.cpp, a stripped copy of sym_inline)
# run under the real runtime, then `sonde report`: inlined frames, file:line, C++
# demangling, and the module+offset fallback of stripped and missing files.
# usage: test_symbols.sh CASE SONDE LIBSONDE BINDIR
set -u
CASE=$1 SONDE=$2 LIB=$3 BIN=$4
SRC=$(cd "$(dirname "$0")" && pwd)
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }
run() { "$@" >"$T/out" 2>"$T/err"; rc=$?; }
expect_rc() { [ "$rc" -eq "$1" ] || { cat "$T/err" >&2; fail "exit status $rc, expected $1 ($2)"; }; }
expect_out() { grep -qE -- "$1" "$T/out" || { cat "$T/out" >&2; fail "no output line matching: $1"; }; }
expect_no_out() { ! grep -qE -- "$1" "$T/out" || { cat "$T/out" >&2; fail "output line matching: $1"; }; }
# profile PROG: runs BIN/PROG (or a path) under the runtime for 0.4 s of CPU (~400 samples
# at the default cpu-time@1ms) into directory p/
profile() {
	env LD_PRELOAD="$LIB" ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 \
		SONDE_OUTPUT="$T/p" "$1" 0.4 >prog.out 2>prog.err || fail "$1 failed: $(cat prog.err)"
	ls p/*.sonde >/dev/null 2>&1 || fail "no stream written by $1"
}
kline=$(grep -n SYM_KERNEL_LINE "$SRC/sym_inline.c" | cut -d: -f1)
cline=$(grep -n SYM_CALL_LINE "$SRC/sym_inline.c" | cut -d: -f1)

case $CASE in
sym_inline)
	profile "$BIN/sym_inline"
	run "$SONDE" report --format folded p
	expect_rc 0 "folded"
	# the inlined function is a frame of its own, under its caller
	expect_out ";main;sym_driver;sym_kernel [0-9]+$"
	n=$(grep -E ';sym_driver;sym_kernel [0-9]+$' "$T/out" | awk '{s += $NF} END {print s + 0}')
	[ "$n" -ge 200 ] || fail "only $n samples in sym_driver;sym_kernel"
	# the caller is at the call site, the inlined function at the loop's line
	run "$SONDE" report --lines --format folded p
	expect_rc 0 "--lines"
	expect_out ";sym_driver sym_inline\.c:$cline;sym_kernel sym_inline\.c:$kline [0-9]+$"
	run "$SONDE" report --group-by line --format csv p
	expect_rc 0 "--group-by line"
	sed -n 2p "$T/out" | grep -qE "^/.*/sym_inline\.c:$kline,[0-9]+," ||
		{ cat "$T/out" >&2; fail "top line is not sym_inline.c:$kline"; }
	run "$SONDE" report --group-by function,file --format csv p
	expect_rc 0 "--group-by function,file"
	sed -n 2p "$T/out" | grep -qE "^sym_kernel,/.*/sym_inline\.c,[0-9]+," ||
		{ cat "$T/out" >&2; fail "top row is not sym_kernel in sym_inline.c"; }
	run "$SONDE" report --format csv p
	expect_out "^sym_kernel,[0-9]+,"
	# --no-inline: the samples are sym_driver's own
	run "$SONDE" report --no-inline --format folded p
	expect_rc 0 "--no-inline"
	expect_no_out "sym_kernel"
	expect_out ";main;sym_driver [0-9]+$"
	run "$SONDE" report --addresses --format folded p
	expect_no_out "sym_kernel|sym_driver"
	expect_out "sym_inline\+0x[0-9a-f]+ [0-9]+$"
	# pprof: the inlined call is a line of its caller's location (pprof's "(inline)"),
	# with the samples sonde counts in sym_driver;sym_kernel
	if command -v go >/dev/null; then
		"$SONDE" report --format pprof -o p.pb.gz p >/dev/null || fail "pprof export"
		go tool pprof -traces p.pb.gz 2>/dev/null >traces.txt
		awk -v n="$n" '$2 == "sym_kernel" && $3 == "(inline)" { s += $1; getline; if ($1 != "sym_driver") bad = 1 }
			END { exit !(s == n && !bad) }' traces.txt ||
			fail "pprof -traces: sym_kernel (inline) under sym_driver with $n samples: $(head -20 traces.txt)"
	fi
	;;
sym_cxx)
	profile "$BIN/sym_cxx"
	run "$SONDE" report --format folded p
	expect_rc 0 "folded"
	expect_out ";main;ns::Klass::method\(int\) [0-9]+$"
	run "$SONDE" report --no-demangle --format folded p
	expect_rc 0 "--no-demangle"
	expect_out ";main;_ZN2ns5Klass6methodEi [0-9]+$"
	expect_no_out "ns::Klass"
	;;
sym_stripped)
	profile "$BIN/sym_stripped"
	run "$SONDE" report --format folded p
	expect_rc 0 "stripped"
	expect_out "^sym_stripped\+0x[0-9a-f]+;.*;sym_stripped\+0x[0-9a-f]+ [0-9]+$"
	expect_no_out "sym_kernel|sym_driver"
	grep -qxF "sonde: $BIN/sym_stripped: no symbols (stripped?; showing sym_stripped+0xENTRY, each function by the entry of its unwind table's range)" "$T/err" ||
		{ cat "$T/err" >&2; fail "no stripped warning"; }
	[ "$(grep -c 'no symbols' "$T/err")" -eq 1 ] || fail "not one warning per module"
	# each function is one row, named by its entry: sym_driver's (and its inlined
	# kernel's) samples are all under sym_driver's address in the unstripped build
	entry=$(nm "$BIN/sym_inline" | awk '$3 == "sym_driver" {sub(/^0+/, "", $1); print $1}')
	[ -n "$entry" ] || fail "nm: no sym_driver"
	run "$SONDE" report --format csv p
	top=$(awk -F, 'NR == 2 {print $1}' "$T/out")
	[ "$top" = "sym_stripped+0x$entry" ] || fail "top row $top, sym_driver's entry is 0x$entry: $(head -5 "$T/out")"
	;;
sym_static_stripped)
	# issue 22 item 7: a static function of a stripped library (its .dynsym has the
	# exported functions only) is one row named by its entry (before: a row per address)
	command -v cc >/dev/null && command -v strip >/dev/null || fail "cc and strip needed"
	cat >lib.c <<'C'
__attribute__((noinline)) static double hot_static(double v, int n)
{
	for (int i = 0; i < n; i++) {
		v = v * 1.0000001 + 0.5;
		if (v > 1e9)
			v -= 1e9;
		v = v / 1.0000002 + (double)(i & 7);
	}
	return v;
}
double lib_entry(double v, int n) { return hot_static(v, n) + 1; }
C
	cat >main.c <<'C'
#include <stdlib.h>
#include <time.h>
double lib_entry(double v, int n);
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
int main(int argc, char **argv)
{
	static volatile double sink;
	double end = cpu_s() + (argc > 1 ? atof(argv[1]) : 0.4);
	while (cpu_s() < end)
		sink = lib_entry(sink, 100000);
	return 0;
}
C
	cc -O2 -g -fPIC -shared -o libst.so lib.c && cp libst.so libst.full.so &&
		strip --strip-all libst.so && cc -O2 -o stmain main.c -L. -lst -Wl,-rpath,"$T" ||
		fail "build"
	entry=$(nm libst.full.so | awk '$3 == "hot_static" {sub(/^0+/, "", $1); print $1}')
	[ -n "$entry" ] || fail "nm: no hot_static"
	profile "$T/stmain"
	run env SONDE_CACHE=off "$SONDE" report --format csv p
	expect_rc 0 "report"
	rows=$(grep -c '^libst\.so+0x' "$T/out")
	hot=$(awk -F, -v n="libst.so+0x$entry" '$1 == n {print $2}' "$T/out")
	total=$(awk -F, 'NR > 1 {s += $2} END {print s + 0}' "$T/out")
	[ "$rows" -eq 1 ] && [ -n "$hot" ] && [ $((2 * hot)) -gt "$total" ] ||
		fail "hot_static (entry 0x$entry): $rows rows of libst.so, $hot of $total samples: $(head -8 "$T/out")"
	grep -q '^lib_entry,' "$T/out" || fail "the exported caller lost its name: $(head -8 "$T/out")"
	;;
sym_missing)
	export SONDE_ARCHIVE=off # names of a file gone, without the build-id archive (e2e.archive)
	cp "$BIN/sym_inline" ./gone
	profile "$T/gone"
	rm gone
	run "$SONDE" report --format folded p
	expect_rc 0 "missing"
	expect_out "^gone\+0x[0-9a-f]+;.*;gone\+0x[0-9a-f]+ [0-9]+$"
	grep -qxF "sonde: $T/gone: No such file or directory (cannot symbolize; showing gone+0xADDR)" "$T/err" ||
		{ cat "$T/err" >&2; fail "no missing-file warning"; }
	;;
sym_terminal)
	# issue 22 item 10: on a terminal (script(1) gives one of a set width) names are cut
	# to its width and C++ names are short; shares are coloured unless NO_COLOR; in a
	# pipe every name is whole and there is no colour
	command -v script >/dev/null || fail "script(1) not installed (bsdutils)"
	profile "$BIN/sym_long"
	"$SONDE" report p >pipe.txt 2>/dev/null || fail "report in a pipe"
	long=$(awk '/ function$/ {f = 1; next} f && /sweep/ {sub(/^ *[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+% +/, ""); print; exit}' pipe.txt)
	[ "${#long}" -gt 300 ] || fail "the whole name in a pipe: '$long'"
	grep -q $'\033' pipe.txt && fail "colour in a pipe"
	# tty COLS ARGS...: the report on a terminal of COLS columns, \r removed -> tty.txt
	tty() {
		local cols=$1; shift
		script -qec "stty cols $cols rows 50; $*" /dev/null </dev/null | tr -d '\r' >tty.txt
	}
	# table: the rows under the heading, colour codes removed
	table() { sed $'s/\033\\[[0-9;]*m//g' tty.txt | awk '/ function$/ {f = 1} f && NF'; }
	tty 100 env TERM=xterm NO_COLOR= "$SONDE" report p
	table >rows.txt
	[ -s rows.txt ] || fail "no table on the terminal: $(head -20 tty.txt)"
	grep -qE '  Table<>::sweep$' rows.txt || fail "short name on a terminal: $(cat rows.txt)"
	awk 'length > 100 {print; bad = 1} END {exit bad}' rows.txt >wide.txt || fail "rows wider than 100 columns: $(cat wide.txt)"
	# sweep's share (over 5 %: red, as perf colours it)
	grep -qE $'^ +[0-9]+ \033\\[31m ?[0-9]+\\.[0-9]{2}%\033\\[m .*Table<>::sweep$' tty.txt ||
		fail "no red share on a terminal: $(head -12 tty.txt | cat -v)"
	grep -qF $'\033[1m' tty.txt || fail "no bold heading: $(head -12 tty.txt | cat -v)"
	# --no-short-names: the whole name is cut at the terminal's edge, ended by "..."
	tty 100 env TERM=xterm "$SONDE" report --no-short-names p
	table >rows.txt
	row=$(grep -F 'Table<std::' rows.txt)
	[ "${#row}" -eq 100 ] && [ "${row%...}" != "$row" ] || fail "cut row (${#row} columns): $row"
	pre=${row%...}; pre=${pre##*%  }
	[ "${long#"$pre"}" != "$long" ] || fail "the cut row is not the name's beginning: $pre"
	# NO_COLOR (any value) and TERM=dumb: no colour, the cut stays
	for e in NO_COLOR=1 TERM=dumb; do
		tty 100 env TERM=xterm $e "$SONDE" report p
		grep -q $'\033' tty.txt && fail "colour with $e: $(head -12 tty.txt | cat -v)"
		grep -qE '  Table<>::sweep$' tty.txt || fail "short names with $e"
	done
	# a narrow terminal still shows 12 columns of each name
	tty 40 env NO_COLOR=1 "$SONDE" report --no-short-names p
	grep -qE ' function$' tty.txt && grep -qE '  Table<std::_\.\.\.$' tty.txt ||
		fail "narrow terminal: $(table)"
	;;
sym_docs)
	# the examples of docs/REPORT.md's "Symbols" section are real output: each line, with
	# `...` as any text and any number as any number, is a whole line of some output
	for prog in sym_inline sym_cxx sym_stripped; do
		rm -rf p
		profile "$BIN/$prog"
		for args in "--format folded" "--lines --format folded" "--no-inline --format folded" \
			    "--group-by function,line --format csv" "--no-demangle --format folded"; do
			"$SONDE" report $args p >>all.txt 2>&1 || fail "report $args ($prog)"
		done
	done
	awk '/^## /{s = /^## Symbols/} s && /^```/{inb = !inb; next} s && inb' \
		"$SRC/../../docs/REPORT.md" >examples.txt
	[ "$(wc -l <examples.txt)" -ge 6 ] || fail "examples not found in REPORT.md"
	while IFS= read -r line; do
		re=$(printf '%s\n' "$line" | sed -E -e 's/0x[0-9a-f]+/@HEX@/g' -e 's/[0-9]+/@NUM@/g' \
			-e 's/[]*^$+?(){}|.[]/\\&/g' -e 's/(\\\.){3}/.*/g' \
			-e 's/@HEX@/0x[0-9a-f]+/g' -e 's/@NUM@/[0-9]+/g')
		grep -qxE -- "$re" all.txt || fail "REPORT.md example not in the output: $line"
	done <examples.txt
	;;
*)
	fail "unknown case $CASE"
	;;
esac
exit 0
