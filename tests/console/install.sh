#!/usr/bin/env bash
# Installs Debian's chromium for the console's browser tests (tests/console/console.test.mjs drives
# it with playwright-core; no browser is ever downloaded by playwright). Quick when it is there.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
echo "console/install.sh: installing chromium" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
