# analyze.cli.report_where_regex: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
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
			[ "$(cat "$T/out")" = "process,periods,percent" ] || fail "where $spec: $(cat "$T/out")"
		else
			[ "$(sed -n 2p "$T/out")" = "mkstream[4242],$n,100.00" ] || fail "where $spec: $(cat "$T/out")"
		fi
		run "$SONDE" report "${args[@]}" c.sonde
		grep -qx "samples: $n  streams: 1  processes: 1  threads: 2" "$T/out" || fail "flat where $spec"
	done
	run "$SONDE" report --where 'function~gamma' --view threads --format csv c.sonde
	expect_file "$T/out" <<'EOF'
pid,tid,name,samples,periods,first_ns,last_ns
4242,4242,main,0,0,,
4242,4243,worker,25,25,1005000,35005000
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
path,calls,incl_ms,excl_ms,min_ms,mean_ms,stddev_ms,max_ms,forced
region=outer,4,50.000,44.500,3.000,12.500,13.219,35.000,1
EOF
	run "$SONDE" report --where 'thread=worker' --view regions --by-thread --format csv c.sonde
	[ "$(cut -d, -f1 "$T/out" | sort -u | tr '\n' ' ')" = "4243 thread " ] || fail "regions thread: $(cat "$T/out")"
	run "$SONDE" report --where 'x~(' c.sonde
	expect_rc 2 "bad regex"
	expect_err_line "sonde: report: --where 'x~(': bad regular expression: Unmatched ( or \\( (POSIX extended syntax, e.g. function~^solve_)"
