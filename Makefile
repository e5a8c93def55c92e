# Everything a fresh machine needs: `make run` and `make test` create the virtualenv themselves.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
TOOLS  := .tools/bin
HOST   ?= 127.0.0.1
PORT   ?= 8443

.PHONY: run test lint bench tools clean

$(BIN)/limitguard: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e .
	@touch $@

$(VENV)/.test-deps: $(BIN)/limitguard
	$(BIN)/pip install -q -e '.[test]'
	@touch $@

run: $(BIN)/limitguard
	$(BIN)/limitguard serve --demo --cert-dir certs --host $(HOST) --port $(PORT)

tools: $(TOOLS)/helm $(TOOLS)/kubectl

$(TOOLS)/helm $(TOOLS)/kubectl: scripts/fetch-tools.sh
	bash scripts/fetch-tools.sh $(TOOLS)

test: $(VENV)/.test-deps tools
	$(BIN)/ruff check webhook tests bench
	PATH="$(CURDIR)/$(TOOLS):$$PATH" $(BIN)/python -m pytest

bench: $(VENV)/.test-deps
	$(BIN)/python bench/admission.py

clean:
	rm -rf $(VENV) .tools build *.egg-info
