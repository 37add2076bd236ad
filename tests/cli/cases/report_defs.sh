# analyze.cli.report_defs: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# The views and formats are rows of one table (analyze/output/defs.c): `sonde report
	# --help` lists them, and docs/REPORT.md's option table names each one, and no other.
	run "$SONDE" report --help
	expect_rc 0 "report --help"
	awk '/^views \(--view NAME\):$/ { s = 1; next } /^formats/ { s = 0 } s && NF { print $1 }' \
		"$T/out" >"$T/views"
	awk '/^formats \(--format NAME\):$/ { s = 1; next } /^$/ { s = 0 } s && NF { print $1 }' \
		"$T/out" >"$T/formats"
	[ "$(wc -l <"$T/views")" -ge 10 ] && [ "$(wc -l <"$T/formats")" -ge 8 ] ||
		fail "report --help lists $(wc -l <"$T/views") views and $(wc -l <"$T/formats") formats: $(cat "$T/out")"
	# the option table of REPORT.md: its `--view NAME` and `--format A|B` rows
	grep -o '^| `--view [a-z]*' "$DOCS/REPORT.md" | sed 's/.*--view //' | sort -u >"$T/doc_views"
	grep -o '^| `--format [a-z|\\]*' "$DOCS/REPORT.md" | sed 's/.*--format //; s/\\//g' |
		tr '|' '\n' | sort -u >"$T/doc_formats"
	sort "$T/views" >"$T/v" && sort "$T/formats" >"$T/f"
	diff "$T/v" "$T/doc_views" >"$T/vd" ||
		fail "views in --help (<) and in docs/REPORT.md's option table (>) differ: $(cat "$T/vd")"
	diff "$T/f" "$T/doc_formats" >"$T/fd" ||
		fail "formats in --help (<) and in docs/REPORT.md's option table (>) differ: $(cat "$T/fd")"
	# what goes with what comes from the rows too: a view a format does not show says what the
	# format shows
	mk flat a.sonde
	run "$SONDE" report --view threads --format svg a.sonde
	expect_rc 2 "threads as svg"
	expect_err_line "sonde: report: --format svg draws call paths (use it without --view, or with --view tree)"
	run "$SONDE" report --view model --region r --param n --format folded a.sonde
	expect_rc 2 "model as folded"
	expect_err_line "sonde: report: --format folded shows call paths (use it without --view, or pick text, csv or json)"
