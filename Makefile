# Two commands on a fresh machine with only python3 and make: `make demo`, `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

UV_VERSION := 0.13.9
# A uv on PATH is used as is; otherwise one is bootstrapped into .tools/ with python3's pip.
UV := $(or $(shell command -v uv 2>/dev/null),$(CURDIR)/.tools/bin/uv)
RUN := $(UV) run --frozen --no-sync
export DO_NOT_TRACK := 1
export TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS :=
DAGSTER_HOME ?= $(CURDIR)/.catlas/dagster

.PHONY: help demo test lint format ui dbt-parse sync clean bench bench-quick bench-peers bench-tools eval wild-corpus reliability

help:
	@echo "make demo   - live 21 simulated days against the fixture web and print the changes"
	@echo "make test   - the whole test suite (SQLite and PostgreSQL)"
	@echo "make lint   - ruff lint and format check"
	@echo "make ui     - Dagster UI and daemon over the demo's state and lake (CATLAS_UI_PORT, default 3000)"
	@echo "make bench  - benchmarks beside their peers, one table (bench/README.md; needs PostgreSQL)"
	@echo "make bench-quick - the same on a small scale, under two minutes"
	@echo "make reliability - kill -9, fuzzing and hostile pages at scale, one table (needs PostgreSQL)"
	@echo "make eval   - catlas on the wild corpus, through the CLI: precision and recall (bench/eval/README.md)"

$(CURDIR)/.tools/bin/uv:
	python3 -m venv $(CURDIR)/.tools
	$(CURDIR)/.tools/bin/python -m pip install --quiet --disable-pip-version-check "uv==$(UV_VERSION)"

.venv/.synced: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen
	$(RUN) python -m compileall -q catlas_assets resources sensors_dag fixtures/fixture_web
	@touch $@

sync: .venv/.synced

demo: .venv/.synced
	$(RUN) catlas demo

dbt-parse: .venv/.synced
	$(RUN) dbt parse --quiet --project-dir dbt_intel --profiles-dir dbt_intel

# Both cores: xdist workers, each with its own PostgreSQL database (tests/conftest.py).
TEST_WORKERS ?= 2
test: .venv/.synced dbt-parse
	$(RUN) pytest -n $(TEST_WORKERS) --dist loadgroup

# The peers live in their own environment, never in the product's lock.
bench/.peers/.installed: bench/peers/requirements.txt | $(UV)
	test -x bench/.peers/bin/python || $(UV) venv --python 3.11 -q bench/.peers
	$(UV) pip install -q --python bench/.peers -r bench/peers/requirements.txt
	@touch $@

bench-peers: bench/.peers/.installed

# nginx (Debian nginx-light) serves the page set, wrk shows it is not the bottleneck.
bench-tools:
	@command -v nginx >/dev/null || test -x /usr/sbin/nginx || apt-get install -y nginx-light || { apt-get update && apt-get install -y nginx-light; }
	@command -v wrk >/dev/null || apt-get install -y wrk || { apt-get update && apt-get install -y wrk; }

bench: .venv/.synced bench-peers bench-tools
	$(RUN) python bench/run_all.py

bench-quick: .venv/.synced bench-peers bench-tools
	$(RUN) python bench/run_all.py --quick

# A measurement, not a test: catlas on sites it was not written against (fixtures/wild).
eval: .venv/.synced
	$(RUN) python bench/eval/wild_eval.py $(EVAL_ARGS)

# The heavier fault campaign (kill -9 on SQLite and PostgreSQL, fuzzing, hostile pages): one table.
reliability: .venv/.synced dbt-parse
	$(RUN) python tests/chaos/reliability.py

# Regenerate the wild corpus (seeded: the same bytes every time).
wild-corpus: .venv/.synced
	$(RUN) python fixtures/wild/generate.py

lint: .venv/.synced
	$(RUN) ruff check .
	$(RUN) ruff format --check .

format: .venv/.synced
	$(RUN) ruff check --fix .
	$(RUN) ruff format .

# The webserver and the daemon together over the demo's state, with the fixture web serving.
ui: .venv/.synced dbt-parse
	DAGSTER_HOME=$(DAGSTER_HOME) $(RUN) catlas ui

clean:
	rm -rf .catlas .venv .tools
