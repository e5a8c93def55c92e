#!/usr/bin/env bash
# `make image-test`: build the image (scripts/build-image.sh), then run it as its own non-root user
# (uid 65532) and check what a user first meets: `--version`, then `serve` on the demo cluster over
# real TLS, `/healthz`, and one AdmissionReview (the demo's binding that must be denied).
# Needs podman or buildah (no daemon); docker works too when its engine runs. Not part of `make test`.
#
# usage: scripts/image-test.sh [IMAGE]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
IMAGE="${1:-${IMAGE:-limitguard.local/limitguard:dev}}"
LIMITGUARD="${LIMITGUARD:-$ROOT/.venv/bin/limitguard}"
fail() { echo "image-test: FAIL: $*" >&2; exit 1; }

bash "$ROOT/scripts/build-image.sh" "$IMAGE"
builder="${BUILDER:-}"
if [ -z "$builder" ]; then
    for candidate in podman buildah docker; do
        command -v "$candidate" >/dev/null 2>&1 || continue
        [ "$candidate" = docker ] && ! docker info >/dev/null 2>&1 && continue
        builder="$candidate"; break
    done
fi
[ -n "$builder" ] || fail "no podman, buildah or running docker to run the image with"

WORK="$(mktemp -d)"
container=""
server=""
cleanup() {
    if [ -n "$server" ]; then kill -TERM -- "-$server" 2>/dev/null; wait "$server" 2>/dev/null || true; fi
    if [ "$builder" = buildah ] && [ -n "$container" ]; then buildah rm "$container" >/dev/null 2>&1 || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# The serving pair for the Service limitguard.default; the key readable by the image's user only.
"$LIMITGUARD" certs --service limitguard --namespace default --out "$WORK/certs" >/dev/null
chmod 0755 "$WORK" "$WORK/certs"
if [ "$(id -u)" = 0 ]; then chown -R 65532:65532 "$WORK/certs"; else chmod a+r "$WORK/certs/tls.key"; fi
cp "$ROOT/webhook/limitguard/demo/config.yaml" "$ROOT/webhook/limitguard/demo/cluster.yaml" "$WORK/"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
mounts=(-v "$WORK/config.yaml:/etc/limitguard/config.yaml:ro" -v "$WORK/certs:/etc/limitguard/tls:ro"
        -v "$WORK/cluster.yaml:/demo/cluster.yaml:ro")
serve=(serve --config /etc/limitguard/config.yaml --cert-dir /etc/limitguard/tls --cluster /demo/cluster.yaml
       --host 127.0.0.1 --port "$port")

run() {  # run ARGS...: the image's entrypoint with ARGS, as the image's own user, on the host network
    case "$builder" in
        buildah)
            [ -n "$container" ] || container="$(buildah from -q "$IMAGE")"
            buildah run --isolation "${BUILDAH_ISOLATION:-chroot}" --network host "${mounts[@]}" \
                "$container" -- /opt/limitguard/bin/limitguard "$@" ;;
        *) "$builder" run --rm --network host "${mounts[@]}" "$IMAGE" "$@" ;;
    esac
}

user="$(case "$builder" in buildah) buildah inspect --type image --format '{{.OCIv1.Config.User}}' "$IMAGE" ;;
        *) "$builder" image inspect --format '{{.Config.User}}' "$IMAGE" ;; esac)"
[ "$user" = "65532:65532" ] || fail "the image runs as '$user', not 65532:65532"
if [ "$builder" = buildah ]; then
    # buildah run does not apply the image's USER by itself.
    mounts+=(--user 65532:65532)
fi

expected="limitguard $(sed -n 's/^version = "\(.*\)"$/\1/p' "$ROOT/pyproject.toml" | head -1)"
got="$(run --version)"
[ "$got" = "$expected" ] || fail "--version printed '$got', expected '$expected'"
echo "image-test: --version: $got (as uid 65532)"

set -m  # the server gets its own process group, so cleanup stops the builder's helpers with it
run "${serve[@]}" > "$WORK/serve.log" 2>&1 &
server=$!
set +m
curl_args=(--silent --show-error --cacert "$WORK/certs/ca.crt"
           --resolve "limitguard.default.svc:$port:127.0.0.1")
for _ in $(seq 1 120); do
    curl "${curl_args[@]}" -o /dev/null "https://limitguard.default.svc:$port/healthz" 2>/dev/null && break
    kill -0 "$server" 2>/dev/null || { cat "$WORK/serve.log" >&2; fail "serve exited"; }
    sleep 0.5
done
health="$(curl "${curl_args[@]}" "https://limitguard.default.svc:$port/healthz")" \
    || { cat "$WORK/serve.log" >&2; fail "/healthz did not answer"; }
echo "image-test: /healthz: $health"
answer="$(curl "${curl_args[@]}" -H 'Content-Type: application/json' \
    --data @"$ROOT/webhook/limitguard/demo/binding-pod5-node1.json" "https://limitguard.default.svc:$port/validate")"
python3 - "$answer" <<'PY' || fail "the demo binding was not denied: $answer"
import json, sys
response = json.loads(sys.argv[1])["response"]
assert response["allowed"] is False, response
print("image-test: /validate: denied,", response["status"]["message"][:100])
PY
echo "image-test: PASS ($IMAGE, run with $builder)"
