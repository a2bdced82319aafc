#!/usr/bin/env bash
# Builds the web console into console/dist/ (index.html + assets/app-<hash>.js/.css), from any
# directory. Installs the locked npm packages first when node_modules is missing or older than
# package-lock.json. Quick when nothing changed: build.mjs skips a dist newer than its sources.
set -euo pipefail
cd "$(dirname "$0")"
command -v node >/dev/null || { echo "console/build.sh needs node (20 or later) and npm" >&2; exit 1; }
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
  npm ci --no-audit --no-fund --loglevel=error
  touch node_modules
fi
node build.mjs
