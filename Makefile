# Two entry points, each installing what it needs into .venv first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: install run test bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

run: install
	$(PY) -m tests.demo

test: install
	$(PY) -m ruff check bot tests bench scripts
	$(PY) -m pytest

bench: install
	$(PY) bench/validate.py
	$(PY) bench/plan.py
	$(PY) bench/webhooks.py
	$(PY) bench/signin.py
	$(PY) bench/saml.py
	$(PY) bench/index.py
	$(PY) bench/context_quality.py

clean:
	rm -rf $(VENV) build *.egg-info
