#!/usr/bin/env bash
# Starts Airlock: installs what is missing, builds the web app, runs the server. Extra arguments go to the server.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
"${PNPM[@]}" exec turbo run build --filter=@airlock/web --output-logs=errors-only
node apps/server/build.mjs
exec node apps/server/bin/airlock.mjs "$@"
