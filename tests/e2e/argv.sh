# What a stream records about the run (docs/FORMAT.md HEADER, docs/ENV.md
# SONDE_ARGV): argv whole by default, not at all with SONDE_ARGV=off, with the
# arguments a POSIX extended regex matches replaced by "[redacted]" with
# SONDE_ARGV=redact:REGEX (in a forked child's stream too); the working
# directory as `cwd`; never the environment (checked on the stream's bytes).
. "$(dirname "$0")/lib.sh"
L="$B/tests/bin/lifecycle"
ENVSECRET="env-secret-$$-Qx7"
ARGSECRET="hunter2-$$"
mkdir -p work/sub
WD=$(cd work/sub && pwd -P)

# run NAME ENV...: `lifecycle fork --password=SECRET --token SECRET2 plain-arg`
# from work/sub with a secret in the environment; two streams in $T/NAME.
run() {
	local name=$1; shift
	(cd work/sub && env LD_PRELOAD="$LIB" SONDE_OUTPUT="$T/$name" SONDE_E2E_SECRET="$ENVSECRET" \
		"$@" "$L" fork "--password=$ARGSECRET" --token "tok-$ARGSECRET" plain-arg) \
		>"$name.out" 2>"$name.err" || fail "$name: status $?"
	[ "$(ls "$T/$name"/*.sonde 2>/dev/null | wc -l)" -eq 2 ] || fail "$name: not two streams"
}

# header FILE: the HEADER line of `sonde dump FILE`.
header() {
	valid_stream "$1"
	head -n 1 "$T/dump.json"
}

# no_env NAME: no stream of NAME holds the environment secret, in any byte.
no_env() {
	for f in "$T/$1"/*.sonde; do
		grep -qaF "$ENVSECRET" "$f" && fail "$1: $f holds the environment's secret"
		grep -qaF "SONDE_E2E_SECRET" "$f" && fail "$1: $f holds an environment variable's name"
	done
	return 0
}

# Default: argv whole (the secrets of the command line included: the check
# that grep sees strings in the stream's bytes), cwd, no environment.
run full
[ ! -s full.err ] || fail "full: stderr $(cat full.err)"
for f in full/*.sonde; do
	h=$(header "$f")
	echo "$h" | grep -qF "\"argv_mode\":\"on\",\"argv\":[\"$L\",\"fork\",\"--password=$ARGSECRET\",\"--token\",\"tok-$ARGSECRET\",\"plain-arg\"]" ||
		fail "full: argv not recorded whole: $h"
	echo "$h" | grep -qF "\"cwd\":\"$WD\"" || fail "full: cwd is not $WD: $h"
	grep -qaF -- "--password=$ARGSECRET" "$f" || fail "full: the argv secret is not in the bytes of $f"
done
no_env full
pass "default: argv whole, cwd $WD, no environment string"

# off: no argv (cwd kept).
run off SONDE_ARGV=off
[ ! -s off.err ] || fail "off: stderr $(cat off.err)"
for f in off/*.sonde; do
	h=$(header "$f")
	echo "$h" | grep -qF '"argv_mode":"off"' || fail "off: argv_mode: $h"
	echo "$h" | grep -qF '"argv"' && fail "off: argv recorded: $h"
	echo "$h" | grep -qF "\"cwd\":\"$WD\"" || fail "off: cwd is not $WD: $h"
	grep -qaF "$ARGSECRET" "$f" && fail "off: the argv secret is in $f"
done
no_env off
pass "SONDE_ARGV=off: no argv, cwd kept"

# redact: matched arguments replaced, the others kept; in the child's stream too.
run red 'SONDE_ARGV=redact:^--password=|^tok-'
[ ! -s red.err ] || fail "redact: stderr $(cat red.err)"
for f in red/*.sonde; do
	h=$(header "$f")
	echo "$h" | grep -qF "\"argv_mode\":\"redact\",\"argv\":[\"$L\",\"fork\",\"[redacted]\",\"--token\",\"[redacted]\",\"plain-arg\"]" ||
		fail "redact: $h"
	grep -qaF "$ARGSECRET" "$f" && fail "redact: the argv secret is in $f"
done
grep -c '"fork_of"' <(for f in red/*.sonde; do header "$f"; done) | grep -qx 1 ||
	fail "redact: no forked child's stream among $(ls red)"
no_env red
pass "SONDE_ARGV=redact:REGEX: matching arguments replaced, in the forked child too"

# Bad values record no argv (what the user meant to hide stays hidden).
run badre 'SONDE_ARGV=redact:(pass'
grep -qx "sonde: SONDE_ARGV: '(pass': bad regular expression: .* (a POSIX extended regex; the command line is not recorded)" badre.err ||
	fail "bad regex: stderr $(cat badre.err)"
[ "$(wc -l <badre.err)" -eq 1 ] || fail "bad regex: more than one line: $(cat badre.err)"
run badval SONDE_ARGV=maybe
echo "sonde: SONDE_ARGV: 'maybe' is not on, off or redact:REGEX (the command line is not recorded)" |
	cmp -s - badval.err || fail "bad value: stderr $(cat badval.err)"
for f in badre/*.sonde badval/*.sonde; do
	h=$(header "$f")
	echo "$h" | grep -qF '"argv_mode":"off"' || fail "bad value: argv_mode: $h"
	grep -qaF "$ARGSECRET" "$f" && fail "bad value: the argv secret is in $f"
done
pass "a bad SONDE_ARGV says so and records no argv"
