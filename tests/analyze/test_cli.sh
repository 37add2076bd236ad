#!/bin/bash
# Shell tests of the `sonde` CLI over streams written by mkstream (known contents; see the
# scenario comments in mkstream.c for the counts asserted here).
# usage: test_cli.sh CASE SONDE MKSTREAM PRELOAD_STUB [FUZZ_STREAM MODE]
set -u
CASE=$1 SONDE=$2 MK=$3 STUB=$4
DOCS=$(cd "$(dirname "$0")/../../docs" && pwd)
# in sanitizer builds, undefined behaviour fails the test instead of printing and going on
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }
# run CMD...: stdout -> $T/out, stderr -> $T/err, status -> $rc
run() { "$@" >"$T/out" 2>"$T/err"; rc=$?; }
expect_rc() { [ "$rc" -eq "$1" ] || { cat "$T/err" >&2; fail "exit status $rc, expected $1 ($2)"; }; }
# expect_file FILE (expected text on stdin): exact comparison
expect_file() { diff -u - "$1" >&2 || fail "unexpected content of $(basename "$1")"; }
expect_err_line() { grep -qxF -- "$1" "$T/err" || { cat "$T/err" >&2; fail "missing stderr line: $1"; }; }
expect_err_empty() { [ ! -s "$T/err" ] || { cat "$T/err" >&2; fail "unexpected stderr"; }; }

mk() { "$MK" "$@" >/dev/null || fail "mkstream $*"; }

FLAT_TABLE='      self   self%      total  total%  function
        60  60.00%         60  60.00%  mk_beta
        20  20.00%         70  70.00%  mk_alpha
        20  20.00%         20  20.00%  mk_gamma
         0   0.00%        100 100.00%  mk_main
         0   0.00%         10  10.00%  mk_recurse'
# what the flat stream dropped (4 of 100 + 4 samples asked for), stated before the rows
DROPS='sonde: warning: 4 of 104 samples dropped (3.85%: ring_full 3, busy 1; ring_full: raise SONDE_BUFFER_KB)'
W_DROPS='"warnings":["sonde: warning: 4 of 104 samples dropped (3.85%: ring_full 3, busy 1; ring_full: raise SONDE_BUFFER_KB)"],"coverage":{"computed":false,"why":"the streams do not record their threads'"'"' CPU time (written by an older sonde)"}'

case $CASE in
report_flat)
	mk flat a.sonde
	run "$SONDE" report a.sonde
	expect_rc 0 "report"
	expect_err_empty
	expect_file "$T/out" <<EOF
samples: 100  streams: 1  processes: 1  threads: 2
source cpu-time: 90 samples (cpu-time@1ms, period 1000000 ns, perf_event:task-clock)
source wall-time: 10 samples (wall-time@10ms, period 10000000 ns, posix-timer:monotonic)
$DROPS
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)

$FLAT_TABLE
EOF
	run "$SONDE" report --top 2 --source cpu-time a.sonde
	expect_rc 0 "--top --source"
	sed -n 7,9p "$T/out" >top.txt
	expect_file top.txt <<'EOF'
      self   self%      total  total%  function
        60  66.67%         60  66.67%  mk_beta
        20  22.22%         70  77.78%  mk_alpha
EOF
	grep -qx 'samples: 90  streams: 1  processes: 1  threads: 2' "$T/out" || fail "--source header"
	run "$SONDE" report --top x a.sonde
	expect_rc 2 "--top x"
	expect_err_line "sonde: report: --top: 'x' is not a count (see 'sonde report --help')"
	run "$SONDE" report --bogus a.sonde
	expect_rc 2 "unknown report option"
	run "$SONDE" report --format xml a.sonde
	expect_rc 2 "bad --format"
	;;
report_folded)
	mk flat a.sonde
	run "$SONDE" report --format folded a.sonde
	expect_rc 0 "folded"
	expect_file "$T/out" <<'EOF'
mk_main;mk_alpha 20
mk_main;mk_alpha;mk_beta 50
mk_main;mk_gamma 20
mk_main;mk_recurse;mk_recurse;mk_beta 10
EOF
	run "$SONDE" report --format folded --metric weight a.sonde
	expect_rc 0 "folded weight"
	expect_file "$T/out" <<'EOF'
mk_main;mk_alpha 20000000
mk_main;mk_alpha;mk_beta 50000000
mk_main;mk_gamma 120000000
mk_main;mk_recurse;mk_recurse;mk_beta 10000000
EOF
	run "$SONDE" report --format folded --addresses a.sonde
	expect_rc 0 "folded addresses"
	[ "$(wc -l <"$T/out")" -eq 4 ] || fail "4 folded lines with --addresses"
	grep -qE '^mkstream\+0x[0-9a-f]+;mkstream\+0x[0-9a-f]+ 20$' "$T/out" || fail "module+offset names"
	! grep -q mk_ "$T/out" || fail "--addresses still shows names"
	;;
report_csv_json)
	mk flat a.sonde
	run "$SONDE" report --format csv a.sonde
	expect_rc 0 "csv"
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_beta,60,60.00,60,60.00,mkstream
mk_alpha,20,20.00,70,70.00,mkstream
mk_gamma,20,20.00,20,20.00,mkstream
mk_main,0,0.00,100,100.00,mkstream
mk_recurse,0,0.00,10,10.00,mkstream
EOF
	expect_err_line "$DROPS"
	run "$SONDE" report --format json a.sonde
	expect_rc 0 "json"
	python3 - "$T/out" <<'EOF' || fail "json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["samples"] == 100 and d["metric"] == "samples", d
assert d["streams"] == 1 and d["processes"] == 1 and d["threads"] == 2 and d["dropped"] == 4
rows = {r["function"]: r for r in d["rows"]}
assert [r["function"] for r in d["rows"]] == ["mk_beta", "mk_alpha", "mk_gamma", "mk_main", "mk_recurse"]
assert rows["mk_alpha"] == {"function": "mk_alpha", "self": 20, "self_pct": 20.0, "total": 70,
                            "total_pct": 70.0, "module": "mkstream"}, rows["mk_alpha"]
assert rows["mk_main"]["total"] == 100 and rows["mk_recurse"]["total"] == 10
EOF
	;;
report_weight)
	mk flat a.sonde
	run "$SONDE" report --metric weight a.sonde
	expect_rc 0 "weight"
	expect_file "$T/out" <<EOF
samples: 100 (200.000 ms)  streams: 1  processes: 1  threads: 2
source cpu-time: 90 samples (cpu-time@1ms, period 1000000 ns, perf_event:task-clock)
source wall-time: 10 samples (wall-time@10ms, period 10000000 ns, posix-timer:monotonic)
$DROPS
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)

   self_ms   self%   total_ms  total%  function
   120.000  60.00%    120.000  60.00%  mk_gamma
    60.000  30.00%     60.000  30.00%  mk_beta
    20.000  10.00%     70.000  35.00%  mk_alpha
     0.000   0.00%    200.000 100.00%  mk_main
     0.000   0.00%     10.000   5.00%  mk_recurse
EOF
	;;
report_threads)
	mk flat a.sonde --pid 100
	run "$SONDE" report --view threads --format csv a.sonde
	expect_rc 0 "threads csv"
	expect_file "$T/out" <<'EOF'
pid,tid,name,samples,first_ns,last_ns
100,100,main,70,1001000,70001000
100,101,worker-end,30,1005000,30005000
EOF
	run "$SONDE" report --view threads --format json a.sonde
	expect_rc 0 "threads json"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [(t["tid"],t["samples"],t["name"]) for t in d["threads"]]==[(100,70,"main"),(101,30,"worker-end")], d' "$T/out" || fail "threads json"
	run "$SONDE" report --view threads a.sonde
	expect_rc 0 "threads text"
	expect_file "$T/out" <<EOF
$DROPS
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
       pid        tid    samples     first_ms      last_ms  name
       100        100         70        1.001       70.001  main
       100        101         30        1.005       30.005  worker-end
EOF
	run "$SONDE" report --view threads --format folded a.sonde
	expect_rc 2 "threads folded"
	;;
report_sources)
	mk flat a.sonde
	run "$SONDE" report --view sources --format csv a.sonde
	expect_rc 0 "sources csv"
	expect_file "$T/out" <<'EOF'
source,spec,samples,weight,period,unit,mechanism
cpu-time,cpu-time@1ms,90,100000000,1000000,ns,perf_event:task-clock
wall-time,wall-time@10ms,10,100000000,10000000,ns,posix-timer:monotonic
EOF
	;;
report_edge)
	mk edge e.sonde
	run "$SONDE" report --format csv e.sonde
	expect_rc 0 "edge"
	expect_err_empty
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_main,2,33.33,5,83.33,mkstream
0x1234,1,16.67,1,16.67,
[no stack],1,16.67,1,16.67,
[unknown]+0x10,1,16.67,1,16.67,
[vdso]+0x20,1,16.67,1,16.67,[vdso]
EOF
	;;
report_dup)
	mk dup d.sonde
	run "$SONDE" report --format folded d.sonde
	expect_rc 0 "dup"
	expect_file "$T/out" <<'EOF'
mk_main;mk_alpha [libmkdup.so] 1
mk_main;mk_alpha [mkstream] 3
EOF
	;;
dump)
	size=$("$MK" flat a.sonde) || fail mkstream
	run "$SONDE" dump a.sonde
	expect_rc 0 "dump"
	expect_err_empty
	# 1 HEADER, 1 MODULE, 2 THREAD, 7 FRAME, 100 SAMPLE, 2 DROPS, 1 THREAD_END, 1 END
	[ "$(wc -l <"$T/out")" -eq 115 ] || fail "dump: $(wc -l <"$T/out") lines, expected 115"
	python3 - "$T/out" "$size" <<'EOF' || fail "dump JSON"
import json, sys, collections
recs = [json.loads(l) for l in open(sys.argv[1])]
kinds = collections.Counter(r["kind"] for r in recs)
assert kinds == {"HEADER": 1, "MODULE": 1, "THREAD": 2, "FRAME": 7, "SAMPLE": 100,
                 "DROPS": 2, "THREAD_END": 1, "END": 1}, kinds
h = recs[0]
assert h["offset"] == 0 and h["magic"] == "sonde" and h["version"] == 1, h
assert h["info"]["pid"] == 4242 and h["info"]["argv"] == ["mkstream", 'a,"b"\n'], h
assert h["info"]["sources"][1]["period"] == 10000000
m = recs[1]
assert set(m) == {"offset", "kind", "module", "t", "path", "build_id", "bias", "lo", "hi"}, m
assert len(m["build_id"]) == 40 and m["build_id"] == m["build_id"].lower()
s = [r for r in recs if r["kind"] == "SAMPLE"][0]
assert set(s) == {"offset", "kind", "thread", "dt", "source", "node", "weight"}, s
offs = [r["offset"] for r in recs]
assert offs == sorted(offs) and len(set(offs)) == len(offs) and offs[-1] < int(sys.argv[2])
assert recs[-1]["kind"] == "END" and recs[-1]["reason"] == "exit"
EOF
	mk edge e.sonde
	run "$SONDE" dump e.sonde
	expect_rc 0 "dump edge"
	grep -qE '^\{"offset":[0-9]+,"kind":42,"raw":\["future",true\]\}$' "$T/out" || fail "unknown kind"
	grep -qE '"kind":"SAMPLE","thread":1,"dt":1,"source":0,"node":1,"weight":1,"flags":3,"context":0,"pcontext":0,"deltas":\[\],"extra":\["more"\]\}$' "$T/out" || fail "flags/extra"
	grep -qF '"text":"note with \"quotes\"\tand\u0001 control"}' "$T/out" || fail "escaping"
	grep -qF '"path":"[vdso]","build_id":null,' "$T/out" || fail "nil build_id"
	python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$T/out" || fail "edge dump not JSON"
	run "$SONDE" dump
	expect_rc 2 "dump without FILE"
	;;
truncated)
	mk flat a.sonde
	# cut 2 bytes into the 32nd SAMPLE: 31 samples of main;alpha;beta remain
	"$SONDE" dump a.sonde >full.json || fail "dump"
	off=$(grep '"kind":"SAMPLE"' full.json | sed -n 32p | sed 's/^{"offset":\([0-9]*\),.*/\1/')
	head -c $((off + 2)) a.sonde >t.sonde
	run "$SONDE" dump t.sonde
	expect_rc 0 "dump truncated"
	# HEADER, MODULE, 2 THREAD, 3 FRAME, 31 SAMPLE
	expect_err_line "sonde: t.sonde: truncated at byte $off (valid prefix of 38 records used)"
	[ "$(wc -l <"$T/out")" -eq 38 ] || fail "dump truncated: line count"
	head -n 38 full.json | cmp -s - "$T/out" || fail "dump truncated: not the prefix"
	run "$SONDE" report --format csv t.sonde
	expect_rc 0 "report truncated"
	expect_err_line "sonde: t.sonde: truncated at byte $off (using the valid prefix)"
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_beta,31,100.00,31,100.00,mkstream
mk_alpha,0,0.00,31,100.00,mkstream
mk_main,0,0.00,31,100.00,mkstream
EOF
	;;
bad_inputs)
	mk flat a.sonde
	: >empty.sonde
	run "$SONDE" dump empty.sonde
	expect_rc 4 "empty dump"
	expect_err_line "sonde: empty.sonde: empty file (not a sonde stream; the profiled process wrote nothing)"
	run "$SONDE" report empty.sonde
	expect_rc 4 "empty report"
	expect_err_line "sonde: empty.sonde: empty file (not a sonde stream; the profiled process wrote nothing)"
	expect_err_line "sonde: report: no stream could be read (nothing to report)"
	run "$SONDE" dump missing.sonde
	expect_rc 3 "missing dump"
	expect_err_line "sonde: missing.sonde: No such file or directory"
	run "$SONDE" report missing.sonde
	expect_rc 3 "missing report"
	expect_err_line "sonde: missing.sonde: No such file or directory"
	mkdir adir
	run "$SONDE" dump adir
	expect_rc 3 "dump a directory"
	expect_err_line "sonde: adir: Is a directory"
	# random bytes, made deterministic; the first byte is not a msgpack array
	python3 -c 'import random,sys; r=random.Random(7); sys.stdout.buffer.write(b"\x01"+bytes(r.randrange(256) for _ in range(4096)))' >rand.sonde
	run "$SONDE" dump rand.sonde
	expect_rc 4 "random dump"
	expect_err_line "sonde: rand.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)"
	[ ! -s "$T/out" ] || fail "random dump printed records"
	run "$SONDE" report rand.sonde
	expect_rc 4 "random report"
	expect_err_line "sonde: rand.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)"
	head -c 9 a.sonde >partial.sonde
	run "$SONDE" dump partial.sonde
	expect_rc 4 "partial header dump"
	expect_err_line "sonde: partial.sonde: truncated at byte 0 (no complete HEADER record; the process may have died at startup)"
	run "$SONDE" report partial.sonde
	expect_rc 4 "partial header report"
	off=$("$MK" corrupt c.sonde) || fail mkstream
	run "$SONDE" dump c.sonde
	expect_rc 4 "corrupt dump"
	expect_err_line "sonde: c.sonde: corrupt record at byte $off (not an array starting with a record kind)"
	[ "$(wc -l <"$T/out")" -eq 6 ] || fail "corrupt dump: records before the bad one"
	off=$("$MK" cycle y.sonde) || fail mkstream
	run "$SONDE" report y.sonde
	expect_rc 4 "cycle report"
	expect_err_line "sonde: y.sonde: corrupt record at byte $off (FRAME parent is not an earlier node)"
	printf '\x92\x01\xa4sond' >foreign.sonde
	run "$SONDE" report foreign.sonde a.sonde
	expect_rc 0 "one foreign file among good ones"
	expect_err_line "sonde: foreign.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)"
	grep -qx 'samples: 100  streams: 1  processes: 1  threads: 2' "$T/out" || fail "good file reported"
	printf '\x94\x01\xa5sonde\x02\x80' >v2.sonde
	run "$SONDE" dump v2.sonde
	expect_rc 4 "version 2"
	expect_err_line "sonde: v2.sonde: stream format version 2 is not supported (this sonde reads version 1; use a matching sonde)"
	run "$SONDE" frobnicate
	expect_rc 2 "unknown command"
	expect_err_line "sonde: frobnicate: unknown command (see 'sonde --help')"
	run "$SONDE" --help
	expect_rc 0 "--help"
	grep -q '^  4  bad input' "$T/out" && grep -q '^  3  I/O' "$T/out" && grep -q '^  2  usage' "$T/out" ||
		fail "--help lists the exit codes"
	;;
directory)
	mkdir -p prof/sub
	mk flat prof/x.host.1.sonde --pid 1
	mk flat prof/sub/x.host.2.sonde --pid 2
	echo ignored >prof/notes.txt
	run "$SONDE" report --format csv prof
	expect_rc 0 "directory"
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_beta,120,60.00,120,60.00,mkstream
mk_alpha,40,20.00,140,70.00,mkstream
mk_gamma,40,20.00,40,20.00,mkstream
mk_main,0,0.00,200,100.00,mkstream
mk_recurse,0,0.00,20,10.00,mkstream
EOF
	run "$SONDE" report prof
	grep -qx 'samples: 200  streams: 2  processes: 2  threads: 4' "$T/out" || fail "directory header"
	run "$SONDE" report --view threads --format csv prof
	expect_file "$T/out" <<'EOF'
pid,tid,name,samples,first_ns,last_ns
1,1,main,70,1001000,70001000
1,2,worker-end,30,1005000,30005000
2,2,main,70,1001000,70001000
2,3,worker-end,30,1005000,30005000
EOF
	run "$SONDE" report --format folded prof
	grep -qx 'mk_main;mk_alpha;mk_beta 100' "$T/out" || fail "folded merged across streams"
	mkdir empty
	run "$SONDE" report empty
	expect_rc 4 "empty directory"
	expect_err_line "sonde: empty: no .sonde files in this directory (give the output directory of 'sonde run', or stream files)"
	;;
strict)
	mkdir prof
	mk flat prof/a.sonde
	printf 'not a stream' >prof/b.sonde
	run "$SONDE" report prof
	expect_rc 0 "non-strict"
	expect_err_line "sonde: prof/b.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)"
	grep -qx '        60  60.00%         60  60.00%  mk_beta' "$T/out" || fail "non-strict report"
	run "$SONDE" report --strict prof
	expect_rc 4 "strict"
	expect_err_line "sonde: prof/b.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)"
	[ ! -s "$T/out" ] || fail "strict printed a report"
	off=$("$SONDE" dump prof/a.sonde | grep '"kind":"SAMPLE"' | sed -n 32p |
		sed 's/^{"offset":\([0-9]*\),.*/\1/')
	head -c $((off + 2)) prof/a.sonde >prof/c.sonde
	rm prof/b.sonde
	run "$SONDE" report prof
	expect_rc 0 "a truncated stream"
	expect_err_line "sonde: prof/c.sonde: truncated at byte $off (using the valid prefix)"
	grep -qx 'samples: 131  streams: 2  processes: 1  threads: 4' "$T/out" || fail "truncated counts"
	grep -qxF 'sonde: prof/c.sonde: incomplete stream: no END record (the process was killed or is still running; samples after its last flush are lost)' "$T/out" ||
		fail "a truncated stream has no END: said in the header"
	# a truncated stream has no END record: --strict refuses it
	run "$SONDE" report --strict prof
	expect_rc 4 "strict with a truncated stream"
	expect_err_line "sonde: prof/c.sonde: truncated at byte $off (using the valid prefix)"
	expect_err_line "sonde: prof/c.sonde: incomplete stream: no END record (the process was killed or is still running; --strict refuses it)"
	[ ! -s "$T/out" ] || fail "strict printed a report"
	;;
build_id)
	mk flat a.sonde --bad-build-id
	run "$SONDE" report --format folded a.sonde
	expect_rc 0 "build-id mismatch"
	[ "$(grep -c 'build-id differs' "$T/err")" -eq 1 ] || fail "one build-id warning"
	expect_err_line "sonde: $(readlink -f "$MK"): build-id differs from the profiled file (it was rebuilt or replaced since the run; showing mkstream+0xADDR)"
	grep -qE '^mkstream\+0x[0-9a-f]+;mkstream\+0x[0-9a-f]+;mkstream\+0x[0-9a-f]+ 50$' "$T/out" || fail "module+offset names"
	mk flat m.sonde --missing-module
	run "$SONDE" report --format folded m.sonde
	expect_rc 0 "missing module"
	expect_err_line "sonde: /nonexistent/dir/libgone.so: No such file or directory (cannot symbolize; showing libgone.so+0xADDR)"
	grep -qE '^libgone\.so\+0x[0-9a-f]+;libgone\.so\+0x[0-9a-f]+ 20$' "$T/out" || fail "libgone.so+offset"
	;;
report_group)
	mk ctx c.sonde
	run "$SONDE" report --group-by phase c.sonde
	expect_rc 0 "group-by phase"
	expect_err_empty
	expect_file "$T/out" <<'EOF'
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
phase        samples  percent
solve             50   50.00%
(none)            25   25.00%
exchange          15   15.00%
inner             10   10.00%
EOF
	run "$SONDE" report --group-by phase,iteration --format csv c.sonde
	expect_rc 0 "group-by two attributes"
	expect_file "$T/out" <<'EOF'
phase,iteration,samples,percent
solve,1,30,30.00
(none),(none),25,25.00
solve,2,20,20.00
exchange,1,15,15.00
inner,1,10,10.00
EOF
	run "$SONDE" report --group-by function,thread c.sonde
	expect_rc 0 "group-by function,thread"
	expect_file "$T/out" <<'EOF'
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
function  thread            samples  percent
mk_beta   4242 (main)            50   50.00%
mk_gamma  4243 (worker)          25   25.00%
mk_alpha  4242 (main)            15   15.00%
mk_main   4243 (worker)          10   10.00%
EOF
	run "$SONDE" report --group-by thread --format csv c.sonde
	expect_file "$T/out" <<'EOF'
thread,samples,percent
4242,65,65.00
4243,35,35.00
EOF
	run "$SONDE" report --group-by run,process,module,source --format json c.sonde
	expect_rc 0 "group-by json"
	python3 - "$T/out" <<'EOF' || fail "group-by json content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["group_by"] == ["run", "process", "module", "source"] and d["samples"] == 100, d
assert d["rows"] == [{"values": ["big", "mkstream[4242]", "mkstream", "cpu-time"], "samples": 90, "percent": 90.0},
                     {"values": ["(none)", "mkstream[4242]", "mkstream", "cpu-time"], "samples": 10, "percent": 10.0}], d
EOF
	run "$SONDE" report --group-by iteration --metric weight --format csv --top 1 c.sonde
	expect_file "$T/out" <<'EOF'
iteration,weight_ms,percent
1,55.000,55.00
EOF
	# merged across streams by attribute name and value (ids numbered differently)
	mk ctx d.sonde --swap-ids --pid 5000
	run "$SONDE" report --group-by phase,run --format csv c.sonde d.sonde
	expect_rc 0 "group-by two streams"
	expect_file "$T/out" <<'EOF'
phase,run,samples,percent
solve,big,100,50.00
(none),big,30,15.00
exchange,big,30,15.00
(none),(none),20,10.00
inner,big,20,10.00
EOF
	run "$SONDE" report --group-by nosuch --format csv c.sonde
	expect_file "$T/out" <<'EOF'
nosuch,samples,percent
(none),100,100.00
EOF
	run "$SONDE" report --group-by phase,, c.sonde
	expect_rc 2 "empty key"
	expect_err_line "sonde: report: --group-by: empty key (give names separated by commas, e.g. --group-by phase,function)"
	run "$SONDE" report --group-by phase --view threads c.sonde
	expect_rc 2 "group-by with a view"
	expect_err_line "sonde: report: --group-by makes its own table (use it without --view and with --format text, csv or json)"
	;;
report_where)
	mk ctx c.sonde
	# FILTER[,FILTER]:samples, through the group-by and flat views
	for spec in "phase=solve:50" "phase!=solve:50" "iteration:75" "!iteration:25" \
		    "phase=inner:10" "run=big:90" "!run:10" "phase=solve,iteration=2:20" \
		    "phase=solve,phase!=solve:0" "iteration=1:55" "nosuch:0" "!nosuch:100"; do
		IFS=, read -ra fs <<<"${spec%:*}"
		args=()
		for f in "${fs[@]}"; do args+=(--where "$f"); done
		run "$SONDE" report "${args[@]}" --group-by process --format csv c.sonde
		expect_rc 0 "where $spec"
		n=${spec##*:}
		if [ "$n" -eq 0 ]; then
			[ "$(cat "$T/out")" = "process,samples,percent" ] || fail "where $spec: $(cat "$T/out")"
		else
			[ "$(sed -n 2p "$T/out")" = "mkstream[4242],$n,100.00" ] || fail "where $spec: $(cat "$T/out")"
		fi
		run "$SONDE" report "${args[@]}" c.sonde
		grep -qx "samples: $n  streams: 1  processes: 1  threads: 2" "$T/out" || fail "flat where $spec"
	done
	run "$SONDE" report --where phase=solve --format csv c.sonde
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_beta,50,100.00,50,100.00,mkstream
mk_alpha,0,0.00,50,100.00,mkstream
mk_main,0,0.00,50,100.00,mkstream
EOF
	run "$SONDE" report --where '!phase' --view threads --format csv c.sonde
	expect_file "$T/out" <<'EOF'
pid,tid,name,samples,first_ns,last_ns
4242,4242,main,0,,
4242,4243,worker,25,11005000,35005000
EOF
	run "$SONDE" report --where phase=solve --format folded c.sonde
	expect_file "$T/out" <<'EOF'
mk_main;mk_alpha;mk_beta 50
EOF
	run "$SONDE" report --where =x c.sonde
	expect_rc 2 "where without a name"
	expect_err_line "sonde: report: --where '=x': no attribute name (use attr=value, attr!=value, attr~regex, attr or !attr)"
	;;
report_tree)
	mk ctx c.sonde
	run "$SONDE" report --view tree --format folded c.sonde
	expect_rc 0 "tree folded"
	expect_err_empty
	expect_file "$T/out" <<'EOF'
mk_main 10
run=big;mk_main;mk_gamma 15
run=big;phase=exchange;iteration=1;mk_main;mk_alpha 15
run=big;phase=solve;iteration=1;mk_main;mk_alpha;mk_beta 30
run=big;phase=solve;iteration=1;phase=inner;mk_main;mk_gamma 10
run=big;phase=solve;iteration=2;mk_main;mk_alpha;mk_beta 20
EOF
	run "$SONDE" report --view tree --min-percent 15 c.sonde
	expect_rc 0 "tree text"
	expect_file "$T/out" <<'EOF'
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
     total  total%       self   self%  path
        90  90.00%          0   0.00%  run=big
        60  60.00%          0   0.00%    phase=solve
        40  40.00%          0   0.00%      iteration=1
        30  30.00%          0   0.00%        mk_main
        30  30.00%          0   0.00%          mk_alpha
        30  30.00%         30  30.00%            mk_beta
        20  20.00%          0   0.00%      iteration=2
        20  20.00%          0   0.00%        mk_main
        20  20.00%          0   0.00%          mk_alpha
        20  20.00%         20  20.00%            mk_beta
        15  15.00%          0   0.00%    mk_main
        15  15.00%         15  15.00%      mk_gamma
        15  15.00%          0   0.00%    phase=exchange
        15  15.00%          0   0.00%      iteration=1
        15  15.00%          0   0.00%        mk_main
        15  15.00%         15  15.00%          mk_alpha
EOF
	run "$SONDE" report --view tree --format folded --where phase=solve --metric weight c.sonde
	expect_file "$T/out" <<'EOF'
run=big;phase=solve;iteration=1;mk_main;mk_alpha;mk_beta 30000000
run=big;phase=solve;iteration=2;mk_main;mk_alpha;mk_beta 20000000
EOF
	# plain folded (flat view) stays frames only
	run "$SONDE" report --format folded c.sonde
	expect_file "$T/out" <<'EOF'
mk_main 10
mk_main;mk_alpha 15
mk_main;mk_alpha;mk_beta 50
mk_main;mk_gamma 25
EOF
	# without annotations the tree is the call tree
	mk flat a.sonde
	run "$SONDE" report --view tree --format folded a.sonde
	expect_file "$T/out" <<'EOF'
mk_main;mk_alpha 20
mk_main;mk_alpha;mk_beta 50
mk_main;mk_gamma 20
mk_main;mk_recurse;mk_recurse;mk_beta 10
EOF
	# csv and json: the text view's nodes, in its order, as rows
	run "$SONDE" report --view tree --min-percent 15 --format csv c.sonde
	expect_rc 0 "tree csv"
	expect_err_empty
	expect_file "$T/out" <<'EOF'
depth,path,name,total,total_pct,self,self_pct
0,run=big,run=big,90,90.00,0,0.00
1,run=big;phase=solve,phase=solve,60,60.00,0,0.00
2,run=big;phase=solve;iteration=1,iteration=1,40,40.00,0,0.00
3,run=big;phase=solve;iteration=1;mk_main,mk_main,30,30.00,0,0.00
4,run=big;phase=solve;iteration=1;mk_main;mk_alpha,mk_alpha,30,30.00,0,0.00
5,run=big;phase=solve;iteration=1;mk_main;mk_alpha;mk_beta,mk_beta,30,30.00,30,30.00
2,run=big;phase=solve;iteration=2,iteration=2,20,20.00,0,0.00
3,run=big;phase=solve;iteration=2;mk_main,mk_main,20,20.00,0,0.00
4,run=big;phase=solve;iteration=2;mk_main;mk_alpha,mk_alpha,20,20.00,0,0.00
5,run=big;phase=solve;iteration=2;mk_main;mk_alpha;mk_beta,mk_beta,20,20.00,20,20.00
1,run=big;mk_main,mk_main,15,15.00,0,0.00
2,run=big;mk_main;mk_gamma,mk_gamma,15,15.00,15,15.00
1,run=big;phase=exchange,phase=exchange,15,15.00,0,0.00
2,run=big;phase=exchange;iteration=1,iteration=1,15,15.00,0,0.00
3,run=big;phase=exchange;iteration=1;mk_main,mk_main,15,15.00,0,0.00
4,run=big;phase=exchange;iteration=1;mk_main;mk_alpha,mk_alpha,15,15.00,15,15.00
EOF
	run "$SONDE" report --view tree --min-percent 30 --format json c.sonde
	expect_rc 0 "tree json"
	expect_file "$T/out" <<'EOF'
{"incomplete_streams":0,"warnings":[],"coverage":{"computed":false,"why":"the streams do not record their threads' CPU time (written by an older sonde)"},"metric":"samples","samples":100,"weight_ms":100.000,"min_percent":30,"rows":[
{"depth":0,"path":"run=big","name":"run=big","total":90,"total_pct":90.00,"self":0,"self_pct":0.00},
{"depth":1,"path":"run=big;phase=solve","name":"phase=solve","total":60,"total_pct":60.00,"self":0,"self_pct":0.00},
{"depth":2,"path":"run=big;phase=solve;iteration=1","name":"iteration=1","total":40,"total_pct":40.00,"self":0,"self_pct":0.00},
{"depth":3,"path":"run=big;phase=solve;iteration=1;mk_main","name":"mk_main","total":30,"total_pct":30.00,"self":0,"self_pct":0.00},
{"depth":4,"path":"run=big;phase=solve;iteration=1;mk_main;mk_alpha","name":"mk_alpha","total":30,"total_pct":30.00,"self":0,"self_pct":0.00},
{"depth":5,"path":"run=big;phase=solve;iteration=1;mk_main;mk_alpha;mk_beta","name":"mk_beta","total":30,"total_pct":30.00,"self":30,"self_pct":30.00}]}
EOF
	run "$SONDE" report --view tree --format csv --where phase=solve --metric weight --min-percent 50 c.sonde
	expect_file "$T/out" <<'EOF'
depth,path,name,total_ms,total_pct,self_ms,self_pct
0,run=big,run=big,50.000,100.00,0.000,0.00
1,run=big;phase=solve,phase=solve,50.000,100.00,0.000,0.00
2,run=big;phase=solve;iteration=1,iteration=1,30.000,60.00,0.000,0.00
3,run=big;phase=solve;iteration=1;mk_main,mk_main,30.000,60.00,0.000,0.00
4,run=big;phase=solve;iteration=1;mk_main;mk_alpha,mk_alpha,30.000,60.00,0.000,0.00
5,run=big;phase=solve;iteration=1;mk_main;mk_alpha;mk_beta,mk_beta,30.000,60.00,30.000,60.00
EOF
	# the same nodes as the text view at any threshold
	for P in 0 10 15 25 45 90 100; do
		"$SONDE" report --view tree --min-percent $P c.sonde | tail -n +3 |
			awk '{print $1, $3, $NF}' >text.txt
		"$SONDE" report --view tree --min-percent $P --format csv c.sonde | tail -n +2 |
			awk -F, '{print $4, $6, $3}' >csv.txt
		cmp -s text.txt csv.txt || fail "tree csv and text differ at --min-percent $P"
	done
	# the default threshold (0.5 %) prunes as in text: thread main of `stats` has mk_beta
	# in 10 of 4010 samples (0.25 %)
	mk stats s.sonde --count 4000
	run "$SONDE" report --view tree --format csv --where thread=main s.sonde
	expect_file "$T/out" <<'EOF'
depth,path,name,total,total_pct,self,self_pct
0,mk_main,mk_main,4010,100.00,0,0.00
1,mk_main;mk_alpha,mk_alpha,4000,99.75,4000,99.75
EOF
	run "$SONDE" report --view tree --format csv --where thread=main --min-percent 0 s.sonde
	expect_file "$T/out" <<'EOF'
depth,path,name,total,total_pct,self,self_pct
0,mk_main,mk_main,4010,100.00,0,0.00
1,mk_main;mk_alpha,mk_alpha,4000,99.75,4000,99.75
1,mk_main;mk_beta,mk_beta,10,0.25,10,0.25
EOF
	run "$SONDE" report --view tree --format json --min-percent 101 c.sonde
	expect_file "$T/out" <<'EOF'
{"incomplete_streams":0,"warnings":[],"coverage":{"computed":false,"why":"the streams do not record their threads' CPU time (written by an older sonde)"},"metric":"samples","samples":100,"weight_ms":100.000,"min_percent":101,"rows":[]}
EOF
	run "$SONDE" report --view tree --min-percent x c.sonde
	expect_rc 2 "bad --min-percent"
	;;
report_regions)
	mk ctx c.sonde
	run "$SONDE" report --view regions c.sonde
	expect_rc 0 "regions"
	expect_err_empty
	expect_file "$T/out" <<'EOF'
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
path                         calls      incl_ms      excl_ms       min_ms      mean_ms       max_ms  forced
region=outer                     4       50.000       44.500        3.000       12.500       35.000       1
region=outer/region=inner        4        5.500        5.500        0.500        1.375        3.000       2
EOF
	run "$SONDE" report --view regions --by-thread --format csv c.sonde
	expect_file "$T/out" <<'EOF'
thread,path,calls,incl_ms,excl_ms,min_ms,mean_ms,max_ms,forced
4242,region=outer,2,12.000,8.000,3.000,6.000,9.000,0
4243,region=outer,2,38.000,36.500,3.000,19.000,35.000,1
4242,region=outer/region=inner,2,4.000,4.000,1.000,2.000,3.000,0
4243,region=outer/region=inner,2,1.500,1.500,0.500,0.750,1.000,2
EOF
	run "$SONDE" report --view regions --by-thread c.sonde
	sed -n 3p "$T/out" | grep -qE '^4242 \(main\)  +region=outer +2 +12\.000 ' || fail "by-thread text"
	run "$SONDE" report --view regions --format json --where region=outer c.sonde
	expect_file "$T/out" <<'EOF'
{"incomplete_streams":0,"warnings":[],"coverage":{"computed":false,"why":"the streams do not record their threads' CPU time (written by an older sonde)"},"regions":[
{"path":"region=outer","calls":4,"incl_ms":50.000,"excl_ms":44.500,"min_ms":3.000,"mean_ms":12.500,"max_ms":35.000,"forced":1}]}
EOF
	# merged over streams by path
	mk ctx d.sonde --swap-ids --pid 5000
	run "$SONDE" report --view regions --format csv c.sonde d.sonde
	expect_file "$T/out" <<'EOF'
path,calls,incl_ms,excl_ms,min_ms,mean_ms,max_ms,forced
region=outer,8,100.000,89.000,3.000,12.500,35.000,2
region=outer/region=inner,8,11.000,11.000,0.500,1.375,3.000,4
EOF
	# cut inside the 12th REGION (T1's end of outer at 10 ms): T1's outer is still open
	# and ends at T1's last sample (65 samples 1 ms apart from 1 us: 65.001 ms); T2's
	# THREAD_END is cut too: its outer begun at 5 ms ends at its last sample (35.005 ms)
	"$SONDE" dump c.sonde >full.json || fail "dump"
	off=$(grep '"kind":"REGION"' full.json | sed -n 12p | sed 's/^{"offset":\([0-9]*\),.*/\1/')
	head -c $((off + 2)) c.sonde >t.sonde
	run "$SONDE" report --view regions --by-thread --format csv t.sonde
	expect_rc 0 "regions truncated"
	expect_err_line "sonde: t.sonde: truncated at byte $off (using the valid prefix)"
	expect_file "$T/out" <<'EOF'
thread,path,calls,incl_ms,excl_ms,min_ms,mean_ms,max_ms,forced
4242,region=outer,1,64.001,60.001,64.001,64.001,64.001,1
4243,region=outer,2,33.005,31.505,3.000,16.503,30.005,1
4242,region=outer/region=inner,2,4.000,4.000,1.000,2.000,3.000,0
4243,region=outer/region=inner,2,1.500,1.500,0.500,0.750,1.000,2
EOF
	mk flat a.sonde
	run "$SONDE" report --view regions a.sonde
	expect_rc 4 "no regions"
	expect_err_line "sonde: no region records (run with SONDE_REGIONS=on)"
	;;
ctx_dump)
	mk ctx c.sonde
	run "$SONDE" dump c.sonde
	expect_rc 0 "dump ctx"
	python3 - "$T/out" <<'EOF' || fail "dump of context records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
def strip(r):
    return {k: v for k, v in r.items() if k != "offset"}
a = [strip(r) for r in recs if r["kind"] == "ATTRIBUTE"]
assert a[0] == {"kind": "ATTRIBUTE", "attr": 1, "name": "phase", "type": "string", "scope": "thread"}, a
assert a[2] == {"kind": "ATTRIBUTE", "attr": 3, "name": "run", "type": "string", "scope": "process"}, a
c = [strip(r) for r in recs if r["kind"] == "CONTEXT"]
assert c[0] == {"kind": "CONTEXT", "node": 1, "parent": 0, "attr": 1, "value": "solve"}, c
assert c[1] == {"kind": "CONTEXT", "node": 2, "parent": 1, "attr": 2, "value": 1, "flags": 0}, c
g = [strip(r) for r in recs if r["kind"] == "REGION"]
assert g[0] == {"kind": "REGION", "thread": 1, "t": 1000000, "node": 8, "event": 1}, g
s = [strip(r) for r in recs if r["kind"] == "SAMPLE"][0]
assert s == {"kind": "SAMPLE", "thread": 1, "dt": 1000000, "source": 0, "node": 3, "weight": 1,
             "flags": 0, "context": 2, "pcontext": 6}, s
EOF
	;;
ctx_bad)
	for sc in "ctx_noattr:CONTEXT attribute is not defined" \
		  "ctx_parent:CONTEXT parent is not an earlier node" \
		  "ctx_skip:CONTEXT node id out of order" \
		  "ctx_value:CONTEXT value is not a string or a number"; do
		off=$("$MK" "${sc%%:*}" x.sonde) || fail "mkstream $sc"
		run "$SONDE" report --group-by phase x.sonde
		expect_rc 4 "${sc%%:*}"
		expect_err_line "sonde: x.sonde: corrupt record at byte $off (${sc#*:})"
	done
	# hostile: a SAMPLE naming undefined contexts is corrupt; an ATTRIBUTE id that
	# skips ahead is corrupt; a REGION field of the wrong type is corrupt; a deep
	# context chain and many unended begins stay bounded and fast
	python3 - <<'EOF' || fail "python"
import struct
def u(v):
    if v < 128: return bytes([v])
    return b"\xcf" + struct.pack(">Q", v)
def s(x): x = x.encode(); return bytes([0xa0 | len(x)]) + x
def arr(*els): return bytes([0x90 | len(els)]) + b"".join(els)
hdr = arr(u(1), s("sonde"), u(1), b"\x82" + s("pid") + u(7) + s("sources") + arr(b"\x81" + s("name") + s("cpu-time")))
base = hdr + arr(u(4), u(1), u(7), u(0), s("main")) + arr(u(11), u(1), s("phase"), s("string"), s("thread"))
open("undef.sonde", "wb").write(base + arr(u(7), u(1), u(1), u(0), u(0), u(1), u(0), u(2**63), u(99)))
open("attrskip.sonde", "wb").write(base + arr(u(11), u(5), s("x"), s("int"), s("thread")))
open("regtype.sonde", "wb").write(base + arr(u(13), u(1), s("t"), u(1), u(1)))
deep = base + b"".join(arr(u(12), u(i), u(i - 1), u(1), s("v%d" % (i % 7))) for i in range(1, 3001))
deep += arr(u(7), u(1), u(1), u(0), u(0), u(1), u(0), u(3000), u(0))
deep += b"".join(arr(u(13), u(1), u(i), u(1 + i % 3000), u(1)) for i in range(20000))
open("deep.sonde", "wb").write(deep)
EOF
	run "$SONDE" report --group-by phase --format csv undef.sonde
	expect_rc 4 "undefined contexts"
	grep -q '(SAMPLE names a CONTEXT node that no CONTEXT record defined before it)' "$T/err" ||
		fail "undefined context message"
	run "$SONDE" report attrskip.sonde
	expect_rc 4 "attribute id skip"
	grep -q '(ATTRIBUTE id out of order)' "$T/err" || fail "attribute skip message"
	run "$SONDE" report regtype.sonde
	expect_rc 4 "REGION field type"
	grep -q '(REGION t is not an unsigned integer)' "$T/err" || fail "region type message"
	run "$SONDE" report --group-by phase --format csv deep.sonde
	expect_rc 0 "deep context"
	[ "$(sed -n 2p "$T/out")" = "v4,1,100.00" ] || fail "deep context value: $(cat "$T/out")"
	run "$SONDE" report --view regions --format csv --top 1 deep.sonde
	expect_rc 0 "many open regions"
	[ "$(wc -l <"$T/out")" -eq 2 ] || fail "regions of deep stream"
	run "$SONDE" report --view tree --format folded deep.sonde
	expect_rc 0 "deep tree"
	;;
report_counters)
	mk counters c.sonde
	run "$SONDE" report c.sonde
	expect_rc 0 "counters flat"
	expect_file "$T/out" <<'EOF'
samples: 80  streams: 1  processes: 1  threads: 2
source cpu-time: 75 samples (cpu-time@1ms, period 1000000 ns, perf_event:task-clock)
source wall-time: 5 samples (wall-time@10ms, period 10000000 ns, posix-timer:monotonic)
counter context-switches.voluntary: 50 total, 666.7 per CPU-second (getrusage:ru_nvcsw)
counter context-switches.involuntary: 10 total, 133.3 per CPU-second (getrusage:ru_nivcsw)
counter page-faults: 80 total, 1066.7 per CPU-second (perf_event:page-faults)
counter cpu-migrations: unavailable (perf_event_paranoid is 2: counts only user space, where no migration happens)
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)

      self   self%      total  total%  function
        40  50.00%         40  50.00%  mk_beta
        30  37.50%         30  37.50%  mk_gamma
        10  12.50%         50  62.50%  mk_alpha
         0   0.00%         80 100.00%  mk_main
sonde: warning: 5 samples carry no counter values (their thread's counters could not be read, flag 8; counted as samples, not as zero deltas)
EOF
	# a group sums its parts: 50 voluntary + 10 involuntary
	run "$SONDE" report --metric context-switches --format csv c.sonde
	expect_rc 0 "metric group"
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_beta,40,66.67,40,66.67,mkstream
mk_alpha,10,16.67,50,83.33,mkstream
mk_gamma,10,16.67,10,16.67,mkstream
mk_main,0,0.00,60,100.00,mkstream
EOF
	expect_err_line "sonde: warning: 5 samples carry no counter values (their thread's counters could not be read, flag 8; counted as samples, not as zero deltas)"
	run "$SONDE" report --metric context-switches c.sonde
	grep -qx 'samples: 80 (context-switches: 60)  streams: 1  processes: 1  threads: 2' "$T/out" || fail "metric header"
	run "$SONDE" report --metric context-switches.involuntary --format folded c.sonde
	expect_file "$T/out" <<'EOF'
mk_main;mk_alpha 10
EOF
	run "$SONDE" report --metric page-faults --format json c.sonde
	python3 - "$T/out" <<'EOF' || fail "counter json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["metric"] == "page-faults" and d["metric_total"] == 80 and d["samples"] == 80, d
assert d["rows"][0] == {"function": "mk_beta", "self": 80, "self_pct": 100.0, "total": 80,
                        "total_pct": 100.0, "module": "mkstream"}, d
EOF
	run "$SONDE" report --metric context-switches --group-by phase,thread --format csv c.sonde
	expect_file "$T/out" <<'EOF'
phase,thread,context-switches,percent
solve,4242,40,66.67
(none),4243,10,16.67
io,4242,10,16.67
EOF
	run "$SONDE" report --metric context-switches.voluntary --where phase=solve --group-by phase c.sonde
	expect_file "$T/out" <<'EOF'
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
phase  context-switches.voluntary  percent
solve                          40  100.00%
EOF
	run "$SONDE" report --metric context-switches --view tree --format folded c.sonde
	expect_file "$T/out" <<'EOF'
mk_main;mk_gamma 10
phase=io;mk_main;mk_alpha 10
phase=solve;mk_main;mk_alpha;mk_beta 40
EOF
	run "$SONDE" report --metric context-switches --source wall-time --format csv c.sonde
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_gamma,10,100.00,10,100.00,mkstream
mk_main,0,0.00,10,100.00,mkstream
EOF
	run "$SONDE" report --view counters --format csv c.sonde
	expect_rc 0 "counters view"
	expect_file "$T/out" <<'EOF'
counter,group,status,source,total,per_cpu_s,streams,reason
context-switches.voluntary,context-switches,available,getrusage:ru_nvcsw,50,666.7,1,
context-switches.involuntary,context-switches,available,getrusage:ru_nivcsw,10,133.3,1,
page-faults,page-faults,available,perf_event:page-faults,80,1066.7,1,
cpu-migrations,cpu-migrations,unavailable,,,,1,"perf_event_paranoid is 2: counts only user space, where no migration happens"
EOF
	run "$SONDE" report --view counters --format json c.sonde
	python3 - "$T/out" <<'EOF' || fail "counters json"
import json, sys
d = json.load(open(sys.argv[1]))["counters"]
assert d[0] == {"counter": "context-switches.voluntary", "group": "context-switches", "status": "available",
                "source": "getrusage:ru_nvcsw", "total": 50, "per_cpu_s": 666.7, "streams": 1, "reason": None}, d
assert d[3]["status"] == "unavailable" and d[3]["total"] is None and "perf_event_paranoid" in d[3]["reason"], d
EOF
	# merged across streams by name; no cpu-time source: no per-second figure
	mk counters d.sonde --pid 5000
	run "$SONDE" report --view counters --format csv c.sonde d.sonde
	sed -n 2p "$T/out" | grep -qx 'context-switches.voluntary,context-switches,available,getrusage:ru_nvcsw,100,666.7,2,' || fail "merged counters: $(cat "$T/out")"
	run "$SONDE" report --source wall-time c.sonde
	grep -qx 'counter context-switches.voluntary: 10 total (getrusage:ru_nvcsw)' "$T/out" || fail "no cpu-time: no per-second figure"
	run "$SONDE" report --metric cpu-migrations c.sonde
	expect_rc 4 "unavailable metric"
	expect_err_line "sonde: report: --metric cpu-migrations: the counter was unavailable when the program ran (perf_event_paranoid is 2: counts only user space, where no migration happens; see 'sonde events')"
	run "$SONDE" report --metric nosuch c.sonde
	expect_rc 2 "unknown metric"
	expect_err_line "sonde: report: --metric nosuch: no counter or counter group of that name in these streams (use samples, weight, or a counter listed by --view counters)"
	# a stream without counters: no counter rows, no counter warning (its drops only)
	mk flat a.sonde
	run "$SONDE" report --view counters --format csv a.sonde
	expect_file "$T/out" <<'EOF'
counter,group,status,source,total,per_cpu_s,streams,reason
EOF
	expect_err_line "$DROPS"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "counters view of a stream without counters: $(cat "$T/err")"
	;;
report_papi)
	mk papi p.sonde
	run "$SONDE" report --metric weight p.sonde
	expect_rc 0 "papi weight"
	expect_file "$T/out" <<'EOF'
samples: 40 (50000000 events)  streams: 1  processes: 1  threads: 1
source perf::TASK-CLOCK: 40 samples (perf::TASK-CLOCK@1000000, period 1000000 events, papi:overflow)
coverage: not computed: no cpu-time source was recorded: the other sources do not measure CPU time (sample with SONDE_SAMPLE=cpu-time@1ms for an account)

self_events   self% total_events  total%  function
   30000000  60.00%     30000000  60.00%  mk_alpha
   20000000  40.00%     20000000  40.00%  mk_beta
          0   0.00%     50000000 100.00%  mk_main
EOF
	run "$SONDE" report --metric weight --format csv p.sonde
	expect_file "$T/out" <<'EOF'
function,self_events,self_pct,total_events,total_pct,module
mk_alpha,30000000,60.00,30000000,60.00,mkstream
mk_beta,20000000,40.00,20000000,40.00,mkstream
mk_main,0,0.00,50000000,100.00,mkstream
EOF
	run "$SONDE" report --metric weight --group-by source --format csv p.sonde
	expect_file "$T/out" <<'EOF'
source,weight_events,percent
perf::TASK-CLOCK,50000000,100.00
EOF
	mk flat a.sonde
	run "$SONDE" report --metric weight a.sonde p.sonde
	expect_rc 2 "mixed units"
	expect_err_line "sonde: report: --metric weight: the sources count in different units (pick one with --source NAME; see --view sources)"
	run "$SONDE" report --metric weight --source perf::TASK-CLOCK --format csv a.sonde p.sonde
	expect_rc 0 "one unit picked"
	sed -n 2p "$T/out" | grep -qx 'mk_alpha,30000000,60.00,30000000,60.00,mkstream' || fail "picked source"
	;;
report_regions_counters)
	mk counters c.sonde
	run "$SONDE" report --view regions --format csv c.sonde
	expect_rc 0 "regions with counts"
	expect_file "$T/out" <<'EOF'
path,calls,incl_ms,excl_ms,min_ms,mean_ms,max_ms,forced,context-switches.voluntary,context-switches.involuntary,page-faults
region=load,2,6.000,4.000,2.000,3.000,4.000,0,7,2,18
region=load/region=parse,1,2.000,2.000,2.000,2.000,2.000,0,1,1,5
EOF
	run "$SONDE" report --view regions --format json --by-thread c.sonde
	python3 - "$T/out" <<'EOF' || fail "regions json counts"
import json, sys
d = json.load(open(sys.argv[1]))["regions"]
assert d[0]["thread"] == 4242 and d[0]["context-switches.voluntary"] == 7 and d[0]["page-faults"] == 18, d
assert d[1]["path"] == "region=load/region=parse" and d[1]["context-switches.involuntary"] == 1, d
EOF
	run "$SONDE" report --view regions c.sonde
	sed -n 3p "$T/out" | grep -qE '^region=load +2 +6\.000 .* 0 +7 +2 +18$' || fail "regions text: $(cat "$T/out")"
	# regions without counts: no counter columns
	mk ctx x.sonde
	run "$SONDE" report --view regions --format csv x.sonde
	sed -n 1p "$T/out" | grep -qx 'path,calls,incl_ms,excl_ms,min_ms,mean_ms,max_ms,forced' || fail "no counts: no columns"
	;;
counters_dump)
	mk counters c.sonde
	run "$SONDE" dump c.sonde
	expect_rc 0 "dump counters"
	python3 - "$T/out" <<'EOF' || fail "dump of counters"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
h = recs[0]["info"]
assert h["counters"][0] == {"name": "context-switches.voluntary", "group": "context-switches",
                            "unit": "count", "source": "getrusage:ru_nvcsw"}, h
assert h["counters_unavailable"][0]["name"] == "cpu-migrations", h
s = [r for r in recs if r["kind"] == "SAMPLE"]
assert s[0]["deltas"] == [1, 0, 2] and s[0]["flags"] == 0, s[0]
assert [x for x in s if x.get("flags") == 8][0].get("deltas") is None
g = [r for r in recs if r["kind"] == "REGION"]
assert g[0]["counts"] == [0, 0, 0] and g[3]["counts"] == [3, 1, 10], g
EOF
	;;
counters_bad)
	for sc in "cnt_long:SAMPLE deltas does not have one value per header counter" \
		  "cnt_short:SAMPLE deltas does not have one value per header counter" \
		  "cnt_type:SAMPLE deltas holds a value that is not an unsigned integer" \
		  "cnt_flag8:SAMPLE has both deltas and flag 8, counters unreadable" \
		  "cnt_region:REGION counts does not have one value per header counter"; do
		off=$("$MK" "${sc%%:*}" x.sonde) || fail "mkstream $sc"
		run "$SONDE" report x.sonde
		expect_rc 4 "${sc%%:*}"
		expect_err_line "sonde: x.sonde: corrupt record at byte $off (${sc#*:})"
		run "$SONDE" report --view counters --strict x.sonde
		expect_rc 4 "${sc%%:*} strict"
	done
	;;
events)
	run "$SONDE" events --format csv
	expect_rc 0 "events csv"
	expect_err_empty
	head -1 "$T/out" | grep -qx 'kind,name,status,source,reason' || fail "events csv header"
	grep -qE '^source,cpu-time,(available,perf_event:task-clock|fallback,posix-timer:thread-cputime),' "$T/out" || fail "cpu-time row"
	grep -qx 'source,wall-time,available,posix-timer:monotonic,POSIX timer' "$T/out" || fail "wall-time row"
	# Two kinds of machine: PAPI's perf_event component up (then perf::TASK-CLOCK
	# works, and on a VM without a PMU presets are unavailable with the reason),
	# or disabled (libpfm4 finds no default PMU): then every PAPI event gives
	# the component's reason, the same one the component row gives.
	comp=$(grep '^papi,perf_event component,' "$T/out") || fail "no perf_event component row"
	case $comp in
	"papi,perf_event component,available,papi,PAPI_library_init ok")
		grep -qx 'papi-native,perf::TASK-CLOCK,available,papi,event set started and stopped' "$T/out" || fail "perf::TASK-CLOCK"
		if [ -e /sys/bus/event_source/devices/cpu ]; then
			echo "note: this machine has a CPU PMU; the no-PMU checks are skipped"
		else
			grep -qx 'papi-preset,PAPI_TOT_CYC,unavailable,,no hardware counter for it on this CPU; this VM has no PMU' "$T/out" ||
				fail "PAPI_TOT_CYC: $(grep PAPI_TOT_CYC "$T/out")"
			grep -qE '^papi-native,perf::CYCLES,unavailable,,PAPI_add_named_event: .*no PMU' "$T/out" || fail "perf::CYCLES"
		fi
		;;
	"papi,perf_event component,unavailable,papi,PAPI's perf_event component is disabled: "*"; PAPI overflow sampling cannot work here (sample with cpu-time@1ms)")
		why=${comp#papi,perf_event component,unavailable,papi,}
		why=${why%; PAPI overflow sampling*}
		echo "note: $why"
		grep -qxF "papi-native,perf::TASK-CLOCK,unavailable,,$why" "$T/out" || fail "perf::TASK-CLOCK: $(grep TASK-CLOCK "$T/out")"
		grep -qxF "papi-preset,PAPI_TOT_CYC,unavailable,,$why" "$T/out" || fail "PAPI_TOT_CYC: $(grep PAPI_TOT_CYC "$T/out")"
		;;
	*) fail "perf_event component: $comp" ;;
	esac
	# context switches: perf_event or getrusage, consistent with a real probe of
	# context switches come from getrusage (per thread, no descriptor) for every user
	cs=$(grep '^counter,context-switches,' "$T/out") || fail "no context-switches row"
	[ "$cs" = 'counter,context-switches,available,getrusage:ru_nvcsw+ru_nivcsw,"RUSAGE_THREAD: exact, per thread, no descriptor"' ] ||
		fail "context-switches: $cs"
	run "$SONDE" events
	expect_rc 0 "events text"
	for s in 'sources:' 'counters:' 'papi presets:' 'papi native:'; do
		grep -qx "$s" "$T/out" || fail "section $s"
	done
	grep -qE '^sonde events: uid [0-9]+, perf_event_paranoid -?[0-9]+$' "$T/out" || fail "header line"
	grep -qE '^  cpu-time +(available \(perf_event task clock\)|fallback: POSIX CPU-time timer \(.*\))$' "$T/out" || fail "cpu-time text"
	grep -qE '^  wall-time +available \(POSIX timer\)$' "$T/out" || fail "wall-time text"
	case $comp in
	*available,papi,PAPI_library_init*) grep -qE '^  perf::TASK-CLOCK +available' "$T/out" || fail "TASK-CLOCK text" ;;
	*) grep -qxF "  perf::TASK-CLOCK        unavailable ($why)" "$T/out" || fail "TASK-CLOCK text (disabled)"
	   grep -qF " unavailable, all: $why; --all lists them)" "$T/out" || fail "preset summary (disabled)" ;;
	esac
	if [ ! -e /sys/bus/event_source/devices/cpu ] && [ -z "${why:-}" ]; then
		grep -qE '^  \([0-9]+ unavailable, all: no hardware counter for it on this CPU; this VM has no PMU; --all lists them\)$' "$T/out" || fail "preset summary"
		! grep -q '^  PAPI_TOT_CYC' "$T/out" || fail "unavailable presets listed without --all"
		run "$SONDE" events --all
		grep -qE '^  PAPI_TOT_CYC +unavailable \(no hardware counter for it on this CPU; this VM has no PMU\)$' "$T/out" || fail "--all"
	fi
	run "$SONDE" events --format json
	python3 - "$T/out" <<'EOF' || fail "events json"
import json, sys
d = json.load(open(sys.argv[1]))
names = {(e["kind"], e["name"]): e for e in d["events"]}
assert set(d["events"][0]) == {"kind", "name", "status", "source", "reason"}, d["events"][0]
assert names[("source", "wall-time")]["status"] == "available"
assert isinstance(d["perf_event_paranoid"], int) and isinstance(d["uid"], int)
EOF
	run "$SONDE" events --format xml
	expect_rc 2 "bad format"
	expect_err_line "sonde: events: unknown format 'xml' (usage: sonde events [--all] [--format text|csv|json])"
	run "$SONDE" --help
	grep -qE '^  sonde events ' "$T/out" || fail "events in --help"
	;;
events_nobody)
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to switch to nobody"; exit 77; }
	command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; exit 77; }
	cp "$SONDE" ./sonde && chmod 755 . ./sonde
	run setpriv --reuid=nobody --regid=nogroup --clear-groups ./sonde events --format csv
	expect_rc 0 "events as nobody"
	grep -qE '^source,cpu-time,(available|fallback),' "$T/out" || fail "cpu-time as nobody"
	grep -qx 'source,wall-time,available,posix-timer:monotonic,POSIX timer' "$T/out" || fail "wall-time as nobody"
	# as root (the events case): available, or refused with the disabled component's reason
	if grep -q "^papi,perf_event component,unavailable,papi,PAPI's perf_event component is disabled: " "$T/out"; then
		grep -qE "^papi-native,perf::TASK-CLOCK,unavailable,,PAPI's perf_event component is disabled: " "$T/out" ||
			fail "TASK-CLOCK as nobody: $(grep TASK-CLOCK "$T/out")"
	else
		grep -qx 'papi-native,perf::TASK-CLOCK,available,papi,event set started and stopped' "$T/out" || fail "TASK-CLOCK as nobody"
	fi
	p=$(cat /proc/sys/kernel/perf_event_paranoid)
	if [ "$p" -ge 2 ]; then
		grep -q '^counter,context-switches,available,getrusage:ru_nvcsw+ru_nivcsw,' "$T/out" ||
			fail "context-switches as nobody: $(grep context-switches "$T/out")"
		grep -qE "^counter,cpu-migrations,unavailable,,.*perf_event_paranoid=$p.*kernel.perf_event_paranoid=1" "$T/out" ||
			fail "cpu-migrations as nobody: $(grep cpu-migrations "$T/out")"
	else
		echo "note: perf_event_paranoid is $p; the getrusage fallback is not exercised"
	fi
	run setpriv --reuid=nobody --regid=nogroup --clear-groups ./sonde events
	expect_rc 0 "events text as nobody"
	grep -qE '^sonde events: uid 65534, perf_event_paranoid' "$T/out" || fail "nobody header"
	if [ "$p" -ge 2 ]; then
		grep -qE "^  context-switches +getrusage \(RUSAGE_THREAD: exact, per thread, no descriptor\)" "$T/out" || fail "text: context-switches"
		grep -qE "^  cpu-migrations +unavailable \(perf_event_paranoid=$p" "$T/out" || fail "text: cpu-migrations"
	fi
	;;
report_callers)
	# flat: mk_beta is reached through mk_alpha (50) and mk_recurse;mk_recurse (10)
	mk flat a.sonde
	run "$SONDE" report --view callers mk_beta --format csv a.sonde
	expect_rc 0 "callers"
	expect_file "$T/out" <<'EOF'
caller,samples,percent,module
mk_alpha,50,83.33,mkstream
mk_recurse,10,16.67,mkstream
EOF
	run "$SONDE" report --view callees mk_main --format csv a.sonde
	expect_file "$T/out" <<'EOF'
callee,samples,percent,module
mk_alpha,70,70.00,mkstream
mk_gamma,20,20.00,mkstream
mk_recurse,10,10.00,mkstream
EOF
	run "$SONDE" report --view callees mk_alpha a.sonde
	expect_file "$T/out" <<EOF
$DROPS
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
function mk_alpha: total 70 (70.00% of all), self 20 (20.00%)
   samples  percent  callee
        50   71.43%  mk_beta
        20   28.57%  [self]
EOF
	# recursion: each sample counts once per row (mk_recurse is its own caller and callee)
	run "$SONDE" report --view callers mk_recurse --format json a.sonde
	expect_file "$T/out" <<EOF
{"incomplete_streams":0,$W_DROPS,"metric":"samples","function":"mk_recurse","total":10,"total_pct":10.00,"self":0,"self_pct":0.00,"callers":[
{"caller":"mk_main","samples":10,"percent":100.00,"module":"mkstream"},
{"caller":"mk_recurse","samples":10,"percent":100.00,"module":"mkstream"}]}
EOF
	run "$SONDE" report --view callees mk_recurse --format csv a.sonde
	expect_file "$T/out" <<'EOF'
callee,samples,percent,module
mk_beta,10,100.00,mkstream
mk_recurse,10,100.00,mkstream
EOF
	run "$SONDE" report --view callers mk_main --format csv a.sonde
	expect_file "$T/out" <<'EOF'
caller,samples,percent,module
[root],100,100.00,
EOF
	run "$SONDE" report --view callers mk_beta --metric weight --format csv --top 1 a.sonde
	expect_file "$T/out" <<'EOF'
caller,weight_ms,percent,module
mk_alpha,50.000,83.33,mkstream
EOF
	run "$SONDE" report --view callers nosuch a.sonde
	expect_rc 2 "unknown function"
	expect_err_line "sonde: report: --view callers nosuch: no function of that name in these samples (give a name of the flat view)"
	run "$SONDE" report a.sonde --view callers
	expect_rc 2 "no NAME"
	expect_err_line "sonde: report: --view callers needs a function name (e.g. --view callers main)"
	# dup: two functions named mk_alpha; the plain name takes both, the display name one
	mk dup d.sonde
	run "$SONDE" report --view callers mk_alpha --format csv d.sonde
	expect_file "$T/out" <<'EOF'
caller,samples,percent,module
mk_main,4,100.00,mkstream
EOF
	run "$SONDE" report --view callers "mk_alpha [libmkdup.so]" --format csv d.sonde
	expect_file "$T/out" <<'EOF'
caller,samples,percent,module
mk_main,1,100.00,mkstream
EOF
	;;
report_where_regex)
	mk ctx c.sonde
	for spec in "phase~^(solve|inner)$:60" "phase~e:75" "phase!~^s:50" "phase~zzz:0" \
		    "nosuch~.:0" "nosuch!~.:100" "process=4242:100" "process!=4242:0" \
		    "process=mkstream:100" "process=mkstream[4242]:100" "process=mkstream[1]:0" \
		    "process~^mk:100" "process!=mkstream:0" \
		    "thread=4243:35" "thread=worker:35" "thread~^main$:65" "source=cpu-time:100" \
		    "function=mk_beta:50" "function~^mk_(beta|gamma)$:75" "module=mkstream:100" \
		    "function~a,phase=solve:50" "!function:0" "phase~o=x:0"; do
		IFS=, read -ra fs <<<"${spec%:*}"
		args=()
		for f in "${fs[@]}"; do args+=(--where "$f"); done
		run "$SONDE" report "${args[@]}" --group-by process --format csv c.sonde
		expect_rc 0 "where $spec"
		n=${spec##*:}
		if [ "$n" -eq 0 ]; then
			[ "$(cat "$T/out")" = "process,samples,percent" ] || fail "where $spec: $(cat "$T/out")"
		else
			[ "$(sed -n 2p "$T/out")" = "mkstream[4242],$n,100.00" ] || fail "where $spec: $(cat "$T/out")"
		fi
		run "$SONDE" report "${args[@]}" c.sonde
		grep -qx "samples: $n  streams: 1  processes: 1  threads: 2" "$T/out" || fail "flat where $spec"
	done
	run "$SONDE" report --where 'function~gamma' --view threads --format csv c.sonde
	expect_file "$T/out" <<'EOF'
pid,tid,name,samples,first_ns,last_ns
4242,4242,main,0,,
4242,4243,worker,25,1005000,35005000
EOF
	run "$SONDE" report --where 'function~^mk_b' --format csv c.sonde
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_beta,50,100.00,50,100.00,mkstream
mk_alpha,0,0.00,50,100.00,mkstream
mk_main,0,0.00,50,100.00,mkstream
EOF
	# region rows: attribute regexes test the region's path (its innermost value of the
	# attribute); thread applies too
	run "$SONDE" report --where 'region~^out' --view regions --format csv c.sonde
	expect_rc 0 "regions where"
	expect_file "$T/out" <<'EOF'
path,calls,incl_ms,excl_ms,min_ms,mean_ms,max_ms,forced
region=outer,4,50.000,44.500,3.000,12.500,35.000,1
EOF
	run "$SONDE" report --where 'thread=worker' --view regions --by-thread --format csv c.sonde
	[ "$(cut -d, -f1 "$T/out" | sort -u | tr '\n' ' ')" = "4243 thread " ] || fail "regions thread: $(cat "$T/out")"
	run "$SONDE" report --where 'x~(' c.sonde
	expect_rc 2 "bad regex"
	expect_err_line "sonde: report: --where 'x~(': bad regular expression: Unmatched ( or \\( (POSIX extended syntax, e.g. function~^solve_)"
	;;
report_min_percent)
	# --min-percent P on the flat view: functions whose total is below P % of the counted
	# samples go (P itself stays), before --top; percentages stay those of all samples
	mk flat a.sonde
	run "$SONDE" report --min-percent 20 --format csv a.sonde
	expect_rc 0 "flat --min-percent"
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_beta,60,60.00,60,60.00,mkstream
mk_alpha,20,20.00,70,70.00,mkstream
mk_gamma,20,20.00,20,20.00,mkstream
mk_main,0,0.00,100,100.00,mkstream
EOF
	# of the cpu-time samples (90): mk_gamma and mk_recurse have 10 (11.11 %) each
	run "$SONDE" report --min-percent 11.2 --source cpu-time --format csv a.sonde
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_beta,60,66.67,60,66.67,mkstream
mk_alpha,20,22.22,70,77.78,mkstream
mk_main,0,0.00,90,100.00,mkstream
EOF
	run "$SONDE" report --min-percent 20 --top 2 --format json a.sonde
	expect_file "$T/out" <<EOF
{"incomplete_streams":0,$W_DROPS,"metric":"samples","samples":100,"weight_ms":200.000,"streams":1,"processes":1,"threads":2,"dropped":4,"dropped_region_events":0,"rows":[
{"function":"mk_beta","self":60,"self_pct":60.00,"total":60,"total_pct":60.00,"module":"mkstream"},
{"function":"mk_alpha","self":20,"self_pct":20.00,"total":70,"total_pct":70.00,"module":"mkstream"}]}
EOF
	run "$SONDE" report --min-percent 15 a.sonde
	sed -n 7,100p "$T/out" >t.txt
	expect_file t.txt <<'EOF'
      self   self%      total  total%  function
        60  60.00%         60  60.00%  mk_beta
        20  20.00%         70  70.00%  mk_alpha
        20  20.00%         20  20.00%  mk_gamma
         0   0.00%        100 100.00%  mk_main
EOF
	# 0 keeps every row; without the option the flat view keeps every row too (the
	# default 0.5 is the tree's): thread main of `stats` has mk_beta in 10 of 4010
	# samples (0.25 %)
	run "$SONDE" report --min-percent 0 --format csv a.sonde
	[ "$(wc -l <"$T/out")" -eq 6 ] || fail "--min-percent 0 keeps all rows"
	mk stats s.sonde --count 4000
	run "$SONDE" report --where thread=main --format csv s.sonde
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_alpha,4000,99.75,4000,99.75,mkstream
mk_beta,10,0.25,10,0.25,mkstream
mk_main,0,0.00,4010,100.00,mkstream
EOF
	run "$SONDE" report --where thread=main --min-percent 0.26 --format csv s.sonde
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_alpha,4000,99.75,4000,99.75,mkstream
mk_main,0,0.00,4010,100.00,mkstream
EOF
	run "$SONDE" report --min-percent 101 --format csv a.sonde
	expect_rc 0 "nothing left"
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
EOF
	run "$SONDE" report --min-percent -1 a.sonde
	expect_rc 2 "negative --min-percent"
	expect_err_line "sonde: report: --min-percent: '-1' is not a percentage (see 'sonde report --help')"
	;;
report_stats)
	# four processes (mkstream stats: threads main, worker, idle; K = --count):
	#   pid 100 rank 0 K 10 | pid 200 rank 1 K 20 | pid 300 no rank K 30 | pid 400 rank 1 K 40
	# mk_alpha per thread: K in main, 0 in worker and idle; mk_beta: 10 in main, K in
	# worker, 0 in idle. Expected values: population statistics of these numbers.
	mk stats p1.sonde --pid 100 --rank 0 --count 10
	mk stats p2.sonde --pid 200 --rank 1 --count 20
	mk stats p3.sonde --pid 300 --count 30
	mk stats p4.sonde --pid 400 --rank 1 --count 40
	P="p1.sonde p2.sonde p3.sonde p4.sonde"
	# threads (12): alpha 10,20,30,40 and eight 0: mean 100/12 = 8.333, stddev
	# sqrt(3000/12 - 8.333^2) = 13.437; beta 10,10,0, 10,20,0, 10,30,0, 10,40,0
	run "$SONDE" report --stats thread --format csv $P
	expect_rc 0 "stats thread"
	expect_err_empty
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module,min,mean,max,stddev,n
mk_beta,140,58.33,140,58.33,mkstream,0,11.667,40,12.134,12
mk_alpha,100,41.67,100,41.67,mkstream,0,8.333,40,13.437,12
mk_main,0,0.00,240,100.00,mkstream,0,0.000,0,0.000,12
EOF
	# processes (4): alpha 10,20,30,40; beta 20,30,40,50
	run "$SONDE" report --stats process --format csv $P
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module,min,mean,max,stddev,n
mk_beta,140,58.33,140,58.33,mkstream,20,35.000,50,11.180,4
mk_alpha,100,41.67,100,41.67,mkstream,10,25.000,40,11.180,4
mk_main,0,0.00,240,100.00,mkstream,0,0.000,0,0.000,4
EOF
	# ranks (3): rank 0 = pid 100, rank 1 = pids 200 and 400, pid 300 on its own:
	# alpha 10,60,30; beta 20,80,40
	run "$SONDE" report --stats rank --format csv $P
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module,min,mean,max,stddev,n
mk_beta,140,58.33,140,58.33,mkstream,20,46.667,80,24.944,3
mk_alpha,100,41.67,100,41.67,mkstream,10,33.333,60,20.548,3
mk_main,0,0.00,240,100.00,mkstream,0,0.000,0,0.000,3
EOF
	run "$SONDE" report --stats process --format json --top 1 $P
	expect_file "$T/out" <<'EOF'
{"incomplete_streams":0,"warnings":[],"coverage":{"computed":false,"why":"the streams do not record their threads' CPU time (written by an older sonde)"},"metric":"samples","samples":240,"weight_ms":240.000,"streams":4,"processes":4,"threads":12,"dropped":0,"dropped_region_events":0,"stats":"process","rows":[
{"function":"mk_beta","self":140,"self_pct":58.33,"total":140,"total_pct":58.33,"module":"mkstream","min":20,"mean":35.000,"max":50,"stddev":11.180,"n":4}]}
EOF
	run "$SONDE" report --stats thread $P
	sed -n 6,100p "$T/out" >t.txt
	expect_file t.txt <<'EOF'
      self   self%      total  total%  function         min         mean        max       stddev      n
       140  58.33%        140  58.33%  mk_beta            0       11.667         40       12.134     12
       100  41.67%        100  41.67%  mk_alpha           0        8.333         40       13.437     12
         0   0.00%        240 100.00%  mk_main            0        0.000          0        0.000     12
EOF
	# ms with --metric weight (1 ms per sample here); every thread still counts when
	# --where leaves it no samples; --min-percent and --stats together
	run "$SONDE" report --stats process --metric weight --format csv $P
	expect_file "$T/out" <<'EOF'
function,self_ms,self_pct,total_ms,total_pct,module,min,mean,max,stddev,n
mk_beta,140.000,58.33,140.000,58.33,mkstream,20.000,35.000,50.000,11.180,4
mk_alpha,100.000,41.67,100.000,41.67,mkstream,10.000,25.000,40.000,11.180,4
mk_main,0.000,0.00,240.000,100.00,mkstream,0.000,0.000,0.000,0.000,4
EOF
	run "$SONDE" report --stats thread --where thread=worker --format csv $P
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module,min,mean,max,stddev,n
mk_beta,100,100.00,100,100.00,mkstream,0,8.333,40,13.437,12
mk_main,0,0.00,100,100.00,mkstream,0,0.000,0,0.000,12
EOF
	run "$SONDE" report --stats rank --min-percent 50 --format csv $P
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module,min,mean,max,stddev,n
mk_beta,140,58.33,140,58.33,mkstream,20,46.667,80,24.944,3
mk_main,0,0.00,240,100.00,mkstream,0,0.000,0,0.000,3
EOF
	# group-by rows, sorted as the group-by view: per process across ranks (pid 400 is
	# rank 1: 90 there, 0 in rank 0 and in pid 300)
	run "$SONDE" report --stats rank --group-by process --format csv $P
	expect_file "$T/out" <<'EOF'
process,samples,percent,min,mean,max,stddev,n
mkstream[400],90,37.50,0,30.000,90,42.426,3
mkstream[300],70,29.17,0,23.333,70,32.998,3
mkstream[200],50,20.83,0,16.667,50,23.570,3
mkstream[100],30,12.50,0,10.000,30,14.142,3
EOF
	run "$SONDE" report --stats process --group-by function --format json $P
	expect_file "$T/out" <<'EOF'
{"incomplete_streams":0,"warnings":[],"coverage":{"computed":false,"why":"the streams do not record their threads' CPU time (written by an older sonde)"},"metric":"samples","samples":240,"weight_ms":240.000,"group_by":["function"],"stats":"process","rows":[
{"values":["mk_beta"],"samples":140,"percent":58.33,"min":20,"mean":35.000,"max":50,"stddev":11.180,"n":4},
{"values":["mk_alpha"],"samples":100,"percent":41.67,"min":10,"mean":25.000,"max":40,"stddev":11.180,"n":4}]}
EOF
	run "$SONDE" report --stats thread --group-by function $P
	expect_file "$T/out" <<'EOF'
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
function     samples  percent         min         mean        max       stddev      n
mk_beta          140   58.33%           0       11.667         40       12.134     12
mk_alpha         100   41.67%           0        8.333         40       13.437     12
EOF
	# one stream: a single process, every row has stddev 0
	run "$SONDE" report --stats rank --format csv p3.sonde
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module,min,mean,max,stddev,n
mk_beta,40,57.14,40,57.14,mkstream,40,40.000,40,0.000,1
mk_alpha,30,42.86,30,42.86,mkstream,30,30.000,30,0.000,1
mk_main,0,0.00,70,100.00,mkstream,0,0.000,0,0.000,1
EOF
	run "$SONDE" report --stats host p1.sonde
	expect_rc 2 "bad --stats"
	expect_err_line "sonde: report: --stats: unknown value 'host' (see 'sonde report --help')"
	for bad in "--view tree" "--view threads" "--format folded"; do
		run "$SONDE" report --stats thread $bad p1.sonde
		expect_rc 2 "--stats $bad"
		expect_err_line "sonde: report: --stats adds columns to the flat and --group-by views (use it without --view, and with --format text, csv or json)"
	done
	;;
diff)
	# mk_alpha's share doubles from diff_a (20 of 100) to diff_b (80 of 200)
	mk diff_a a.sonde
	mk diff_b b.sonde
	run "$SONDE" diff --format csv a.sonde b.sonde
	expect_rc 0 "diff"
	expect_err_empty
	expect_file "$T/out" <<'EOF'
function,a,a_pct,b,b_pct,delta,ratio
mk_alpha,20,20.00,80,40.00,20.00,2.000
mk_beta,50,50.00,66,33.00,-17.00,0.660
mk_gamma,30,30.00,44,22.00,-8.00,0.733
mk_recurse,0,0.00,10,5.00,5.00,inf
EOF
	run "$SONDE" diff a.sonde b.sonde
	expect_file "$T/out" <<'EOF'
a: a.sonde: 100 samples
b: b.sonde: 200 samples

           a       a%            b       b%     delta     ratio  function
          20   20.00%           80   40.00%    +20.00     2.000  mk_alpha
          50   50.00%           66   33.00%    -17.00     0.660  mk_beta
          30   30.00%           44   22.00%     -8.00     0.733  mk_gamma
           0    0.00%           10    5.00%     +5.00       inf  mk_recurse
EOF
	run "$SONDE" diff --format json --top 1 --metric weight a.sonde b.sonde
	expect_file "$T/out" <<'EOF'
{"metric":"weight","a":{"path":"a.sonde","total":100.000},"b":{"path":"b.sonde","total":200.000},"keys":["function"],"rows":[
{"values":["mk_alpha"],"a":20.000,"a_pct":20.00,"b":80.000,"b_pct":40.00,"delta":20.00,"ratio":2.000}]}
EOF
	run "$SONDE" diff --format json --where 'function!=mk_alpha' --top 1 b.sonde a.sonde
	expect_file "$T/out" <<'EOF'
{"metric":"samples","a":{"path":"b.sonde","total":120},"b":{"path":"a.sonde","total":80},"keys":["function"],"rows":[
{"values":["mk_recurse"],"a":10,"a_pct":8.33,"b":0,"b_pct":0.00,"delta":-8.33,"ratio":0.000}]}
EOF
	# directories on both sides; group-by keys
	mkdir da db && cp a.sonde da/ && cp b.sonde db/ && mk ctx db/c.sonde
	run "$SONDE" diff --group-by phase,thread --format csv da db
	expect_file "$T/out" <<'EOF'
phase,thread,a,a_pct,b,b_pct,delta,ratio
(none),4242,100,100.00,200,66.67,-33.33,0.667
solve,4242,0,0.00,50,16.67,16.67,inf
(none),4243,0,0.00,25,8.33,8.33,inf
exchange,4242,0,0.00,15,5.00,5.00,inf
inner,4243,0,0.00,10,3.33,3.33,inf
EOF
	run "$SONDE" diff a.sonde
	expect_rc 2 "one PATH"
	expect_err_line "sonde: diff: give two PATHs, A and B (see 'sonde diff --help')"
	run "$SONDE" diff a.sonde nosuch
	expect_rc 3 "missing B"
	run "$SONDE" diff --format folded a.sonde b.sonde
	expect_rc 2 "folded"
	run "$SONDE" diff --absolute --format csv a.sonde b.sonde
	expect_file "$T/out" <<'EOF'
function,a,a_pct,b,b_pct,delta,ratio
mk_alpha,20,20.00,80,40.00,60,4.000
mk_beta,50,50.00,66,33.00,16,1.320
mk_gamma,30,30.00,44,22.00,14,1.467
mk_recurse,0,0.00,10,5.00,10,inf
EOF
	;;
docs)
	# every example line of docs/REPORT.md's code blocks (but abbreviated ones and the
	# dump example, whose offsets depend on the build path) is real output
	mk flat a.sonde --pid 100
	for args in "" "--format csv" "--format json --top 1" "--format folded" \
		    "--view threads --format csv" "--view sources --format csv" \
		    "--view callers mk_beta" "--view callees mk_alpha --format csv"; do
		"$SONDE" report $args a.sonde >>all.txt 2>&1 || fail "report $args"
	done
	mk ctx c.sonde --pid 100
	for args in "--group-by phase" "--group-by phase,iteration --format csv" \
		    "--group-by function,thread" "--group-by phase --format json" \
		    "--where phase=solve --group-by iteration --format csv" \
		    "--view tree --min-percent 15" "--view tree --format folded" "--view regions" \
		    "--view tree --min-percent 30 --format csv" \
		    "--view tree --min-percent 30 --format json" \
		    "--view regions --by-thread --format csv" "--view regions --format json"; do
		"$SONDE" report $args c.sonde >>all.txt 2>&1 || fail "report $args"
	done
	mk diff_a da.sonde
	mk diff_b db.sonde
	"$SONDE" diff --format csv da.sonde db.sonde >>all.txt 2>&1 || fail "diff"
	mk stats p1.sonde --pid 100 --rank 0 --count 10
	mk stats p2.sonde --pid 200 --rank 1 --count 20
	mk stats p3.sonde --pid 300 --count 30
	mk stats p4.sonde --pid 400 --rank 1 --count 40
	for args in "--stats thread --format csv" "--stats rank --format csv" \
		    "--stats process --group-by function --format json"; do
		"$SONDE" report $args p1.sonde p2.sonde p3.sonde p4.sonde >>all.txt 2>&1 ||
			fail "report $args"
	done
	mk counters k.sonde --pid 100
	for args in "" "--metric context-switches --format csv" \
		    "--metric context-switches --group-by phase --format csv" \
		    "--view counters --format csv" "--view regions --format csv"; do
		"$SONDE" report $args k.sonde >>all.txt 2>&1 || fail "report $args"
	done
	mk coverage v.sonde --pid 100
	mk papi pa.sonde
	for args in "" "--view coverage --format csv" "--view coverage"; do
		"$SONDE" report $args v.sonde >>all.txt 2>&1 || fail "report $args (coverage)"
	done
	"$SONDE" report pa.sonde >>all.txt 2>&1 || fail "report papi"
	mk coverage pv1.sonde --pid 100 --no-argv --clock 2000000000
	mk flat pv2.sonde --pid 200 --no-argv --no-exe --clock 2500000000 --end-reason exec
	for args in "--view processes" "--view processes --format csv"; do
		"$SONDE" report $args pv1.sonde pv2.sonde >>all.txt 2>&1 || fail "report $args"
	done
	awk '/^```/{inb=!inb; next} inb' "$DOCS/REPORT.md" | grep -vF '...' |
		grep -v '^{"offset"' >examples.txt
	[ "$(wc -l <examples.txt)" -ge 50 ] || fail "examples not found in REPORT.md"
	while IFS= read -r line; do
		grep -qxF -- "$line" all.txt || fail "REPORT.md example not in the output: $line"
	done <examples.txt
	;;
incomplete)
	# issue 8: a stream without END (killed, ENOSPC, still running) is said, in the text
	# header, as json keys, on stderr for csv and in --view streams; exit 0 but --strict
	mk flat a.sonde --no-end
	INC='sonde: a.sonde: incomplete stream: no END record (the process was killed or is still running; samples after its last flush are lost)'
	run "$SONDE" report a.sonde
	expect_rc 0 "incomplete"
	expect_file "$T/out" <<EOF
samples: 100  streams: 1  processes: 1  threads: 2
source cpu-time: 90 samples (cpu-time@1ms, period 1000000 ns, perf_event:task-clock)
source wall-time: 10 samples (wall-time@10ms, period 10000000 ns, posix-timer:monotonic)
$INC
$DROPS
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)

$FLAT_TABLE
EOF
	run "$SONDE" report --format csv a.sonde
	expect_rc 0 "incomplete csv"
	expect_err_line "$INC"
	head -n 1 "$T/out" | grep -qx 'function,self,self_pct,total,total_pct,module' || fail "csv rows stay csv"
	run "$SONDE" report --format json a.sonde
	expect_rc 0 "incomplete json"
	python3 - "$T/out" "$INC" <<'EOF' || fail "incomplete json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["incomplete_streams"] == 1, d
assert d["warnings"][0] == sys.argv[2], d["warnings"]
EOF
	for args in "--view threads" "--view sources" "--view counters" "--group-by thread" \
		    "--view tree" "--view callers mk_beta" "--view streams"; do
		run "$SONDE" report $args a.sonde
		expect_rc 0 "$args"
		[ "$(head -n 1 "$T/out")" = "$INC" ] || fail "$args: the note is not the first line: $(head -n 2 "$T/out")"
	done
	run "$SONDE" report --strict a.sonde
	expect_rc 4 "incomplete --strict"
	expect_err_line "sonde: a.sonde: incomplete stream: no END record (the process was killed or is still running; --strict refuses it)"
	[ ! -s "$T/out" ] || fail "--strict printed a report"
	# a complete stream beside it: one note, for the one without END
	mk flat b.sonde
	run "$SONDE" report --view streams --format csv b.sonde a.sonde
	expect_rc 0 "streams view"
	expect_file "$T/out" <<'EOF'
file,pid,rank,host,end,signal,truncated,samples,samples_dropped,region_events,region_events_dropped
b.sonde,4242,,testhost,exit,,0,100,4,0,0
a.sonde,4242,,testhost,none,,0,100,4,0,0
EOF
	[ "$(grep -c 'incomplete stream' "$T/err")" -eq 1 ] || fail "one incomplete note: $(cat "$T/err")"
	run "$SONDE" report --view streams --format json b.sonde a.sonde
	python3 - "$T/out" <<'EOF' || fail "streams json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["incomplete_streams"] == 1
assert [(s["file"], s["end"], s["samples"]) for s in d["streams"]] == [("b.sonde", "exit", 100), ("a.sonde", None, 100)], d
EOF
	# records after an END (a failed exec) and no END after them: incomplete
	python3 - b.sonde c.sonde <<'EOF' || fail python
import sys
b = open(sys.argv[1], "rb").read()
# after b's END, one more SAMPLE [7, 1, 1000000, 0, 3, 1] (thread 1, node 3: defined)
open(sys.argv[2], "wb").write(b + bytes([0x96, 7, 1, 0xce, 0, 0x0f, 0x42, 0x40, 0, 3, 1]))
EOF
	"$SONDE" dump c.sonde | tail -n 1 | grep -q '"kind":"SAMPLE"' || fail "c.sonde: a SAMPLE after END"
	run "$SONDE" report c.sonde
	grep -qxF 'sonde: c.sonde: incomplete stream: no END record (the process was killed or is still running; samples after its last flush are lost)' "$T/out" ||
		fail "records after END: not said"
	;;
end_signal)
	# issue 8: END reason `signal` is said (the signal by number and name)
	mk flat a.sonde --end-signal 11
	run "$SONDE" report a.sonde
	expect_rc 0 "END signal"
	sed -n 4p "$T/out" | grep -qxF 'sonde: a.sonde: process 4242 was killed by signal 11 (SIGSEGV) (the profile covers its run up to the signal)' ||
		fail "signal note: $(sed -n 4p "$T/out")"
	! grep -q 'incomplete' "$T/out" || fail "a stream with END is not incomplete"
	run "$SONDE" report --view streams --format csv a.sonde
	sed -n 2p "$T/out" | grep -qx 'a.sonde,4242,,testhost,signal,11,0,100,4,0,0' || fail "streams row: $(cat "$T/out")"
	mk flat b.sonde
	run "$SONDE" report b.sonde
	! grep -q 'signal\|incomplete' "$T/out" || fail "exit: nothing to say"
	;;
region_drops)
	# issue 10: drops per kind of record, as a share of what was asked for, stated
	# before the rows of every view, regions included; unknown reasons by name
	mk region_drops r.sonde
	SD='sonde: warning: 3 of 6 samples dropped (50.00%: throttled 1, signals_blocked 2)'
	RD='sonde: warning: 5977108 of 5977110 region events dropped (100.00%: region_ring_full 5977108; the regions view misses them; region_ring_full: raise SONDE_BUFFER_KB)'
	run "$SONDE" report r.sonde
	expect_rc 0 "region drops"
	expect_file "$T/out" <<EOF
samples: 3  streams: 1  processes: 1  threads: 1
source cpu-time: 3 samples (cpu-time@1ms, period 1000000 ns, perf_event:task-clock)
source wall-time: 0 samples (wall-time@10ms, period 10000000 ns, posix-timer:monotonic)
$SD
$RD
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)

      self   self%      total  total%  function
         3 100.00%          3 100.00%  mk_alpha
         0   0.00%          3 100.00%  mk_main
EOF
	run "$SONDE" report --view regions r.sonde
	expect_rc 0 "regions view"
	expect_file "$T/out" <<EOF
$SD
$RD
coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)
path            calls      incl_ms      excl_ms       min_ms      mean_ms       max_ms  forced
region=outer        1        1.000        1.000        1.000        1.000        1.000       0
EOF
	run "$SONDE" report --view regions --format csv r.sonde
	expect_err_line "$RD"
	run "$SONDE" report --format json r.sonde
	python3 - "$T/out" <<'EOF' || fail "drops json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["dropped"] == 3 and d["dropped_region_events"] == 5977108, d
assert len(d["warnings"]) == 2 and "region events" in d["warnings"][1], d["warnings"]
EOF
	run "$SONDE" report --view streams --format csv r.sonde
	sed -n 2p "$T/out" | grep -qx 'r.sonde,4242,,testhost,exit,,0,3,3,2,5977108' || fail "streams row: $(cat "$T/out")"
	;;
thread_end)
	# issue 9: THREAD_END deltas belong to their thread and process: group-by rows add
	# up to the totals; by function they are the row [thread end]
	mk counters_end c.sonde
	run "$SONDE" report --metric context-switches --group-by thread --format csv c.sonde
	expect_rc 0 "group-by thread"
	expect_file "$T/out" <<'EOF'
thread,context-switches,percent
4243,503,97.48
4242,13,2.52
EOF
	run "$SONDE" report --metric context-switches --group-by process --format csv c.sonde
	expect_file "$T/out" <<'EOF'
process,context-switches,percent
mkstream[4242],516,100.00
EOF
	run "$SONDE" report --view counters --format csv c.sonde
	[ "$(awk -F, '$2 == "context-switches" { s += $5 } END { print s }' "$T/out")" -eq 516 ] ||
		fail "counters view total: $(cat "$T/out")"
	run "$SONDE" report --metric page-faults --format csv c.sonde
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
[thread end],45,69.23,45,69.23,
mk_alpha,20,30.77,20,30.77,mkstream
mk_main,0,0.00,20,30.77,mkstream
EOF
	run "$SONDE" report --metric page-faults --group-by host,source --format csv c.sonde
	expect_file "$T/out" <<'EOF'
host,source,page-faults,percent
testhost,(none),45,69.23
testhost,cpu-time,20,30.77
EOF
	run "$SONDE" report --metric context-switches --view tree --format folded c.sonde
	expect_file "$T/out" <<'EOF'
[thread end] 506
mk_main;mk_alpha 10
EOF
	# --where thread keeps that thread's tail; --source leaves thread ends out
	run "$SONDE" report --metric context-switches --where thread=4243 --group-by thread --format csv c.sonde
	sed -n 2p "$T/out" | grep -qx '4243,503,100.00' || fail "--where thread: $(cat "$T/out")"
	run "$SONDE" report --metric context-switches --source cpu-time --group-by thread --format csv c.sonde
	expect_file "$T/out" <<'EOF'
thread,context-switches,percent
4242,10,100.00
EOF
	# in samples, thread ends count nothing
	run "$SONDE" report --group-by thread --format csv c.sonde
	expect_file "$T/out" <<'EOF'
thread,samples,percent
4242,10,100.00
4243,0,0.00
EOF
	;;
coverage)
	# issue 8 item 7: the coverage account, exact arithmetic over the `coverage` stream
	# (mkstream.c lists every number); then THREAD_CPU / THREAD_END cpu in dump, corrupt
	# cpu records, and streams that cannot have an account
	mk coverage c.sonde --pid 100
	run "$SONDE" report c.sonde
	expect_rc 0 "coverage report"
	grep '^coverage\|^  thread\|^  [0-9]* more' "$T/out" >cov.txt
	expect_file cov.txt <<'EOF'
coverage: cpu 547.500 ms measured by the kernel in 4 threads, sampled 360.000 ms by cpu-time@1ms: 65.75% of cpu time
coverage gaps: signals_blocked 100.000 ms, not sampled 50.000 ms, kernel mode 12.500 ms (sys time: cpu-time samples user mode only), ring_full 4.000 ms, throttled 3.000 ms, stopped 2.000 ms, busy 1.000 ms, unexplained 15.000 ms
coverage: the CPU time of 1 thread is known up to the last flush only (no THREAD_END: the process was killed, data after the last flush is lost; 10.000 ms sampled after it are not counted)
coverage: 1 thread with no CPU time recorded left out (7.000 ms sampled)
coverage: drops are not split by source: all are counted at the cpu-time period (cpu-time@1ms)
  thread 102 (blocked, pid 100): cpu 102.500 ms, sampled 0.000 ms (0.00% of user); signals_blocked 100.000 ms, kernel mode 2.500 ms, unexplained 0.000 ms
  thread 101 (worker, pid 100): cpu 50.000 ms, sampled 0.000 ms (0.00% of cpu); not sampled 50.000 ms, unexplained 0.000 ms
  thread 100 (main, pid 100): cpu 350.000 ms, sampled 320.000 ms (94.12% of user); kernel mode 10.000 ms, ring_full 4.000 ms, throttled 3.000 ms, busy 1.000 ms, unexplained 12.000 ms
  thread 103 (flushed, pid 100): cpu 45.000 ms up to the last flush, sampled 40.000 ms (88.89% of cpu); unexplained 5.000 ms
EOF
	# the block comes after the notes, before the rows
	[ "$(sed -n 4p "$T/out" | cut -c1-14)" = "sonde: warning" ] && [ "$(sed -n 5p "$T/out" | cut -c1-14)" = "coverage: cpu " ] ||
		fail "coverage block placement: $(head -6 "$T/out")"
	run "$SONDE" report --view coverage --format csv c.sonde
	expect_rc 0 "coverage csv"
	expect_file "$T/out" <<'EOF'
pid,tid,name,cpu_ms,cpu_from,user_ms,sys_ms,sampled_ms,coverage_pct,coverage_of,ring_full_ms,busy_ms,in_dl_ms,no_thread_ms,stopped_ms,fd_stolen_ms,stack_ms,throttled_ms,queue_overflow_ms,signals_blocked_ms,other_drops_ms,kernel_ms,not_sampled_ms,unexplained_ms,after_flush_ms
100,100,main,350.000,thread_end,340.000,10.000,320.000,94.12,user,4.000,1.000,0.000,0.000,0.000,0.000,0.000,3.000,0.000,0.000,0.000,10.000,0.000,12.000,0.000
100,101,worker,50.000,thread_end,,,0.000,0.00,cpu,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,50.000,0.000,0.000
100,102,blocked,102.500,thread_end,100.000,2.500,0.000,0.00,user,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,100.000,0.000,2.500,0.000,0.000,0.000
100,103,flushed,45.000,last_flush,,,40.000,88.89,cpu,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,5.000,10.000
100,104,old,,,,,7.000,,,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,,,,0.000
,,total,547.500,last_flush,,,360.000,65.75,cpu,4.000,1.000,0.000,0.000,2.000,0.000,0.000,3.000,0.000,100.000,0.000,12.500,50.000,15.000,10.000
EOF
	# every view's json has the total; --view coverage also every thread; the account adds up
	for args in "--format json" "--view threads --format json" "--group-by thread --format json" \
		    "--view coverage --format json"; do
		run "$SONDE" report $args c.sonde
		expect_rc 0 "$args"
		python3 - "$T/out" "$args" <<'EOF' || fail "coverage json ($args)"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["coverage"]
assert c["computed"] is True and c["why"] is None and c["spec"] == "cpu-time@1ms", c
assert c["drops_at_cpu_time_period"] is True and c["threads_unknown"] == 1, c
assert c["unknown_sampled_ms"] == 7.0, c
t = c["total"]
assert t["threads"] == 4 and t["cpu_ms"] == 547.5 and t["sampled_ms"] == 360.0, t
assert t["coverage_pct"] == 65.75 and t["coverage_of"] == "cpu" and t["cpu_from"] == "last_flush", t
assert t["gaps_ms"]["signals_blocked"] == 100.0 and t["gaps_ms"]["stopped"] == 2.0, t
assert t["gaps_ms"]["kernel"] == 12.5 and t["gaps_ms"]["not_sampled"] == 50.0, t
def adds_up(r):
    return abs(r["sampled_ms"] + sum(r["gaps_ms"].values()) + r["unexplained_ms"] - r["cpu_ms"]) < 1e-6
assert adds_up(t), t
if "coverage" in sys.argv[2]:
    th = {r["tid"]: r for r in c["threads"]}
    assert len(th) == 5, th
    assert th[100]["coverage_of"] == "user" and th[100]["user_ms"] == 340.0 and th[100]["unexplained_ms"] == 12.0
    assert th[101]["gaps_ms"]["not_sampled"] == 50.0 and th[101]["user_ms"] is None
    assert th[102]["gaps_ms"]["signals_blocked"] == 100.0 and th[102]["unexplained_ms"] == 0.0
    assert th[103]["cpu_from"] == "last_flush" and th[103]["after_flush_ms"] == 10.0
    assert th[104]["cpu_ms"] is None and th[104]["cpu_from"] is None and th[104]["sampled_ms"] == 7.0
    for r in c["threads"]:
        assert r["cpu_ms"] is None or adds_up(r), r
else:
    assert "threads" not in c, c
EOF
	done
	run "$SONDE" report --view coverage c.sonde
	expect_rc 0 "coverage text"
	grep -q '^   total        4     547.500\*      360.000   65.75% cpu         15.000 ' "$T/out" || fail "coverage view total: $(cat "$T/out")"
	grep -qE '^ +100 +104 +unknown +7\.000 .*\(no CPU time recorded\)$' "$T/out" || fail "coverage view unknown thread"
	# filters do not change the account (it is the run's)
	run "$SONDE" report --where thread=main --source wall-time --format json c.sonde
	python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["coverage"]["total"]; assert t["sampled_ms"] == 360.0, t' "$T/out" || fail "filters changed the account"
	# dump names the new fields
	run "$SONDE" dump c.sonde
	grep -qF '"kind":"THREAD_CPU","thread":4,"t":60000000,"cpu_ns":45000000}' "$T/out" || fail "dump THREAD_CPU"
	grep -qF '"kind":"THREAD_END","thread":1,"t":400000000,"name":"main","deltas":[],"cpu":{"cpu_ns":350000000,"user_ns":340000000,"sys_ns":10000000}}' "$T/out" || fail "dump THREAD_END cpu"
	# malformed cpu records are corrupt
	for w in "thread_cpu:THREAD_CPU names a thread that no THREAD record defined before it" \
		 "end_cpu:THREAD_END cpu is not a map" \
		 "end_cpu_ns:THREAD_END cpu \`cpu_ns\` is not an unsigned integer"; do
		off=$("$MK" "bad_${w%%:*}" b.sonde) || fail "mkstream bad_${w%%:*}"
		run "$SONDE" report b.sonde
		expect_rc 4 "bad ${w%%:*}"
		expect_err_line "sonde: b.sonde: corrupt record at byte $off (${w#*:})"
	done
	# old streams (no cpu), PAPI-only streams: said, not computed
	mk flat a.sonde
	run "$SONDE" report --view coverage --format csv a.sonde
	expect_rc 0 "old stream coverage"
	expect_err_line "coverage: not computed: the streams do not record their threads' CPU time (written by an older sonde)"
	sed -n 2p "$T/out" | grep -qx '4242,4242,main,,,,,70.000,,,3.000,1.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,0.000,,,,0.000' || fail "old stream row: $(cat "$T/out")"
	mk papi p.sonde
	run "$SONDE" report p.sonde
	grep -qx 'coverage: not computed: no cpu-time source was recorded: the other sources do not measure CPU time (sample with SONDE_SAMPLE=cpu-time@1ms for an account)' "$T/out" || fail "papi: not computed"
	# a mix: the old stream is left out of the total, said
	run "$SONDE" report c.sonde a.sonde
	grep -qx 'coverage: 3 threads with no CPU time recorded left out (107.000 ms sampled)' "$T/out" || fail "mixed old and new: $(grep coverage "$T/out")"
	;;
malformed)
	# issue 11: records naming what the stream never defined, and HEADER/END/REGION
	# fields of the wrong type, are corrupt: file and offset, exit 4 (skipped beside
	# a good file)
	mk flat good.sonde
	for sc in "sample_thread:SAMPLE names a thread that no THREAD record defined before it" \
		  "sample_thread0:SAMPLE names a thread that no THREAD record defined before it" \
		  "sample_source:SAMPLE names a source that the HEADER does not list" \
		  "sample_node:SAMPLE names a FRAME node that no FRAME record defined before it" \
		  "sample_context:SAMPLE names a CONTEXT node that no CONTEXT record defined before it" \
		  "region_thread:REGION names a thread that no THREAD record defined before it" \
		  "region_node:REGION names a CONTEXT node that no CONTEXT record defined before it" \
		  "region_t:REGION t is not an unsigned integer" \
		  "region_event:REGION event is not an unsigned integer" \
		  "end_t:END t is not an unsigned integer" \
		  "end_reason:END reason is not a string" \
		  "end_stats:END stats is not a map" \
		  "end_signal:END stats \`signal\` is not an unsigned integer" \
		  "header_info:HEADER info is not a map" \
		  "header_pid:HEADER \`pid\` is not an unsigned integer" \
		  "header_sources:HEADER \`sources\` is not an array" \
		  "header_period:HEADER sources[0] \`period\` is not an unsigned integer"; do
		name=${sc%%:*}
		off=$("$MK" "bad_$name" x.sonde) || fail "mkstream bad_$name"
		run "$SONDE" report x.sonde
		expect_rc 4 "$name"
		expect_err_line "sonde: x.sonde: corrupt record at byte $off (${sc#*:})"
		run "$SONDE" report --format csv x.sonde good.sonde
		expect_rc 0 "$name beside a good file"
		expect_err_line "sonde: x.sonde: corrupt record at byte $off (${sc#*:})"
		[ "$(sed -n 2p "$T/out")" = "mk_beta,60,60.00,60,60.00,mkstream" ] || fail "$name: good file not reported"
	done
	;;
empty_module)
	# issue 11: a MODULE with an empty path (UBSan: strndup(NULL, 0)) is the main
	# program's (FORMAT.md): named after the HEADER exe
	mk bad_empty_module m.sonde
	run "$SONDE" report --format folded m.sonde
	expect_rc 0 "empty module path"
	expect_file "$T/out" <<'EOF'
mkstream-test+0x10 2
EOF
	;;
nonregular)
	# Inputs that are not regular files are refused with one line, never read and never
	# waited on: a FIFO without a writer (open() used to block forever), /dev/zero (read
	# whole, it grew to 24 GB), /dev/null, and a directory whose .sonde entry is a symlink
	# to /dev/zero. Each command runs under an address-space limit, so that reading such
	# a file into memory fails at once instead of filling the machine, and under timeout,
	# so that a hang fails instead of stalling the suite (neither is a timing assertion).
	mk flat a.sonde
	mkfifo fifo.sonde
	mkdir zdir && ln -s /dev/zero zdir/z.sonde
	LIM=(prlimit --as=$((1 << 30)))
	# sanitizer builds reserve terabytes of address space: there the limit is left out
	"${LIM[@]}" "$SONDE" --help >/dev/null 2>&1 ||
		{ echo "note: sonde does not start under prlimit --as (sanitizer build): no limit"; LIM=(); }
	guard() { run timeout 60 "${LIM[@]}" "$SONDE" "$@"; [ "$rc" -ne 124 ] || fail "hung: sonde $*"; }
	NOTREG="give .sonde files written by 'sonde run', or their directory; to read a stream from a pipe, save it to a file first"
	for cmd in report dump diff; do
		for f in fifo.sonde /dev/zero /dev/null zdir; do
			case $f in
			fifo.sonde) line="sonde: $f: not a regular file (a FIFO; $NOTREG)" ;;
			zdir) line="sonde: zdir/z.sonde: not a regular file (a character device; $NOTREG)" ;;
			*) line="sonde: $f: not a regular file (a character device; $NOTREG)" ;;
			esac
			[ "$cmd" = dump ] && [ "$f" = zdir ] && continue # dump reads one file
			if [ "$cmd" = diff ]; then guard diff "$f" a.sonde; else guard "$cmd" "$f"; fi
			expect_rc 4 "$cmd $f"
			expect_err_line "$line"
			[ ! -s "$T/out" ] || fail "$cmd $f printed $(head -c 200 "$T/out")"
		done
	done
	guard report zdir
	expect_err_line "sonde: zdir: none of its .sonde entries is a regular file (nothing to read; see the lines above)"
	guard dump zdir/z.sonde
	expect_rc 4 "dump through a symlink to /dev/zero"
	expect_err_line "sonde: zdir/z.sonde: not a regular file (a character device; $NOTREG)"
	# among good inputs a bad one is named and skipped; the report is made of the rest
	cp a.sonde zdir/a.sonde
	guard report fifo.sonde /dev/zero zdir
	expect_rc 0 "bad inputs beside a good one"
	expect_err_line "sonde: fifo.sonde: not a regular file (a FIFO; $NOTREG)"
	expect_err_line "sonde: /dev/zero: not a regular file (a character device; $NOTREG)"
	expect_err_line "sonde: zdir/z.sonde: not a regular file (a character device; $NOTREG)"
	[ "$(wc -l <"$T/err")" -eq 3 ] || { cat "$T/err" >&2; fail "one line per bad input"; }
	grep -qx 'samples: 100  streams: 1  processes: 1  threads: 2' "$T/out" || fail "good stream reported"
	guard diff zdir a.sonde
	expect_rc 0 "diff of a directory with a bad entry"
	expect_err_line "sonde: zdir/z.sonde: not a regular file (a character device; $NOTREG)"
	# --strict makes a bad PATH fatal, as any other bad file
	guard report --strict /dev/null a.sonde
	expect_rc 4 "--strict"
	# a FIFO with a writer holding it open is refused just the same, without reading it
	sleep 120 >fifo.sonde &
	wpid=$!
	guard report fifo.sonde a.sonde
	kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null
	expect_rc 0 "FIFO with a writer"
	expect_err_line "sonde: fifo.sonde: not a regular file (a FIFO; $NOTREG)"
	;;
huge_inputs)
	# Regular files that are huge or garbage: a clear line and bounded memory (peak RSS
	# from /usr/bin/time; a memory bound, not a timing one). The reader goes through a
	# window and refuses records past 16 MiB or 2^20 values (docs/FORMAT.md, "Size").
	[ -x /usr/bin/time ] || { echo "SKIP: no /usr/bin/time (GNU time) to measure peak RSS"; exit 77; }
	LIM=(prlimit --as=$((1 << 30)))
	"${LIM[@]}" "$SONDE" --help >/dev/null 2>&1 ||
		{ echo "note: sonde does not start under prlimit --as (sanitizer build): no limit"; LIM=(); }
	MAXKB=$((200 * 1024))
	# rss CMD...: run under the limits; $rc, $T/out, $T/err; fails above MAXKB
	rss() {
		timeout 120 /usr/bin/time -f %M -o rss.txt "${LIM[@]}" "$SONDE" "$@" >"$T/out" 2>"$T/err"
		rc=$?
		[ "$rc" -ne 124 ] || fail "hung: sonde $*"
		kb=$(tail -n 1 rss.txt)
		echo "sonde $*: exit $rc, peak RSS $kb kB"
		[ "$kb" -lt "$MAXKB" ] || fail "sonde $*: peak RSS $kb kB, above $MAXKB kB"
	}
	mk flat a.sonde
	size=$(stat -c %s a.sonde)
	truncate -s 50G sparse.sonde
	# a valid stream, then 50 GB of zeros: the first zero is not a record
	cp a.sonde zeros.sonde && truncate -s 50G zeros.sonde
	# a valid stream, then a str32 that says it is 4 GiB long (the file holds 50 GB)
	cp a.sonde longrec.sonde && printf '\x91\xdb\xff\xff\xff\xff' >>longrec.sonde && truncate -s 50G longrec.sonde
	# a valid stream, then an array32 of 2^32 - 1 elements
	cp a.sonde manyvals.sonde && printf '\xdd\xff\xff\xff\xff' >>manyvals.sonde && truncate -s 50G manyvals.sonde
	# 64 MiB of (seeded) random bytes, alone and after a valid stream
	python3 -c 'import random,sys; sys.stdout.buffer.write(random.Random(9).randbytes(64 << 20))' >rand.sonde
	cat a.sonde rand.sonde >tailrand.sonde
	for cmd in report dump; do
		rss "$cmd" sparse.sonde
		expect_rc 4 "$cmd sparse"
		expect_err_line "sonde: sparse.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)"
		rss "$cmd" rand.sonde
		expect_rc 4 "$cmd random"
		expect_err_line "sonde: rand.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)"
		rss "$cmd" zeros.sonde
		expect_rc 4 "$cmd zeros"
		expect_err_line "sonde: zeros.sonde: corrupt record at byte $size (not an array starting with a record kind)"
		rss "$cmd" longrec.sonde
		expect_rc 4 "$cmd long record"
		expect_err_line "sonde: longrec.sonde: corrupt record at byte $size (a record longer than 16 MiB: the reader's limit, docs/FORMAT.md)"
		rss "$cmd" manyvals.sonde
		expect_rc 4 "$cmd many values"
		expect_err_line "sonde: manyvals.sonde: corrupt record at byte $size (a record declares more than 1048576 values: the reader's limit, docs/FORMAT.md)"
		# random bytes after good records: whatever they decode to, one line names the
		# file, and the process neither crashes nor grows
		rss "$cmd" tailrand.sonde
		[ "$rc" -eq 0 ] || [ "$rc" -eq 4 ] || fail "$cmd random tail: exit $rc"
		grep -q "^sonde: tailrand.sonde: " "$T/err" || { cat "$T/err" >&2; fail "$cmd random tail: no message"; }
	done
	rss diff sparse.sonde a.sonde
	expect_rc 4 "diff sparse"
	expect_err_line "sonde: sparse.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)"
	# the limits are not what refuses: records up to them are read. A stream with a 3 MiB
	# NOTE (longer than the 1 MiB window) and a NOTE of exactly 2^20 values (one with an
	# extra array; the array itself counts, then each element) loads
	python3 - a.sonde <<'PY' >near.sonde
import struct, sys
data = open(sys.argv[1], 'rb').read()
note = b'\x93\x0a\x00\xdb' + struct.pack('>I', 3 << 20) + b'n' * (3 << 20)
# [10, 0, "x", [0] * (2^20 - 5)]: the record, its 4 elements, 2^20 - 5 more
n = (1 << 20) - 5
vals = b'\x94\x0a\x00\xa1x\xdd' + struct.pack('>I', n) + b'\x00' * n
sys.stdout.buffer.write(data + note + vals)
PY
	rss report near.sonde
	expect_rc 0 "records near the limits"
	grep -qx 'samples: 100  streams: 1  processes: 1  threads: 2' "$T/out" || fail "near-limit stream reported"
	;;
processes)
	# --view processes and --group-by process: one row per process image, named
	# NAME[PID] from the header's argv[0], else exe, else '?' (mkstream.c: the coverage
	# stream's CPU is 547.5 ms in 4 of its 5 threads, one known up to the last flush)
	mk coverage c.sonde --pid 100 --argv0 /opt/bin/solver --ppid 7 --clock 2000000000
	mk flat a.sonde --pid 200 --no-argv --clock 2500000000
	mk flat b.sonde --pid 300 --no-argv --no-exe --no-end --clock 3000000000
	# one pid, two images: sh exec'd /bin/true, which was killed by signal 9
	mk flat e1.sonde --pid 400 --argv0 sh --end-reason exec --clock 3100000000
	mk flat e2.sonde --pid 400 --argv0 /bin/true --end-signal 9 --clock 3200000000
	ALL="c.sonde a.sonde b.sonde e1.sonde e2.sonde"
	run "$SONDE" report --view processes $ALL
	expect_rc 0 "processes"
	sed -n '/^process /,$p' "$T/out" >p.txt
	expect_file p.txt <<'EOF'
process                 pid     ppid      cpu_ms  samples threads   start_ms    wall_ms  end         command
solver[100]             100        7     547.500      372       5      0.000   1000.000  exit        /opt/bin/solver a,"b"?
mkstream-test[200]      200        1           -      100       2    500.000   1000.000  exit        (no argv)
?[300]                  300        1           -      100       2   1000.000     70.001  incomplete  (no argv)
sh[400]                 400        1           -      100       2   1100.000   1000.000  exec        sh a,"b"?
true[400]               400        1           -      100       2   1200.000   1000.000  signal 9    /bin/true a,"b"?
cpu_ms of 1 process is partial: a thread's CPU time is unknown, or known up to the last flush only (killed or still running; see --view coverage); '-': no CPU time recorded
EOF
	run "$SONDE" report --view processes --format csv --top 3 $ALL
	expect_rc 0 "processes csv"
	expect_file "$T/out" <<'EOF'
process,pid,ppid,name,cpu_ms,cpu_threads,samples,threads,start_ms,wall_ms,end,signal,exe,command,file
solver[100],100,7,solver,547.500,4,372,5,0.000,1000.000,exit,,/usr/bin/mkstream-test,"/opt/bin/solver a,""b""
",c.sonde
mkstream-test[200],200,1,mkstream-test,,0,100,2,500.000,1000.000,exit,,/usr/bin/mkstream-test,,a.sonde
?[300],300,1,?,,0,100,2,1000.000,70.001,incomplete,,,,b.sonde
EOF
	run "$SONDE" report --view processes --format json $ALL
	expect_rc 0 "processes json"
	python3 - "$T/out" <<'EOF' || fail "processes json: $(cat "$T/out")"
import json, sys
d = json.load(open(sys.argv[1]))
p = d["processes"]
assert [x["process"] for x in p] == ["solver[100]", "mkstream-test[200]", "?[300]", "sh[400]", "true[400]"], p
assert p[0] == {"process": "solver[100]", "pid": 100, "ppid": 7, "name": "solver", "cpu_ms": 547.5,
                "cpu_threads": 4, "cpu_from_flush": 1, "samples": 372, "threads": 5, "start_ms": 0.0,
                "wall_ms": 1000.0, "end": "exit", "signal": None, "exe": "/usr/bin/mkstream-test",
                "command": "/opt/bin/solver a,\"b\"\n", "file": "c.sonde"}, p[0]
assert p[1]["command"] is None and p[1]["exe"] == "/usr/bin/mkstream-test" and p[1]["cpu_ms"] is None, p[1]
assert p[2]["exe"] is None and p[2]["name"] == "?" and p[2]["end"] == "incomplete", p[2]
assert p[3]["end"] == "exec" and p[4]["end"] == "signal" and p[4]["signal"] == 9, p[3:]
EOF
	# --group-by process: the same labels; the two images of pid 400 are two rows
	run "$SONDE" report --group-by process --format csv $ALL
	expect_file "$T/out" <<'EOF'
process,samples,percent
solver[100],372,48.19
?[300],100,12.95
mkstream-test[200],100,12.95
sh[400],100,12.95
true[400],100,12.95
EOF
	run "$SONDE" report --group-by process,thread e1.sonde
	grep -q '^sh\[400\]  *400 (main)  *70 ' "$T/out" || fail "group-by process text: $(cat "$T/out")"
	# --where process= matches the pid, the name or the label; the processes view counts
	# the samples kept (CPU time is the kernel's, unfiltered)
	run "$SONDE" report --view processes --format json --where process=400 $ALL
	python3 -c 'import json,sys; print(" ".join("%s,%d" % (x["process"], x["samples"]) for x in json.load(open(sys.argv[1]))["processes"]))' "$T/out" >w.txt
	[ "$(cat w.txt)" = "solver[100],0 sh[400],100 true[400],100 mkstream-test[200],0 ?[300],0" ] ||
		fail "where process=400: $(cat w.txt)"
	run "$SONDE" report --group-by process --format csv --where 'process=true[400]' $ALL
	[ "$(sed -n 2p "$T/out")" = "true[400],100,100.00" ] || fail "where label: $(cat "$T/out")"
	run "$SONDE" report --group-by process --format csv --where 'process~^(sh|solver)$' $ALL
	[ "$(cut -d, -f1 "$T/out" | tr '\n' ' ')" = "process solver[100] sh[400] " ] || fail "where name regex: $(cat "$T/out")"
	run "$SONDE" report --view processes --format folded c.sonde
	expect_rc 2 "processes folded"
	;;
big)
	# a million samples: exact counts, and in a bounded time even under sanitizers
	mk big b.sonde --count 1000000
	start=$(date +%s)
	run "$SONDE" report --format csv b.sonde
	expect_rc 0 "big"
	expect_file "$T/out" <<'EOF'
function,self,self_pct,total,total_pct,module
mk_beta,500000,50.00,500000,50.00,mkstream
mk_gamma,500000,50.00,500000,50.00,mkstream
mk_alpha,0,0.00,500000,50.00,mkstream
mk_main,0,0.00,1000000,100.00,mkstream
EOF
	[ $(($(date +%s) - start)) -le 30 ] || fail "report of 1M samples took more than 30 s"
	;;
run)
	unset SONDE_OUTPUT SONDE_SAMPLE SONDE_LIB
	run "$SONDE" run -x true
	expect_rc 2 "unknown run option"
	expect_err_line "sonde: run: unknown option '-x' (usage: sonde run [-e SPEC]... [-o DIR] -- CMD [ARGS])"
	run "$SONDE" run -e
	expect_rc 2 "missing value"
	export SONDE_LIB=$STUB
	run "$SONDE" run -o prof0 -- ./no-such-command-here
	expect_rc 127 "nonexistent command"
	expect_err_line "sonde: run: ./no-such-command-here: No such file or directory (check the command name and PATH)"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "one line on exec failure"
	# environment, exit status and the closing line, with a harmless library as SONDE_LIB
	LD_PRELOAD= run "$SONDE" run -e cpu-time@1ms --sample wall-time@10ms -o prof -- \
		sh -c ': >"$SONDE_OUTPUT/x.sonde"; echo "$SONDE_SAMPLE|$SONDE_OUTPUT|$LD_PRELOAD"; exit 3'
	expect_rc 3 "child status"
	# SONDE_OUTPUT is the directory's absolute path (children may run elsewhere)
	expect_file "$T/out" <<EOF
cpu-time@1ms,wall-time@10ms|$(pwd -P)/prof|$(readlink -f "$STUB")
EOF
	expect_file "$T/err" <<'EOF'
sonde: profile written to prof (sonde report prof)
EOF
	SONDE_OUTPUT=elsewhere run "$SONDE" run sh -c ': >"$SONDE_OUTPUT/x.sonde"; kill -TERM $$'
	expect_rc 143 "killed by SIGTERM"
	expect_err_line "sonde: profile written to ./sonde-sh (sonde report ./sonde-sh)"
	[ -d sonde-sh ] && [ ! -e elsewhere ] || fail "default output directory"
	echo 'echo hi' >noexec.sh
	run "$SONDE" run ./noexec.sh
	expect_rc 127 "not executable"
	expect_err_line "sonde: run: ./noexec.sh: Permission denied (check the command name and PATH)"
	# the directory is made (private) before the command starts; no new stream in it
	# afterwards is said as such
	run "$SONDE" run -o empty -- sh -c 'stat -c %a "$SONDE_OUTPUT"'
	expect_rc 0 "no stream written"
	expect_file "$T/out" <<'EOF'
700
EOF
	expect_file "$T/err" <<'EOF'
sonde: empty: no profile was written (is sh static, setuid or setgid, or does it clear LD_PRELOAD?)
EOF
	LD_PRELOAD=/keep/me.so run "$SONDE" run -o p2 -- sh -c 'echo "$LD_PRELOAD"'
	expect_file "$T/out" <<EOF
$(readlink -f "$STUB"):/keep/me.so
EOF
	unset SONDE_LIB
	mkdir bin && cp "$SONDE" bin/sonde
	run bin/sonde run true
	expect_rc 3 "no libsonde.so"
	expect_err_line "sonde: libsonde.so: not found next to $T/bin/sonde (build it, or set SONDE_LIB)"
	;;
fuzz)
	FUZZ=$5 MODE=$6
	mkdir seeds
	mk flat seeds/flat.sonde
	mk edge seeds/edge.sonde
	mk dup seeds/dup.sonde
	mk ctx seeds/ctx.sonde
	mk counters seeds/counters.sonde
	mk papi seeds/papi.sonde
	mk stats seeds/stats.sonde --rank 3 --count 20
	mk coverage seeds/coverage.sonde
	if [ "$MODE" = libfuzzer ]; then
		"$FUZZ" -runs=20000 -seed=1 -max_len=4096 seeds >fuzz.log 2>&1 ||
			{ tail -50 fuzz.log >&2; fail "fuzzer found a crash"; }
	else
		"$FUZZ" seeds/flat.sonde seeds/edge.sonde seeds/dup.sonde seeds/ctx.sonde \
			seeds/counters.sonde seeds/papi.sonde seeds/stats.sonde seeds/coverage.sonde 2>fuzz.log ||
			{ tail -50 fuzz.log >&2; fail "fuzz driver crashed"; }
		grep -qx 'fuzz_stream: 8 files, 2000 mutations, 0 crashes' fuzz.log ||
			{ tail -5 fuzz.log >&2; fail "fuzz driver did not run all inputs"; }
	fi
	;;
*)
	fail "unknown case"
	;;
esac
echo "PASS [$CASE]"
