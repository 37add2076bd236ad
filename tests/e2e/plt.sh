# plt.sh - names perf users expect (issue 22 item 7). Samples in a PLT entry are named
# FUNC@plt, as perf names them (before: _init, the nearest symbol below .plt): a loop
# calling labs() through the
# PLT (pltcall) and through .plt.sec (pltcall_ibt, -fcf-protection=full), each read
# from its ELF file's sections (.rela.plt's relocations, in entry order); and lambdas
# inlined into a template, each named by its scopes (lambdas).
CASES="plt pltsec lambdas"
. "$(dirname "$0")/lib.sh"
case=${2:?usage: plt.sh BUILD_DIR CASE}
if [ "$case" = lambdas ]; then
	# two lambdas inlined into run<>: two functions, named by their scopes (before: one
	# "operator()" with all the samples)
	[ -x "$B/tests/bin/lambdas" ] || skip "lambdas not built (no C++ compiler)"
	profile p "$B/tests/bin/lambdas" || fail "run: $(cat p.err)"
	"$SONDE" report --format csv p >flat.csv 2>/dev/null || fail "report"
	a=$(awk -F, '$1 ~ /^alpha::\{lambda:[0-9]+\}::operator\(\)$/ { print $2 }' flat.csv)
	b=$(awk -F, '$1 ~ /^beta::\{lambda:[0-9]+\}::operator\(\)$/ { print $2 }' flat.csv)
	[ -n "$a" ] && [ -n "$b" ] && [ "$a" -gt 0 ] && [ "$b" -gt 0 ] ||
		fail "the lambdas of alpha and beta: $(head -6 flat.csv)"
	grep -q '^operator(),' flat.csv && fail "a bare operator() row: $(head -6 flat.csv)"
	pass "lambdas: alpha's $a samples, beta's $b"
	exit 0
fi
PROG=$B/tests/bin/pltcall
[ "$case" = pltsec ] && PROG=$B/tests/bin/pltcall_ibt
[ -x "$PROG" ] || skip "$PROG not built"
sec=$(readelf -SW "$PROG" | grep -c ' \.plt\.sec ')
if [ "$case" = pltsec ] && [ "$sec" -eq 0 ]; then skip "the linker made no .plt.sec"; fi
profile p "$PROG" || fail "run: $(cat p.err)"
"$SONDE" report --format csv p >flat.csv 2>report.err || fail "report: $(cat report.err)"
n=$(awk -F, '$1 == "labs@plt" { print $2 }' flat.csv)
total=$(awk -F, 'NR > 1 { s += $2 } END { print s + 0 }' flat.csv)
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "no labs@plt row ($total samples): $(head -8 flat.csv)"
grep -q '^_init,' flat.csv && fail "a sample is still named _init: $(head -8 flat.csv)"
pass "$case: labs@plt holds $n of $total samples"
