# The output directory on a shared machine (docs/ENV.md, "Output directory and
# permissions"): another user (nobody, through setpriv) plants symbolic links and
# directories in a /tmp-like directory; root's runs never write through them or
# into them. The preloaded runtime says one line and the program runs
# unprofiled; `sonde run` says one line and does not start the program.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root to plant files as another user"
command -v setpriv >/dev/null || skip "setpriv not installed"
id nobody >/dev/null 2>&1 || skip "no user nobody"
nob() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
NOBODY=$(id -u nobody)
nob test -r "$LIB" || skip "$LIB is not readable by nobody"
chmod 755 "$T"
mkdir -m 1777 pub # like /tmp
P="$T/pub"
nob mkdir -m 777 "$P/attacker"

# empty_attacker: nothing of root's reached the attacker's directory.
empty_attacker() {
	[ -z "$(ls -A "$P/attacker")" ] || fail "$1: written into the attacker's directory: $(ls -lA "$P/attacker")"
}

# unprofiled NAME DIR WANT_LINE ENV...: /bin/echo run from DIR with the runtime
# preloaded and ENV: prints "hi", exits 0, and stderr is exactly WANT_LINE.
unprofiled() {
	local name=$1 dir=$2 want=$3; shift 3
	(cd "$dir" && env LD_PRELOAD="$LIB" "$@" /bin/echo hi) >"$T/$name.out" 2>"$T/$name.err"
	local st=$?
	[ $st -eq 0 ] || fail "$name: status $st"
	[ "$(cat "$T/$name.out")" = hi ] || fail "$name: output changed: $(cat "$T/$name.out")"
	printf '%s\n' "$want" | cmp -s - "$T/$name.err" || fail "$name: stderr was
$(cat "$T/$name.err")
expected
$want"
	empty_attacker "$name"
	pass "$name: refused, the program ran unprofiled"
}

# notstarted NAME DIR WANT_LINE ARGS...: `sonde run ARGS -- /bin/echo hi` from DIR
# exits 3 with exactly WANT_LINE and the program never ran.
notstarted() {
	local name=$1 dir=$2 want=$3; shift 3
	(cd "$dir" && "$SONDE" run "$@" -- /bin/echo hi) >"$T/$name.out" 2>"$T/$name.err"
	local st=$?
	[ $st -eq 3 ] || fail "$name: sonde run status $st, expected 3 ($(cat "$T/$name.err"))"
	[ -s "$T/$name.out" ] && fail "$name: the program was started: $(cat "$T/$name.out")"
	printf '%s\n' "$want" | cmp -s - "$T/$name.err" || fail "$name: stderr was
$(cat "$T/$name.err")
expected
$want"
	empty_attacker "$name"
	pass "$name: sonde run stopped before starting the program"
}

# 1. The issue's case: ln -s /tmp/attacker /tmp/sonde-echo by another user, then
# root runs echo in /tmp with the default output directory.
nob ln -s "$P/attacker" "$P/sonde-echo"
unprofiled final-link "$P" \
"sonde: SONDE_OUTPUT: 'sonde-echo' is a symbolic link (sonde never writes into a symbolic link: give SONDE_OUTPUT the real directory; this run is not profiled)"
notstarted run-final-link "$P" \
"sonde: run: './sonde-echo' is a symbolic link (sonde never writes into a symbolic link: give -o the real directory; the command was not started)"
# even the user's own link is not written into as the output directory
mkdir own-target && ln -s "$T/own-target" own-link
unprofiled own-final-link "$T" \
"sonde: SONDE_OUTPUT: '$T/own-link' is a symbolic link (sonde never writes into a symbolic link: give SONDE_OUTPUT the real directory; this run is not profiled)" \
	SONDE_OUTPUT="$T/own-link"
[ -z "$(ls -A own-target)" ] || fail "own-final-link: written through the link"

# 2. A link planted as an intermediate component of a path sonde would create.
nob ln -s "$P/attacker" "$P/a"
unprofiled mid-link "$T" \
"sonde: SONDE_OUTPUT: '$P/a' is a symbolic link owned by uid $NOBODY, not by you (uid 0) or root (sonde follows no link another user could have planted: give SONDE_OUTPUT a path without it; this run is not profiled)" \
	SONDE_OUTPUT="$P/a/b/c"
notstarted run-mid-link "$T" \
"sonde: run: '$P/a' is a symbolic link owned by uid $NOBODY, not by you (uid 0) or root (sonde follows no link another user could have planted: give -o a path without it; the command was not started)" \
	-o "$P/a/b/c"
# a root-owned link in a directory others may change (world-writable, no sticky bit)
mkdir -m 777 ww && ln -s "$P/attacker" ww/l
unprofiled mid-link-ww "$T" \
"sonde: SONDE_OUTPUT: '$T/ww/l' is a symbolic link in a directory that other users can change (sonde follows no link another user could have planted: give SONDE_OUTPUT a path without it; this run is not profiled)" \
	SONDE_OUTPUT="$T/ww/l/out"
# a trusted link (root's, in a directory only root can change) is followed:
# /scratch -> /lustre/scratch keeps working
mkdir -m 755 mine real && ln -s "$T/real" mine/l
(env LD_PRELOAD="$LIB" SONDE_OUTPUT="$T/mine/l/out" /bin/echo hi) >trusted.out 2>trusted.err ||
	fail "trusted link: status $?"
[ -s trusted.err ] && fail "trusted link: $(cat trusted.err)"
f=$(ls real/out/*.sonde 2>/dev/null)
[ -n "$f" ] || fail "trusted link: no stream in $T/real/out"
valid_stream "$f"
pass "a trusted link before the last component is followed"

# 3. Planted directories: another user's, world-writable without sticky bit,
# world-writable with sticky bit but another user's.
nob mkdir -m 755 "$P/other"
unprofiled other-owner "$T" \
"sonde: SONDE_OUTPUT: '$P/other' is owned by uid $NOBODY, not by you (uid 0) (sonde writes only into directories of the user it runs as: set SONDE_OUTPUT to one of yours; this run is not profiled)" \
	SONDE_OUTPUT="$P/other"
nob mkdir -m 1777 "$P/sticky"
unprofiled sticky-other-owner "$T" \
"sonde: SONDE_OUTPUT: '$P/sticky' is owned by uid $NOBODY, not by you (uid 0) (sonde writes only into directories of the user it runs as: set SONDE_OUTPUT to one of yours; this run is not profiled)" \
	SONDE_OUTPUT="$P/sticky"
[ -z "$(find "$P/other" "$P/sticky" -mindepth 1)" ] || fail "written into another user's directory"
mkdir -m 777 "$T/open"
chmod 777 "$T/open" # whatever the umask
unprofiled world-writable "$T" \
"sonde: SONDE_OUTPUT: 'open' is writable by every user and has no sticky bit (chmod o-w it, or set SONDE_OUTPUT to another directory; this run is not profiled)" \
	SONDE_OUTPUT=open
notstarted run-world-writable "$T" \
"sonde: run: 'open' is writable by every user and has no sticky bit (chmod o-w it, or set -o to another directory; the command was not started)" \
	-o open
[ -z "$(ls -A open)" ] || fail "written into a world-writable directory"
# ... while the user's own sticky world-writable directory is accepted
mkdir sticky-mine && chmod 1777 sticky-mine
(env LD_PRELOAD="$LIB" SONDE_OUTPUT=sticky-mine /bin/echo hi) >sm.out 2>sm.err && [ ! -s sm.err ] ||
	fail "own sticky directory refused: $(cat sm.err)"
ls sticky-mine/*.sonde >/dev/null 2>&1 || fail "own sticky directory: no stream"
pass "the user's own sticky world-writable directory is used"

# 4. The other way round: an unprivileged user never writes into root's
# directories either (a /tmp-like root-owned one included).
nob env LD_PRELOAD="$LIB" SONDE_OUTPUT="$P" /bin/echo hi >nb.out 2>nb.err ||
	fail "nobody: status $?"
grep -qx "sonde: SONDE_OUTPUT: '$P' is owned by uid 0, not by you (uid $NOBODY) (sonde writes only into directories of the user it runs as: set SONDE_OUTPUT to one of yours; this run is not profiled)" nb.err ||
	fail "nobody into root's sticky directory: $(cat nb.err)"
ls "$P"/*.sonde >/dev/null 2>&1 && fail "nobody wrote into root's directory"
# ... and its own directory, made in the sticky one, is private
nob env LD_PRELOAD="$LIB" SONDE_OUTPUT="$P/nb/out" /bin/echo hi >nb2.out 2>nb2.err && [ ! -s nb2.err ] ||
	fail "nobody into its own directory: $(cat nb2.err)"
[ "$(stat -c '%U %a' "$P/nb" "$P/nb/out" | sort -u)" = "nobody 700" ] ||
	fail "nobody's directories: $(stat -c '%n %U %a' "$P/nb" "$P/nb/out")"
pass "an unprivileged user: refused in root's directory, private in its own"
