# analyze.cli.run_old_owner: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# DIR.old on a shared machine (issue 19 item 16; docs/ENV.md, "sonde run"): root's
	# second `sonde run -o DIR` moves the earlier run to DIR.old only when DIR.old is
	# made or checked by the rule of the output directory (never a symbolic link, owned
	# by the user, not writable by others unless sticky). Else one line, nothing is
	# moved, and nobody's files in or behind DIR.old are touched; in DIR.old the user's
	# own, only the user's own earlier streams are removed and no file is replaced.
	# The stub library stands in for the runtime (as in run_again.sh).
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to plant files as another user"; exit 77; }
	command -v setpriv >/dev/null || { echo "SKIP: setpriv not installed"; exit 77; }
	id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }
	nob() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
	NOBODY=$(id -u nobody)
	unset SONDE_OUTPUT SONDE_SAMPLE SONDE_MODE OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK MV2_COMM_WORLD_RANK SLURM_PROCID MPI_LOCALRANKID
	export SONDE_LIB=$STUB
	umask 022
	host=$(uname -n)
	mkrun() { "$SONDE" run -o "$1" -- sh -c ': >"$SONDE_OUTPUT/sh.'"$host"'.$$.sonde"'; }
	chmod 755 "$T"
	mkdir -m 1777 pub # like /tmp
	chmod 1777 pub
	# listing DIR: "NAME OWNER MODE CONTENT" of every entry, sorted
	listing() {
		(cd "$1" && for e in $(ls -A | sort); do
			printf '%s %s %s\n' "$e" "$(stat -c '%U %a' "$e")" "$(cat "$e" 2>/dev/null)"
		done)
	}
	# refused NAME WHY: root's second run into pub/NAME is refused for pub/NAME.old
	# with WHY; the command ran, both streams are in pub/NAME
	refused() {
		local d=pub/$1
		mkrun "$d" 2>/dev/null || fail "$1: first run"
		first=$(ls "$d")
		run mkrun "$d"
		expect_rc 0 "$1: second run"
		expect_file "$T/err" <<EOF2
sonde: run: $d holds an earlier run (1 stream), and $d.old cannot be used: $2 (nothing was moved: this run's report will merge them; give another -o, or remove $d.old)
sonde: profile written to $d (sonde report $d)
EOF2
		[ "$(ls "$d" | wc -l)" -eq 2 ] && ls "$d" | grep -qx "$first" ||
			fail "$1: $d holds $(ls "$d" | tr '\n' ' '), the first run's $first should stay"
	}

	# 1. DIR.old made by nobody (a directory of its own, mode 777 so that it could take
	# root's files), with a stream-named file of its own
	nob mkdir -m 777 pub/a.old
	nob chmod 777 pub/a.old
	nob sh -c "printf 'nobody a\n' >pub/a.old/x.$host.1.sonde"
	before=$(listing pub/a.old)
	refused a "'pub/a.old' is owned by uid $NOBODY, not by you (uid 0)"
	[ "$(listing pub/a.old)" = "$before" ] || fail "a: nobody's a.old changed: $(listing pub/a.old)"
	[ "$(stat -c '%U %a' pub/a.old)" = "nobody 777" ] || fail "a: a.old is $(stat -c '%U %a' pub/a.old)"

	# 2. DIR.old of root's, writable by every user, no sticky bit: nobody's file in it
	mkdir pub/b.old && chmod 777 pub/b.old
	nob sh -c "printf 'nobody b\n' >pub/b.old/x.$host.1.sonde"
	before=$(listing pub/b.old)
	refused b "'pub/b.old' is writable by every user and has no sticky bit"
	[ "$(listing pub/b.old)" = "$before" ] || fail "b: b.old changed: $(listing pub/b.old)"

	# 3. DIR.old a symbolic link (nobody's) to a directory of nobody's
	nob mkdir -m 777 pub/victim
	nob chmod 777 pub/victim
	nob sh -c "printf 'nobody c\n' >pub/victim/x.$host.1.sonde"
	nob ln -s "$T/pub/victim" pub/c.old
	before=$(listing pub/victim)
	refused c "'pub/c.old' is a symbolic link"
	[ "$(listing pub/victim)" = "$before" ] || fail "c: the directory behind c.old changed: $(listing pub/victim)"
	[ -L pub/c.old ] || fail "c: the link c.old was replaced"
	# ... and root's own link to root's own directory is not followed either
	mkdir -m 700 rootdir
	ln -s "$T/rootdir" pub/c2.old
	refused c2 "'pub/c2.old' is a symbolic link"
	[ -z "$(ls -A rootdir)" ] || fail "c2: written through root's link: $(ls rootdir)"

	# 4. the ordinary case: DIR.old made (0700 by SONDE_MODE, root's), then a DIR.old
	# of the run before, root's: its streams replaced, other files kept
	mkrun pub/d 2>/dev/null || fail "d: first run"
	first=$(ls pub/d)
	run mkrun pub/d
	expect_rc 0 "d: second run"
	expect_err_line "sonde: run: pub/d held an earlier run (1 stream): moved to pub/d.old (sonde diff pub/d.old pub/d compares the two)"
	[ "$(ls pub/d.old)" = "$first" ] && [ "$(stat -c '%U %a' pub/d.old)" = "root 700" ] ||
		fail "d: d.old holds $(ls pub/d.old | tr '\n' ' '), is $(stat -c '%U %a' pub/d.old)"
	second=$(ls pub/d)
	echo notes >pub/d.old/notes.txt
	run mkrun pub/d
	expect_err_line "sonde: run: pub/d held an earlier run (1 stream): moved to pub/d.old (sonde diff pub/d.old pub/d compares the two)"
	[ "$(ls pub/d.old | tr '\n' ' ')" = "notes.txt $second " ] || fail "d: d.old holds $(ls pub/d.old | tr '\n' ' ')"
	[ "$(ls pub/d | wc -l)" -eq 1 ] || fail "d: d holds $(ls pub/d | tr '\n' ' ')"
	SONDE_MODE=group mkrun pub/e 2>/dev/null && SONDE_MODE=group mkrun pub/e 2>/dev/null || fail "e: runs"
	[ "$(stat -c '%a' pub/e.old)" = 750 ] || fail "e: SONDE_MODE=group: e.old is $(stat -c %a pub/e.old)"

	# 5. root's own sticky world-writable DIR.old is used (the rule of the output
	# directory), but nobody's files in it are neither removed nor replaced: a stream
	# of nobody's, and a file of nobody's under the very name of root's earlier stream
	mkrun pub/f 2>/dev/null || fail "f: first run"
	first=$(ls pub/f)
	mkdir pub/f.old && chmod 1777 pub/f.old
	printf 'root old\n' >"pub/f.old/r.$host.1.sonde"
	nob sh -c "printf 'nobody f\n' >pub/f.old/x.$host.1.sonde; printf 'nobody same name\n' >pub/f.old/$first"
	run mkrun pub/f
	expect_rc 0 "f: second run"
	expect_err_line "sonde: run: pub/f held an earlier run (1 stream): 0 moved to pub/f.old, 1 could not be (kept: this run's report will merge them; give another -o)"
	[ "$(listing pub/f.old)" = "$first nobody 644 nobody same name
x.$host.1.sonde nobody 644 nobody f" ] || fail "f: f.old: $(listing pub/f.old)"
	ls pub/f | grep -qx "$first" && [ "$(ls pub/f | wc -l)" -eq 2 ] || fail "f: f holds $(ls pub/f | tr '\n' ' ')"
