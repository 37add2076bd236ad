# analyze.cli.docs: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
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
		    "--stats process --group-by function --format json" \
		    "--view imbalance --format csv"; do
		"$SONDE" report $args p1.sonde p2.sonde p3.sonde p4.sonde >>all.txt 2>&1 ||
			fail "report $args"
	done
	mk counters k.sonde --pid 100
	for args in "" "--metric context-switches --group-by thread --format csv" \
		    "--metric context-switches --group-by phase --format csv" \
		    "--view counters --format csv" "--view regions --format csv"; do
		"$SONDE" report $args k.sonde >>all.txt 2>&1 || fail "report $args"
	done
	mk model mo.sonde --pid 100
	for args in "--view model --region quad --param n" \
		    "--view model --region quad --param n --format csv"; do
		"$SONDE" report $args mo.sonde >>all.txt 2>&1 || fail "report $args"
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
	mk timeline tl.sonde
	for args in "--format speedscope" "--format trace"; do
		"$SONDE" report $args tl.sonde >>all.txt 2>&1 || fail "report $args"
	done
	awk '/^```/{inb=!inb; next} inb' "$DOCS/REPORT.md" | grep -vF '...' |
		grep -v '^{"offset"' >examples.txt
	[ "$(wc -l <examples.txt)" -ge 50 ] || fail "examples not found in REPORT.md"
	while IFS= read -r line; do
		grep -qxF -- "$line" all.txt || fail "REPORT.md example not in the output: $line"
	done <examples.txt
