# Two commands matter: `make run` (set up and serve) and `make test` (set up and
# pass the tests). Everything else here is a step they share.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

# Test services: the machine's PostgreSQL and Redis (its last database number,
# so tests never touch a developer's queue). OMP_WAIT_POLICY=PASSIVE: each of
# the two pytest workers runs torch with a thread per core, and OpenMP's
# threads otherwise spin for their next task on the core the other worker
# needs (the plain-kernel doctests took 128 s with spinning, 77 s without).
TEST_ENV := DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
            REDIS_URL=redis://127.0.0.1:6379/15 \
            SECRET_KEY=test-only-secret-key DEBUG=0 SECURE_COOKIES=0 \
            OMP_WAIT_POLICY=PASSIVE

.PHONY: run test test-exhaustive venv assets client system-deps services lint format bench drill clean doctests-portable

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: requirements.txt requirements-dev.txt engine/pyproject.toml client/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --disable-pip-version-check -q -r requirements-dev.txt
	$(BIN)/python -m pip install --disable-pip-version-check -q --no-deps --no-build-isolation -e ./engine -e ./client
	$(BIN)/python -m grading_engine.reference.tokenizer
	touch $@

venv: $(VENV)/.installed

# Editor bundle, chart.js and htmx into static/vendor/ (gitignored), from the
# npm packages pinned in package-lock.json; rebuilt when the lock or the editor
# source changes. No stamp without a bundle, so installing node later rebuilds.
ASSETS := static/vendor/.built
$(ASSETS): package-lock.json static/js/editor.js scripts/build_assets.sh
	@bash scripts/build_assets.sh
	@if [ -f static/vendor/editor.js ]; then touch $@; fi

assets: $(ASSETS)

# The learner client as the site serves it (/client/ and the exercises API):
# the learner edition of the engine and the client as wheels, and each
# exercise's local-check bundle (docs/client.md). Rebuilt when the engine or
# the client changes.
CLIENT_DIST := var/client/manifest.json
$(CLIENT_DIST): $(VENV)/.installed engine/pyproject.toml client/pyproject.toml \
		$(shell find engine/grading_engine client/course -name '*.py')
	$(BIN)/python -m grading_engine.learner_edition var/client --client client

client: $(CLIENT_DIST)

system-deps:
	@bash scripts/system_deps.sh test

services:
	@bash scripts/services.sh

run: venv assets client
	@bash scripts/system_deps.sh run
	@DEBUG=1 bash scripts/run.sh $(HOST) $(PORT)

# glibc's malloc for the lesson doctests (not pytest, nor the benchmarks,
# which measure what production runs): no mmap for large blocks and no
# trimming, so a freed 150 MB tensor is reused instead of unmapped and faulted
# in afresh (zeroed by the kernel) by the next one. The same results, less
# system CPU: the float-noise mode's went from 37.7 s to 21.4 s. Not in
# pytest: its processes then keep their peak memory (21.7 GB used at the peak
# beside a CPU hog, where a sandboxed job went over half its CPU budget;
# docs/testing.md, session 6). Sandboxed jobs never inherit it (--clearenv).
DOCTEST_MALLOC := MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=17179869184 \
                  MALLOC_TOP_PAD_=268435456

# Every stage timed, the times printed at the end (scripts/test_stages.sh).
test:
	@$(TEST_ENV) MAKE="$(MAKE)" DOCTEST_MALLOC="$(DOCTEST_MALLOC)" PYTEST_ARGS="$(PYTEST_ARGS)" bash scripts/test_stages.sh

# The brute-force tier: what `make test` proves structurally (a property of a
# case generator, a runner's equivalence, verdicts under load), proved again
# case by case. Not run by CI; docs/testing.md says what each tier proves.
test-exhaustive: venv assets system-deps services
	$(TEST_ENV) $(BIN)/python -m pytest -n 2 --dist loadgroup --exhaustive -m exhaustive $(PYTEST_ARGS)

# The lesson doctests, as other machines would compute them, in the two
# portable modes side by side (scripts/doctests_portable.sh says which and why).
doctests-portable: venv
	@$(TEST_ENV) DOCTEST_MALLOC="$(DOCTEST_MALLOC)" bash scripts/doctests_portable.sh

# The benchmarks in full: figures are printed, never asserted.
bench: venv system-deps services
	$(TEST_ENV) $(BIN)/python benchmarks/sandbox_bench.py
	$(TEST_ENV) $(BIN)/python benchmarks/pipeline_bench.py
	$(TEST_ENV) $(BIN)/python benchmarks/page_bench.py
	$(TEST_ENV) $(BIN)/python benchmarks/surge_bench.py
	$(TEST_ENV) $(BIN)/python benchmarks/stream_bench.py

# The deadline drill in full: 1,000 Locust learners through nginx, 2 web
# processes and 2 workers, with faults on a schedule (benchmarks/deadline_drill.py).
drill: venv assets system-deps services
	$(TEST_ENV) $(BIN)/python benchmarks/deadline_drill.py

lint: venv
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/lint-imports

format: venv
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) staticfiles db.sqlite3 .pytest_cache node_modules static/vendor var
