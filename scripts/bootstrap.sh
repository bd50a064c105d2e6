#!/usr/bin/env bash
# Sourced by start.sh and test.sh: makes sure the pinned pnpm and the dependencies are there.
# Needs only Node 20 and npm.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export TURBO_TELEMETRY_DISABLED=1
export npm_config_update_notifier=false
# Native addons (better-sqlite3, node-pty) build against the installed Node headers; nothing is downloaded.
if [ -z "${npm_config_nodedir:-}" ] && [ -f /usr/include/node/node.h ]; then export npm_config_nodedir=/usr; fi
PNPM_VERSION="$(node -p "require('./package.json').packageManager.split('@')[1]")"

if command -v pnpm >/dev/null 2>&1 && [ "$(pnpm --version 2>/dev/null)" = "$PNPM_VERSION" ]; then
  PNPM=(pnpm)
elif npm install -g "pnpm@$PNPM_VERSION" >/dev/null 2>&1 && [ "$(pnpm --version 2>/dev/null)" = "$PNPM_VERSION" ]; then
  PNPM=(pnpm)
else
  # No permission for a global install: run the pinned pnpm from npm's cache instead.
  PNPM=(npm exec --yes "pnpm@$PNPM_VERSION" --)
fi

if [ ! -d node_modules/.pnpm ] || [ pnpm-lock.yaml -nt node_modules/.modules.yaml ]; then
  echo "Installing dependencies…"
  "${PNPM[@]}" install --frozen-lockfile
fi
