# The two commands a newcomer runs: `make demo` and `make test` (each sets up first).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

export DO_NOT_TRACK := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS := 120
export HF_HUB_OFFLINE := 1

.PHONY: setup demo train dev-eval golden test lint unit integration bench schemas samples clean

setup: $(STAMP)

# torch is pinned and installed first: it is the CPU wheel on local disk; letting
# sentence-transformers pull torch itself would fetch a multi-GB CUDA build.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The embedder the shipped models use: MiniLM as int8 ONNX (same dev top-1 as torch,
# ~1.9x faster; docs/benchmarks.md). Built once (~15 s), reused after.
INT8 := models/embedder-int8
$(INT8)/card.json: $(STAMP) pipeline/quantize.py pipeline/onnx_embedder.py
	$(BIN)/librarian quantize --out $(INT8)

# Trains once (seconds) when models/ is missing or its inputs changed; reused after.
# The card records the embedder, so `librarian run` uses the int8 one without a flag.
models/card.json: $(STAMP) $(INT8)/card.json data/opencre/links.jsonl data/opencre/hubs.jsonl \
		pipeline/retrieve.py pipeline/calibrate.py pipeline/train.py pipeline/route.py
	$(BIN)/librarian train --out models --embedding-model $(INT8)

demo: setup models/card.json
	$(BIN)/librarian run data/samples/queue_sample.jsonl --out out/demo --run-id demo

train: setup $(INT8)/card.json
	$(BIN)/librarian train --out models --embedding-model $(INT8)

# Leave-one-framework-out dev: models trained without the dev frameworks score them.
dev-eval: setup $(INT8)/card.json
	$(BIN)/librarian train --out models-dev --holdout-dev --embedding-model $(INT8)
	$(BIN)/librarian eval data/golden/dev.json --models models-dev \
		--json docs/dev-eval.json --plot docs/reliability-dev.png

golden: setup
	$(BIN)/python scripts/make_golden.py

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
	rm -rf out .cache .pytest_cache .mypy_cache .ruff_cache models models-dev
