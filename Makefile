# The two commands that matter: `make demo` (the main job) and `make test` (the whole suite).
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install test

install: $(STAMP)

# torch==2.13.0 first: it is the CPU build on this machine's disk; any other spec pulls a multi-GB CUDA build.
$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[dev,baselines]"
	touch $(STAMP)

test: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/pytest
