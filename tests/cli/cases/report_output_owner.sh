# analyze.cli.report_output_owner: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# -o FILE on a shared machine (issue 19 item 17; docs/REPORT.md, "Output files"):
	# every format that writes a file (html, svg, pprof flat and tree, speedscope, trace,
	# diff's svg) makes it in a temporary file of the same directory and renames it into
	# place, so a link another user planted at FILE is never followed (root's file it
	# points to stays as it was) and a file of another user is never replaced: both are
	# refused in one line. What is written is private (0600, by SONDE_MODE, less the
	# umask), and an ordinary -o still works in every format.
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to plant files as another user"; exit 77; }
	command -v setpriv >/dev/null || { echo "SKIP: setpriv not installed"; exit 77; }
	id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }
	nob() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
	NOBODY=$(id -u nobody)
	umask 022
	chmod 755 "$T"
	mk timeline t.sonde
	mkdir -m 1777 pub # like /tmp
	chmod 1777 pub
	printf 'root:precious\n' >victim
	chmod 644 victim
	cp victim victim.orig
	# report FORMAT FILE: the command that writes FORMAT into FILE (the stream's notes,
	# "sonde: warning: ..." lines about the samples, may come first on stderr)
	report() {
		case $1 in
		pprof-tree) "$SONDE" report --view tree --format pprof -o "$2" t.sonde ;;
		diff-svg) "$SONDE" diff --format svg -o "$2" t.sonde t.sonde ;;
		*) "$SONDE" report --format "$1" -o "$2" t.sonde ;;
		esac
	}
	FORMATS="html svg pprof pprof-tree speedscope trace diff-svg"
	for f in $FORMATS; do
		# 1. a link planted by nobody at FILE, to a file of root's
		nob ln -s "$T/victim" "pub/l.$f"
		run report "$f" "pub/l.$f"
		expect_rc 3 "$f: planted link"
		grep -v '^sonde: \(warning\|note\): ' "$T/err" >err.refusal
		expect_file err.refusal <<EOF2
sonde: pub/l.$f: cannot write: it is a symbolic link owned by uid $NOBODY, not by you (uid 0) (sonde writes through no link and over no file of another user: give -o another path)
EOF2
		[ ! -s "$T/out" ] || fail "$f: planted link: said $(cat "$T/out")"
		cmp -s victim victim.orig || fail "$f: the file behind the planted link was written: $(head -c 200 victim | od -c | head -3)"
		[ "$(stat -c '%U %a %h' victim)" = "root 644 1" ] || fail "$f: victim now $(stat -c '%U %a %h' victim)"
		[ -L "pub/l.$f" ] && [ "$(stat -c %U "pub/l.$f")" = nobody ] || fail "$f: the link was replaced: $(ls -l "pub/l.$f")"
		# 2. a file of nobody's at FILE
		nob sh -c "printf 'nobody s file\n' >pub/n.$f"
		run report "$f" "pub/n.$f"
		expect_rc 3 "$f: another user's file"
		grep -v '^sonde: \(warning\|note\): ' "$T/err" >err.refusal
		expect_file err.refusal <<EOF2
sonde: pub/n.$f: cannot write: it is owned by uid $NOBODY, not by you (uid 0) (sonde writes through no link and over no file of another user: give -o another path)
EOF2
		[ "$(cat "pub/n.$f")" = "nobody s file" ] && [ "$(stat -c '%U %a' "pub/n.$f")" = "nobody 644" ] ||
			fail "$f: nobody's file changed: $(stat -c '%U %a' "pub/n.$f") $(head -c 100 "pub/n.$f")"
		# 3. a new file in the sticky directory: root's, 0600, nothing else left there
		run report "$f" "pub/new.$f"
		expect_rc 0 "$f: new file in a sticky directory"
		[ -f "pub/new.$f" ] && [ ! -L "pub/new.$f" ] || fail "$f: pub/new.$f not written"
		[ "$(stat -c '%U %a %s' "pub/new.$f" | cut -d' ' -f1,2)" = "root 600" ] ||
			fail "$f: pub/new.$f is $(stat -c '%U %a' "pub/new.$f"), expected root 600"
		[ -s "pub/new.$f" ] || fail "$f: pub/new.$f is empty"
		# 4. ordinary -o in root's own directory: a new file, then over root's own
		# earlier file (made public by hand: the new one is private again)
		run report "$f" "mine.$f"
		expect_rc 0 "$f: ordinary -o"
		grep -q "written to mine.$f " "$T/out" || fail "$f: ordinary -o said $(cat "$T/out")"
		[ "$(stat -c '%U %a' "mine.$f")" = "root 600" ] || fail "$f: mine.$f is $(stat -c '%U %a' "mine.$f")"
		cp "mine.$f" "first.$f"
		chmod 644 "mine.$f"
		printf 'old\n' >>"mine.$f"
		run report "$f" "mine.$f"
		expect_rc 0 "$f: -o over the user's own file"
		cmp -s "mine.$f" "first.$f" || fail "$f: -o over an existing file of root's: not the same report"
		[ "$(stat -c '%U %a' "mine.$f")" = "root 600" ] || fail "$f: rewritten mine.$f is $(stat -c '%U %a' "mine.$f")"
	done
	# what each file holds: the same bytes as stdout (svg, html, speedscope, trace), gzip
	# (pprof), well-formed xml and json
	for f in html svg speedscope trace; do
		"$SONDE" report --format "$f" t.sonde >"stdout.$f" 2>/dev/null || fail "$f on stdout"
		cmp -s "stdout.$f" "mine.$f" || fail "$f: -o and stdout differ"
		cmp -s "stdout.$f" "pub/new.$f" || fail "$f: -o into the sticky directory and stdout differ"
	done
	"$SONDE" diff --format svg t.sonde t.sonde >stdout.diff-svg 2>/dev/null || fail "diff svg on stdout"
	cmp -s stdout.diff-svg mine.diff-svg || fail "diff svg: -o and stdout differ"
	xmllint --noout mine.svg mine.diff-svg || fail "svg: not well-formed"
	python3 -c 'import json,sys; [json.load(open(a)) for a in sys.argv[1:]]' mine.speedscope mine.trace ||
		fail "speedscope, trace: not json"
	for f in pprof pprof-tree; do
		[ "$(head -c 2 "mine.$f" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "$f: not gzip"
		gzip -t <"mine.$f" || fail "$f: bad gzip"
	done
	# nothing but the files named above was left in the shared directory
	want=$(for f in $FORMATS; do printf '%s\n' "l.$f" "n.$f" "new.$f"; done | sort | tr '\n' ' ')
	got=$(ls -A pub | sort | tr '\n' ' ')
	[ "$got" = "$want" ] || fail "pub holds: $got, expected $want"
	# SONDE_MODE, less the umask, as for streams
	SONDE_MODE=group run report svg g.svg
	expect_rc 0 "SONDE_MODE=group"
	SONDE_MODE=world run report pprof w.pprof
	expect_rc 0 "SONDE_MODE=world"
	(umask 077 && SONDE_MODE=world report html u.html >/dev/null 2>&1) || fail "umask 077: status $?"
	[ "$(stat -c %a g.svg w.pprof u.html | tr '\n' ' ')" = "640 644 600 " ] ||
		fail "SONDE_MODE: $(stat -c '%n %a' g.svg w.pprof u.html)"
	# a link in a directory other users can change is not followed, even root's own
	mkdir -m 777 ww && chmod 777 ww && ln -s "$T/victim" ww/rootlink
	run report svg ww/rootlink
	expect_rc 3 "root's link in a world-writable directory"
	expect_err_line "sonde: ww/rootlink: cannot write: it is a symbolic link in a directory other users can change (sonde follows no link another user could have planted there: give -o the file's real path)"
	cmp -s victim victim.orig || fail "root's link in a world-writable directory: victim written"
	# a device is written as it is, never replaced (root's /dev/null, through root's link
	# /dev/stdout in a directory only root can change)
	run report svg /dev/null
	expect_rc 0 "-o /dev/null"
	[ -c /dev/null ] && [ "$(stat -c '%U %a' /dev/null)" = "root 666" ] || fail "/dev/null is now $(ls -l /dev/null)"
	"$SONDE" report --format svg -o /dev/stdout t.sonde 2>/dev/null >via-stdout.svg || fail "-o /dev/stdout: status $?"
	grep -q '</svg>' via-stdout.svg || fail "-o /dev/stdout: $(head -c 200 via-stdout.svg)"
	# an unprivileged user is refused root's file too, and writes its own, private
	nob "$SONDE" report --format svg -o pub/new.svg t.sonde >nb.out 2>nb.err
	[ $? -eq 3 ] || fail "nobody over root's file: status $? $(cat nb.err)"
	grep -qxF "sonde: pub/new.svg: cannot write: it is owned by uid 0, not by you (uid $NOBODY) (sonde writes through no link and over no file of another user: give -o another path)" nb.err ||
		fail "nobody over root's file: $(cat nb.err)"
	cmp -s stdout.svg pub/new.svg || fail "nobody changed root's pub/new.svg"
	nob "$SONDE" report --format svg -o pub/nb.svg t.sonde >nb.out 2>nb.err || fail "nobody's own -o: $(cat nb.err)"
	[ "$(stat -c '%U %a' pub/nb.svg)" = "nobody 600" ] || fail "nobody's file is $(stat -c '%U %a' pub/nb.svg)"
