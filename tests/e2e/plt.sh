# plt.sh - samples in a PLT entry are named FUNC@plt, as perf names them (issue 22 item
# 7; before: _init, the nearest symbol below .plt): a loop calling labs() through the
# PLT (pltcall) and through .plt.sec (pltcall_ibt, -fcf-protection=full), each read
# from its ELF file's sections (.rela.plt's relocations, in entry order).
CASES="plt pltsec"
. "$(dirname "$0")/lib.sh"
case=${2:?usage: plt.sh BUILD_DIR CASE}
PROG=$B/pltcall
[ "$case" = pltsec ] && PROG=$B/pltcall_ibt
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
