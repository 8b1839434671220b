# Riverbeam: the two commands are `make up` and `make test`.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: up demo test proto lint fmt bench bench-stack soak clean venv

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

## Start a local NATS, the four services (in-memory store) and the console; Ctrl-C stops everything.
up: $(STAMP)
	$(BIN)/riverbeam up

## The stack with a scripted local model and a local origin: the README tour, as printed.
demo: $(STAMP)
	$(BIN)/riverbeam up --demo

## Run the whole test suite, starting what it needs: TEST_WORKERS processes (pytest-xdist), each
## test module whole on one of them (its module-scoped stack is started once); 0 runs it in this one.
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/python -m pytest -m "not slow" -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

## Regenerate libs/riverbeam/v1 from protos/.
proto: $(STAMP)
	$(BIN)/python scripts/gen_proto.py

lint: $(STAMP)
	$(BIN)/ruff check libs services tests bench scripts
	$(BIN)/ruff format --check libs services tests bench scripts
	$(BIN)/mypy libs services
	$(BIN)/buf lint

fmt: $(STAMP)
	$(BIN)/ruff format libs services tests bench scripts
	$(BIN)/ruff check --fix libs services tests bench scripts

## Benchmarks: each prints our figure against a bare baseline measured in the same run.
bench: $(STAMP)
	$(BIN)/python -m pytest -m slow bench --ignore=bench/test_bench_stack.py $(PYTEST_ARGS) -s

## Google ADK's api_server, the peer bench-stack measures beside ours (bench/_adk.py): in a
## virtualenv of its own, every package pinned; RIVERBEAM_BENCH_ADK=0 leaves it out.
ADK_VENV := bench/.adk
ADK_STAMP := $(ADK_VENV)/.installed
$(ADK_STAMP): bench/adk-requirements.txt
	@test -x $(ADK_VENV)/bin/python || $(PY) -m venv $(ADK_VENV)
	$(ADK_VENV)/bin/python -m pip install -q -r bench/adk-requirements.txt
	@touch $(ADK_STAMP)

## The four service processes (memory and Postgres) driven from a client process (issue 16).
bench-stack: $(STAMP) $(if $(filter 0,$(RIVERBEAM_BENCH_ADK)),,$(ADK_STAMP))
	$(BIN)/python -m pytest -m slow bench/test_bench_stack.py $(PYTEST_ARGS) -s

## Soak/load tests.
soak: $(STAMP)
	$(BIN)/python -m pytest -m slow tests $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) $(ADK_VENV) .pytest_cache .mypy_cache .ruff_cache
