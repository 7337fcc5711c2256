# The README's two commands are `make run` and `make test`; CI runs `make check` (the gate that
# needs no server) and then `make test` verbatim.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# `make run` needs only the server: its dependencies come from a lock with every file's hash
# (requirements/server.lock, `make lock`), then the two distributions of this checkout are
# installed over them without dependencies. `make test` adds the test tools, the runtimes'
# SDKs the integrations' tests drive, the suites (attack, fuzz, faults) and the bench.
SERVER := $(VENV)/.server-installed
DEV := $(VENV)/.dev-installed

.PHONY: install run test check lint unasync dist lock neo4j-start neo4j-stop postgres-start postgres-stop clean-venv

$(SERVER): pyproject.toml client/pyproject.toml requirements/server.lock
	$(PYTHON) -m venv $(VENV)
	# Wheels only: building an sdist would fetch its build backend unhashed.
	$(BIN)/pip install --quiet --require-hashes --only-binary :all: -r requirements/server.lock
	# hatchling is in the lock, so the editable builds need nothing unhashed either.
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e ./client -e .
	touch $@

$(DEV): $(SERVER) bench/pyproject.toml suites/pyproject.toml
	$(BIN)/pip install --quiet -e ".[dev,e5]" -e ./suites -e "./bench[peer,plot]"
	# The Hermes provider's tests need only its MemoryProvider class: hermes-agent pins
	# versions the server cannot take (client/pyproject.toml, `hermes`), so without its
	# dependencies.
	$(BIN)/pip install --quiet --no-deps hermes-agent==0.19.0
	touch $@

install: $(SERVER)
	$(BIN)/palimpsest neo4j install
	$(BIN)/palimpsest graphiql install

run: install
	$(BIN)/palimpsest serve

test: install $(DEV) lint
	scripts/test.sh

# The two wheels (docs/install.md): pip install 'dist/palimpsest_memory_client-...whl[langgraph]'.
dist: $(SERVER)
	rm -rf dist
	$(BIN)/pip wheel --quiet --no-deps --no-build-isolation --wheel-dir dist ./client .

# Re-resolves the server's dependencies (after a change to either pyproject.toml's
# dependencies) with pip-tools in a throwaway venv; the checkout's own two lines are dropped.
lock:
	rm -rf $(VENV)-lock
	$(PYTHON) -m venv $(VENV)-lock
	$(VENV)-lock/bin/pip install --quiet pip-tools==7.7.0
	$(VENV)-lock/bin/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras \
		--no-emit-index-url --no-emit-trusted-host --no-emit-find-links \
		--output-file requirements/server.lock requirements/server.in
	awk '/^# (WARNING: pip install will require|Consider using a hashable URL)/ {next} \
		/^palimpsest-memory-[a-z]+ @ file:/ {local = 1; next} local && /^ +#/ {next} \
		{local = 0; print}' requirements/server.lock >requirements/server.lock.tmp
	mv requirements/server.lock.tmp requirements/server.lock
	rm -rf $(VENV)-lock

# Needs no server: lint, types and the unit tier (less its PostgreSQL half) over a coverage
# floor: the highest multiple of 5 under what it measures (docs/notes/house.md, "coverage").
COVERAGE_FLOOR := 80

check: lint
	$(BIN)/pytest tests/unit -m "not postgres" --cov=palimpsest --cov-report= \
		--cov-fail-under=$(COVERAGE_FLOOR) \
		--deselect tests/unit/sqlmem/test_backends.py::test_work_inside_one_call_ends_within_the_limit
# ^ a wall-time bound that coverage's tracing breaks (sqlglot parses slower); `make test` runs it.

lint: $(DEV)
	$(BIN)/ruff check src tests bench suites tools
	$(BIN)/ruff format --check src tests bench suites docs tools
	$(BIN)/mypy
	$(BIN)/python tools/unasync.py --check

# The blocking client (client/sync.py) is generated from the asyncio one (client/aio.py).
unasync: $(DEV)
	$(BIN)/python tools/unasync.py

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
