# jit.sh - JIT code named from perf maps (issue 22 item 6; docs/REPORT.md, "JIT code:
# perf maps"; docs/ENV.md, "JIT code").
#   node:    a hot JS function under `sonde run --jit` (node's perf map through
#            NODE_OPTIONS): the map is kept beside the stream after /tmp/perf-PID.map
#            is gone, the JS function is the top row with most of the samples, module
#            [JIT], and no bare 0x... row is among the top rows; node left no v8 log.
#   python:  the same for Python >= 3.12 (PYTHONPERFSUPPORT): py::fib holds most of
#            the samples (the trampolines are callers: its total); skipped without one.
#   hostile: the analyzer on a hostile map of a real stream (bad lines, an entry
#            covering everything, overlapping entries of which the later wins, 200 000
#            lines): the hot address gets the later name with the samples it had as an
#            address, and the bad lines are counted in one line; the runtime's copier
#            refuses a symbolic link planted at /tmp/perf-PID.map (and, as root, a map
#            owned by another user), one line each, and copies nothing.
#   killed:  a process killed by SIGKILL keeps no map itself; `sonde run` copies what
#            remains in /tmp after the command.
CASES="node python hostile killed"
. "$(dirname "$0")/lib.sh"
case=${2:?usage: jit.sh BUILD_DIR CASE}

# the stream of directory $1 (exactly one) and its pid
stream_of() {
	local s
	s=$(ls "$1"/*.sonde 2>/dev/null)
	[ "$(echo "$s" | grep -c .)" -eq 1 ] || fail "$1: not one stream: $(ls "$1")"
	echo "$s"
}
pid_of() { basename "$1" .sonde | sed 's/.*\.\([0-9]*\)$/\1/'; }
# the csv flat profile's rows: function,self,self_pct,total,total_pct,module
flat() { "$SONDE" report --format csv "$@" 2>report.err | tail -n +2; }

hot_js() {
	cat >hot.js <<'EOF'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let s = 0;
const t0 = Date.now();
while (Date.now() - t0 < 1500) s += fib(25);
console.log(s > 0 ? "ok" : "no");
EOF
}

# node does not start with a sanitizer runtime loaded after it (libsonde.so of an
# AddressSanitizer build brings libasan, which must come first: node dies at a null call)
sanitized_node() {
	grep -q '^SONDE_SANITIZE:STRING=.' "$B/CMakeCache.txt" 2>/dev/null &&
		skip "a sanitizer build: node cannot run with its libsonde.so preloaded (libasan must come first)"
}
case $case in
node)
	sanitized_node
	NODE=$(command -v node) || skip "no node on PATH (.ci/deps installs nodejs)"
	hot_js
	mkdir cwd && cd cwd
	"$SONDE" run --jit -o ../p -- "$NODE" ../hot.js >../run.out 2>../run.err ||
		fail "run: $(cat ../run.err)"
	cd ..
	[ -z "$(ls cwd)" ] || fail "node wrote into its working directory: $(ls cwd)"
	s=$(stream_of p)
	pid=$(pid_of "$s")
	rm -f "/tmp/perf-$pid.map"
	[ -s "${s%.sonde}.perf.map" ] || fail "no map kept beside $s: $(ls p)"
	flat p >flat.csv || fail "report: $(cat report.err)"
	total=$(awk -F, '{ s += $2 } END { print s + 0 }' flat.csv)
	top=$(head -1 flat.csv)
	n=$(echo "$top" | awk -F, '$1 ~ /^JS:.*fib .*hot\.js/ && $NF == "[JIT]" { print $2 }')
	[ -n "$n" ] && [ $((n * 2)) -gt "$total" ] ||
		fail "the top row is not node's fib with most of the $total samples: $(head -5 flat.csv)"
	head -5 flat.csv | grep -q '^0x' && fail "a bare address among the top rows: $(head -5 flat.csv)"
	pass "node: ${top%%,*} holds $n of $total samples (module [JIT]), map kept ($(wc -l <"${s%.sonde}.perf.map") lines)"
	;;
python)
	PY=""
	for c in $(command -v python3.13 python3.12 2>/dev/null) /root/.pyenv/versions/*/bin/python3.1[2-9]; do
		[ -x "$c" ] && "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null &&
			{ PY=$c; break; }
	done
	[ -n "$PY" ] || skip "no Python 3.12 or later here (python3.12/3.13 on PATH or in ~/.pyenv): perf maps start with 3.12"
	cat >hot.py <<'EOF'
import time
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
t0 = time.time()
s = 0
while time.time() - t0 < 1.5:
    s += fib(20)
print("ok" if s else "no")
EOF
	"$SONDE" run --jit -o p -- "$PY" hot.py >run.out 2>run.err || fail "run: $(cat run.err)"
	s=$(stream_of p)
	rm -f "/tmp/perf-$(pid_of "$s").map"
	[ -s "${s%.sonde}.perf.map" ] || fail "no map kept beside $s: $(ls p)"
	flat p >flat.csv || fail "report: $(cat report.err)"
	total=$(awk -F, '{ s += $2 } END { print s + 0 }' flat.csv)
	t=$(awk -F, '$1 ~ /^py::fib:.*hot\.py$/ && $NF == "[JIT]" { print $4 }' flat.csv)
	[ -n "$t" ] && [ $((t * 2)) -gt "$total" ] ||
		fail "py::fib does not hold most of the $total samples: $(grep py:: flat.csv | head -3)"
	head -5 flat.csv | grep -q '^0x' && fail "a bare address among the top rows: $(head -5 flat.csv)"
	pass "python ($("$PY" -V)): py::fib holds $t of $total samples (total)"
	;;
hostile)
	sanitized_node
	NODE=$(command -v node) || skip "no node on PATH (.ci/deps installs nodejs)"
	hot_js
	# without --jit: JIT code as addresses; the hottest one gets a hostile map
	"$SONDE" run -o p -- "$NODE" hot.js >run.out 2>run.err || fail "run: $(cat run.err)"
	s=$(stream_of p)
	flat p >before.csv || fail "report: $(cat report.err)"
	hot=$(awk -F, '$1 ~ /^0x[0-9a-f]+$/ { print $1, $2; exit }' before.csv)
	[ -n "$hot" ] || fail "no JIT address sampled: $(head -5 before.csv)"
	addr=${hot% *} n=${hot#* }
	a=$((addr))
	{
		printf '0 ffffffffffffffff everything\n'                  # the earliest: loses
		printf '%x 40 old_name\n' $((a - 16))                       # covers addr
		printf 'not a line\n'                                       # bad
		printf '%x 0 zero_size\n' "$a"                              # bad
		printf 'ffffffffffffff00 1000 past_the_end\n'               # bad
		printf '%x 10\n' "$a"                                       # bad: no name
		printf '1%016x 10 seventeen_digits\n' "$a"                  # bad
		printf '%x  10 two_spaces\n' "$a"                           # bad
		head -c 20000 /dev/zero | tr '\0' x; printf '\n'            # bad: too long
		printf '\n\r\n'                                             # empty: not counted
		awk -v a="$a" 'BEGIN { for (i = 0; i < 200000; i++) printf "%x 8 filler_%d\n", a + 4096 + 8 * i, i }'
		printf '%x 1 hot_new\n' "$a"                                # the latest: wins
		printf '%x 2 half_a_line' "$a"                              # no newline: not read
	} >"${s%.sonde}.perf.map"
	bad=7
	flat p >after.csv || fail "report on a hostile map: $(cat report.err)"
	m=$(awk -F, '$1 == "hot_new" && $NF == "[JIT]" { print $2 }' after.csv)
	[ "$m" = "$n" ] || fail "$addr had $n samples; hot_new has '$m': $(head -5 after.csv)"
	grep -q "perf.map: $bad of [0-9]* lines are not START SIZE NAME" report.err ||
		fail "not the line about $bad bad lines: $(cat report.err)"
	[ "$(grep -c 'perf.map' report.err)" -eq 1 ] || fail "more than one line: $(cat report.err)"
	# the runtime's copier: a symbolic link planted at /tmp/perf-PID.map is not followed
	echo "secret-$$" >secret
	"$SONDE" run -o q -- sh -c 'ln -s "$1" /tmp/perf-$$.map; i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; echo $$' \
		sh "$T/secret" >q.out 2>q.err || fail "run: $(cat q.err)"
	rm -f "/tmp/perf-$(cat q.out).map"
	grep -q "sonde: /tmp/perf-$(cat q.out).map: a symbolic link" q.err ||
		fail "no line about the symbolic link: $(cat q.err)"
	ls q | grep -q 'perf.map' && fail "a map was kept through the link: $(ls q)"
	grep -rq "secret-$$" q && fail "the linked file was copied into the profile"
	what="a symbolic link refused"
	if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
		"$SONDE" run -o r -- sh -c 'echo "1000 10 x" >/tmp/perf-$$.map; chown nobody /tmp/perf-$$.map; i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; echo $$' \
			>r.out 2>r.err || fail "run: $(cat r.err)"
		rm -f "/tmp/perf-$(cat r.out).map"
		grep -q "sonde: /tmp/perf-$(cat r.out).map: owned by uid $(id -u nobody), not by you (uid 0)" r.err ||
			fail "no line about the owner: $(cat r.err)"
		ls r | grep -q 'perf.map' && fail "another user's map was kept: $(ls r)"
		what="$what, and another user's map"
	fi
	pass "hostile: hot_new holds the $n samples of $addr; $bad bad lines said once; $what"
	;;
killed)
	# a map written, then the process killed by SIGKILL after its first flush
	"$SONDE" run -o p -- sh -c 'printf "1000 10 killed_fn\n" >/tmp/perf-$$.map; i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done; kill -KILL $$' \
		>run.out 2>run.err
	s=$(stream_of p)
	pid=$(pid_of "$s")
	rm -f "/tmp/perf-$pid.map"
	[ "$(cat "${s%.sonde}.perf.map" 2>/dev/null)" = "1000 10 killed_fn" ] ||
		fail "sonde run did not keep the killed process's map: $(ls p)"
	"$SONDE" dump "$s" | grep -q '"exit"' && fail "the process was not killed"
	pass "killed: process $pid's map kept by sonde run"
	;;
*) fail "unknown case $case" ;;
esac
