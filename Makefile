# Two entry points, each installing what it needs into .venv first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# pytest-xdist's workers for the ordinary tests: one a core (`nproc`), two at the least.
JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ "$$n" -lt 2 ] && n=2; echo $$n)
# The ordinary tests on JOBS workers, a test file to a worker (its fixtures and doubles stay on one).
PARALLEL := -m "not slow" -n $(JOBS) --dist loadfile

.PHONY: install run demo test test-fast fuzz bench eval clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

run: install
	$(PY) -m tests.support.demo

# What `make run` runs, kept up with the console: the installation's repositories, a learning and a
# failed review to look at, and a line `Console: URL`, a one-time link that signs a browser in
# (docs/quickstart.md). Serves until Ctrl-C.
demo: install
	$(PY) -m tests.support.demo --keep-running

# The ordinary tests in parallel, then the slow process tests (marked `slow`: `reviewer serve`
# processes, PostgreSQL clusters stopped and started, a browser, the wheel) alone, one at a time:
# their waits are bounded, and other workers' load would eat into them. Both parts always run;
# the target fails if either does.
test: install
	$(PY) -m ruff check bot tests bench scripts
	$(PY) -m mypy
	$(VENV)/bin/lint-imports
	status=0; \
	$(PY) -m pytest $(PARALLEL) || status=1; \
	$(PY) -m pytest -m slow || status=1; \
	exit $$status

# The same checks without the slow process tests (marked `slow`: a server process, a PostgreSQL
# restart, a browser, the wheel): for the edit-test loop. `make test` still runs everything.
test-fast: install
	$(PY) -m ruff check bot tests bench scripts
	$(PY) -m mypy
	$(VENV)/bin/lint-imports
	$(PY) -m pytest $(PARALLEL)

# The fuzz layer (tests marked `fuzz`) with a large random budget instead of `make test`'s small
# fixed one; failures are kept in .hypothesis/ and replayed first. FUZZ_EXAMPLES=N sets the budget.
fuzz: install
	HYPOTHESIS_PROFILE=fuzz $(PY) -m pytest -m fuzz

bench: install
	$(PY) bench/validate.py
	$(PY) bench/plan.py
	$(PY) bench/webhooks.py
	$(PY) bench/signin.py
	$(PY) bench/saml.py
	$(PY) bench/index.py
	$(PY) bench/context_quality.py
	$(PY) bench/context_repos.py --baseline-ref main
	$(PY) bench/review_cost.py
	$(PY) bench/jsonbody.py
	$(PY) bench/scale.py
	$(PY) bench/analyzers.py

# The starter corpus of `reviewer eval` (docs/eval.md): its repositories prepared under eval/repos/
# (from local copies under EVAL_MIRRORS, else GitHub; a repository neither gives is skipped, with a
# message), then every case reviewed with the providers of EVAL_ADMIN_CONFIG. EVAL_ARGS adds options:
# make eval EVAL_ARGS="--format markdown --jobs 2 --min-recall 0.3"
EVAL_ADMIN_CONFIG ?= eval/admin.example.yaml
EVAL_ARGS ?=
eval: install
	$(PY) scripts/eval_repos.py prepare eval/corpus
	$(VENV)/bin/reviewer eval eval/corpus --admin-config $(EVAL_ADMIN_CONFIG) $(EVAL_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info
