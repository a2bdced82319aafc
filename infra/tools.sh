#!/usr/bin/env bash
# Installs (once) and puts on PATH the build and template tools: cargo-lambda (with zig),
# aws-sam-cli and cfn-lint, in their own virtualenv so that their pins never touch the local
# stack's Python packages. Only the tools' own commands go on PATH, not the venv's python3.
# Source it: `source infra/tools.sh`.
_phantom_tools=${PHANTOM_TOOLS_DIR:-$HOME/.cache/phantom/tools}
_phantom_reqs="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/requirements.txt"
if ! cmp -s "$_phantom_reqs" "$_phantom_tools/requirements.txt"; then
  python3 -m venv "$_phantom_tools"
  "$_phantom_tools/bin/pip" install --quiet --disable-pip-version-check -r "$_phantom_reqs"
  cp "$_phantom_reqs" "$_phantom_tools/requirements.txt"
fi
mkdir -p "$_phantom_tools/shims"
# zig (cargo-lambda's linker) comes as the ziglang Python package: a `zig` that runs it.
printf '#!/bin/sh\nexec "%s/bin/python3" -m ziglang "$@"\n' "$_phantom_tools" >"$_phantom_tools/shims/zig"
chmod +x "$_phantom_tools/shims/zig"
for _t in sam cargo-lambda cfn-lint python-zig; do
  if [ -e "$_phantom_tools/bin/$_t" ]; then ln -sf "$_phantom_tools/bin/$_t" "$_phantom_tools/shims/$_t"; fi
done
export PATH="$_phantom_tools/shims:$PATH"
# SAM CLI sends usage data unless told not to (and says so on every first run).
export SAM_CLI_TELEMETRY=0
unset _t _phantom_reqs
