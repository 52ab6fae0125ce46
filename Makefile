# The two commands that matter: `make demo` (the main job) and `make test` (the whole suite).
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install test

install: $(STAMP)

# torch==2.13.0 first: it is the CPU build on this machine's disk; any other spec pulls a multi-GB CUDA build.
$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[dev,baselines,cluster]"
	touch $(STAMP)

# Two test processes of one thread each (pytest-xdist): on 2 cores the suite takes 6-14 minutes, by the
# machine's day (README's figures); `pytest` alone runs one process, slower. The Ray tests share a process
# (their xdist_group): each finds Ray's by name.
TEST_PROCESSES ?= 2
test: install
	$(VENV)/bin/ruff check .
	OMP_NUM_THREADS=1 $(VENV)/bin/pytest -n $(TEST_PROCESSES) --dist loadgroup

# The tests too long for the suite's budget (real benchmark training at long horizons).
.PHONY: test-heavy
test-heavy: install
	$(VENV)/bin/pytest -m heavy

# Speed and memory tables (modest sizes; each `forecaster bench ...` command takes larger ones as options).
.PHONY: bench
bench: install
	$(VENV)/bin/forecaster bench scaling --lengths 1024,2048,4096 --repeats 2

# Serve every bundle under $(MODELS) (one bundle per subfolder; default: the demo's) on http://$(HOST):$(PORT).
MODELS ?= $(DEMO_DIR)/models
HOST ?= 127.0.0.1
PORT ?= 8000
.PHONY: serve
serve: install
	$(VENV)/bin/forecaster serve --models $(MODELS) --host $(HOST) --port $(PORT)

# The main job on the built-in default, one printed step at a time (outputs under runs/demo, replaced each run):
# train S3Attention on ETTm2 (7:1:2 split, input 96, horizon 96, a small budget), evaluate it, forecast with
# intervals + plot, serve it.
# Data: $FORECASTER_DATA_DIR if set, else ../shared/datasets when present, else ./data.
DATA_DIR ?= $(or $(FORECASTER_DATA_DIR),$(if $(wildcard ../shared/datasets/.),../shared/datasets,data))
DEMO_DIR ?= runs/demo
DEMO_MODEL := $(DEMO_DIR)/models/ettm2
DEMO_CSV = $(firstword $(wildcard $(DATA_DIR)/ETTm2.csv $(DATA_DIR)/ETTm2.csv.gz) $(DATA_DIR)/ETTm2.csv.gz)
DEMO_BUDGET ?= --max-epochs 2 --limit-train-batches 100
DEMO_PORT ?= 8765
# A fresh machine has no ETTm2: fetch it (sha256-checked) into $(DATA_DIR) first, or say in one line why not.
.PHONY: demo-data
demo-data: install
	@test -n "$(wildcard $(DATA_DIR)/ETTm2.csv $(DATA_DIR)/ETTm2.csv.gz)" || \
		$(VENV)/bin/forecaster data download ETTm2 --data-dir $(DATA_DIR)

.PHONY: demo
demo: demo-data
	@echo "== demo 1/4: train S3Attention on ETTm2 (data: $(DATA_DIR)) -> $(DEMO_MODEL)"
	$(VENV)/bin/forecaster train --dataset ETTm2 --data-dir $(DATA_DIR) --split 7:1:2 --input-size 96 \
		--horizon 96 $(DEMO_BUDGET) --out $(DEMO_MODEL) --overwrite
	@echo "== demo 2/4: evaluate the bundle on the ETTm2 test split"
	$(VENV)/bin/forecaster evaluate --model $(DEMO_MODEL) --dataset ETTm2 --data-dir $(DATA_DIR)
	@echo "== demo 3/4: forecast the 96 steps after the last row of ETTm2 with 80% / 95% intervals, and a plot"
	$(VENV)/bin/forecaster predict --model $(DEMO_MODEL) --csv $(DEMO_CSV) --level 80,95 \
		--output $(DEMO_DIR)/forecast.csv --plot $(DEMO_DIR)/forecast.png
	@echo "== demo 4/4: serve the bundle on port $(DEMO_PORT), POST the last 96 rows of ETTm2, print the answer"
	@(gzip -dcf $(DEMO_CSV) | head -n 1; gzip -dcf $(DEMO_CSV) | tail -n 96) > $(DEMO_DIR)/recent.csv
	@$(VENV)/bin/forecaster serve --models $(DEMO_DIR)/models --port $(DEMO_PORT) --log-level warning & \
	server=$$!; trap 'kill $$server; wait $$server 2>/dev/null' EXIT; \
	curl -sf --retry 60 --retry-connrefused --retry-delay 1 -o /dev/null \
		http://127.0.0.1:$(DEMO_PORT)/health/ready && \
	curl -sSf -F file=@$(DEMO_DIR)/recent.csv -o $(DEMO_DIR)/served_forecast.csv \
		'http://127.0.0.1:$(DEMO_PORT)/v1/models/ettm2/forecast.csv?level=80' && \
	head -n 6 $(DEMO_DIR)/served_forecast.csv | cut -d, -f1,20-22
