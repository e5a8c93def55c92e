#!/usr/bin/env bash
# Rewrite constraints.txt from a fresh virtualenv holding the newest releases of every dependency
# (runtime and test), keeping the file's header. `make constraints` runs it; review the diff, run
# `make test`, and commit the file on purpose.
#
# usage: scripts/update-constraints.sh [PYTHON]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${1:-python3}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

"$PYTHON" -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q --upgrade pip setuptools
"$WORK/venv/bin/pip" install -q "$ROOT[test]"
{
    sed -n '/^#/p;/^$/q' "$ROOT/constraints.txt" | sed '/^# the build backend/d'
    "$WORK/venv/bin/pip" list --format=freeze | grep -E '^(pip|setuptools)==' | sort -r \
        | sed 's/^setuptools==/# the build backend, for the isolated build of limitguard itself (pyproject.toml build-system)\nsetuptools==/'
    "$WORK/venv/bin/pip" freeze --exclude-editable | grep -v -E '^(kube-limitguard|-e |#)'
} > "$ROOT/constraints.txt.new"
mv "$ROOT/constraints.txt.new" "$ROOT/constraints.txt"
echo "update-constraints: constraints.txt rewritten; review with: git diff constraints.txt"
