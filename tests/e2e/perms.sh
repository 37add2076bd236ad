# Permission bits of what sonde writes (docs/ENV.md, SONDE_MODE): streams 0600
# in 0700 directories by default, SONDE_MODE=group 0640/0750, world 0644/0755,
# always less the process umask; the same from `sonde run`, which makes the
# directory itself, and in a forked child's stream.
. "$(dirname "$0")/lib.sh"
L="$B/tests/bin/lifecycle"

# modes MASK DIR ENV...: runs `lifecycle fork` (two streams: parent and child)
# under umask MASK into DIR (three levels created), prints the octal modes of
# DIR's three levels and of the streams, one per line, sorted and unique.
modes() {
	local mask=$1 dir=$2; shift 2
	(umask "$mask" && env LD_PRELOAD="$LIB" SONDE_OUTPUT="$dir/b/c" "$@" "$L" fork) \
		>"$dir.out" 2>"$dir.err" || fail "$dir: status $?"
	[ -s "$dir.err" ] && fail "$dir: stderr: $(cat "$dir.err")"
	[ "$(ls "$dir/b/c"/*.sonde | wc -l)" -eq 2 ] || fail "$dir: not two streams: $(ls "$dir/b/c")"
	for f in "$dir/b/c"/*.sonde; do valid_stream "$f"; done
	echo "dirs $(stat -c %a "$dir" "$dir/b" "$dir/b/c" | sort -u | tr '\n' ' ')"
	echo "files $(stat -c %a "$dir/b/c"/*.sonde | sort -u | tr '\n' ' ')"
}

# check LABEL WANT_DIRS WANT_FILES MASK ENV...
check() {
	local label=$1 wd=$2 wf=$3; shift 3
	local got
	got=$(modes "$@" | tr '\n' '|')
	[ "$got" = "dirs $wd |files $wf |" ] ||
		fail "$label: got '$got', expected dirs $wd, files $wf"
	pass "$label: directories $wd, streams $wf"
}

check "default, umask 022" 700 600 022 d1
check "SONDE_MODE=private" 700 600 022 d2 SONDE_MODE=private
check "SONDE_MODE=group" 750 640 022 d3 SONDE_MODE=group
check "SONDE_MODE=world" 755 644 022 d4 SONDE_MODE=world
check "SONDE_MODE=world, umask 077" 700 600 077 d5 SONDE_MODE=world
check "SONDE_MODE=group, umask 027" 750 640 027 d6 SONDE_MODE=group
check "SONDE_MODE=world, umask 026" 751 640 026 d7 SONDE_MODE=world

# A bad value: one line, private.
(umask 022 && env LD_PRELOAD="$LIB" SONDE_MODE=0644 SONDE_OUTPUT=bad "$L" spin 0.05) >bad.out 2>bad.err ||
	fail "bad SONDE_MODE: status $?"
echo "sonde: SONDE_MODE: '0644' is not private, group or world (keeping private: streams 0600, directories 0700)" |
	cmp -s - bad.err || fail "bad SONDE_MODE: stderr $(cat bad.err)"
[ "$(stat -c %a bad bad/*.sonde | tr '\n' ' ')" = "700 600 " ] || fail "bad SONDE_MODE: $(stat -c '%n %a' bad bad/*.sonde)"
pass "a bad SONDE_MODE says so and keeps private"

# sonde run makes the directory before starting the program, with the same modes.
(umask 022 && "$SONDE" run -o r1/x -- "$L" spin 0.05) >r1.out 2>r1.err || fail "sonde run: status $?"
[ "$(stat -c %a r1 r1/x r1/x/*.sonde | tr '\n' ' ')" = "700 700 600 " ] ||
	fail "sonde run: $(stat -c '%n %a' r1 r1/x r1/x/*.sonde)"
(umask 022 && SONDE_MODE=group "$SONDE" run -o r2 -- "$L" spin 0.05) >r2.out 2>r2.err ||
	fail "sonde run group: status $?"
[ "$(stat -c %a r2 r2/*.sonde | tr '\n' ' ')" = "750 640 " ] ||
	fail "sonde run, SONDE_MODE=group: $(stat -c '%n %a' r2 r2/*.sonde)"
pass "sonde run: 700/600 by default, 750/640 with SONDE_MODE=group"

# An existing directory of the user's keeps its own mode: nothing is chmod'ed.
mkdir -m 755 mine
env LD_PRELOAD="$LIB" SONDE_OUTPUT=mine "$L" spin 0.05 >m.out 2>m.err || fail "existing: status $?"
[ "$(stat -c %a mine mine/*.sonde | tr '\n' ' ')" = "755 600 " ] || fail "existing: $(stat -c '%n %a' mine mine/*.sonde)"
pass "an existing directory is left as it is; the stream in it is 600"
