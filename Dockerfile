# syntax=docker/dockerfile:1
# limitguard admission webhook image. Build with `make image` (docker, podman or buildah), or e.g.
#   docker build -t limitguard:dev .
# docs/install.md shows loading it into a kind cluster and installing the chart with it.
#
# Two stages: the builder installs the project and its dependencies (the versions pinned in
# constraints.txt) into a virtualenv at /opt/limitguard and prunes what limitguard never imports;
# the final stage copies that virtualenv onto the same base (no compiler, no pip) and runs as a
# non-root numeric user, so Kubernetes' runAsNonRoot can verify it without a name lookup.
#
# The default base is pinned by digest (the multi-architecture index of python:3.11-slim, Python
# 3.11.16 on Debian trixie), so a rebuild gets the same base until someone moves the pin on purpose.
# Override with --build-arg PYTHON_IMAGE=...: any image with python3 (3.11+) and its venv module,
# e.g. the one scripts/debian-base.sh builds from Debian's packages where no registry is reachable
# (`make image` does that by itself when the default cannot be pulled).
ARG PYTHON_IMAGE=python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md LICENSE constraints.txt ./
COPY webhook ./webhook
# A machine behind a TLS-inspecting proxy passes its CA bundle as the build secret `pipcert`
# (scripts/build-image.sh does when pip is configured with one). Pruned afterwards: the kubernetes
# client's asyncio copy (kubernetes.aio, 68 MB: limitguard talks to the apiserver on its own aiohttp
# session) and the test suites that numpy ships.
RUN --mount=type=secret,id=pipcert \
    if [ -s /run/secrets/pipcert ]; then export PIP_CERT=/run/secrets/pipcert; fi \
    && python3 -m venv /opt/limitguard \
    && PIP_CONSTRAINT=/src/constraints.txt /opt/limitguard/bin/pip install --quiet /src \
    && /opt/limitguard/bin/pip uninstall --quiet -y pip setuptools \
    && site="$(/opt/limitguard/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
    && rm -rf "$site/kubernetes/aio" "$site"/numpy/tests "$site"/numpy/*/tests \
    && /opt/limitguard/bin/limitguard --version

FROM ${PYTHON_IMAGE}
# Set by `make image` and the release workflow; the defaults describe a local build.
# (PYTHON_IMAGE is declared again so this stage can read it for the base.name label.)
ARG PYTHON_IMAGE
ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="limitguard" \
      org.opencontainers.image.description="Kubernetes admission webhook keeping summed container limits within allocatable x ratio" \
      org.opencontainers.image.source="https://github.com/limitguard/limitguard" \
      org.opencontainers.image.url="https://github.com/limitguard/limitguard" \
      org.opencontainers.image.documentation="https://github.com/limitguard/limitguard/blob/main/docs/install.md" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.vendor="limitguard" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="${PYTHON_IMAGE}"
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/limitguard/bin:$PATH
COPY --from=builder /opt/limitguard /opt/limitguard
RUN groupadd --system --gid 65532 limitguard \
    && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin limitguard \
    && mkdir -p /etc/limitguard/tls
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["limitguard"]
# The Helm chart mounts both paths. Without it: -v $PWD/config.yaml:/etc/limitguard/config.yaml:ro and
# -v $PWD/certs:/etc/limitguard/tls:ro (from `limitguard certs`); `serve` names them when missing.
CMD ["serve", "--config", "/etc/limitguard/config.yaml", "--cert-dir", "/etc/limitguard/tls", "--port", "8443"]
