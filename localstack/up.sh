#!/usr/bin/env bash
# Runs Phantom on this machine, emulator included, in the foreground; Ctrl-C stops all it started.
#
#   the state store (PHANTOM_STATE_STORE: dynamodb-local, AWS's DynamoDB Local run by java, or
#   moto), one moto server for SQS and KMS (and DynamoDB with moto), one per local cloud (hotel,
#   sierra: each its own EC2), a Prometheus (Debian's, loopback only) registered as the metric
#   source of target tracking, the tables, keys and queues of template.yaml, the clouds, a demo
#   user with credentials on both clouds, an administrator, then the api (and the web console at
#   /console/) served by phantom-local. PHANTOM_EMULATOR=localstack runs LocalStack (4.4.0, on
#   this machine, no Docker: localstack-host/) for the queues, the key and hotel's EC2 instead of
#   moto (PHANTOM_LOCALSTACK_PORT, 4570), and its API Gateway in front of the api
#   (PHANTOM_GATEWAY_URL in the env file).
#
# Ports (env): PHANTOM_PORT (api, 4580), PHANTOM_STATE_PORT (4566), PHANTOM_HOTEL_PORT (4567),
# PHANTOM_SIERRA_PORT (4568), PHANTOM_DYNAMODB_PORT (4569), PHANTOM_PROMETHEUS_PORT (4571),
# PHANTOM_LAMBDA_PORT (4572, PHANTOM_RUNTIME=lambda's Runtime API emulator);
# PHANTOM_STATE_ENDPOINT,
# PHANTOM_HOTEL_ENDPOINT, PHANTOM_SIERRA_ENDPOINT, PHANTOM_DYNAMODB_ENDPOINT use an emulator that
# is already running instead (e.g. LocalStack). PHANTOM_RUN_DIR (default localstack/.run) gets the logs and `env`,
# written once the api answers. PHANTOM_WATCH_PID: stop when that process is gone (for tests).
# PHANTOM_PROFILE=release builds and runs the release binaries (benchmarks).
# PHANTOM_STACK_NAME (default phantom) names the table, queues and key, as a SAM stack's name
# does: stacks that share a DynamoDB Local (PHANTOM_DYNAMODB_ENDPOINT) each need their own.
# PHANTOM_RUNTIME=lambda runs the three functions as Lambda runs them: their bootstraps (built for
# this machine) under cargo lambda's Runtime API emulator (PHANTOM_LAMBDA_PORT, 4572), each with
# the environment template.yaml gives it; phantom-local plays API Gateway, the SQS event sources
# and the schedule in front of them (localstack/runner/src/lambda.rs). Slower to answer than the
# default (each request is an invocation); the default runs the same handlers in process.
# PHANTOM_TEMPLATE_PARAMS ("NAME=VALUE ..."): more of template.yaml's parameters for that mode.
# PHANTOM_HEALTH_INTERVAL_SECS: seconds between looks at each user's VMs on each cloud (default
# 5), a full sweep when a look finds a change and once a minute in any case; target tracking's
# datapoints are as far apart (PHANTOM_METRIC_PERIOD_SECS, whole seconds).
# Prometheus scrapes every second whatever its file_sd targets list: drop a JSON file of targets
# in $PHANTOM_PROMETHEUS_TARGETS (written to the env file), e.g. your node_exporters.
# The clouds know moto's stock images (aws ec2 describe-images), e.g. ami-1e749f67 (Ubuntu).
# moto runs through moto/serve.py: a VM's tags found by its id, and a terminated VM forgotten
# PHANTOM_CLOUD_FORGET_SECS (default 3600) after, as EC2 forgets it after about an hour.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
api_port=${PHANTOM_PORT:-4580}
state_port=${PHANTOM_STATE_PORT:-4566}
hotel_port=${PHANTOM_HOTEL_PORT:-4567}
sierra_port=${PHANTOM_SIERRA_PORT:-4568}
dynamodb_port=${PHANTOM_DYNAMODB_PORT:-4569}
prometheus_port=${PHANTOM_PROMETHEUS_PORT:-4571}
lambda_port=${PHANTOM_LAMBDA_PORT:-4572}
runtime=${PHANTOM_RUNTIME:-local}
case $runtime in
  local | lambda) ;;
  *) echo "up.sh: PHANTOM_RUNTIME is local or lambda, not '$runtime'" >&2; exit 2 ;;
esac
state_store=${PHANTOM_STATE_STORE:-dynamodb-local}
emulator=${PHANTOM_EMULATOR:-moto}
localstack_port=${PHANTOM_LOCALSTACK_PORT:-4570}
case $emulator in
  moto) ;;
  localstack)
    # LocalStack's own DynamoDB downloads Java 21 and DynamoDB Local at first use (impossible
    # offline): the state is in DynamoDB Local, run here.
    [ "$state_store" = dynamodb-local ] || { echo "up.sh: PHANTOM_EMULATOR=localstack keeps the state in DynamoDB Local (PHANTOM_STATE_STORE=dynamodb-local)" >&2; exit 2; } ;;
  *) echo "up.sh: PHANTOM_EMULATOR is moto or localstack, not '$emulator'" >&2; exit 2 ;;
esac
case $state_store in
  dynamodb-local | moto) ;;
  *) echo "up.sh: PHANTOM_STATE_STORE is dynamodb-local or moto, not '$state_store'" >&2; exit 2 ;;
esac
run=${PHANTOM_RUN_DIR:-$here/.run}
region=${AWS_DEFAULT_REGION:-us-east-1}
mkdir -p "$run"
rm -f "$run/env"

pids=()
cleanup() {
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -f "$run/env"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say() { echo "up.sh: $*" >&2; }
# One line as each step ends, with how long it took, so a slow step shows where the time goes.
step_began=${EPOCHREALTIME/./}
done_step() { # what was done
  local now=${EPOCHREALTIME/./}
  local ms=$(((now - step_began) / 1000))
  say "$1 ($((ms / 1000)).$((ms % 1000 / 100)) s)"
  step_began=$now
}

"$here/install.sh"
done_step "tools ready (moto, the AWS CLI, DynamoDB Local)"
"$root/console/build.sh"
done_step "console built"

target=${CARGO_TARGET_DIR:-$root/target}
profile=${PHANTOM_PROFILE:-debug}   # or release, for benchmarks
if [ -z "${PHANTOM_SKIP_BUILD:-}" ]; then
  cargo_profile=$([ "$profile" = release ] && echo release || echo dev)
  # On a terminal, cargo's own progress; elsewhere (a log, CI) a line before and one after.
  quiet=(--quiet)
  if [ -t 2 ]; then
    quiet=()
  else
    say "building phantom-local, phantomctl and the functions ($profile; a first build takes minutes)"
  fi
  # The functions too (PHANTOM_RUNTIME=lambda runs them), in the same build: one set of features.
  (cd "$root" && cargo build "${quiet[@]}" --profile "$cargo_profile" -p phantom-local -p phantomctl \
    -p api -p provisioner -p health-check)
  done_step "built phantom-local, phantomctl and the functions ($profile)"
fi
bin="$target/$profile"

wait_port() { # name port
  for _ in $(seq 1 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  say "$1 did not start on port $2 (see $run/$1.log)"; exit 1
}

# A port something already listens on (another local stack still running?) would make this stack
# talk to that one's emulators: stop, saying so.
claim_port() { # name port
  if (exec 3<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then
    say "port $2 for $1 is taken (another local stack still running?): stop it, or give other ports (PHANTOM_PORT, PHANTOM_STATE_PORT, ... at the top of this script)"
    exit 1
  fi
}

start_moto() { # name port [VAR=value ...]: the clouds refuse unknown images, as real ones do
  local name=$1 port=$2; shift 2
  claim_port "$name" "$port"
  env "$@" python3 "$here/moto/serve.py" -H 127.0.0.1 -p "$port" >"$run/$name.log" 2>&1 &
  pids+=($!)
}
# An emulator already running (LocalStack, see docker-compose.yml) may stand in for any of them.
state_url=${PHANTOM_STATE_ENDPOINT:-}
hotel_url=${PHANTOM_HOTEL_ENDPOINT:-}
sierra_url=${PHANTOM_SIERRA_ENDPOINT:-}
# PHANTOM_EMULATOR=localstack: LocalStack on this machine (no Docker; localstack-host/) serves the
# queues, the key and the cloud hotel's EC2; sierra stays a moto server of its own.
if [ "$emulator" = localstack ]; then
  "$here/localstack-host/install.sh" >/dev/null
  claim_port localstack "$localstack_port"
  MOTO_ENABLE_AMI_VALIDATION=true LOCALSTACK_SERVICES=sqs,sns,ec2,kms,apigateway \
    "$here/localstack-host/start.sh" "$localstack_port" "$run/localstack" >"$run/localstack.log" 2>&1 &
  pids+=($!)
  localstack_url=http://127.0.0.1:$localstack_port
  for _ in $(seq 1 600); do
    if curl -sf "$localstack_url/_localstack/init/ready" 2>/dev/null | grep -q '"completed": true'; then break; fi
    sleep 0.1
  done
  curl -sf "$localstack_url/_localstack/init/ready" | grep -q '"completed": true' \
    || { say "LocalStack did not become ready (see $run/localstack.log)"; exit 1; }
  state_url=${state_url:-$localstack_url}
  hotel_url=${hotel_url:-$localstack_url}
fi
[ -n "$state_url" ] || { start_moto state "$state_port"; state_url=http://127.0.0.1:$state_port; }
[ -n "$hotel_url" ] || { start_moto hotel "$hotel_port" MOTO_ENABLE_AMI_VALIDATION=true; hotel_url=http://127.0.0.1:$hotel_port; }
[ -n "$sierra_url" ] || { start_moto sierra "$sierra_port" MOTO_ENABLE_AMI_VALIDATION=true; sierra_url=http://127.0.0.1:$sierra_port; }
# DynamoDB Local, as dynamodb-local/home.sh runs it.
dynamodb_url=${PHANTOM_DYNAMODB_ENDPOINT:-}
names=(state hotel sierra)
if [ "$state_store" = dynamodb-local ]; then
  if [ -z "$dynamodb_url" ]; then
    # shellcheck source=dynamodb-local/home.sh
    source "$here/dynamodb-local/home.sh"
    claim_port dynamodb "$dynamodb_port"
    ddb_run "$dynamodb_port" >"$run/dynamodb.log" 2>&1 &
    pids+=($!)
    dynamodb_url=http://127.0.0.1:$dynamodb_port
  fi
  names+=(dynamodb)
else
  dynamodb_url=$state_url
fi
# Prometheus, as the local metric source: it scrapes itself and whatever the targets folder lists.
# shellcheck source=prometheus/home.sh
source "$here/prometheus/home.sh"
prom_dir=$run/prometheus
mkdir -p "$prom_dir/targets"
cat >"$prom_dir/prometheus.yml" <<PROM
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: prometheus
    static_configs:
      - targets: ['127.0.0.1:$prometheus_port']
  - job_name: targets
    file_sd_configs:
      - files: ['$prom_dir/targets/*.json']
        refresh_interval: 1s
  # Every user's group metrics (EnableMetricsCollection), from the api with the admin user's
  # scrape password (written below, once the user exists; read at each scrape).
  - job_name: phantom-groups
    metrics_path: /phantom/v1/metrics
    params: {users: [all]}
    basic_auth:
      username: admin
      password_file: $prom_dir/admin.password
    static_configs:
      - targets: ['127.0.0.1:$api_port']
  # Phantom's own operating metrics (phantom-local runs every function: the figures are the
  # stack's), with the same credential.
  - job_name: phantom-operations
    metrics_path: /phantom/v1/metrics
    params: {scope: [operations]}
    basic_auth:
      username: admin
      password_file: $prom_dir/admin.password
    static_configs:
      - targets: ['127.0.0.1:$api_port']
PROM
: >"$prom_dir/admin.password"
claim_port prometheus "$prometheus_port"
"$prom_bin" --config.file="$prom_dir/prometheus.yml" --storage.tsdb.path="$prom_dir/data" \
  --web.listen-address="127.0.0.1:$prometheus_port" >"$run/prometheus.log" 2>&1 &
pids+=($!)
prometheus_url=http://127.0.0.1:$prometheus_port
names+=(prometheus)
for name in "${names[@]}"; do
  url_var=${name}_url
  port=${!url_var##*:}; port=${port%%/*}
  wait_port "$name" "$port"
done
done_step "emulators answering: ${names[*]}"

# The service's own AWS identity against the emulators (any key; DynamoDB Local takes letters and
# digits only).
export AWS_ACCESS_KEY_ID=phantomlocal AWS_SECRET_ACCESS_KEY=phantomlocal
export AWS_REGION=$region AWS_DEFAULT_REGION=$region AWS_EC2_METADATA_DISABLED=true
export AWS_ENDPOINT_URL=$state_url AWS_ENDPOINT_URL_DYNAMODB=$dynamodb_url
export PHANTOM_DEFAULT_CLOUD=${PHANTOM_DEFAULT_CLOUD:-hotel}
# On LocalStack, its API Gateway in front of the api too: template.yaml's REST API, its routes
# forwarded (HTTP_PROXY) to phantom-local, which stands in for the Lambda function (LocalStack runs
# functions only in Docker) and reads the client's Host and path from the forwarded headers.
gateway=()
[ "$emulator" = localstack ] && gateway=(--gateway-to "http://127.0.0.1:$api_port")
# As Lambda: the functions as template.yaml declares them, its parameters set for this machine (the
# pulse's cadence as quick as the local default's, the default cloud hotel).
functions=()
if [ "$runtime" = lambda ]; then
  interval=${PHANTOM_HEALTH_INTERVAL_SECS:-5}; interval=${interval%.*}; [ "${interval:-0}" -ge 1 ] || interval=1
  # A full sweep of every pair at least once a minute, as phantom-local's own pulse.
  sweep=$(( (60 + interval - 1) / interval * interval ))
  functions=(--functions "$run/functions.json" --param "DefaultCloud=${PHANTOM_DEFAULT_CLOUD}"
    --param "PulseSeconds=$interval" --param "LookSeconds=$interval" --param "SweepSeconds=$sweep")
  # Others as `sam deploy --parameter-overrides` sets them (e.g. a short ProvisionerTimeout).
  for given in ${PHANTOM_TEMPLATE_PARAMS:-}; do functions+=(--param "$given"); done
fi
python3 "$here/bootstrap.py" "$root/template.yaml" --stack "${PHANTOM_STACK_NAME:-phantom}" "${gateway[@]}" "${functions[@]}" >"$run/resources"
# shellcheck source=/dev/null
source "$run/resources"
done_step "table, queues and key created from template.yaml"

"$bin/phantomctl" cloud add hotel --endpoint "$hotel_url" --region "$region"
"$bin/phantomctl" cloud add sierra --endpoint "$sierra_url" --region "$region"
read -r demo_key demo_secret < <("$bin/phantomctl" user create demo)
read -r admin_key admin_secret < <("$bin/phantomctl" user create admin --admin)
for cloud in hotel sierra; do
  "$bin/phantomctl" credentials set demo "$cloud" --access-key-id "demo-$cloud" --secret-access-key "demo-$cloud-secret"
done
"$bin/phantomctl" metric-source set --url "$prometheus_url" --instance-label instance_id
"$bin/phantomctl" user scrape admin >"$prom_dir/admin.password"
done_step "clouds, users and the metric source registered"

health_interval=${PHANTOM_HEALTH_INTERVAL_SECS:-5}
metric_period=${health_interval%.*}
[ "${metric_period:-0}" -ge 1 ] 2>/dev/null || metric_period=1
export PHANTOM_METRIC_PERIOD_SECS=${PHANTOM_METRIC_PERIOD_SECS:-$metric_period}

trust_forwarded=$([ "$emulator" = localstack ] && echo true || echo false)
lambda_env=()
if [ "$runtime" = lambda ]; then
  # shellcheck source=/dev/null
  source "$root/infra/tools.sh"
  claim_port emulator "$lambda_port"
  (cd "$root" && exec cargo lambda watch --only-lambda-apis --invoke-address 127.0.0.1 \
    --invoke-port "$lambda_port") >"$run/emulator.log" 2>&1 &
  pids+=($!)
  wait_port emulator "$lambda_port"
  done_step "the Runtime API emulator answering (cargo lambda watch on port $lambda_port)"
  lambda_env=(PHANTOM_RUNTIME=lambda PHANTOM_FUNCTIONS="$run/functions.json"
    PHANTOM_LAMBDA_EMULATOR="http://127.0.0.1:$lambda_port")
fi
claim_port api "$api_port"
env "${lambda_env[@]}" PHANTOM_TRUST_FORWARDED=$trust_forwarded PHANTOM_BIND=127.0.0.1:$api_port "$bin/phantom-local" 2>"$run/api.log" &
api_pid=$!
pids+=($api_pid)
wait_port api "$api_port"
done_step "api answering"

url=http://127.0.0.1:$api_port
cat >"$run/env.tmp" <<ENV
export PHANTOM_URL=$url
export AWS_ENDPOINT_URL_AUTO_SCALING=$url
export AWS_ACCESS_KEY_ID=$demo_key
export AWS_SECRET_ACCESS_KEY=$demo_secret
export PHANTOM_ADMIN_ACCESS_KEY_ID=$admin_key
export PHANTOM_ADMIN_SECRET_ACCESS_KEY=$admin_secret
export AWS_DEFAULT_REGION=$region
export AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL
export AWS_ENDPOINT_URL_DYNAMODB=$AWS_ENDPOINT_URL_DYNAMODB
export PHANTOM_STATE_STORE=$state_store
export PHANTOM_EMULATOR=$emulator
export AWS_EC2_METADATA_DISABLED=true
export PHANTOM_STATE_TABLE=$PHANTOM_STATE_TABLE
export PHANTOM_SECRETS_KEY=$PHANTOM_SECRETS_KEY
export PHANTOM_WORK_QUEUE_URL=$PHANTOM_WORK_QUEUE_URL
export PHANTOM_CLOUD_HOTEL_URL=$hotel_url
export PHANTOM_CLOUD_SIERRA_URL=$sierra_url
export PHANTOM_PROMETHEUS_URL=$prometheus_url
export PHANTOM_PROMETHEUS_TARGETS=$prom_dir/targets
ENV
if [ -n "${PHANTOM_GATEWAY_URL:-}" ]; then echo "export PHANTOM_GATEWAY_URL=$PHANTOM_GATEWAY_URL" >>"$run/env.tmp"; fi
# phantomctl as built here, for the README's commands (a function: nothing added to PATH).
printf 'phantomctl() { %q "$@"; }\n' "$bin/phantomctl" >>"$run/env.tmp"
mv "$run/env.tmp" "$run/env"

gateway_line=
if [ -n "${PHANTOM_GATEWAY_URL:-}" ]; then
  gateway_line="Through LocalStack's API Gateway (the deployed shape): $PHANTOM_GATEWAY_URL"$'\n'
fi
# The README's first group, as the README has it (its block `sh first-group`), so the two never part.
first_group=$(awk '/^```sh first-group/ {on = 1; next} /^```/ {on = 0} on {print "  " $0}' "$root/README.md")
cat >&2 <<BANNER

Phantom is running at $url (logs: $run/api.log; state in $state_store at $AWS_ENDPOINT_URL_DYNAMODB, queues and keys in $emulator at $AWS_ENDPOINT_URL)
Console: $url/console/ (sign in with a user's access key ID and secret access key)
Clouds: hotel at $hotel_url (default), sierra at $sierra_url
Metric source: Prometheus at $prometheus_url (scrapes the targets in $prom_dir/targets/*.json, and every user's group metrics)
${gateway_line}Demo user "demo" (source $run/env to use its keys):
  access key ID      $demo_key
  secret access key  $demo_secret
Administrator "admin":
  access key ID      $admin_key
  secret access key  $admin_secret

The README's first group, in another terminal at $root:
$first_group

Ctrl-C stops everything.
BANNER

if [ -n "${PHANTOM_WATCH_PID:-}" ]; then
  while kill -0 "$PHANTOM_WATCH_PID" 2>/dev/null && kill -0 "$api_pid" 2>/dev/null; do sleep 1; done
else
  wait "$api_pid"
fi
