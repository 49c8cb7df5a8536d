# The two commands of the README: `make serve` runs the service, `make test` runs the tests.
# Both create the virtual environment on first use.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python

.PHONY: serve test lint gpu-check

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

serve: $(VENV)/.installed
	$(VENV)/bin/graphgpu serve

test: $(VENV)/.installed
	$(PY) -m pytest

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .

gpu-check:
	bash bench/gpu_check.sh
