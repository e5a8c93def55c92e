# syntax=docker/dockerfile:1
# limitguard admission webhook image.
#   docker build -t ghcr.io/limitguard/limitguard:0.1.0 .
# Two stages: the builder turns the project and its dependencies into wheels; the final stage only
# installs those wheels (no compiler, no pip left behind) and runs as a non-root numeric user, so
# Kubernetes' runAsNonRoot can verify it without a name lookup.
ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
# webhook/_schemas is a symlink to ../schemas: both directories are needed to build the wheel.
COPY schemas ./schemas
COPY webhook ./webhook
RUN pip wheel --wheel-dir /wheels .

FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install --no-index --find-links=/wheels limitguard \
    && pip uninstall -y pip setuptools wheel \
    && groupadd --system --gid 65532 limitguard \
    && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin limitguard \
    && mkdir -p /etc/limitguard/tls
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["limitguard"]
CMD ["serve", "--config", "/etc/limitguard/config.yaml", "--cert-dir", "/etc/limitguard/tls", "--port", "8443"]
