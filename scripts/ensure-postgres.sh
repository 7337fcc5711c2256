#!/usr/bin/env bash
# Install Debian's PostgreSQL server when it is missing (SQL Memory's shared backend and its
# tests need it). As root this runs apt-get; otherwise it says what to install.
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; then
  exit 0
fi
if [ -n "${PALIMPSEST_POSTGRES_BIN_DIR:-}" ] && [ -x "$PALIMPSEST_POSTGRES_BIN_DIR/initdb" ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "PostgreSQL is needed for SQL Memory on PostgreSQL and its tests: sudo apt-get install postgresql" >&2
  exit 1
fi
echo "installing PostgreSQL (Debian's postgresql package)" >&2
# No cluster of Debian's own: palimpsest makes its own under PALIMPSEST_HOME.
mkdir -p /etc/postgresql-common
if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
  echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
