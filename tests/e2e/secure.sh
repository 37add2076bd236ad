# Setuid and setgid programs (AT_SECURE): sonde stays off and reads no SONDE_*
# variable. The dynamic loader preloads, for such a program, only libraries
# named without '/' that lie in a system library directory and are setuid
# themselves; so a setuid copy of libsonde.so is put there under a unique name
# for the length of the test (root only), and a setuid-root copy of a small
# probe is run by nobody. Control: the same probe run by root (no AT_SECURE)
# with the same library is profiled.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root to install a setuid library in the system library directory"
command -v setpriv >/dev/null || skip "setpriv not installed"
id nobody >/dev/null 2>&1 || skip "no user nobody"
libc=$(ldd /bin/true | awk '$1 ~ /^libc\.so/ { print $3 }')
SYSDIR=$(dirname "$libc")
[ -d "$SYSDIR" ] || skip "no system library directory found (ldd /bin/true)"
NAME="libsonde-e2e-secure-$$.so"
SYSLIB="$SYSDIR/$NAME"
[ -e "$SYSLIB" ] && skip "$SYSLIB exists"
trap 'rm -f "$SYSLIB"; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP # the setuid library never stays behind
cp "$LIB" "$SYSLIB" && chmod 4755 "$SYSLIB" || skip "cannot install $SYSLIB"
chmod 755 "$T"
cp "$B/tests/bin/secureprobe" probe && chown root:root probe && chmod 4755 probe
mkdir -m 1777 pub

# As nobody, the setuid-root probe: AT_SECURE, libsonde loaded, sonde off,
# nothing written, nothing said, whatever SONDE_* asks.
setpriv --reuid=nobody --regid=nogroup --clear-groups env LD_PRELOAD="$NAME" \
	SONDE_OUTPUT="$T/pub/out" SONDE_VERBOSE=1 SONDE_SAMPLE=bogus SONDE_ARGV=maybe ./probe \
	>secure.out 2>secure.err || fail "setuid probe: status $?"
read -r _ secure _ loaded _ active <secure.out
[ "$secure" = 1 ] || skip "the probe did not run with AT_SECURE (nosuid mount?): $(cat secure.out)"
[ "$loaded" = 1 ] || fail "the loader did not preload $SYSLIB into the setuid probe: $(cat secure.out)"
[ "$active" = 0 ] || fail "sonde is active in a setuid program"
[ -s secure.err ] && fail "sonde spoke in a setuid program (read SONDE_*): $(cat secure.err)"
[ -e pub/out ] && fail "sonde wrote $T/pub/out in a setuid program: $(ls -la pub/out)"
pass "setuid program: libsonde loaded, off, silent, no output (SONDE_* ignored)"

# Control: root runs the same probe (no AT_SECURE): profiled into the directory.
env LD_PRELOAD="$NAME" SONDE_OUTPUT="$T/ctl" ./probe >ctl.out 2>ctl.err || fail "control: status $?"
[ "$(cat ctl.out)" = "secure 0 loaded 1 active 1" ] || fail "control: $(cat ctl.out) $(cat ctl.err)"
f=$(ls ctl/*.sonde 2>/dev/null)
[ -n "$f" ] || fail "control: no stream"
valid_stream "$f"
pass "the same library and probe without AT_SECURE: profiled"
