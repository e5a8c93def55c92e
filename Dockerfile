# syntax=docker/dockerfile:1
# limitguard admission webhook image. Build with `make image` (docker, podman or buildah), or e.g.
#   docker build -t limitguard:dev .
# docs/install.md shows loading it into a kind cluster and installing the chart with it.
#
# Two stages: the builder turns the project and its dependencies into wheels; the final stage only
# installs those wheels (no compiler, no pip left behind) and runs as a non-root numeric user, so
# Kubernetes' runAsNonRoot can verify it without a name lookup.
#
# The base is pinned by digest (the multi-architecture index of python:3.11-slim, Python 3.11.16 on
# Debian trixie), so a rebuild gets the same base until someone moves the pin on purpose. Override
# with --build-arg PYTHON_IMAGE=... (e.g. a mirror of the same image).
ARG PYTHON_IMAGE=python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
# webhook/_schemas is a symlink to ../schemas: both directories are needed to build the wheel.
COPY schemas ./schemas
COPY webhook ./webhook
RUN pip wheel --wheel-dir /wheels .

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
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install --no-index --find-links=/wheels kube-limitguard \
    && pip uninstall -y pip setuptools wheel \
    && groupadd --system --gid 65532 limitguard \
    && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin limitguard \
    && mkdir -p /etc/limitguard/tls
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["limitguard"]
# The Helm chart mounts both paths. Without it: -v $PWD/config.yaml:/etc/limitguard/config.yaml:ro and
# -v $PWD/certs:/etc/limitguard/tls:ro (from `limitguard certs`); `serve` names them when missing.
CMD ["serve", "--config", "/etc/limitguard/config.yaml", "--cert-dir", "/etc/limitguard/tls", "--port", "8443"]
