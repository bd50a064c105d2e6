#!/usr/bin/env bash
# Runs every check and test: typecheck, lint, unit, integration and browser tests.
# Installs what it needs first: pnpm, the dependencies, Chromium for the browser tests and bubblewrap for the tool
# sandbox (both through apt-get).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"

# One apt-get update, then whatever is missing in one install: Chromium for the browser tests, bubblewrap for the tool sandbox.
MISSING=()
if [ -z "${CHROMIUM_PATH:-}" ] && ! command -v chromium >/dev/null 2>&1; then MISSING+=(chromium); fi
if ! command -v bwrap >/dev/null 2>&1; then MISSING+=(bubblewrap); fi
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

rm -rf packages/*/.reports apps/*/.reports
status=0
"${PNPM[@]}" exec turbo run typecheck lint test --force --continue --concurrency=2 --output-logs=new-only || status=$?
node scripts/test-summary.mjs || status=$?
exit "$status"
