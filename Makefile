# The two commands a newcomer runs: `make demo` and `make test` (each sets up first).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

export DO_NOT_TRACK := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS := 120
export HF_HUB_OFFLINE := 1

.PHONY: setup demo test lint unit integration bench schemas samples clean

setup: $(STAMP)

# torch is pinned and installed first: it is the CPU wheel on local disk; letting
# sentence-transformers pull torch itself would fetch a multi-GB CUDA build.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: setup
	$(BIN)/librarian run data/samples/queue_sample.jsonl --out out/demo --run-id demo

test: setup lint
	$(BIN)/python -m pytest -q

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

unit: setup
	$(BIN)/python -m pytest -q -m "not integration"

integration: setup
	$(BIN)/python -m pytest -q -m integration

bench: setup
	$(BIN)/python scripts/bench_throughput.py

schemas: setup
	$(BIN)/librarian schema export schemas/json

samples: setup
	$(BIN)/python scripts/make_samples.py

clean:
	rm -rf out .cache .pytest_cache .mypy_cache .ruff_cache
