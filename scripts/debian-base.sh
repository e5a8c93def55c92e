#!/usr/bin/env bash
# Build a Python base image from Debian's own packages, for machines that reach Debian's archive
# but not a container registry (`make image` falls back to it when the default base cannot be
# pulled). debootstrap makes a minimal bookworm root file system with python3 (3.11) and
# python3-venv; docs, manuals, locales and apt's lists are removed; the tree becomes a one-layer
# image (FROM scratch + ADD).
#
# usage: scripts/debian-base.sh BUILDER IMAGE     (BUILDER: docker, podman or buildah)
# needs: debootstrap (Debian package debootstrap) and root (debootstrap chroots).
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 BUILDER IMAGE" >&2; exit 2; }
BUILDER="$1"; IMAGE="$2"
SUITE="${DEBIAN_SUITE:-bookworm}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

command -v debootstrap >/dev/null 2>&1 || {
    echo "debian-base: debootstrap is not installed (apt-get install debootstrap), so no base image" \
         "can be built from Debian's packages" >&2
    exit 3
}
[ "$(id -u)" = 0 ] || { echo "debian-base: debootstrap needs root" >&2; exit 3; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
echo "debian-base: debootstrap $SUITE (minbase + python3, python3-venv) from $MIRROR"
debootstrap --variant=minbase --include=python3,python3-venv "$SUITE" "$WORK/rootfs" "$MIRROR" \
    > "$WORK/debootstrap.log" 2>&1 || { tail -20 "$WORK/debootstrap.log" >&2; exit 1; }
rm -rf "$WORK"/rootfs/usr/share/{doc,man,info,locale}/* "$WORK"/rootfs/var/lib/apt/lists/* \
       "$WORK"/rootfs/var/cache/apt/*.bin "$WORK"/rootfs/var/cache/apt/archives/*.deb \
       "$WORK"/rootfs/var/log/*.log "$WORK"/rootfs/tmp/*
tar -C "$WORK/rootfs" --numeric-owner -cf "$WORK/rootfs.tar" .
cat > "$WORK/Containerfile" <<CONTAINERFILE
FROM scratch
ADD rootfs.tar /
LABEL org.opencontainers.image.description="python3 from Debian $SUITE packages (debootstrap minbase)"
CMD ["python3"]
CONTAINERFILE
case "$BUILDER" in
    docker) docker build -q -t "$IMAGE" "$WORK" ;;
    podman) podman build -q -t "$IMAGE" "$WORK" ;;
    buildah) buildah build -q -t "$IMAGE" "$WORK" ;;
esac >/dev/null
echo "debian-base: built $IMAGE (python $(chroot "$WORK/rootfs" python3 -c 'import platform; print(platform.python_version())'))"
