#!/bin/bash
# man.sh SONDE OUTDIR VERSION - the manual pages sonde(1) and sonde-CMD(1), made from the
# help the commands print (`sonde --help`, `sonde CMD --help`): one source for both, so
# the pages never say other than the commands. Each page: NAME, SYNOPSIS and the help
# text as it is (preformatted), SEE ALSO. Run at build time (cmake/install.cmake).
set -euo pipefail
sonde=$1 out=$2 version=$3
mkdir -p "$out"
date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%d)
# roff: a backslash doubled, a leading dot or quote escaped
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
page() { # NAME SUMMARY HELP-COMMAND...
	local name=$1 summary=$2; shift 2
	{
		printf '.TH %s 1 "%s" "sonde %s" "User Commands"\n' "$(echo "$name" | tr a-z A-Z)" "$date" "$version"
		printf '.SH NAME\n%s \\- %s\n' "$name" "$summary"
		printf '.SH DESCRIPTION\n.nf\n'
		"$@" 2>&1 | esc
		printf '.fi\n.SH SEE ALSO\n'
		printf '.BR sonde (1), .BR sonde-run (1), .BR sonde-report (1), .BR sonde-diff (1), .BR sonde-dump (1), .BR sonde-events (1)\n' | sed 's/, /\n/g'
		printf '.PP\nThe documents under /usr/share/doc/sonde (or PREFIX/share/doc/sonde): README.md, ENV.md (variables and flags), REPORT.md (views, formats, columns), FORMAT.md (the stream), API.md (annotations).\n'
	} >"$out/$name.1"
}
page sonde "a sampling profiler for C, C++ and Fortran programs" "$sonde" --help
for c in run report diff dump events; do
	# the command's line of `sonde --help`: "  sonde %-6s %-36s %s" (main.c)
	summary=$("$sonde" --help | awk -v c="$c" '$1 == "sonde" && $2 == c { print substr($0, 53); exit }')
	page "sonde-$c" "${summary:-sonde $c}" "$sonde" "$c" --help
done
