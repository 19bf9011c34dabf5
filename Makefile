# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# kubernetes<37 is pinned in pyproject.toml; uv resolves the set in seconds where pip backtracks.
INSTALL = $(BIN)/uv pip install --python $(BIN)/python -q

.PHONY: demo test install install-dev bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip uv

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(INSTALL) -e '.[sim]'
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(INSTALL) -e '.[dev]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

demo: install
	$(BIN)/gpubot demo

# The suite runs on every core (pytest-xdist); each test that needs PostgreSQL makes a database of its own
# on the one server, so the workers never share state. Two workers per core, at most 8: a third of the
# suite's time is spent waiting on servers it started (shutdown, worker and Slack pacing tests), which a
# second worker per core overlaps (6 min instead of 7.5 on 2 cores). TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= $(shell python3 -c 'import os; print(min(8, 2 * len(os.sched_getaffinity(0))))')
# pytest runs with a throwaway PostgreSQL server (installed with apt if missing, removed afterwards)
# so the store tests cover SQLite and PostgreSQL; GPUBOT_TEST_POSTGRES_URL set = use that server.
test: install-dev
	bash scripts/fetch-helm.sh $(VENV)
	bash scripts/fetch-promtool.sh >/dev/null
	bash scripts/with-postgres.sh $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --durations=10
	$(BIN)/python tests/benchmarks/bench_ack.py --bursts 50

bench: install-dev
	$(BIN)/python tests/benchmarks/bench_explain.py
	$(BIN)/python tests/benchmarks/bench_diagnose.py
	$(BIN)/python tests/benchmarks/bench_ack.py --bursts 50,200
	$(BIN)/python tests/benchmarks/bench_limits.py
	$(BIN)/python tests/benchmarks/bench_flood.py
	$(BIN)/python tests/benchmarks/bench_sweep.py
	$(BIN)/python tests/benchmarks/bench_linear.py
	$(BIN)/python tests/benchmarks/bench_charts.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
