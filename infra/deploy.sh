#!/usr/bin/env bash
# Builds Phantom's functions with cargo-lambda and deploys the stack with SAM.
#
#   infra/deploy.sh [STACK_NAME] [sam deploy options...]     (default stack: phantom)
#
# Needs: AWS credentials for the target account (the usual AWS_PROFILE / AWS_REGION), and the
# build tools, which infra/tools.sh installs (cargo-lambda, which brings zig, and aws-sam-cli).
# Then prints the API URL and the environment phantomctl needs to administer the stack.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
stack=${1:-phantom}
shift || true
# shellcheck source=/dev/null
source "$root/infra/tools.sh"

cd "$root"
sam build --template-file template.yaml
sam deploy --stack-name "$stack" --resolve-s3 --capabilities CAPABILITY_IAM \
  --no-confirm-changeset --no-fail-on-empty-changeset "$@"

output() {
  aws cloudformation describe-stacks --stack-name "$stack" \
    --query "Stacks[0].Outputs[?OutputKey=='$1'].OutputValue" --output text
}
cat <<DONE

Deployed. Administer it with phantomctl (cargo run -p phantomctl -- ...) in an environment with:
  export PHANTOM_STATE_TABLE=$(output StateTableName)
  export PHANTOM_SECRETS_KEY=$(output SecretsKeyArn)
  export AWS_REGION=${AWS_REGION:-$(aws configure get region)}
API endpoint for the AWS CLI and SDKs:
  $(output ApiUrl)
DONE
