#!/usr/bin/env bash
# Build the limitguard image with whichever builder works here: docker, then podman, then buildah
# (BUILDER=docker|podman|buildah picks one). `make image` runs this; docs/install.md explains the
# rest (loading the image into kind, installing the chart with it).
#
# The base: PYTHON_IMAGE=... when set; else the Dockerfile's pinned python:3.11-slim when it can be
# pulled; else (a machine that reaches Debian's archive but no registry) a base built from Debian's
# packages by scripts/debian-base.sh, tagged $DEBIAN_BASE and reused by later builds.
# pip inside the build trusts the CA bundle pip is configured with here (PIP_CERT or pip's `cert`
# setting), passed as the build secret `pipcert`, for machines behind a TLS-inspecting proxy.
#
# usage: scripts/build-image.sh [IMAGE]     (default IMAGE: limitguard.local/limitguard:dev)
# exit:  0 built; 3 no usable builder or base (the message says what to install); other: the build failed
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
IMAGE="${1:-${IMAGE:-limitguard.local/limitguard:dev}}"
BUILDER="${BUILDER:-auto}"

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$ROOT/pyproject.toml" | head -1)"
revision="$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
created="$(date -u +%Y-%m-%dT%H:%M:%SZ)"

notes=()
usable() {  # usable NAME: the builder is installed and can build right now
    local name="$1" out
    if ! command -v "$name" >/dev/null 2>&1; then
        notes+=("$name: not installed")
        return 1
    fi
    case "$name" in
        docker) out="$(docker info --format '{{.ServerVersion}}' 2>&1)" ;;
        podman) out="$(podman info --format '{{.Version.Version}}' 2>&1)" ;;
        buildah) out="$(buildah version 2>&1)" ;;
    esac || {
        notes+=("$name: installed, but cannot build here: $(printf '%s\n' "$out" | grep -v '^[[:space:]]*$' | tail -1)")
        return 1
    }
    return 0
}

chosen=""
if [ "$BUILDER" = auto ]; then
    for candidate in docker podman buildah; do
        if usable "$candidate"; then chosen="$candidate"; break; fi
    done
else
    case "$BUILDER" in docker|podman|buildah) ;; *) echo "build-image: BUILDER must be docker, podman or buildah" >&2; exit 2 ;; esac
    usable "$BUILDER" && chosen="$BUILDER"
fi

if [ -z "$chosen" ]; then
    {
        echo "build-image: no usable image builder found, so no image was built:"
        for note in "${notes[@]}"; do echo "  - $note"; done
        echo "Install one of them and run \`make image\` again:"
        echo "  - Docker Engine or Docker Desktop (with its daemon running)"
        echo "  - podman:  apt-get install podman    (Debian/Ubuntu; dnf install podman on Fedora)"
        echo "  - buildah: apt-get install buildah   (Debian/Ubuntu; dnf install buildah on Fedora)"
        echo "Or build elsewhere and load the image into your cluster; see docs/install.md."
    } >&2
    exit 3
fi

# -- the base ----------------------------------------------------------------------------------------
DEFAULT_BASE="$(sed -n 's/^ARG PYTHON_IMAGE=//p' "$ROOT/Dockerfile" | head -1)"
DEBIAN_BASE="${DEBIAN_BASE:-limitguard.local/python:3.11-bookworm}"
have_image() {
    case "$chosen" in
        buildah) buildah inspect --type image "$1" >/dev/null 2>&1 ;;
        *) "$chosen" image inspect "$1" >/dev/null 2>&1 ;;
    esac
}
base="${PYTHON_IMAGE:-}"
if [ -z "$base" ]; then
    if have_image "$DEFAULT_BASE" || "$chosen" pull -q "$DEFAULT_BASE" >/dev/null 2>&1; then
        base="$DEFAULT_BASE"
    elif have_image "$DEBIAN_BASE"; then
        echo "build-image: $DEFAULT_BASE cannot be pulled here; using $DEBIAN_BASE (built from Debian's packages)"
        base="$DEBIAN_BASE"
    else
        echo "build-image: $DEFAULT_BASE cannot be pulled here; building a base from Debian's packages"
        bash "$ROOT/scripts/debian-base.sh" "$chosen" "$DEBIAN_BASE"
        base="$DEBIAN_BASE"
    fi
fi

args=(-t "$IMAGE" -f "$ROOT/Dockerfile" --build-arg "PYTHON_IMAGE=$base"
      --build-arg "VERSION=$version" --build-arg "REVISION=$revision" --build-arg "CREATED=$created")
pip_cert="${PIP_CERT:-$(python3 -m pip config get global.cert 2>/dev/null || true)}"
[ -n "$pip_cert" ] && [ -s "$pip_cert" ] && args+=(--secret "id=pipcert,src=$pip_cert")
echo "build-image: building $IMAGE on $base with $chosen (version $version, revision $revision)"
case "$chosen" in
    docker) DOCKER_BUILDKIT=1 docker build "${args[@]}" "$ROOT" ;;
    podman) podman build "${args[@]}" "$ROOT" ;;
    # chroot isolation: no OCI runtime needed, so it builds inside unprivileged containers too.
    buildah) buildah build --isolation "${BUILDAH_ISOLATION:-chroot}" "${args[@]}" "$ROOT" ;;
esac

size="$("$chosen" images --format '{{.Size}}' "$IMAGE" 2>/dev/null | head -1 || true)"
echo "build-image: built $IMAGE${size:+ ($size)}"
echo "Load it into a kind cluster (docs/install.md):"
case "$chosen" in
    docker) echo "  kind load docker-image $IMAGE" ;;
    podman) echo "  podman save -o limitguard-image.tar $IMAGE && kind load image-archive limitguard-image.tar" ;;
    buildah) echo "  buildah push $IMAGE docker-archive:limitguard-image.tar:$IMAGE && kind load image-archive limitguard-image.tar" ;;
esac
