# The README's two commands are `make run` and `make test`; CI runs `make test` verbatim.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install run test lint neo4j-start neo4j-stop postgres-start postgres-stop clean-venv

$(BIN)/palimpsest: pyproject.toml bench/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]" -e ./bench
	touch $@

install: $(BIN)/palimpsest
	$(BIN)/palimpsest neo4j install
	$(BIN)/palimpsest graphiql install

run: install
	$(BIN)/palimpsest serve

test: install
	scripts/test.sh

lint: $(BIN)/palimpsest
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
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
