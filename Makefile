# Two entry points, each installing what it needs into .venv first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# pytest-xdist's workers for the ordinary tests: two a core (`nproc`), four at the least. The
# ordinary tests wait about as long as they compute (servers started, PostgreSQL databases made,
# processes run): on 2 cores, 2 workers took 293 s of wall time for 194 s of CPU and 4 workers
# 193 s for the same CPU.
JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); n=$$((n * 2)); [ "$$n" -lt 4 ] && n=4; echo $$n)
# The ordinary tests on JOBS workers, a test file to a worker (its fixtures and doubles stay on one).
PARALLEL := -m "not slow" -n $(JOBS) --dist loadfile --durations=15
# The slow process tests (marked `slow`: `reviewer serve` processes, PostgreSQL clusters stopped and
# started, a browser, the wheel) mostly wait, so they get workers of their own, a file to a worker.
SLOW_JOBS ?= 3
SLOW := -m slow -n $(SLOW_JOBS) --dist loadfile --durations=15
# The parts that compute run at a lower priority than the slow tests, whose waits are bounded: a
# process test gets the CPU when it needs it, and the computing parts take what is left.
LOW := nice -n 10
# The tests' temporary files (git repositories, SQLite databases, indexes, PostgreSQL clusters: about
# 560 MB a run of the ordinary tests) on a RAM-backed file system when the machine has one with 4 GB
# free: on this disk every file the tests write, sync and remove is a write and a discard, and the
# ordinary tests took 160 and 174 s of wall time against 137 and 148 s on /dev/shm, runs taken in
# turns. Elsewhere TMPDIR is left as it is. TEST_TMPDIR= (empty) turns it off.
ifeq ($(origin TEST_TMPDIR),undefined)
TEST_TMPDIR := $(shell d=/dev/shm; [ -d $$d ] && [ -w $$d ] && \
	[ "$$(df -Pk $$d 2>/dev/null | awk 'NR == 2 {print $$4}')" -gt 4000000 ] 2>/dev/null && echo $$d/reviewer-tests)
endif
TESTENV := $(if $(TEST_TMPDIR),TMPDIR=$(TEST_TMPDIR))
# Every Python process of the tests caches its bytecode (the app's modules, the rewritten test
# files), even where the environment says not to: each of the suite's ~100 interpreters would
# otherwise compile them again.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install run demo test test-fast check tests tests-slow fuzz bench eval clean

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

# Three parts side by side: the checks (ruff, mypy, lint-imports), the ordinary tests in parallel,
# and the slow process tests on workers of their own. Each part's output is printed whole when it
# ends (-Otarget), every part runs whatever the others do (-k), and the target fails if any part
# fails. Each pytest run ends with its 15 slowest tests.
test: install
	@$(MAKE) --no-print-directory -k -j3 -Otarget check tests tests-slow

# The same without the slow process tests: for the edit-test loop. `make test` still runs everything.
test-fast: install
	@$(MAKE) --no-print-directory -k -j2 -Otarget check tests

check: install
	$(LOW) $(PY) -m ruff check bot tests bench scripts
	$(LOW) $(PY) -m mypy
	$(LOW) $(VENV)/bin/lint-imports

tests: install
	$(if $(TEST_TMPDIR),@mkdir -p $(TEST_TMPDIR))
	$(TESTENV) $(LOW) $(PY) -m pytest $(PARALLEL)

tests-slow: install
	$(if $(TEST_TMPDIR),@mkdir -p $(TEST_TMPDIR))
	$(TESTENV) $(PY) -m pytest $(SLOW)

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
