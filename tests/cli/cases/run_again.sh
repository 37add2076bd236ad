# analyze.cli.run_again: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# A second `sonde run` into a directory that holds an earlier run's streams moves
	# them to DIR.old (like perf.data.old) and says so; streams still being written
	# (their process alive on this host), streams of other hosts and ranks under an MPI
	# launcher are kept, and that is said too. The stub library stands in for the
	# runtime: each command writes a stream named as the runtime names them.
	unset SONDE_OUTPUT SONDE_SAMPLE OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK MV2_COMM_WORLD_RANK SLURM_PROCID MPI_LOCALRANKID
	export SONDE_LIB=$STUB
	host=$(uname -n)
	# a command that writes one stream, named NAME.HOST.PID.sonde, and ends
	mkrun() { "$SONDE" run -o "$1" -- sh -c ': >"$SONDE_OUTPUT/sh.'"$host"'.$$.sonde"'; }
	run mkrun p
	expect_rc 0 "first run"
	expect_file "$T/err" <<'EOF2'
sonde: profile written to p (sonde report p)
EOF2
	first=$(ls p)
	run mkrun p
	expect_rc 0 "second run"
	expect_file "$T/err" <<'EOF2'
sonde: run: p held an earlier run (1 stream): moved to p.old (sonde diff p.old p compares the two)
sonde: profile written to p (sonde report p)
EOF2
	[ "$(ls p.old)" = "$first" ] && [ "$(ls p | wc -l)" -eq 1 ] && [ "$(ls p)" != "$first" ] ||
		fail "second run: p holds $(ls p | tr '\n' ' '), p.old $(ls p.old | tr '\n' ' ')"
	# a third run replaces p.old: it holds the second run only, files of its own stay
	second=$(ls p)
	echo notes >p.old/notes.txt
	run mkrun p/
	expect_rc 0 "third run"
	expect_err_line "sonde: run: p/ held an earlier run (1 stream): moved to p.old (sonde diff p.old p/ compares the two)"
	[ "$(ls p.old | tr '\n' ' ')" = "notes.txt $second " ] || fail "third run: p.old holds $(ls p.old | tr '\n' ' ')"
	# --append (-a): added beside them, nothing said
	before=$(ls p | tr '\n' ' ')
	run "$SONDE" run --append -o p -- sh -c ': >"$SONDE_OUTPUT/sh.'"$host"'.$$.sonde"'
	expect_file "$T/err" <<'EOF2'
sonde: profile written to p (sonde report p)
EOF2
	[ "$(ls p | wc -l)" -eq 2 ] && [ "$(ls p.old | tr '\n' ' ')" = "notes.txt $second " ] ||
		fail "--append: p holds $(ls p | tr '\n' ' ') (was $before), p.old $(ls p.old | tr '\n' ' ')"
	run "$SONDE" run --append -o p -- sh -c ': >"$SONDE_OUTPUT/sh.'"$host"'.$$.sonde"'
	[ "$(ls p | wc -l)" -eq 3 ] || fail "-a: p holds $(ls p | tr '\n' ' ')"
	rm -f p/*.sonde
	mkrun p 2>/dev/null
	# a stream whose process is alive here is being written: nothing moves
	sleep 60 &
	live=$!
	: >"p/sh.$host.$live.sonde"
	: >"p/sh.$host.r3.$live.sonde" # an MPI rank's name: its pid is read past .r3.
	run mkrun p
	expect_rc 0 "live stream"
	expect_err_line "sonde: run: p already holds streams of 2 running processes and 0 of other hosts (kept: this run's streams are added beside them and a report merges them; give another -o for a profile of its own)"
	[ "$(ls p | wc -l)" -eq 4 ] || fail "live: p holds $(ls p | tr '\n' ' ')"
	kill "$live"
	wait "$live" 2>/dev/null
	# a stream of another host: kept
	rm -f p/*.sonde
	: >p/sh.elsewhere.example.1234.sonde
	run mkrun p
	expect_err_line "sonde: run: p already holds streams of 0 running processes and 1 of other hosts (kept: this run's streams are added beside them and a report merges them; give another -o for a profile of its own)"
	[ "$(ls p | wc -l)" -eq 2 ] || fail "other host: p holds $(ls p | tr '\n' ' ')"
	# under an MPI launcher: kept; rank 0 says it, the other ranks do not
	rm -f p/*.sonde
	mkrun p 2>/dev/null
	# (and the job's "profile written" line is rank 0's alone)
	OMPI_COMM_WORLD_RANK=1 run mkrun p
	expect_err_empty
	OMPI_COMM_WORLD_RANK=0 run mkrun p
	expect_file "$T/err" <<'EOF2'
sonde: run: p already holds 2 streams of ended processes (kept: ranks started by an MPI launcher move nothing, they start together; if they are an earlier run, the report merges them: give each run its own -o)
sonde: profile written to p (sonde report p)
EOF2
	[ "$(ls p | wc -l)" -eq 3 ] || fail "mpi: p holds $(ls p | tr '\n' ' ')"
	# DIR.old cannot be made: said, and the streams stay
	rm -rf q q.old
	mkrun q 2>/dev/null
	: >q.old
	run mkrun q
	expect_rc 0 "q.old is a file"
	expect_err_line "sonde: run: q holds an earlier run (1 stream), and q.old cannot be used: cannot create directory 'q.old': Not a directory (nothing was moved: this run's report will merge them; give another -o, or remove q.old)"
	[ "$(ls q | wc -l)" -eq 2 ] || fail "q: $(ls q | tr '\n' ' ')"
	# -o . : DIR.old is the directory's absolute path with .old
	mkdir -p d/w && (cd d/w && mkrun . 2>/dev/null && run mkrun .)
	expect_err_line "sonde: run: . held an earlier run (1 stream): moved to $(pwd -P)/d/w.old (sonde diff $(pwd -P)/d/w.old . compares the two)"
