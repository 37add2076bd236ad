# debuginfod.sh - debug info fetched from debuginfod (issue 22 item 5). A program built
# -O2 -g (tests/cli/sym_inline.c: sym_kernel always inlined into sym_driver) has its debug
# info split out (objcopy --only-keep-debug) into a directory that Debian's debuginfod
# serves on a free loopback port (-F DIR); the program itself is stripped, keeping its
# build-id, and profiled. Cases:
#   fetch  (strip --strip-all) a report with DEBUGINFOD_URLS names the hot stack with
#          file:line and the inlined frame exactly as the report of the unstripped build
#          does, says in one line where the file came from, and leaves it in
#          DEBUGINFOD_CACHE_PATH; without DEBUGINFOD_URLS no name, no request, no line
#   down   the server stopped: one line (connection refused), addresses, done promptly
#   stall  a server that accepts and never answers: one line, cut after DEBUGINFOD_TIMEOUT
#          (2 s here), the report done within a bound derived from it
#   cache  (strip --strip-debug) a symbol cache made without debug info does not hide the
#          file:line debuginfod adds later; once it has them no server is asked
CASES="fetch down stall cache"
. "$(dirname "$0")/lib.sh"
case=${2:?usage: debuginfod.sh BUILD_DIR CASE}
SRC=$(cd "$(dirname "$0")/../cli" && pwd)/sym_inline.c
SRV=
trap '[ -n "$SRV" ] && kill "$SRV" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT

command -v debuginfod >/dev/null || skip "debuginfod is not installed (apt-get install debuginfod; .ci/deps)"
ldconfig -p | grep -q 'libdebuginfod\.so\.1' || skip "libdebuginfod.so.1 is not installed (libdebuginfod1)"
command -v python3 >/dev/null || skip "python3 is not installed"
kline=$(grep -n SYM_KERNEL_LINE "$SRC" | cut -d: -f1)

now() { date +%s.%N; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# http_ok URL: 0 when URL answers 200
http_ok() { python3 - "$1" <<'EOF'
import sys, urllib.request
try:
    sys.exit(0 if urllib.request.urlopen(sys.argv[1], timeout=2).status == 200 else 1)
except Exception:
    sys.exit(1)
EOF
}
# requests: how many requests for prog's build-id the server has logged
requests() { grep -c "GET /buildid/$BID/" srv.log; }

# build STRIP: prog.full (-O2 -g), srv/prog.debug (its debug info), prog (stripped)
build() {
	cc -O2 -g -o prog.full "$SRC" || skip "no C compiler"
	mkdir -p srv
	objcopy --only-keep-debug prog.full srv/prog.debug || fail "objcopy --only-keep-debug"
	cp prog.full prog && strip "$1" prog || fail "strip $1"
	BID=$(readelf -n prog 2>/dev/null | awk '/Build ID/ { print $3 }')
	[ -n "$BID" ] && [ "$BID" = "$(readelf -n srv/prog.debug 2>/dev/null | awk '/Build ID/ { print $3 }')" ] ||
		fail "the stripped program lost its build-id"
	readelf -S prog 2>/dev/null | grep -q '\.debug_info' && fail "prog still has .debug_info"
	profile p ./prog 0.4 || fail "run: $(cat p.err)"
	profile pf ./prog.full 0.4 || fail "run of prog.full: $(cat pf.err)"
}

# serve: debuginfod -F srv on a free loopback port ($PORT), until it serves prog.debug
serve() {
	PORT=$(free_port)
	debuginfod -v -F srv -p "$PORT" -d "$T/db.sqlite" -t 0 -g 0 >srv.log 2>&1 &
	SRV=$!
	for _ in $(seq 1 150); do
		http_ok "http://127.0.0.1:$PORT/buildid/$BID/debuginfo" && return 0
		kill -0 "$SRV" 2>/dev/null || skip "debuginfod cannot run here: $(tail -3 srv.log)"
		sleep 0.2
	done
	skip "debuginfod did not serve its file within 30 s: $(tail -3 srv.log)"
}
stop() { kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; SRV=; }

# report NAME DIR [VAR=VALUE...]: sonde report --lines --format folded DIR into NAME.out,
# NAME.err, with fresh caches (SONDE_CACHE=NAME.sc unless given) and its time in NAME.s
report() {
	local name=$1 dir=$2; shift 2
	local t0; t0=$(now)
	env -u DEBUGINFOD_URLS -u DEBUGINFOD_TIMEOUT SONDE_CACHE="$T/$name.sc" \
		DEBUGINFOD_CACHE_PATH="$T/$name.dc" "$@" \
		"$SONDE" report --lines --format folded "$dir" >"$name.out" 2>"$name.err" ||
		fail "report $name: $(cat "$name.err")"
	awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f\n", b - a }' >"$name.s"
}
# hot NAME: the hottest stack of NAME.out from main on, without its count
hot() { awk '{ n = $NF; $NF = ""; print n "\t" $0 }' "$1.out" | sort -n | tail -1 | cut -f2 | sed 's/^.*;main /main /; s/ $//'; }
# said NAME: the debuginfod lines of NAME.err about prog (other modules without debug info
# here, libc without libc6-dbg, may have lines of their own); anysaid NAME: all of them
said() { grep -i 'debuginfod\|debug info' "$1.err" | grep "^sonde: $T/prog: "; }
anysaid() { grep -i 'debuginfod\|debug info' "$1.err"; }

case $case in
fetch)
	build --strip-all
	serve
	report ref pf SONDE_CACHE=off
	want=$(hot ref)
	echo "$want" | grep -q ";sym_kernel sym_inline.c:$kline$" || fail "the unstripped build: $want"
	before=$(requests)
	report plain p
	grep -q 'sym_kernel\|sym_inline\.c' plain.out && fail "named without DEBUGINFOD_URLS: $(hot plain)"
	grep -q 'prog+0x' plain.out || fail "no prog+0x frame without DEBUGINFOD_URLS: $(head -3 plain.out)"
	[ -z "$(anysaid plain)" ] || fail "a debuginfod line without DEBUGINFOD_URLS: $(anysaid plain)"
	[ "$(requests)" = "$before" ] || fail "the server was asked without DEBUGINFOD_URLS"
	report fetched p DEBUGINFOD_URLS="http://127.0.0.1:$PORT"
	got=$(hot fetched)
	[ "$got" = "$want" ] || fail "hot stack fetched: '$got', unstripped: '$want'"
	[ "$(said fetched | wc -l)" -eq 1 ] || fail "not one debuginfod line: $(cat fetched.err)"
	said fetched | grep -q "^sonde: $T/prog: debug info fetched from debuginfod (http://127.0.0.1:$PORT/buildid/$BID/debuginfo in [0-9.]* s; kept in $T/fetched.dc/$BID/debuginfo)$" ||
		fail "the fetch line: $(said fetched)"
	cmp -s "fetched.dc/$BID/debuginfo" srv/prog.debug || fail "not the served file in DEBUGINFOD_CACHE_PATH"
	[ "$(requests)" -eq $((before + 1)) ] || fail "$(($(requests) - before)) requests for one build-id"
	# the symbol cache holds the names now: no request, no line
	n=$(requests)
	report again p DEBUGINFOD_URLS="http://127.0.0.1:$PORT" SONDE_CACHE="$T/fetched.sc" \
		DEBUGINFOD_CACHE_PATH="$T/fetched.dc"
	[ "$(hot again)" = "$want" ] && [ -z "$(said again)" ] && [ "$(requests)" = "$n" ] ||
		fail "the second report: $(hot again); $(said again); $(($(requests) - n)) requests"
	pass "fetch: '$got' as unstripped, fetched in $(cat fetched.s) s (report; $(cat plain.s) s without DEBUGINFOD_URLS)"
	;;
down)
	build --strip-all
	serve
	report up p DEBUGINFOD_URLS="http://127.0.0.1:$PORT"
	stop
	report down p DEBUGINFOD_URLS="http://127.0.0.1:$PORT" DEBUGINFOD_TIMEOUT=2
	[ "$(said down | wc -l)" -eq 1 ] || fail "not one line: $(cat down.err)"
	said down | grep -q "^sonde: $T/prog: debug info not fetched from http://127.0.0.1:$PORT: Connection refused (.*DEBUGINFOD_URLS)$" ||
		fail "the line: $(said down)"
	grep -q 'sym_kernel' down.out && fail "named with the server down"
	grep -q 'prog+0x' down.out || fail "no prog+0x frames: $(head -3 down.out)"
	# refused at once: within the timeout (2 s), with 3 s for the machine
	awk -v s="$(cat down.s)" 'BEGIN { exit !(s < 2 + 3) }' || fail "$(cat down.s) s with the server down"
	pass "down: one line, $(cat down.s) s (up: $(cat up.s) s)"
	;;
stall)
	build --strip-all
	PORT=$(free_port)
	python3 - "$PORT" >stall.log 2>&1 <<'EOF' &
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
conns = []
while True:
    c, _ = s.accept(); conns.append(c); print("accepted", flush=True)
EOF
	SRV=$!
	sleep 0.5
	kill -0 "$SRV" 2>/dev/null || skip "no listening socket: $(cat stall.log)"
	report stall p DEBUGINFOD_URLS="http://127.0.0.1:$PORT" DEBUGINFOD_TIMEOUT=2
	[ "$(said stall | wc -l)" -eq 1 ] || fail "not one line: $(cat stall.err)"
	said stall | grep -q "^sonde: $T/prog: debug info not fetched: debuginfod sent nothing for 2 s (.*DEBUGINFOD_TIMEOUT sets the wait)$" ||
		fail "the line: $(said stall)"
	grep -q 'prog+0x' stall.out || fail "no prog+0x frames: $(head -3 stall.out)"
	# the wait is the timeout: at least 2 s, at most twice it (libdebuginfod's one retry)
	# and 6 s for a loaded machine
	awk -v s="$(cat stall.s)" 'BEGIN { exit !(s >= 2 && s < 2 * 2 + 6) }' ||
		fail "$(cat stall.s) s for DEBUGINFOD_TIMEOUT=2"
	conns=$(grep -c accepted stall.log)
	[ "$conns" -le 2 ] || fail "$conns connections for one build-id"
	# a cut fetch is not remembered as missing: the next report asks again
	report stall2 p DEBUGINFOD_URLS="http://127.0.0.1:$PORT" DEBUGINFOD_TIMEOUT=1 \
		DEBUGINFOD_CACHE_PATH="$T/stall.dc"
	said stall2 | grep -q 'sent nothing for 1 s' || fail "the cut was cached: $(said stall2)"
	pass "stall: cut after $(cat stall.s) s for DEBUGINFOD_TIMEOUT=2, $conns connection(s)"
	;;
cache)
	build --strip-debug
	serve
	report ref pf SONDE_CACHE=off
	want=$(hot ref)
	# a cache made without debug info: names, no file:line of the inlined frame
	report c p SONDE_CACHE="$T/sc"
	grep -q 'sym_kernel' c.out && fail "sym_kernel without debug info"
	grep -q 'sym_driver' c.out || fail "no sym_driver from the symbol table: $(hot c)"
	report c2 p SONDE_CACHE="$T/sc" DEBUGINFOD_URLS="http://127.0.0.1:$PORT"
	[ "$(hot c2)" = "$want" ] || fail "the cache hid debuginfod's names: '$(hot c2)', unstripped '$want'"
	said c2 | grep -q 'debug info fetched from debuginfod' || fail "no fetch line: $(cat c2.err)"
	# the cache has them now, also without DEBUGINFOD_URLS, and asks no server
	stop
	report c3 p SONDE_CACHE="$T/sc" DEBUGINFOD_URLS="http://127.0.0.1:$PORT"
	[ "$(hot c3)" = "$want" ] && [ -z "$(said c3)" ] || fail "third report: $(hot c3); $(said c3)"
	report c4 p SONDE_CACHE="$T/sc"
	[ "$(hot c4)" = "$want" ] || fail "without DEBUGINFOD_URLS: $(hot c4)"
	pass "cache: '$want' after a cache made without debug info"
	;;
*) fail "unknown case $case" ;;
esac
