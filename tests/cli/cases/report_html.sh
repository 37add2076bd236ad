# analyze.cli.report_html: sourced by ../test_cli.sh (its helpers: run, expect_*, mk, fail)
	# --format html: one self-contained page of the report's own views. Without a
	# browser: its sections, the flame graph inside it being the svg view, its tables
	# being the csv views (functions, threads, regions, each annotation, spread), the
	# notes, no external reference, -o and the usage errors. In headless chromium
	# (tests/consumers/html_check.mjs): it renders without errors or requests, the
	# functions table shows the csv's rows, the flame graph draws and zooms; a screenshot
	# goes to build/test-artifacts/html/.
	mk ctx c.sonde
	run "$SONDE" report --format html -o c.html c.sonde
	expect_rc 0 "html"
	expect_file "$T/out" <<'EOF2'
sonde: report page written to c.html (open it in a browser)
EOF2
	"$SONDE" report --format html c.sonde >stdout.html 2>/dev/null
	cmp -s stdout.html c.html || fail "-o and stdout differ"
	! grep -qiE '(src|href)="(https?:|//)' c.html || fail "an external reference: $(grep -oiE '(src|href)="(https?:|//)[^"]*' c.html | head -3)"
	"$SONDE" report --format svg c.sonde >c.svg 2>/dev/null
	"$SONDE" report --format csv c.sonde >flat.csv 2>/dev/null
	"$SONDE" report --view threads --format csv c.sonde >threads.csv 2>/dev/null
	"$SONDE" report --view regions --format csv c.sonde >regions.csv 2>/dev/null
	"$SONDE" report --group-by phase --format csv c.sonde >phase.csv 2>/dev/null
	"$SONDE" report --stats thread --format csv c.sonde >spread.csv 2>/dev/null
	# each table of the page against its view's csv, the flame graph against the svg
	python3 - c.html <<'PY' || fail "page against the views"
import base64, csv, html.parser, sys
class P(html.parser.HTMLParser):
    def __init__(s):
        super().__init__(); s.t = {}; s.h = None; s.cur = None; s.cell = None; s.sec = []; s.frame = None; s.text = ''
    def handle_starttag(s, tag, a):
        a = dict(a)
        if tag == 'section': s.sec.append(a.get('id'))
        if tag == 'h3': s.text = ''; s.cell = 'h3'
        if tag == 'table' and s.h: s.cur = []; s.t[s.h] = s.cur
        if tag == 'tr' and s.cur is not None: s.cur.append([])
        if tag in ('td', 'th') and s.cur is not None: s.cell = ''
        if tag == 'iframe': s.frame = a['src']
    def handle_endtag(s, tag):
        if tag == 'h3': s.h = s.text; s.cell = None
        if tag in ('td', 'th') and s.cur is not None: s.cur[-1].append(s.cell); s.cell = None
        if tag == 'table': s.cur = None; s.h = None
    def handle_data(s, d):
        if s.cell == 'h3': s.text += d
        elif s.cell is not None and s.cur is not None: s.cell += d
p = P(); p.feed(open(sys.argv[1]).read())
def rows(f):
    r = [r for r in csv.reader(open(f))]
    # the page shows csv's nanoseconds (first_ns, last_ns) in ms, as text reports do
    ns = [i for i, h in enumerate(r[0]) if h.endswith('_ns')] if r else []
    for i in ns:
        r[0][i] = r[0][i][:-3] + '_ms'
        for row in r[1:]:
            row[i] = '%.3f' % (int(row[i]) / 1e6) if row[i] else row[i]
    return r
want = {'Top functions (self, and total with callees)': 'flat.csv', 'Samples per thread': 'threads.csv',
        'Regions (calls, inclusive and exclusive time)': 'regions.csv', 'By phase': 'phase.csv',
        'Spread across threads (each function\'s self per thread)': 'spread.csv'}
bad = 0
for h, f in want.items():
    if p.t.get(h) != rows(f):
        print('table %r: %r against %s %r' % (h, p.t.get(h), f, rows(f)), file=sys.stderr); bad = 1
for s in ('run', 'flame', 'functions', 'threads', 'regions', 'annotations', 'spread'):
    if s not in p.sec: print('no section', s, file=sys.stderr); bad = 1
pre = 'data:image/svg+xml;base64,'
if not p.frame or not p.frame.startswith(pre) or base64.b64decode(p.frame[len(pre):]) != open('c.svg', 'rb').read():
    print('the flame graph is not the svg view', file=sys.stderr); bad = 1
sys.exit(bad)
PY
	# the region timeline: one rectangle per region call, as the trace's region slices
	mk timeline tl.sonde
	"$SONDE" report --format html tl.sonde >tl.html 2>/dev/null || fail "html of the timeline stream"
	"$SONDE" report --format trace tl.sonde 2>/dev/null | python3 -c '
import json, sys
for e in json.load(sys.stdin)["traceEvents"]:
    if e.get("ph") == "X" and e.get("tid", 0) >= 1000000000:
        print("%s: %.3f ms from %.3f ms" % (e["name"], e["dur"] / 1e3, e["ts"] / 1e3))' | sort >want.tl
	grep -o '<title>[^<]*</title></rect>' tl.html | sed 's/<title>//; s/ (forced end)//; s/<\/title><\/rect>//' | sort >got.tl
	[ -s want.tl ] && cmp -s want.tl got.tl || fail "region timeline: $(tr '\n' '|' <got.tl) against the trace's $(tr '\n' '|' <want.tl)"
	grep -q '>Timeline of the region calls<' tl.html || fail "no timeline heading"
	# the notes of the run: the flat stream's drops and mixed periods
	mk flat a.sonde
	"$SONDE" report --format html a.sonde >a.html 2>a.err || fail "html of the flat stream"
	[ ! -s a.err ] || fail "html: stderr $(cat a.err)"
	grep -qF '<span class="warn">sonde: warning: 4 of 104 samples dropped' a.html || fail "html: no drops note"
	grep -qF 'sonde: note: showing source cpu-time only' a.html || fail "html: no picked-source note"
	! grep -q 'id="regions"' a.html || fail "a regions section without region records"
	# --where and --top apply to every table
	"$SONDE" report --format html --where phase=solve --top 1 c.sonde >w.html 2>/dev/null
	"$SONDE" report --format csv --where phase=solve --top 1 c.sonde >w.csv 2>/dev/null
	python3 -c '
import sys, re
h = open("w.html").read()
i = h.index("Top functions")
print(re.findall(r"<td[^>]*>([^<]*)</td>", h[i:])[0])' >w.first
	[ "$(cat w.first)" = "$(sed -n 2p w.csv | cut -d, -f1)" ] || fail "--where/--top: $(cat w.first) against $(sed -n 2p w.csv)"
	# a value of 18000 characters is shown whole in its table (the page once read its
	# tables back from csv through a 4 KiB buffer: 4095 characters shown)
	LONG=$(head -c 18000 /dev/zero | tr '\0' v)
	mk ctx long.sonde --evil "$LONG"
	"$SONDE" report --format html long.sonde >long.html 2>/dev/null || fail "html of a long value"
	python3 -c '
import re, sys
cells = re.findall(r"<td[^>]*>(v+)</td>", open("long.html").read())
sys.exit(0 if cells and max(map(len, cells)) == 18000 else "longest v cell: %d" % max(map(len, cells or [""])))' ||
		fail "html: the 18000-character value is not shown whole"
	# usage
	run "$SONDE" report --format html --view threads c.sonde
	expect_rc 2 "html with --view"
	expect_err_line "sonde: report: --format html is a page of its own views (use it without --view, --group-by or --stats; --where, --source, --metric and --top apply)"
	run "$SONDE" report --format html -o /nonexistent/dir/x.html c.sonde
	expect_rc 3 "html: unwritable"
	expect_err_line "sonde: /nonexistent/dir/x.html: cannot write: No such file or directory (check the path and its directory)"
	run "$SONDE" diff --format html c.sonde c.sonde
	expect_rc 2 "diff html"
	# the real consumer: headless chromium
	NPM=$(bash "$CONSUMERS/npm.sh") || exit 77
	SHOTS=$(cd "$(dirname "$SONDE")" && pwd)/test-artifacts/html
	mkdir -p "$SHOTS"
	node "$CONSUMERS/html_check.mjs" "$NPM" c.html flat.csv "$SHOTS/ctx.png" >check.out 2>&1 ||
		{ cat check.out >&2; fail "html_check"; }
	# the check fails on a page that differs from the csv
	sed 's/>mk_beta</>mk_betx</' c.html >bad.html
	node "$CONSUMERS/html_check.mjs" "$NPM" bad.html flat.csv "$SHOTS/bad.png" >check.out 2>&1 && fail "html_check passed a wrong row"
	grep -q "FAIL bad.html: Top functions row 1" check.out || fail "html_check on a wrong row: $(cat check.out)"
