# Steward — set-up, run and test. Every target installs what it needs first.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: docs install install-runtime test check lint typecheck unit fast smoke demo demo-all serve worker run sandbox bench clean \
	redis lock lint-deploy test-deploy

# requirements.lock pins the runtime dependencies to the versions the tests ran with; the venv is held
# to it (-c) so that `make test` tests what the Docker image and the systemd install ship.
LOCK   := requirements.lock

# Two stamps: the runtime alone (what `make demo`, `run`, `serve`, `worker` and `sandbox` need: seconds), and
# the runtime with the test toolchain (the `test` extra: pytest, hypothesis, schemathesis, mypy, ruff,
# hadolint, kubernetes-validate), which every other target installs the first time it needs it.
# pip installs without compiling every module it installs (--no-compile: about 10 s of a fresh clone's
# install); Python compiles a module the first time it is imported.
RUNTIME := $(VENV)/.installed-runtime

$(RUNTIME): pyproject.toml $(LOCK)
	@PYBIN=$$(scripts/find-python) || exit 1; \
	  if [ ! -x $(PY) ]; then echo "creating $(VENV) with $$PYBIN"; "$$PYBIN" -m venv $(VENV) || exit 1; fi
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --no-compile -e . -c $(LOCK)
	@touch $(RUNTIME)

$(STAMP): $(RUNTIME)
	$(PY) -m pip install --quiet --no-compile -e '.[test]' -c $(LOCK)
	@touch $(STAMP)

install-runtime: $(RUNTIME)

install: $(STAMP)

# Rewrite the lock from what .venv has. A new dependency in pyproject.toml is installed first (without
# the lock, which does not know it yet); to move a pin, `.venv/bin/pip install 'pkg==X'`, `make test`,
# then `make lock`.
lock:
	@PYBIN=$$(scripts/find-python) || exit 1; \
	  if [ ! -x $(PY) ]; then echo "creating $(VENV) with $$PYBIN"; "$$PYBIN" -m venv $(VENV) || exit 1; fi
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) scripts/lock-requirements --write

redis:
	@scripts/ensure-redis

# The README's command table (from the registry) and configuration reference (from bot/config/settings.py); a
# test fails while either is stale.
docs: install
	$(PY) scripts/update-docs

lint: install
	$(VENV)/bin/ruff check bot handlers tests bench
	$(VENV)/bin/ruff format --check bot handlers

typecheck: install
	$(VENV)/bin/mypy

# The whole suite, in a random order (pytest-randomly; the seed is printed at the end, and
# `-p randomly --randomly-seed=N` repeats an order) on $(JOBS) processes (pytest-xdist; each claims a Redis
# database of its own among 1-15, see bot/demo/scratch_redis.py). JOBS=0 runs it in this one process.
# Three processes on two cores: on two, the cores were busy 57 % of the time (the end-to-end tests wait on
# sockets, subprocesses and the forge's pace); three took pytest from 731 s to 566 s (docs/performance.md).
# The 25 slowest tests are listed at the end: where to look first when the suite's time grows. Python may
# cache compiled modules even where the environment says not to (PYTHONDONTWRITEBYTECODE): the suite starts
# a few hundred `steward` processes, and each would compile Steward again (docs/performance.md).
JOBS ?= 3
PYTEST = env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -n $(JOBS) --dist worksteal --durations=25
unit: install redis
	$(PYTEST)

# The tests that need neither Redis nor a forge: rules, parsers and their properties (hypothesis), the
# registry and the README's generated parts. `make check` is these with lint and types, for the inner loop.
FAST := tests/unit tests/backlog tests/bug_refinement tests/bugfix tests/debug tests/forks tests/milestones \
	tests/onboarding
fast: install
	$(PY) -m pytest -n $(JOBS) --dist worksteal $(FAST)

check: lint typecheck fast

# The shipped entry points (`steward run`, `steward serve` + `steward worker`) against `steward sandbox`.
smoke: install redis
	$(PY) -m pytest tests/smoke

# The Dockerfile's lint; the chart, the image's inputs and the systemd units are checked by tests/deploy.
lint-deploy: install
	$(VENV)/bin/hadolint Dockerfile

# mypy runs beside the tests, not before them: pytest leaves about a quarter of the two cores idle (its
# end-to-end tests wait on sockets and subprocesses), and mypy --strict from a cold cache is 20-25 s of one
# core. Its report follows the tests' (a failure in either fails `make test`).
TYPES_LOG := $(VENV)/typecheck.log
test: lint lint-deploy redis
	@$(VENV)/bin/mypy > $(TYPES_LOG) 2>&1 & types=$$!; \
	  $(PYTEST); tests=$$?; \
	  wait $$types; typed=$$?; echo "--- mypy (run beside the tests)"; cat $(TYPES_LOG); \
	  if [ $$tests -ne 0 ] || [ $$typed -ne 0 ]; then exit 1; fi

# Only the deployment checks (hadolint, then tests/deploy: helm lint/template, schemas, units, lock).
test-deploy: lint-deploy redis
	$(PY) -m pytest tests/deploy

demo: install-runtime redis
	$(VENV)/bin/steward demo

demo-all: install-runtime redis
	$(VENV)/bin/steward demo --all

serve: install-runtime
	$(VENV)/bin/steward serve

worker: install-runtime
	$(VENV)/bin/steward worker

run: install-runtime
	$(VENV)/bin/steward run

PORT ?= 8700
sandbox: install-runtime
	$(VENV)/bin/steward sandbox --port $(PORT) --user maintainer=maintainer-token \
	  --user outsider=outsider-token --user steward-bot=bot-token

# The benchmarks (docs/performance.md): each prints figures and ratios against a baseline measured in the
# same run. The receiver's uses `wrk` when installed (apt-get install wrk), else a Python load generator.
bench: install redis
	$(PY) bench/receiver.py
	$(PY) bench/reply.py
	$(PY) bench/throughput.py
	$(PY) bench/economy.py
	$(PY) bench/pathological.py
	$(PY) bench/parse_per_job.py
	$(PY) bench/reporters.py
	$(PY) bench/related.py
	$(PY) bench/fairness.py
	$(PY) bench/outsider_flood.py
	$(PY) bench/client_overhead.py
	$(PY) bench/cpu_per_event.py
	$(PY) bench/worker_memory.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache *.egg-info
