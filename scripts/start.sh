#!/usr/bin/env bash
# Starts Airlock: installs what is missing, builds the web app and the server, runs it. Extra arguments go to the server.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
"${PNPM[@]}" exec turbo run build --filter=@airlock/web --output-logs=errors-only
"${PNPM[@]}" --filter @airlock/server run --silent build
exec node apps/server/bin/airlock.mjs "$@"
