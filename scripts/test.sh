#!/usr/bin/env bash
# Runs every check and test: typecheck, lint, unit, integration and browser tests.
# Installs what it needs first: pnpm, the dependencies, and Chromium (through apt-get) for the browser tests.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"

if [ -z "${CHROMIUM_PATH:-}" ]; then
  if ! command -v chromium >/dev/null 2>&1; then
    echo "Installing Chromium for the browser tests…"
    SUDO=()
    [ "$(id -u)" -eq 0 ] || SUDO=(sudo)
    "${SUDO[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq chromium >/dev/null
  fi
  CHROMIUM_PATH="$(command -v chromium)"
  export CHROMIUM_PATH
fi

rm -rf packages/*/.reports apps/*/.reports
status=0
"${PNPM[@]}" exec turbo run typecheck lint test --force --continue --concurrency=2 --output-logs=new-only || status=$?
node scripts/test-summary.mjs || status=$?
exit "$status"
