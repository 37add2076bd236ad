# analyze.cli.top_everywhere: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# --top N in the views where it was ignored: the threads view keeps the N threads
	# with the most samples (in its own order), the tree view's text, csv and json keep
	# the nodes on the paths of the N heaviest folded lines (as folded and svg do)
	mk ctx c.sonde
	run "$SONDE" report --view threads --top 1 --format csv c.sonde
	expect_rc 0 "threads --top"
	expect_file "$T/out" <<'EOF2'
pid,tid,name,samples,periods,first_ns,last_ns
4242,4242,main,65,65,1001000,65001000
EOF2
	run "$SONDE" report --view threads --top 5 --format csv c.sonde
	[ "$(wc -l <"$T/out")" -eq 3 ] || fail "threads --top 5 of 2: $(cat "$T/out")"
	for n in 1 2 3; do
		"$SONDE" report --view tree --top $n --format folded c.sonde 2>/dev/null | sed 's/ [0-9]*$//' | sort >folded.$n
		# every folded path's leaf is a node of the csv tree, and every csv node with a
		# value of its own is a folded path
		"$SONDE" report --view tree --top $n --min-percent 0 --format csv c.sonde 2>/dev/null |
			awk -F, 'NR > 1 && $6 > 0 { print $2 }' | sort >csv.$n
		cmp -s folded.$n csv.$n || fail "tree --top $n: csv paths $(tr '\n' '|' <csv.$n), folded $(tr '\n' '|' <folded.$n)"
		[ "$(wc -l <folded.$n)" -eq $n ] || fail "tree --top $n: $(wc -l <folded.$n) paths"
	done
	run "$SONDE" report --view tree --top 1 c.sonde
	grep -q 'mk_beta' "$T/out" && ! grep -q 'mk_gamma' "$T/out" || fail "tree text --top 1: $(cat "$T/out")"
