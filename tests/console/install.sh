#!/usr/bin/env bash
# Installs Debian's chromium for the console's browser tests (tests/console/console.test.mjs drives
# it with playwright-core; no browser is ever downloaded by playwright). Quick when it is there.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
echo "console/install.sh: installing Debian's chromium (about 1 GB with its libraries, once)" >&2
export DEBIAN_FRONTEND=noninteractive
# apt's own chatter (debconf's notes) only when it fails.
quiet() { local out; out=$("$@" 2>&1) || { echo "$out" >&2; echo "console/install.sh: failed: $*" >&2; exit 1; }; }
quiet apt-get update -qq
quiet apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core
