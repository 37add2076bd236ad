# analyze.cli.messages: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# issue 21 item 4: the bytes MPI calls moved (REGION_STATS traffic) are the regions
	# view's bytes_sent and bytes_recv; the last MESSAGES record of a stream is its row of
	# --view comm; a stream without either shows neither; malformed ones are corrupt
	mk messages m.sonde
	run "$SONDE" report --view regions --format csv m.sonde
	expect_rc 0 "regions"
	[ "$(head -1 "$T/out")" = "path,calls,incl_ms,excl_ms,min_ms,mean_ms,stddev_ms,max_ms,forced,bytes_sent,bytes_recv" ] ||
		fail "regions header: $(head -1 "$T/out")"
	grep -qx 'mpi=MPI_Send,1,0.001,0.001,0.001,0.001,0.000,0.001,0,3000,0' "$T/out" ||
		fail "MPI_Send's bytes: $(cat "$T/out")"
	grep -qx 'mpi=MPI_Recv,1,0.001,0.001,0.001,0.001,0.000,0.001,0,0,500' "$T/out" ||
		fail "MPI_Recv's bytes: $(cat "$T/out")"
	run "$SONDE" report --view comm --format csv m.sonde
	expect_rc 0 "comm"
	[ "$(cat "$T/out")" = "$(printf 'src,dst,messages,bytes,mean_bytes\n1,2,3,3000,1000')" ] ||
		fail "--view comm (the last MESSAGES counts): $(cat "$T/out")"
	run "$SONDE" report --view comm m.sonde
	grep -q '^3 messages, 2.9 KiB (3000 bytes) between 1 pairs of 3 ranks; most: rank 1 to rank 2' "$T/out" ||
		fail "--view comm text: $(cat "$T/out")"
	run "$SONDE" report --view comm --format json m.sonde
	expect_rc 0 "comm json"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["pairs"] == [{"src":1,"dst":2,"messages":3,"bytes":3000,"mean_bytes":1000}], d' "$T/out" ||
		fail "--view comm json: $(cat "$T/out")"
	# a stream of no MPI: said, exit 0; no byte columns in its regions
	mk model plain.sonde
	run "$SONDE" report --view comm plain.sonde
	expect_rc 0 "comm of no MPI"
	expect_err_line "sonde: report: --view comm: no MPI message in the streams (point-to-point sends of programs run with sonde run, which times MPI calls when linked with MPI: docs/ENV.md, MPI programs)"
	run "$SONDE" report --view regions --format csv plain.sonde
	head -1 "$T/out" | grep -q bytes && fail "byte columns without traffic: $(head -1 "$T/out")"
	for sc in "msgs_peer:MESSAGES peers is not an array of [peer, messages, bytes] with peers below size" \
		  "msgs_rank:MESSAGES rank is not below its size (at most 2^24)" \
		  "rstats_traffic:REGION_STATS traffic is not [bytes sent, bytes received]"; do
		name=${sc%%:*}
		off=$("$MK" "bad_$name" x.sonde) || fail "mkstream bad_$name"
		run "$SONDE" report x.sonde
		expect_rc 4 "$name"
		expect_err_line "sonde: x.sonde: corrupt record at byte $off (${sc#*:})"
	done
