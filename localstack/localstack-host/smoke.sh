#!/usr/bin/env bash
# Smoke test of LocalStack on the host: installs it (install.sh), starts it (start.sh) on a free
# port with its files in a temporary folder, waits until it is ready, checks SQS, EC2, API Gateway v1
# and KMS with the AWS CLI, stops it, and checks that nothing is left running and that nothing was
# written to /var/lib/localstack or /tmp/localstack. Exits non-zero on any failure.
#
#   localstack/localstack-host/smoke.sh        (KEEP=1 keeps the temporary folder and its logs)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { echo "smoke.sh: $*" >&2; }

py=$("$here/install.sh")
aws=$(command -v aws || echo "$(dirname "$py")/aws")   # the virtualenv has awscli too

tmp=$(mktemp -d "${TMPDIR:-/tmp}/localstack-smoke.XXXXXX")
free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
url=http://127.0.0.1:$port

# Folders LocalStack writes to when it takes the machine for its container: they must stay as they are.
snapshot() { for d in /var/lib/localstack /tmp/localstack; do
  if [ -e "$d" ]; then find "$d" -printf '%p %s %T@\n' 2>/dev/null | sort; else echo "$d absent"; fi
done; }
before=$(snapshot)

ls_pid='' backend_pid='' passed=0 failed=0
stop_localstack() {
  [ -n "$ls_pid" ] || return 0
  kill -TERM "$ls_pid" 2>/dev/null || true
  wait "$ls_pid" 2>/dev/null || true
  ls_pid=''
}
cleanup() {
  local rc=$?
  stop_localstack
  if [ -n "$backend_pid" ]; then kill "$backend_pid" 2>/dev/null || true; wait "$backend_pid" 2>/dev/null || true; fi
  if [ "$rc" -ne 0 ] && [ -f "$tmp/localstack.log" ]; then
    say "last lines of $tmp/localstack.log:"; tail -n 30 "$tmp/localstack.log" >&2
  fi
  if [ -z "${KEEP:-}" ] && [ "$rc" -eq 0 ]; then rm -rf "$tmp"; else say "kept $tmp"; fi
}
trap cleanup EXIT

check() { # name command...: runs it in a subshell where any failing command fails it, counts it
  local name=$1 rc; shift
  set +e
  (set -e; shopt -s inherit_errexit; "$@") >"$tmp/check.out" 2>&1
  rc=$?
  set -e
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1)); echo "ok   $name"
  else
    failed=$((failed + 1)); echo "FAIL $name"; sed 's/^/     /' "$tmp/check.out" | tail -n 15
  fi
}
expect() { # what got want: fails unless got contains want
  if [[ $2 == *"$3"* ]]; then return 0; fi
  echo "$1: expected to contain <$3>, got <$2>"; return 1
}

# --- start (EC2 told to refuse unknown image ids, as AWS and up.sh's moto clouds do)
t0=$(date +%s%N)
MOTO_ENABLE_AMI_VALIDATION=true "$here/start.sh" "$port" "$tmp/data" >"$tmp/localstack.log" 2>&1 &
ls_pid=$!
ready=''
for _ in $(seq 1 600); do   # 60 s
  if curl -sf "$url/_localstack/init/ready" 2>/dev/null | grep -q '"completed": true'; then ready=1; break; fi
  kill -0 "$ls_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$ready" ] || { say "LocalStack did not become ready on $url"; exit 1; }
ready_ms=$((($(date +%s%N) - t0) / 1000000))
ls_py=$(pgrep -P "$ls_pid")
rss_ready=$(ps -o rss= -p "$ls_py" | tr -d ' ')
echo "ready on $url after ${ready_ms} ms (install check included), RSS ${rss_ready} KiB (pid $ls_py)"

check_listen() { # LocalStack's own sockets: 127.0.0.1:PORT and nothing else
  local socks
  socks=$(ss -Htlnup | grep "pid=$ls_py," | awk '{print $1, $5}' | sort -u)
  [ "$socks" = "tcp 127.0.0.1:$port" ] || { echo "listening on: $socks"; return 1; }
}
if command -v ss >/dev/null; then check "listens on 127.0.0.1:$port only (no 0.0.0.0, no DNS server)" check_listen; fi

export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true AWS_CONFIG_FILE=$tmp/no-aws-config AWS_SHARED_CREDENTIALS_FILE=$tmp/no-aws-credentials
unset AWS_PROFILE AWS_ENDPOINT_URL AWS_SESSION_TOKEN
a() { "$aws" --endpoint-url "$url" --output text "$@"; }

check_health() {
  local h; h=$(curl -sf "$url/_localstack/health")
  for s in sqs ec2 apigateway kms; do expect "health $s" "$h" "\"$s\": \"available\"" || return 1; done
  expect version "$h" '"version": "4.4.0"'
}
check "health lists sqs, ec2, apigateway, kms as available, version 4.4.0" check_health

# --- SQS, path-style queue URLs on 127.0.0.1:PORT
check_sqs() {
  local q body rh
  q=$(a sqs create-queue --queue-name smoke-work)
  expect "queue url" "$q" "$url/queue/us-east-1/000000000000/smoke-work" || return 1
  [ "$(a sqs get-queue-url --queue-name smoke-work)" = "$q" ] || { echo "get-queue-url differs"; return 1; }
  a sqs send-message --queue-url "$q" --message-body 'hello phantom' >/dev/null
  read -r body rh < <(a sqs receive-message --queue-url "$q" --wait-time-seconds 1 --query 'Messages[0].[Body,ReceiptHandle]' | sed 's/\t/ /; s/^hello phantom/hello_phantom/')
  expect body "$body" hello_phantom || return 1
  a sqs delete-message --queue-url "$q" --receipt-handle "$rh"
  expect "empty after delete" "$(a sqs get-queue-attributes --queue-url "$q" --attribute-names ApproximateNumberOfMessages --query Attributes.ApproximateNumberOfMessages)" 0
}
check "sqs create-queue, send-message, receive-message, delete-message (path-style URL)" check_sqs

# --- EC2 (moto's, inside LocalStack)
check_ec2_images() {
  local n img
  n=$(a ec2 describe-images --query 'length(Images)')
  [ "$n" -gt 0 ] || { echo "no images"; return 1; }
  img=$(a ec2 describe-images --image-ids ami-1e749f67 --query 'Images[0].Name')
  expect "ami-1e749f67" "$img" ubuntu
}
check "ec2 describe-images lists moto's stock images (ami-1e749f67 is Ubuntu)" check_ec2_images
check_ec2_bad_image() {
  local out
  if out=$(a ec2 run-instances --image-id ami-12345678 --instance-type t2.micro 2>&1); then
    echo "run-instances with an unknown image succeeded: $out"; return 1
  fi
  expect error "$out" InvalidAMIID.NotFound
}
check "ec2 run-instances refuses an unknown image id (MOTO_ENABLE_AMI_VALIDATION=true)" check_ec2_bad_image
check_ec2_instances() {
  local ids states
  ids=$(a ec2 run-instances --image-id ami-1e749f67 --instance-type t2.micro --count 2 --query 'Instances[].InstanceId')
  [ "$(wc -w <<<"$ids")" -eq 2 ] || { echo "ids: $ids"; return 1; }
  # shellcheck disable=SC2086
  states=$(a ec2 describe-instances --instance-ids $ids --query 'Reservations[].Instances[].[ImageId,State.Name]')
  [ "$(grep -c 'ami-1e749f67.running' <<<"$states")" -eq 2 ] || { echo "states: $states"; return 1; }
  # shellcheck disable=SC2086
  a ec2 terminate-instances --instance-ids $ids >/dev/null
  # shellcheck disable=SC2086
  states=$(a ec2 describe-instances --instance-ids $ids --query 'Reservations[].Instances[].State.Name')
  [ "$(grep -o terminated <<<"$states" | wc -l)" -eq 2 ] || { echo "after terminate: $states"; return 1; }
}
check "ec2 run-instances (2), describe-instances (running), terminate-instances" check_ec2_instances

# --- API Gateway v1: a MOCK method and an HTTP_PROXY to a local backend, deployed, called through
# LocalStack's gateway
backend_port=$(free_port)
mkdir -p "$tmp/www"; echo 'backend ok' >"$tmp/www/hello.txt"
"$py" -m http.server "$backend_port" --bind 127.0.0.1 --directory "$tmp/www" >"$tmp/backend.log" 2>&1 &
backend_pid=$!
check_apigateway() {
  local api root ping proxy got b
  api=$(a apigateway create-rest-api --name smoke --query id)
  # shellcheck disable=SC2016  # a JMESPath literal, not shell
  root=$(a apigateway get-resources --rest-api-id "$api" --query 'items[?path==`/`].id')
  ping=$(a apigateway create-resource --rest-api-id "$api" --parent-id "$root" --path-part ping --query id)
  a apigateway put-method --rest-api-id "$api" --resource-id "$ping" --http-method GET --authorization-type NONE >/dev/null
  a apigateway put-integration --rest-api-id "$api" --resource-id "$ping" --http-method GET --type MOCK \
    --request-templates '{"application/json": "{\"statusCode\": 200}"}' >/dev/null
  a apigateway put-method-response --rest-api-id "$api" --resource-id "$ping" --http-method GET --status-code 200 >/dev/null
  a apigateway put-integration-response --rest-api-id "$api" --resource-id "$ping" --http-method GET --status-code 200 \
    --response-templates '{"application/json": "{\"pong\": true}"}' >/dev/null
  proxy=$(a apigateway create-resource --rest-api-id "$api" --parent-id "$root" --path-part '{proxy+}' --query id)
  a apigateway put-method --rest-api-id "$api" --resource-id "$proxy" --http-method ANY --authorization-type NONE \
    --request-parameters method.request.path.proxy=true >/dev/null
  a apigateway put-integration --rest-api-id "$api" --resource-id "$proxy" --http-method ANY --type HTTP_PROXY \
    --integration-http-method ANY --uri "http://127.0.0.1:$backend_port/{proxy}" \
    --request-parameters '{"integration.request.path.proxy": "method.request.path.proxy"}' >/dev/null
  a apigateway create-deployment --rest-api-id "$api" --stage-name test >/dev/null
  for b in "$url/restapis/$api/test/_user_request_" "$url/_aws/execute-api/$api/test"; do
    got=$(curl -s -w ' %{http_code}' "$b/ping"); expect "MOCK via $b" "$got" '{"pong": true} 200' || return 1
    got=$(curl -s -w ' %{http_code}' "$b/hello.txt"); expect "HTTP_PROXY via $b" "$got" 'backend ok' || return 1
    expect "HTTP_PROXY status" "$got" ' 200' || return 1
    got=$(curl -s -o /dev/null -w '%{http_code}' "$b/missing.txt"); expect "HTTP_PROXY 404" "$got" 404 || return 1
  done
}
check "apigateway create-rest-api, MOCK + HTTP_PROXY integrations, deployment, curl through _user_request_ and _aws/execute-api" check_apigateway

# --- KMS: what Phantom's secrets at rest use
check_kms() {
  local key plain plain2
  key=$(a kms create-key --description smoke --query KeyMetadata.KeyId)
  a kms create-alias --alias-name alias/smoke --target-key-id "$key"
  a kms generate-data-key --key-id alias/smoke --key-spec AES_256 --query '[Plaintext,CiphertextBlob]' >"$tmp/dk"
  read -r plain _ <"$tmp/dk"
  awk '{print $2}' "$tmp/dk" | base64 -d >"$tmp/blob"
  [ "$(base64 -d <<<"$plain" | wc -c)" -eq 32 ] || { echo "data key is not 32 bytes"; return 1; }
  plain2=$(a kms decrypt --ciphertext-blob "fileb://$tmp/blob" --query Plaintext)
  [ "$plain2" = "$plain" ] || { echo "decrypt gave another key"; return 1; }
  expect "decrypt key id" "$(a kms decrypt --ciphertext-blob "fileb://$tmp/blob" --query KeyId)" "key/$key" || return 1
  printf 'secret' >"$tmp/secret"
  a kms encrypt --key-id "$key" --plaintext "fileb://$tmp/secret" --query CiphertextBlob | base64 -d >"$tmp/blob2"
  [ "$(a kms decrypt --ciphertext-blob "fileb://$tmp/blob2" --query Plaintext | base64 -d)" = secret ] || { echo "encrypt/decrypt round trip"; return 1; }
  local out
  if out=$(a kms decrypt --ciphertext-blob "fileb://$tmp/secret" 2>&1); then echo "decrypting garbage worked"; return 1; fi
  expect "garbage" "$out" InvalidCiphertextException
}
check "kms create-key, create-alias, generate-data-key, decrypt, encrypt (bad ciphertext refused)" check_kms

rss_after=$(ps -o rss= -p "$ls_py" | tr -d ' ')
echo "RSS after the checks ${rss_after} KiB"

# --- stop, and what it leaves
t0=$(date +%s%N)
pgid=$ls_py   # start.sh runs LocalStack as the leader of its own process group
stop_localstack
echo "stopped after $((($(date +%s%N) - t0) / 1000000)) ms"
check "nothing left running after SIGTERM" bash -c "! pgrep -g $pgid >/dev/null && ! kill -0 $ls_py 2>/dev/null"
check "port $port closed again" bash -c "! (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null"
after=$(snapshot)
check "nothing written to /var/lib/localstack or /tmp/localstack" test "$before" = "$after"
check "LocalStack's files are under the data dir" test -d "$tmp/data/var/lib/localstack/cache"
check "no DNS server, no calls home in the log" bash -c "! grep -E 'DNS server|analytics.localstack.cloud|api.localstack.cloud' '$tmp/localstack.log'"

echo "smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
