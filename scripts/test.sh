#!/usr/bin/env bash
# Runs every check and test: typecheck, lint, unit, integration and browser tests.
# Installs what it needs first: pnpm, the dependencies, Chromium for the browser tests, bubblewrap for the tool
# sandbox and strace for the store's tests of its syncs (all through apt-get).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"

# One apt-get update, then whatever is missing in one install: Chromium for the browser tests, bubblewrap for the tool
# sandbox, strace for the store's tests that trace its syncs and fail them (skipped without it).
MISSING=()
if [ -z "${CHROMIUM_PATH:-}" ] && ! command -v chromium >/dev/null 2>&1; then MISSING+=(chromium); fi
if ! command -v bwrap >/dev/null 2>&1; then MISSING+=(bubblewrap); fi
if ! command -v strace >/dev/null 2>&1; then MISSING+=(strace); fi
if [ "${#MISSING[@]}" -gt 0 ]; then
  echo "Installing ${MISSING[*]} for the tests…"
  SUDO=()
  [ "$(id -u)" -eq 0 ] || SUDO=(sudo)
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq "${MISSING[@]}" >/dev/null
fi
if [ -z "${CHROMIUM_PATH:-}" ]; then
  CHROMIUM_PATH="$(command -v chromium)"
  export CHROMIUM_PATH
fi

# The multi-instance tests need PostgreSQL (AIRLOCK_TEST_DATABASE_URL, or a local one with trust auth); without it
# they are reported as skipped. A local server that is installed but stopped is started.
PG_URL="${AIRLOCK_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
pg_probe() {
  (cd apps/server && node -e "const c = new (require('pg').Client)({ connectionString: process.argv[1], connectionTimeoutMillis: 3000 }); c.connect().then(() => c.end(), () => process.exit(1))" "$PG_URL") >/dev/null 2>&1
}
if ! pg_probe && [ -x /etc/init.d/postgresql ]; then
  { if [ "$(id -u)" -eq 0 ]; then service postgresql start; else sudo -n service postgresql start; fi; } >/dev/null 2>&1 || true
fi
PG_WHERE="$(node -e "const u = new URL(process.argv[1]); console.log(u.host + u.pathname)" "$PG_URL" 2>/dev/null || echo 'AIRLOCK_TEST_DATABASE_URL')"
if pg_probe; then echo "PostgreSQL: found at $PG_WHERE (multi-instance tests run)"; else echo "PostgreSQL: none reachable at $PG_WHERE — multi-instance tests will be reported as skipped"; fi

rm -rf packages/*/.reports apps/*/.reports
status=0
"${PNPM[@]}" exec turbo run typecheck lint test --force --continue --concurrency=2 --output-logs=new-only || status=$?
node scripts/test-summary.mjs || status=$?
exit "$status"
