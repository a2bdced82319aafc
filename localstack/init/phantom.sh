#!/usr/bin/env bash
# LocalStack ready hook: Phantom's table and queues, from template.yaml (same as up.sh on moto).
set -euo pipefail
py=/opt/code/localstack/.venv/bin/python
[ -x "$py" ] || py=python3
AWS_ENDPOINT_URL=http://localhost:4566 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
  AWS_DEFAULT_REGION=us-east-1 "$py" /phantom/localstack/bootstrap.py /phantom/template.yaml --stack phantom
