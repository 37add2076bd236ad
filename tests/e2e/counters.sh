# Counters in every sample: a program that makes K voluntary context
# switches, or touches N fresh pages, shows them in the profile's counter
# totals, as root and as an unprivileged user (where context switches come
# from getrusage, the source the header names).
. "$(dirname "$0")/lib.sh"
K=2000 N=20000

# totals DUMP: one line "name total" per header counter: sample deltas plus
# the deltas each THREAD_END carries (events after a thread's last sample).
totals() {
	awk '
	/"kind":"HEADER"/ { s = $0; sub(/.*"counters":\[/, "", s); sub(/\].*/, "", s)
		n = 0; while (match(s, /"name":"[^"]*"/)) { names[++n] = substr(s, RSTART + 8, RLENGTH - 9); s = substr(s, RSTART + RLENGTH) } }
	/"kind":"(SAMPLE|THREAD_END)"/ && match($0, /"(deltas|extra)":\[\[?[0-9,]+/) {
		d = substr($0, RSTART, RLENGTH); sub(/.*\[/, "", d); m = split(d, v, ",")
		for (i = 1; i <= m; i++) tot[i] += v[i] }
	END { for (i = 1; i <= n; i++) printf "%s %d\n", names[i], tot[i] }' "$1"
}

# group_total TOTALS GROUP: sum of the counters of a group (name or name.part)
group_total() { awk -v g="$2" '$1 == g || index($1, g ".") == 1 { s += $2 } END { print s + 0 }' "$1"; }

check() { # LABEL RUNNER...
	local label=$1; shift
	rm -rf "$T/out/$label"
	"$@" env LD_PRELOAD="$LIB" SONDE_OUTPUT="$T/out/$label/s" "$B/tests/bin/blocker" sleeps $K >"$label.out" 2>"$label.err" ||
		fail "$label: blocker failed: $(cat "$label.err")"
	f=$(ls "$T/out/$label/s/"*.sonde)
	valid_stream "$f"
	cp "$T/dump.json" "$label.json"
	totals "$label.json" >"$label.tot"
	cs=$(group_total "$label.tot" context-switches)
	awk -v c="$cs" -v k=$K 'BEGIN { exit !(c >= 0.9 * k && c <= 1.1 * k + 20) }' ||
		fail "$label: context-switches total $cs for $K sleeps (more than 10 % off): $(tr '\n' ' ' <"$label.tot")"
	src=$(grep -o '"group":"context-switches","unit":"count","source":"[^"]*"' "$label.json" | head -n 1 | sed 's/.*"source":"//; s/"$//')
	pass "$label: context-switches $cs for $K sleeps (source $src)"
	# the report's total agrees (samples and thread ends)
	rep=$("$SONDE" report --view counters --format csv "$T/out/$label/s" |
		awk -F, '$2 == "context-switches" { s += $5 } END { print s + 0 }')
	[ "$rep" -eq "$cs" ] || fail "$label: report total $rep, stream total $cs"
	"$SONDE" report "$T/out/$label/s" | grep -q "^counter context-switches" || fail "$label: report prints no counter line"
	echo "$src" >"$label.src"

	"$@" env LD_PRELOAD="$LIB" SONDE_OUTPUT="$T/out/$label/p" "$B/tests/bin/blocker" pages $N >"$label.pout" 2>&1 ||
		fail "$label: blocker pages failed"
	"$SONDE" dump "$(ls "$T/out/$label/p/"*.sonde)" >"$label.pjson"
	pf=$(totals "$label.pjson" | awk '$1 == "page-faults" {print $2}')
	[ "${pf:-0}" -ge $((N * 9 / 10)) ] || fail "$label: page-faults ${pf:-0} for $N fresh pages"
	pass "$label: page-faults $pf for $N fresh pages"
	"$@" env LD_PRELOAD="$LIB" SONDE_OUTPUT="$T/out/$label/m" SONDE_COUNTERS=minor-faults,major-faults \
		"$B/tests/bin/blocker" pages $N >"$label.mout" 2>&1 || fail "$label: blocker pages (minor) failed"
	"$SONDE" dump "$(ls "$T/out/$label/m/"*.sonde)" >"$label.mjson"
	mf=$(totals "$label.mjson" | awk '$1 == "minor-faults" {print $2}')
	[ "${mf:-0}" -ge $((N * 9 / 10)) ] || fail "$label: minor-faults ${mf:-0} for $N fresh pages"
	pass "$label: minor-faults $mf for $N fresh pages"
}

mkdir -m 777 out
check root
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1 &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$B/tests/bin/blocker"; then
	chmod 755 "$T"
	check nobody setpriv --reuid=nobody --regid=nogroup --clear-groups
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	if [ "$paranoid" -ge 2 ]; then
		[ "$(cat nobody.src)" = "getrusage:ru_nvcsw" ] ||
			fail "nobody at perf_event_paranoid=$paranoid: context switches from $(cat nobody.src), expected getrusage"
		# migrations cannot be had: one line says so, the header lists why
		setpriv --reuid=nobody --regid=nogroup --clear-groups env LD_PRELOAD="$LIB" SONDE_OUTPUT="$T/out/mig" \
			SONDE_COUNTERS=cpu-migrations "$B/tests/bin/blocker" sleeps 10 >mig.out 2>mig.err || fail "migrations run failed"
		grep -q '^sleeps 10 ' mig.out || fail "migrations run: output changed"
		want="sonde: SONDE_COUNTERS: cpu-migrations: unavailable: perf_event_paranoid=$paranoid: kernel-side events read 0 for this user (Permission denied), and no other source exists (run as root or lower kernel.perf_event_paranoid; see 'sonde events')"
		[ "$(cat mig.err)" = "$want" ] || fail "migrations message: $(cat mig.err)"
		"$SONDE" dump "$(ls out/mig/*.sonde)" | head -n 1 | grep -q '"counters_unavailable":\[{"name":"cpu-migrations","reason":"perf_event_paranoid=' ||
			fail "header does not list cpu-migrations as unavailable"
		pass "nobody: cpu-migrations unavailable, said once, listed in the header"
	fi
else
	echo "note: unprivileged run skipped (needs root, setpriv and user nobody)"
fi

# An unknown counter: one line, the rest runs.
env LD_PRELOAD="$LIB" SONDE_OUTPUT=u SONDE_COUNTERS=cache-misses,page-faults "$B/tests/bin/blocker" sleeps 5 >u.out 2>u.err || fail "unknown counter: exit $?"
[ "$(cat u.err)" = "sonde: SONDE_COUNTERS: 'cache-misses': unknown counter (use context-switches, cpu-migrations, page-faults, minor-faults or major-faults; see 'sonde events')" ] ||
	fail "unknown counter message: $(cat u.err)"
"$SONDE" dump "$(ls u/*.sonde)" | head -n 1 | grep -q '"counters":\[{"name":"page-faults"' || fail "page-faults not kept"
pass "unknown counter: one line, the others kept"

# PAPI events as counters: a native software event counts (resolved through
# libpfm4 into the perf group); a hardware preset on a machine without a PMU
# is unavailable, said once, and the run goes on.
env LD_PRELOAD="$LIB" SONDE_OUTPUT=pp SONDE_COUNTERS=perf::PAGE-FAULTS "$B/tests/bin/blocker" pages $N >pp.out 2>pp.err ||
	fail "perf::PAGE-FAULTS counter run failed: $(cat pp.err)"
[ -s pp.err ] && fail "perf::PAGE-FAULTS: $(cat pp.err)"
"$SONDE" dump "$(ls pp/*.sonde)" >pp.json
pf=$(totals pp.json | awk '$1 == "perf::PAGE-FAULTS" {print $2}')
[ "${pf:-0}" -ge $((N * 9 / 10)) ] || fail "perf::PAGE-FAULTS ${pf:-0} for $N pages"
pass "PAPI native perf::PAGE-FAULTS as a counter: $pf for $N pages"
env LD_PRELOAD="$LIB" SONDE_OUTPUT=pi SONDE_COUNTERS=PAPI_TOT_INS,page-faults "$B/tests/bin/blocker" sleeps 5 >pi.out 2>pi.err ||
	fail "PAPI_TOT_INS counter run failed"
if grep -q "^sonde: SONDE_COUNTERS: PAPI_TOT_INS: unavailable: " pi.err; then
	grep -q "(see 'sonde events')$" pi.err || fail "PAPI_TOT_INS: hint missing: $(cat pi.err)"
	"$SONDE" dump "$(ls pi/*.sonde)" | head -n 1 | grep -q '"counters_unavailable":\[{"name":"PAPI_TOT_INS","reason":"' ||
		fail "PAPI_TOT_INS not listed as unavailable"
	pass "PAPI_TOT_INS unavailable here (no PMU): said once, listed in the header"
else
	pass "PAPI_TOT_INS counts on this machine"
fi

# Per region: with SONDE_REGIONS=trace each region event carries the counter
# totals, with SONDE_REGIONS=on and SONDE_REGION_COUNTERS=on each region's
# aggregate carries its deltas, and with SONDE_REGIONS=on alone none are read;
# a phase of 5 x 200 short sleeps shows about 1000 context switches.
for mode in "trace" "on SONDE_REGION_COUNTERS=on"; do
	rg=rg-${mode%% *}
	env SONDE_REGIONS=$mode LD_PRELOAD="$LIB" SONDE_OUTPUT=$rg "$B/tests/bin/phases" -i 5 -u 1 -I -s 200 >$rg.out 2>$rg.err ||
		fail "regions with counters ($mode) failed: $(cat $rg.err)"
	"$SONDE" report --view regions --format csv $rg >$rg.csv || fail "report --view regions failed"
	col=$(head -n 1 $rg.csv | tr ',' '\n' | grep -n '^context-switches' | head -n 1 | cut -d: -f1)
	[ -n "$col" ] || fail "$mode: no context-switches column in the regions view: $(head -n 1 $rg.csv)"
	cs=$(awk -F, -v c="$col" '$1 == "phase=sleep" {print $c}' $rg.csv)
	awk -v n="${cs:-0}" 'BEGIN { exit !(n >= 900 && n <= 1100 + 20) }' ||
		fail "$mode: phase=sleep: ${cs:-0} context switches for 1000 sleeps"
	pass "regions view ($mode): phase=sleep has $cs context switches for 1000 sleeps"
done
SONDE_REGIONS=on LD_PRELOAD="$LIB" SONDE_OUTPUT=rg-nc "$B/tests/bin/phases" -i 5 -u 1 -I -s 200 >rg-nc.out 2>rg-nc.err ||
	fail "regions without counters failed: $(cat rg-nc.err)"
"$SONDE" report --view regions --format csv rg-nc >rg-nc.csv || fail "report --view regions failed"
head -n 1 rg-nc.csv | grep -q context-switches && fail "SONDE_REGIONS=on read counters unasked: $(head -n 1 rg-nc.csv)"
pass "regions view (on, no SONDE_REGION_COUNTERS): times only"
