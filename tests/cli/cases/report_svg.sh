# analyze.cli.report_svg: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# --format svg (export_svg.c): a well-formed SVG (xmllint) whose frames are exactly the
	# merged prefixes of the folded lines of the same options, checked twice: from the
	# file's attributes here (no browser), and in headless chromium by
	# tests/consumers/svg_check.mjs (widths, x, labels, hover, zoom, search, icicle, diff
	# colours; screenshots into the build tree: build/test-artifacts/svg/). Then the diff
	# graph, --view tree, --color-by, -o and the usage errors.
	command -v xmllint >/dev/null || fail "xmllint not installed (.ci/deps installs libxml2-utils)"
	SHOTS=$(cd "$(dirname "$SONDE")" && pwd)/test-artifacts/svg
	mkdir -p "$SHOTS" || fail "cannot create $SHOTS"
	# "path value" per drawn frame (from data-u chains), and "TOTAL value" for the root
	frames() {
		awk 'function attr(k) {
			if (!match($0, " " k "=\"[^\"]*\"")) return ""
			s = substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 4)
			gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s); gsub(/&quot;/, "\"", s)
			gsub(/&apos;/, "'"'"'", s); gsub(/&amp;/, "\\&", s)
			return s
		}
		/^<g class="f"/ {
			i = attr("data-i"); u = attr("data-u")
			if (u == "") { print "TOTAL " attr("data-v"); next }
			path[i] = (u == 0 ? "" : path[u] ";") attr("data-n")
			print path[i] " " attr("data-v")
		}' "$1" | LC_ALL=C sort
	}
	# the same from folded lines: every prefix of at least 0.1 % of the total, with the sum
	# of the lines through it
	prefixes() {
		awk '{ c = $NF; p = substr($0, 1, length($0) - length($NF) - 1); t += c
			n = split(p, a, ";"); s = ""
			for (k = 1; k <= n; k++) { s = (k == 1 ? a[k] : s ";" a[k]); sum[s] += c } }
		END { print "TOTAL " t; for (s in sum) if (sum[s] >= 0.001 * t) print s " " sum[s] }' "$1" |
			LC_ALL=C sort
	}
	# svg_of NAME ARGS...: NAME.svg and NAME.folded of `sonde report ARGS`, checked
	svg_of() {
		local name=$1
		shift
		run "$SONDE" report --format svg "$@"
		expect_rc 0 "svg $*"
		cp "$T/out" "$name.svg"
		local fargs=() skip=0 a
		for a in "$@"; do # folded takes the same options but --color-by
			[ "$a" = --color-by ] && skip=2
			[ $skip -gt 0 ] && { skip=$((skip - 1)); continue; }
			fargs+=("$a")
		done
		"$SONDE" report --format folded "${fargs[@]}" >"$name.folded" 2>/dev/null || fail "folded $*"
		xmllint --noout "$name.svg" || fail "$name.svg ($*) is not well-formed XML"
		frames "$name.svg" >"$name.frames"
		prefixes "$name.folded" >"$name.prefixes"
		diff -u "$name.prefixes" "$name.frames" >&2 || fail "$name.svg ($*): frames differ from the folded prefixes"
	}

	mk flat a.sonde
	svg_of flat a.sonde
	expect_err_line "$DROPS"
	[ "$(head -n 1 flat.svg)" = '<?xml version="1.0" encoding="UTF-8" standalone="no"?>' ] || fail "svg: first line $(head -n 1 flat.svg)"
	urls=$(grep -o 'https\{0,1\}://[^" ]*' flat.svg | sort -u | tr '\n' ' ')
	[ "$urls" = "http://www.w3.org/2000/svg " ] || fail "svg: a reference to the network: $urls"
	grep -q '<script[^>]* src=\|<image\|<use \|@import\|url(' flat.svg && fail "svg: an external resource"
	grep -q '^<text[^>]*font-size="16">sonde flame graph: mkstream · periods · total 100 periods</text>$' flat.svg ||
		fail "svg: title line: $(grep 'font-size="16"' flat.svg)"
	grep -q '>view: flat (call paths) · colour: module · click: zoom</text>$' flat.svg || fail "svg: subtitle"
	grep -qF '<title>mk_alpha
70 samples (70.00%), self 20 samples</title>' flat.svg || fail "svg: mk_alpha's title: $(grep -A1 'data-n="mk_alpha"' flat.svg | head -n 2)"
	[ "$(grep -c '<g class="f"' flat.svg)" -eq 8 ] || fail "svg: $(grep -c '<g class="f"' flat.svg) frames, expected 8 (all + 7)"
	# deterministic, and -o writes the same bytes
	run "$SONDE" report --format svg -o flat2.svg a.sonde
	expect_rc 0 "svg -o"
	[ "$(cat "$T/out")" = "sonde: flame graph written to flat2.svg (open it in a browser)" ] || fail "svg -o: $(cat "$T/out")"
	cmp -s flat.svg flat2.svg || fail "svg -o: not the bytes of stdout"
	# --top, --where, --source, --metric apply as for folded
	svg_of top --top 2 a.sonde
	[ "$(grep -c '<g class="f"' top.svg)" -eq 4 ] || fail "svg --top 2: $(grep -c '<g class="f"' top.svg) frames, expected 4 (all, mk_main, mk_alpha, mk_beta)"
	svg_of where --where 'function!=mk_gamma' a.sonde
	svg_of source --source wall-time a.sonde
	grep -q '· total 10 periods</text>' source.svg || fail "svg --source: $(grep 'font-size="16"' source.svg)"
	svg_of weight --metric weight a.sonde
	grep -q 'data-div="1000000" data-unit="ms"' weight.svg || fail "svg --metric weight: unit"
	grep -qF '<title>mk_gamma
40.000 ms (20.00%), self 40.000 ms</title>' weight.svg || fail "svg --metric weight: $(grep -A1 'data-n="mk_gamma"' weight.svg | head -n 2)"

	# frames under 0.1 % of the total are not drawn; their weight stays in the parent
	mk big big.sonde --count 20000 --pid 200
	svg_of elide a.sonde big.sonde
	grep -q 'data-n="mk_recurse"' elide.svg && fail "svg: mk_recurse (10 of 20100) drawn"
	grep -q 'data-v="20100" data-n="mk_main"' elide.svg || fail "svg: mk_main lost the elided frames' weight"
	# nothing left to draw: a valid file that says so
	run "$SONDE" report --format svg --where function=nosuch a.sonde
	expect_rc 0 "svg of no samples"
	xmllint --noout "$T/out" || fail "svg of no samples: not well-formed"
	grep -q '>no samples</text>' "$T/out" && ! grep -q '<g class="f"' "$T/out" || fail "svg of no samples: $(cat "$T/out")"

	# names are escaped (and bytes XML cannot hold replaced): module paths become frame names
	mk modpaths m.sonde --module '/tmp/a&b<c>"d'"'"'e.so' --module "/tmp/ctl$(printf '\001\377')x.so"
	run "$SONDE" report --addresses --format svg m.sonde
	expect_rc 0 "svg of odd names"
	xmllint --noout "$T/out" || fail "svg of odd names: not well-formed"
	grep -qF 'data-n="a&amp;b&lt;c&gt;&quot;d&apos;e.so+0x1000"' "$T/out" || fail "svg: escaping: $(grep -o 'data-n="a[^"]*"' "$T/out")"
	grep -qF "data-n=\"ctl?$(printf '\357\277\275')x.so+0x1010\"" "$T/out" || fail "svg: control and invalid bytes: $(grep -o 'data-n="ctl[^"]*"' "$T/out" | od -c | head -3)"

	# --view tree: the context levels are frames
	mk ctx c.sonde
	svg_of tree --view tree c.sonde
	for n in run=big phase=solve iteration=1 iteration=2 phase=exchange phase=inner; do
		grep -q "data-n=\"$n\"" tree.svg || fail "svg --view tree: no frame $n"
	done
	grep -q '>view: tree (annotation levels as frames) · colour: module · click: zoom</text>$' tree.svg || fail "svg --view tree: subtitle"
	# --color-by: a fill per value; the tree view's levels and everything under them take it
	svg_of ctree --view tree --color-by phase c.sonde
	# each frame's <g> on one line (titles hold newlines)
	oneline() { awk '/^<g class="f"/ { buf = $0 } !/^<g class="f"/ && buf != "" { buf = buf " " $0 }
		/<\/g>$/ && buf != "" { print buf; buf = "" }' "$1"; }
	fill_of() { oneline "$1" | grep -F "data-c=\"$2\"" | grep -o 'fill="[^"]*"' | sort -u; }
	for v in solve exchange inner '(none)'; do
		[ "$(fill_of ctree.svg "$v" | wc -l)" -eq 1 ] || fail "svg --color-by phase: frames of $v in $(fill_of ctree.svg "$v" | wc -l) colours"
	done
	[ "$( (fill_of ctree.svg solve; fill_of ctree.svg exchange; fill_of ctree.svg inner; fill_of ctree.svg '(none)') | sort -u | wc -l)" -eq 4 ] ||
		fail "svg --color-by phase: values share a colour"
	for n in phase=solve phase=exchange phase=inner; do
		grep -q "data-n=\"$n\" data-c=\"${n#phase=}\"" ctree.svg || fail "svg --color-by phase: $n not coloured ${n#phase=}"
	done
	grep -q 'data-n="mk_gamma" data-c="inner"' ctree.svg || fail "svg --color-by: mk_gamma under phase=inner"
	# the legend: each value drawn, its swatch in its frames' colour, values in order
	[ "$(grep -o '<text class="legend"[^>]*>[^<]*' ctree.svg | sed 's/.*>//' | tr '\n' ' ')" = "exchange inner solve (none) " ] ||
		fail "svg --color-by: legend $(grep -o '<text class="legend"[^>]*>[^<]*' ctree.svg)"
	for v in solve exchange inner '(none)'; do
		lf=$(grep -o 'fill="[^"]*"/><text class="legend"[^>]*>[^<]*' ctree.svg | grep -F ">$v" | grep -o 'fill="[^"]*"')
		[ -n "$lf" ] && [ "$lf" = "$(fill_of ctree.svg "$v")" ] || fail "svg --color-by: legend swatch of $v: $lf, frames $(fill_of ctree.svg "$v")"
	done
	# the flat view: each frame by the value of phase with most of its samples (the
	# innermost value of each sample): mk_alpha 50 of 65 in solve, mk_main 50 of 100
	svg_of cflat --color-by phase c.sonde
	grep -q '· colour: phase (the value with most of each frame) · click: zoom</text>$' cflat.svg || fail "svg --color-by: subtitle"
	grep -qF 'data-n="mk_alpha" data-c="solve"><title>mk_alpha
65 samples (65.00%), self 15 samples
phase=solve: 76.9% of it</title>' cflat.svg || fail "svg --color-by flat: $(grep -A2 'data-n="mk_alpha"' cflat.svg | head -n 3)"
	grep -qF 'data-n="mk_main" data-c="solve"><title>mk_main
100 samples (100.00%), self 10 samples
phase=solve: 50.0% of it</title>' cflat.svg || fail "svg --color-by flat: $(grep -A2 'data-n="mk_main"' cflat.svg | head -n 3)"
	grep -q 'data-n="mk_gamma" data-c="(none)"' cflat.svg || fail "svg --color-by flat: mk_gamma is 15 (none), 10 inner"
	run "$SONDE" report --format svg --color-by module c.sonde
	expect_rc 0 "--color-by module"
	cmp -s "$T/out" <("$SONDE" report --format svg c.sonde 2>/dev/null) || fail "--color-by module is not the default"
	run "$SONDE" report --format svg --color-by phse c.sonde
	expect_rc 0 "--color-by unknown attribute"
	expect_err_line "sonde: report: --color-by phse: no attribute of that name in the streams (did you mean 'phase'? attributes: phase, iteration, run, region)"
	grep -c 'data-c="(none)"' "$T/out" | grep -qx "$(( $(grep -c '<g class="f"' "$T/out") - 1 ))" || fail "--color-by phse: frames with a value"

	# sonde diff --format svg: B's widths, coloured by the change of self
	mk diff_a da.sonde
	mk diff_b db.sonde
	run "$SONDE" diff --format svg -o d.svg da.sonde db.sonde
	expect_rc 0 "diff svg"
	[ "$(cat "$T/out")" = "sonde: flame graph written to d.svg (open it in a browser)" ] || fail "diff svg -o: $(cat "$T/out")"
	xmllint --noout d.svg || fail "diff svg: not well-formed"
	"$SONDE" report --format folded da.sonde >da.folded 2>/dev/null
	"$SONDE" report --format folded db.sonde >db.folded 2>/dev/null
	frames d.svg >d.frames
	prefixes db.folded >d.prefixes
	diff -u d.prefixes d.frames >&2 || fail "diff svg: frames are not B's folded prefixes"
	grep -q 'data-n="mk_alpha"[^>]*><title>mk_alpha$' d.svg && grep -A3 'data-n="mk_alpha"' d.svg | grep -q 'fill="rgb(255,50,50)"' ||
		fail "diff svg: mk_alpha (20 % -> 40 %, the largest change) is not full red: $(grep -A3 'data-n="mk_alpha"' d.svg)"
	grep -A3 'data-n="mk_beta"' d.svg | grep -q 'fill="rgb([0-9]*,[0-9]*,255)"' || fail "diff svg: mk_beta (50 % -> 33 %) is not blue"
	grep -A3 'data-n="mk_alpha"' d.svg | grep -qx 'self delta: +20.00 percentage points</title>.*' ||
		fail "diff svg: mk_alpha's title: $(grep -A3 'data-n="mk_alpha"' d.svg)"
	run "$SONDE" diff --format svg --absolute da.sonde db.sonde
	expect_rc 0 "diff svg --absolute"
	cp "$T/out" dabs.svg
	grep -A3 'data-n="mk_beta"' dabs.svg | grep -q 'fill="rgb(255,[0-9]*,[0-9]*)"' || fail "diff svg --absolute: mk_beta (50 -> 66) is not red"

	# usage errors
	run "$SONDE" report --format svg --view threads a.sonde
	expect_rc 2 "svg --view threads"
	expect_err_line "sonde: report: --format svg draws call paths (use it without --view, or with --view tree)"
	run "$SONDE" report --format csv -o x.csv a.sonde
	expect_rc 2 "-o with csv"
	expect_err_line "sonde: report: -o FILE: only --format pprof, svg, html, speedscope and trace write a file (add one of them, or leave -o out)"
	run "$SONDE" report --color-by phase c.sonde
	expect_rc 2 "--color-by without svg"
	expect_err_line "sonde: report: --color-by phase: colours a flame graph (add --format svg or html)"
	run "$SONDE" report --format svg --color-by thread c.sonde
	expect_rc 2 "--color-by thread"
	expect_err_line "sonde: report: --color-by thread: colours by an annotation attribute or by module (e.g. --color-by phase)"
	run "$SONDE" report --format svg --color-by= c.sonde
	expect_rc 2 "--color-by empty"
	expect_err_line "sonde: report: --color-by: empty attribute name (give an annotation attribute, e.g. --color-by phase)"
	run "$SONDE" report --format svg --group-by phase c.sonde
	expect_rc 2 "svg --group-by"
	run "$SONDE" report --format svg --stats thread c.sonde
	expect_rc 2 "svg --stats"
	run "$SONDE" report --format svg -o /nonexistent/dir/x.svg a.sonde
	expect_rc 3 "svg: unwritable"
	expect_err_line "sonde: /nonexistent/dir/x.svg: cannot write: No such file or directory (check the path and its directory)"
	run "$SONDE" diff --format svg --group-by phase da.sonde db.sonde
	expect_rc 2 "diff svg --group-by"
	expect_err_line "sonde: diff: --format svg draws every call path of B (leave --group-by and --top out)"
	run "$SONDE" diff -o x.csv --format csv da.sonde db.sonde
	expect_rc 2 "diff -o with csv"
	expect_err_line "sonde: diff: -o FILE: only --format svg writes a file (add --format svg, or leave -o out)"
	run "$SONDE" diff --format svg -o /nonexistent/dir/d.svg da.sonde db.sonde
	expect_rc 3 "diff svg: unwritable"
	expect_err_line "sonde: /nonexistent/dir/d.svg: cannot write: No such file or directory (check the path and its directory)"

	# in the browser (skipped when node, chromium or playwright-core cannot be had here)
	NPM=$(bash "$CONSUMERS/npm.sh") || exit 77
	svgcheck() { local svg=$1 folded=$2; shift 2; node "$CONSUMERS/svg_check.mjs" "$NPM" "$svg" "$folded" "$SHOTS" "$@" >check.out 2>&1 ||
		{ cat check.out >&2; fail "svg_check $svg $*"; }; }
	svgcheck flat.svg flat.folded --search 'mk_(beta|gamma)'
	svgcheck elide.svg elide.folded --search gamma
	svgcheck weight.svg weight.folded --search mk_recurse --click mk_recurse
	svgcheck ctree.svg ctree.folded --search 'iteration=' --click phase=solve
	svgcheck d.svg db.folded --before da.folded --search beta
	svgcheck dabs.svg db.folded --before da.folded --absolute
	# a graph taller than the window opens where the weight is (issue 22 item 11): not at
	# the thin tip 300 levels up
	mk deep_thin dt.sonde
	"$SONDE" report --format svg -o deep.svg dt.sonde >/dev/null 2>&1 || fail "deep svg"
	"$SONDE" report --format folded dt.sonde >deep.folded 2>/dev/null || fail "deep folded"
	svgcheck deep.svg deep.folded
	# the check itself fails on a wrong frame: one value changed
	sed 's/data-v="70" data-n="mk_alpha"/data-v="71" data-n="mk_alpha"/' flat.svg >bad.svg
	node "$CONSUMERS/svg_check.mjs" "$NPM" bad.svg flat.folded "$SHOTS" >check.out 2>&1 && fail "svg_check passed a wrong value"
	grep -q "FAIL bad.svg: frame mk_main;mk_alpha: value 71, folded 70" check.out || fail "svg_check on a wrong value: $(cat check.out)"
