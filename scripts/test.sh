#!/usr/bin/env bash
# The whole suite against a real Neo4j and PostgreSQL (after `make lint`, which `make test`
# runs first); stops only what it started.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin

# Chromium for the browser tests; curl and jq for the docs' shell examples.
missing=()
for tool in chromium curl jq; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing ${missing[*]} for the browser tests and the docs' examples" >&2
    apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "the tests need ${missing[*]}: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

# The documentation site: a broken link or anchor, or a page left out of the nav, fails here.
NO_MKDOCS_2_WARNING=1 $BIN/mkdocs build --strict --quiet

# SQL Memory's tests run on both backends: PostgreSQL must be there too.
scripts/ensure-postgres.sh

started=0
pg_started=0
stop() {
  if [ "$pg_started" = 1 ]; then $BIN/palimpsest postgres stop; fi
  if [ "$started" = 1 ]; then $BIN/palimpsest neo4j stop; fi
}
trap stop EXIT
if ! $BIN/palimpsest neo4j status >/dev/null 2>&1; then
  $BIN/palimpsest neo4j start
  started=1
fi
if ! $BIN/palimpsest postgres status >/dev/null 2>&1; then
  $BIN/palimpsest postgres start
  pg_started=1
fi

set +e
$BIN/pytest "$@"
status=$?
set -e
if [ "$status" = 5 ]; then
  echo "pytest collected no tests: that is a failure here, not a pass" >&2
  exit 1
fi
exit "$status"
