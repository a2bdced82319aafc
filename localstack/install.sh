#!/usr/bin/env bash
# Installs what the local stack needs and is missing: moto's server, the AWS CLI, boto3 (pinned in
# requirements.txt). Quiet and quick when all is there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
if ! command -v "$py" >/dev/null; then
  echo "install.sh: python3 is required (apt-get install python3 python3-pip)" >&2
  exit 1
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
echo "install.sh: installing $(grep -v '^#' "$here/requirements.txt" | tr '\n' ' ')" >&2
"$py" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
