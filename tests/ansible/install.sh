#!/usr/bin/env bash
# Installs Ansible (with the amazon.aws and community.aws collections it bundles) and boto3 into a
# virtualenv of its own, ~/.cache/phantom/ansible, for tests/tests/e2e/ansible.rs. Ansible 12 is the
# last line that runs on Python 3.11. Quick when it is there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${PHANTOM_ANSIBLE_VENV:-$HOME/.cache/phantom/ansible}
want=$(cat "$here/requirements.txt")
if [ -x "$venv/bin/ansible-playbook" ] && [ "$(cat "$venv/.requirements" 2>/dev/null)" = "$want" ]; then
  exit 0
fi
echo "ansible/install.sh: installing Ansible into $venv" >&2
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
echo "$want" > "$venv/.requirements"
