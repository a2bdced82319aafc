#!/usr/bin/env bash
# Installs LocalStack 4.4.0 (community) for running on the host, without Docker: a virtualenv under
# ${XDG_CACHE_HOME:-$HOME/.cache}/phantom/localstack-4.4.0 holding exactly requirements.txt (installed
# with --no-deps, so nothing unpinned comes in). Prints the virtualenv's python on stdout; progress
# goes to stderr. Quiet and immediate when the virtualenv already matches (the pins of
# requirements.txt, comments aside, and the python version it was built from are compared);
# otherwise it is rebuilt from scratch. Safe to run concurrently (a lock file serialises builds).
#
#   PYTHON: the python to build the virtualenv from (default python3; tested with CPython 3.11)
#   LOCALSTACK_VENV: the virtualenv's folder (default above)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
req=$here/requirements.txt
venv=${LOCALSTACK_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/phantom/localstack-4.4.0}
py=${PYTHON:-python3}
stamp=$venv/.phantom-requirements
# LocalStack's index of the AWS service specs, built once here: start.sh copies it into each data
# folder (usr/lib/localstack, its "static libs"), which saves about 4 s and 300 MB of RSS at each
# fresh start's first request.
catalog_dir=$venv/static-libs

say() { echo "localstack-host/install.sh: $*" >&2; }

# What the virtualenv must have been built from: these requirements and this python.
want() {
  "$py" -c 'import sys; print("python", ".".join(map(str, sys.version_info[:2])))'
  grep -v -e '^#' -e '^[[:space:]]*$' "$req"
}

venv_matches() {
  [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && cmp -s "$stamp" <(want)
}
matches() {
  venv_matches && compgen -G "$catalog_dir/service-catalog-*.dill" >/dev/null
}
quiet() { # runs a command, shows its output only if it fails
  local out
  out=$("$@" 2>&1) || { echo "$out" >&2; say "failed: $*"; exit 1; }
}
# LocalStack's python with an environment that never takes this machine for LocalStack's container
# (it has a /.dockerenv) and keeps its files in a folder of ours.
ls_python() { # root args...
  local root=$1; shift
  env -C "$root" OVERRIDE_IN_DOCKER=0 FILESYSTEM_ROOT="$root" CONFIG_DIR="$root" DISABLE_EVENTS=1 \
    PYTHONWARNINGS=ignore "$venv/bin/python" "$@"
}

if ! command -v "$py" >/dev/null; then
  say "$py is required (apt-get install python3 python3-venv)"; exit 1
fi
if matches; then echo "$venv/bin/python"; exit 0; fi

mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
if ! venv_matches; then   # another install.sh may have built it while we waited
  say "installing LocalStack 4.4.0 and its pinned dependencies into $venv (about 500 MB, once; a minute or two)"
  rm -f "$stamp"
  "$py" -m venv --clear "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --no-deps -r "$req" >&2
  quiet "$venv/bin/python" -m pip check
  # The import that fails with unpinned dependencies (cbor2 6), and the runtime's server.
  check_root=$(mktemp -d)
  quiet ls_python "$check_root" -c 'import localstack.aws.components, localstack.runtime.server.twisted'
  rm -rf "$check_root"
  want >"$stamp.tmp"
  mv "$stamp.tmp" "$stamp"
fi
if ! matches; then
  say "building LocalStack's service catalog index"
  build_root=$(mktemp -d)
  mkdir -p "$build_root/usr/lib/localstack"
  quiet ls_python "$build_root" -m localstack.aws.spec
  rm -rf "$catalog_dir.tmp"
  mv "$build_root/usr/lib/localstack" "$catalog_dir.tmp"
  rm -rf "$catalog_dir" "$build_root"
  mv "$catalog_dir.tmp" "$catalog_dir"
  say "done"
fi
echo "$venv/bin/python"
