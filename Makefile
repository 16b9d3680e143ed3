# Everything installs itself: a Python venv and the pinned npm toolchain (anvil, solc, Uniswap).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY_STAMP := $(VENV)/.installed
NPM_STAMP := node_modules/.installed

.PHONY: run test fuzz faults bench-tools browser deps contracts check lint typecheck format clean

run: contracts ## start the devnet and the service on http://127.0.0.1:8000
	$(BIN)/crossfill devnet

# Two pytest workers (pytest-xdist), each with its own devnet; a file's tests stay on one
# worker so its module-scoped chains and exchange start once. Most tests wait on chains and
# services, so two workers nearly halve the wall time on two cores.
test: contracts browser check ## the whole suite: lint, types, unit, integration, end-to-end
	$(BIN)/pytest -n 2 --dist loadfile --durations=30

# schemathesis against the real service, longer than `make test`'s pass: every phase, 1000
# examples per operation (tens of minutes here); then 10,000 fresh mutations of valid quote
# bodies of every kind (docs/limits.md).
fuzz: contracts
	CROSSFILL_FUZZ_EXAMPLES=1000 CROSSFILL_FUZZ_FULL=1 $(BIN)/pytest tests/e2e/test_fuzz_api.py
	CROSSFILL_MUTATION_EXAMPLES=10000 CROSSFILL_FUZZ_FULL=1 $(BIN)/pytest -s \
		tests/adversarial/test_quote_mutations.py

# The long fault run: 300 intents, 10 SIGKILLs, RPC faults, on SQLite then PostgreSQL;
# prints what it checked on chain (docs/reliability.md). Then the skewed soak: 1,000 intents,
# four in five to one chain, the treasury rebalancing through the peer deployment, 8 SIGKILLs
# (docs/treasury.md). Minutes each.
faults: contracts
	$(BIN)/python -m tests.faults.soak --database sqlite
	$(BIN)/python -m tests.faults.soak --database postgres
	$(BIN)/python -m tests.faults.skewed_soak --database sqlite
	$(BIN)/python -m tests.faults.skewed_soak --database postgres

# What the benchmarks need beyond `deps`: wrk (`bench.quote --wrk`), a C program from Debian's
# packages (root, or sudo, installs it).
bench-tools: contracts
	@command -v wrk >/dev/null || { \
		if [ "$$(id -u)" = 0 ]; then apt-get install -y wrk || { apt-get update && apt-get install -y wrk; }; \
		else sudo apt-get install -y wrk || { sudo apt-get update && sudo apt-get install -y wrk; }; fi; }
	@wrk --version 2>&1 | head -1 || true

# What the explorer's browser tests drive (tests/e2e/test_explorer.py, through Playwright):
# Debian's headless Chromium at /usr/bin/chromium (root, or sudo, installs it). Playwright's
# own browser builds are never downloaded.
APT_CHROMIUM := DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
browser:
	@test -x /usr/bin/chromium || { \
		if [ "$$(id -u)" = 0 ]; then $(APT_CHROMIUM) || { apt-get update && $(APT_CHROMIUM); }; \
		else sudo $(APT_CHROMIUM) || { sudo apt-get update && sudo $(APT_CHROMIUM); }; fi; }

deps: $(PY_STAMP) $(NPM_STAMP)

# The service, and the Python client (its own distribution, clients/python) with its signing
# wallets, which the client's tests use.
$(PY_STAMP): pyproject.toml clients/python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]' -e './clients/python[signing]'
	touch $@

# `npm install` (not `npm ci`): the lockfile pins every version, but the registry reachable
# here serves only anvil's linux-amd64 build, so npm cannot record the other platforms'
# optional packages that `npm ci` insists on. With the lockfile in place, install keeps it.
$(NPM_STAMP): package.json package-lock.json
	npm install --no-audit --no-fund
	touch $@

contracts: deps
	$(BIN)/crossfill contracts build

check: lint typecheck

PY_SOURCES := src tests bench clients/python

lint: deps
	$(BIN)/ruff check $(PY_SOURCES)
	$(BIN)/ruff format --check $(PY_SOURCES)
	$(BIN)/lint-imports

typecheck: deps
	$(BIN)/mypy src tests bench clients/python/src clients/python/tests

format: deps
	$(BIN)/ruff format $(PY_SOURCES)
	$(BIN)/ruff check --fix $(PY_SOURCES)

clean:
	rm -rf $(VENV) node_modules src/crossfill/contracts/compiled .crossfill
