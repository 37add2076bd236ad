# analyze.cli.report_where: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
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
			[ "$(cat "$T/out")" = "process,periods,percent" ] || fail "where $spec: $(cat "$T/out")"
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
pid,tid,name,samples,periods,first_ns,last_ns
4242,4242,main,0,0,,
4242,4243,worker,25,25,11005000,35005000
EOF
	run "$SONDE" report --where phase=solve --format folded c.sonde
	expect_file "$T/out" <<'EOF'
mk_main;mk_alpha;mk_beta 50
EOF
	run "$SONDE" report --where =x c.sonde
	expect_rc 2 "where without a name"
	expect_err_line "sonde: report: --where '=x': no attribute name (use attr=value, attr!=value, attr~regex, attr or !attr)"
