#!/bin/bash
# Makes the npm packages the consumer checks need (the real speedscope app and
# playwright-core, which drives Debian's chromium; never a downloaded browser)
# available, and prints the directory whose node_modules holds them.
# usage: npm.sh           -> prints DIR, exit 0
#        exit 77 (skip) with one line on stderr when node, npm, chromium or the
#        packages cannot be had here (no npm registry and nothing cached).
# The packages go to $SONDE_NPM_DIR (default /var/cache/sonde-test-npm, or
# ~/.cache/sonde-test-npm when that is not writable), so a fresh clone on the
# same machine reuses them; npm's own cache lets an offline machine install
# what it installed before.
set -u
pkgs="speedscope@1.25.0 playwright-core@1.65.1"
skip() { echo "sonde-test: $* (skipped)" >&2; exit 77; }
command -v node >/dev/null || skip "node not installed (.ci/deps installs nodejs)"
command -v npm >/dev/null || skip "npm not installed (.ci/deps installs npm)"
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || skip "chromium not installed (.ci/deps installs chromium)"
dir=${SONDE_NPM_DIR:-/var/cache/sonde-test-npm}
if ! mkdir -p "$dir" 2>/dev/null || [ ! -w "$dir" ]; then
	dir=$HOME/.cache/sonde-test-npm
	mkdir -p "$dir" || skip "cannot create $dir"
fi
have() { [ -f "$dir/node_modules/speedscope/dist/release/index.html" ] &&
	[ -f "$dir/node_modules/playwright-core/package.json" ]; }
if ! have; then
	# one installer at a time (ctest runs several consumer tests at once); an attempt
	# that failed in the last 10 minutes is not made again (the tests that call this
	# have 60 s each: an unreachable registry must fail fast, and once)
	exec 9>"$dir/.lock"
	flock 9
	failed=$(find "$dir/.unavailable" -mmin -10 2>/dev/null)
	[ -n "$failed" ] && skip "npm packages $pkgs not installable here: $(cat "$dir/.unavailable")"
	if ! have; then
		[ -f "$dir/package.json" ] || echo '{"name":"sonde-test-consumers","private":true}' >"$dir/package.json"
		if ! (cd "$dir" && timeout 40 npm install --prefer-offline --no-audit --no-fund \
			--fetch-timeout=10000 --fetch-retries=1 --fetch-retry-mintimeout=2000 \
			--fetch-retry-maxtimeout=5000 \
			--loglevel=error $pkgs) >"$dir/install.log" 2>&1; then
			why="no npm registry and nothing cached ($(grep -m 1 -E 'npm (error|ERR)' "$dir/install.log" || tail -n 1 "$dir/install.log"))"
			echo "$why" >"$dir/.unavailable"
			skip "npm packages $pkgs not installable here: $why"
		fi
		rm -f "$dir/.unavailable"
	fi
	exec 9>&-
fi
have || skip "npm packages missing in $dir"
echo "$dir"
