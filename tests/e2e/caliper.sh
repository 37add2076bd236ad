# Programs annotated for Caliper run under `sonde run --caliper` unchanged (issue 22
# item 8): tests/e2e/caliper/prog.c (Caliper's C API and CALI_MARK_* macros) and
# prog_cxx.cpp (CALI_CXX_MARK_*), linked against a stand-in libcaliper.so that does
# nothing (stub.c), so that every region below is there only because
# libsonde_caliper.so took the program's calls. Each program prints what it did
# ("calls LEVEL N", "wall LEVEL around_ns A inside_ns I"); the report must agree.
#   c       calls of every level (loop, iteration#mainloop, phase, region, the byname
#           kind, the set-twice stage) equal the program's; inclusive times of
#           phase=solve, region=smooth, kind=heavy and kind=light between the program's
#           inside and around times; --group-by kind/stage/iteration#mainloop group; the
#           global attribute app is on the samples; the tree view puts region=smooth under
#           smooth_step, the function that called cali_begin_region (the library's
#           entry points are tail calls); LD_PRELOAD starts with libsonde_caliper.so,
#           then libsonde.so, then the user's; SONDE_CALIPER=on does what --caliper does.
#   cxx     the C++ macros: loop=outer once, N iterations, region=compute and
#           region=smooth (CALI_CXX_MARK_SCOPE, CALI_CXX_MARK_FUNCTION) N calls each, times
#           against the program's; spliced under compute() and smooth().
#   misuse  ending regions and phases that are not open, misnesting: the program's output
#           unchanged, exit 0, sonde's warnings in the names of the Caliper calls, a later
#           region timed.
#   off     without --caliper (regions on): the same program runs as before, the stand-in
#           gets the calls: no region, no kind; SONDE_CALIPER=bogus is said and off; a
#           sonde whose libsonde_caliper.so is missing refuses in one line, exit 3, CMD
#           not started.
# usage: caliper.sh BUILD_DIR CASE
CASES="c cxx misuse off"
. "$(dirname "$0")/lib.sh"
CASE=${2:-c}
P="$B/tests/bin/caliprog"
PX="$B/tests/bin/caliprog_cxx"
[ -x "$P" ] || skip "no caliprog in $B"
[ -f "$B/libsonde_caliper.so" ] || skip "no libsonde_caliper.so in $B"
# libsonde_caliper.so defines the globals Caliper's macros read (cali_loop_attr_id, ...)
# to take them from libcaliper: an interposition AddressSanitizer reports as an ODR
# violation in a sanitizer build
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_odr_violation=0"

# calls_of OUT LEVEL: the calls the program said it made of LEVEL
calls_of() { awk -v l="$2" '$1 == "calls" && $2 == l { print $3 }' "$1"; }

# group DIR ATTR: `report --view regions --group-by ATTR` as "value calls incl_ms" lines
group() {
	"$SONDE" report --view regions --group-by "$2" --format csv "$1" >"g.$2.csv" 2>"g.$2.err" ||
		fail "report --group-by $2: $(cat "g.$2.err")"
	awk -F, 'NR > 1 { print $1, $2, $3 }' "g.$2.csv"
}

# expect_calls DIR OUT ATTR VALUE...: each ATTR=VALUE row has the program's calls
expect_calls() {
	local dir=$1 out=$2 attr=$3 v got want
	shift 3
	group "$dir" "$attr" >rows.txt
	for v in "$@"; do
		want=$(calls_of "$out" "$attr=$v")
		got=$(awk -v k="$attr=$v" '$1 == k { print $2 }' rows.txt)
		[ -n "$want" ] || fail "$out says no calls of $attr=$v"
		[ "$got" = "$want" ] || fail "$attr=$v: $got calls in the report, the program made $want: $(cat "g.$attr.csv")"
	done
}

# time_ok OUT LEVEL MS: sonde's inclusive MS of LEVEL between what the program measured
# inside and around its begin and end calls (0.5 % for the clocks' rates, 0.2 ms for
# rounding, as lib.sh region_times_ok)
time_ok() {
	awk -v l="$2" -v a="$3" '$1 == "wall" && $2 == l { o = $4 / 1e6; i = $6 / 1e6; k = 1 }
		END { if (!k) { print "no wall line for " l; exit 1 }
			if (a >= i * 0.995 - 0.2 && a <= o * 1.005 + 0.2) exit 0
			printf "%s: %s ms in the report, the program measured %.3f..%.3f ms\n", l, a, i, o
			exit 1 }' "$1"
}

# incl_of ATTR VALUE: incl_ms of ATTR=VALUE from the last group() of ATTR
incl_of() { awk -F, -v k="$1=$2" '$1 == k { print $3 }' "g.$1.csv"; }

case_c() {
	local n=12
	"$SONDE" run --caliper -o c -- "$P" -i $n -u 2 >c.out 2>c.err || fail "sonde run --caliper: exit $?: $(cat c.err)"
	grep -v '^sonde: profile written' c.err | grep -q . && fail "unexpected messages: $(cat c.err)"
	[ "$(calls_of c.out iteration#mainloop)" = $n ] || fail "the program: $(cat c.out)"
	expect_calls c c.out phase solve
	solve_ms=$(incl_of phase solve)
	expect_calls c c.out region smooth
	smooth_ms=$(incl_of region smooth)
	expect_calls c c.out kind heavy light
	heavy_ms=$(incl_of kind heavy) light_ms=$(incl_of kind light)
	expect_calls c c.out stage 1 2
	expect_calls c c.out loop mainloop
	local why
	why=$(time_ok c.out phase=solve "$solve_ms") || fail "$why"
	why=$(time_ok c.out region=smooth "$smooth_ms") || fail "$why"
	why=$(time_ok c.out kind=heavy "$heavy_ms") || fail "$why"
	why=$(time_ok c.out kind=light "$light_ms") || fail "$why"
	its=$(group c 'iteration#mainloop' | awk '$2 == 1' | wc -l)
	[ "$its" = $n ] || fail "--group-by iteration#mainloop: $its rows of 1 call, expected $n: $(cat 'g.iteration#mainloop.csv')"
	"$SONDE" report --group-by app --format csv c >app.csv || fail "report --group-by app"
	awk -F, '$1 == "prog" && $2 > 0 { ok = 1 } END { exit !ok }' app.csv ||
		fail "--group-by app (cali_set_global_string_byname): $(cat app.csv)"
	"$SONDE" report --view tree --format folded c >tree.folded || fail "report --view tree"
	local all spliced
	all=$(grep -c 'region=smooth' tree.folded)
	spliced=$(grep -c ';solve;kind=[a-z]*;stage=2;smooth_step;region=smooth;work ' tree.folded)
	[ "$all" -gt 0 ] && [ "$all" = "$spliced" ] ||
		fail "tree: $spliced of $all region=smooth paths under smooth_step: $(grep smooth tree.folded | head -3)"
	# the order of LD_PRELOAD, the user's own last
	LD_PRELOAD=/nonexistent/libuser.so "$SONDE" run --caliper -o e2 -- sh -c 'echo "$LD_PRELOAD"' >pre2.out 2>/dev/null </dev/null
	pre=$(head -1 pre2.out)
	[ "$pre" = "$B/libsonde_caliper.so:$LIB:/nonexistent/libuser.so" ] ||
		fail "LD_PRELOAD under --caliper: '$pre' (expected libsonde_caliper.so, libsonde.so, the user's)"
	SONDE_CALIPER=on "$SONDE" run -o s -- "$P" -i 3 -u 1 >s.out 2>s.err || fail "SONDE_CALIPER=on: exit $?"
	expect_calls s s.out region smooth
	pass "C API and macros: $n iterations, calls of every level as the program's; solve $solve_ms ms, smooth $smooth_ms ms, heavy $heavy_ms ms, light $light_ms ms within the program's clock; $all smooth paths under smooth_step; LD_PRELOAD $pre; SONDE_CALIPER=on the same"
}

case_cxx() {
	[ -x "$PX" ] || skip "no caliprog_cxx (no C++ compiler)"
	local n=10
	"$SONDE" run --caliper -o x -- "$PX" -i $n -u 2 >x.out 2>x.err || fail "sonde run --caliper: exit $?: $(cat x.err)"
	expect_calls x x.out loop outer
	group x region >/dev/null
	for r in compute compute/region=smooth; do
		got=$(awk -F, -v k="region=$r" '$1 == k { print $2 }' g.region.csv)
		want=$(calls_of x.out "region=${r##*=}")
		[ "$got" = "$want" ] || fail "region=$r: $got calls, the program made $want: $(cat g.region.csv)"
	done
	compute_ms=$(incl_of region compute)
	smooth_ms=$(awk -F, '$1 == "region=compute/region=smooth" { print $3 }' g.region.csv)
	why=$(time_ok x.out region=compute "$compute_ms") || fail "$why"
	why=$(time_ok x.out region=smooth "$smooth_ms") || fail "$why"
	its=$(group x 'iteration#outer' | awk '$2 == 1' | wc -l)
	[ "$its" = "$(calls_of x.out 'iteration#outer')" ] || fail "--group-by iteration#outer: $its rows of 1 call: $(cat 'g.iteration#outer.csv')"
	"$SONDE" report --view tree --format folded x >tree.folded || fail "report --view tree"
	all=$(grep -c 'region=smooth' tree.folded)
	spliced=$(grep -c ';compute();region=compute;smooth();region=smooth;smooth_body();' tree.folded)
	[ "$all" -gt 0 ] && [ "$all" = "$spliced" ] ||
		fail "tree: $spliced of $all region=smooth paths under compute() and smooth(): $(grep smooth tree.folded | head -3)"
	pass "C++ macros: loop=outer 1 call, $its iterations, compute and smooth $n calls each, $compute_ms and $smooth_ms ms within the program's clock, spliced under compute() and smooth() ($all paths)"
}

case_misuse() {
	"$P" -i 2 -u 1 -m >plain.out 2>plain.err || fail "the program alone: exit $?"
	"$SONDE" run --caliper -o m -- "$P" -i 2 -u 1 -m >m.out 2>m.err || fail "misuse under --caliper: exit $?: $(cat m.err)"
	cmp -s <(grep '^calls' plain.out) <(grep '^calls' m.out) || fail "output changed: $(diff plain.out m.out)"
	for w in 'cali_end_region("never"): region "never" is not open (check nesting)' \
		'cali_end_phase("ghost"): region "ghost" is not open (check nesting)' \
		'cali_end_region("a"): innermost open region is "b" (check nesting)'; do
		grep -qxF "sonde: $w" m.err || fail "no 'sonde: $w' in: $(cat m.err)"
	done
	[ "$(grep -c '^sonde: cali_' m.err)" = 3 ] || fail "warnings: $(cat m.err)"
	expect_calls m m.out region after
	pass "misuse: the program's output unchanged, 3 warnings in the Caliper calls' names, region=after timed"
}

case_off() {
	"$P" -i 4 -u 1 >plain.out || fail "the program alone: exit $?"
	SONDE_REGIONS=on "$SONDE" run -o o -- "$P" -i 4 -u 1 >o.out 2>o.err || fail "without --caliper: exit $?"
	cmp -s <(grep '^calls' plain.out) <(grep '^calls' o.out) || fail "output changed: $(diff plain.out o.out)"
	"$SONDE" report --view regions --format csv o >o.csv 2>&1 && fail "regions without --caliper: $(cat o.csv)"
	grep -q '^sonde: no region records' o.csv || fail "report --view regions without --caliper: $(cat o.csv)"
	"$SONDE" report --group-by kind --format csv o >k.csv || fail "report --group-by kind"
	grep -Eq '^(heavy|light),' k.csv && fail "kind without --caliper: $(cat k.csv)"
	SONDE_CALIPER=bogus "$SONDE" run -o b -- "$P" -i 1 -u 1 >b.out 2>b.err || fail "SONDE_CALIPER=bogus: exit $?"
	grep -qxF "sonde: run: SONDE_CALIPER: 'bogus' is not on or off (keeping off)" b.err || fail "SONDE_CALIPER=bogus: $(cat b.err)"
	mkdir lone && cp "$LIB" lone/
	SONDE_LIB=$T/lone/libsonde.so "$SONDE" run --caliper -o l -- touch started >l.out 2>l.err
	code=$?
	[ $code = 3 ] || fail "--caliper without the library: exit $code: $(cat l.err)"
	[ -e started ] && fail "--caliper without the library: the command was started"
	grep -qx "sonde: run: --caliper: $T/lone/libsonde_caliper.so: No such file or directory (build the target sonde_caliper or install it beside libsonde.so; the command was not started)" l.err ||
		fail "--caliper without the library: $(cat l.err)"
	pass "without --caliper: same output, no region, no kind; SONDE_CALIPER=bogus said; a missing library refused in one line, exit 3"
}

case "$CASE" in
c | cxx | misuse | off) "case_$CASE" ;;
*) fail "unknown case '$CASE' (cases: $CASES)" ;;
esac
exit 0
