#!/usr/bin/env bash
# Runs LocalStack 4.4.0 (community) on this machine without Docker, in the foreground, listening on
# 127.0.0.1:PORT only, with all its files under DATA_DIR. Installs it first if needed (install.sh).
#
#   localstack/localstack-host/start.sh PORT DATA_DIR
#
# Ready when GET http://127.0.0.1:PORT/_localstack/init/ready answers {"completed": true, ...}
# (GET /_localstack/health answers 200 as soon as the gateway listens, with each service
# "available", or "running" once used); waiting is the caller's job, e.g.
#   until curl -sf http://127.0.0.1:$PORT/_localstack/init/ready | grep -q '"completed": true'; do sleep 0.1; done
#
# SIGTERM, SIGINT or SIGHUP stop it: LocalStack gets SIGTERM, then whatever is left of its process
# group gets SIGKILL once it exits or after LOCALSTACK_STOP_TIMEOUT seconds (default 15). If this
# script itself is SIGKILLed, LocalStack still gets SIGTERM (parent-death signal).
#
# Environment:
#   LOCALSTACK_SERVICES   services to serve (default sqs,sns,ec2,apigateway,kms; the others that need
#                         downloads, such as dynamodb, cannot work offline)
#   MOTO_ENABLE_AMI_VALIDATION=true  EC2 refuses unknown image ids (InvalidAMIID.NotFound), as AWS
#                         does; beware: moto reads any non-empty value, even "false", as true
#   DEBUG=1, PERSISTENCE=1 and other LocalStack settings pass through.
# Always set here, whatever the caller's environment says: OVERRIDE_IN_DOCKER=0 (without it
# LocalStack believes this machine is its container, since /.dockerenv exists, and then writes under
# /var/lib/localstack and deletes /tmp/localstack), FILESYSTEM_ROOT and CONFIG_DIR under DATA_DIR,
# GATEWAY_LISTEN and LOCALSTACK_HOST on 127.0.0.1:PORT (queue URLs name that address; launch.py makes
# the server bind that address rather than 0.0.0.0), SQS_ENDPOINT_STRATEGY=path, DNS_ADDRESS=0 (no
# DNS server on port 53), no network calls (DISABLE_EVENTS=1, SKIP_SSL_CERT_DOWNLOAD=1,
# AWS_EC2_METADATA_DISABLED=true). See README.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { echo "localstack-host/start.sh: $*" >&2; }

if [ $# -ne 2 ]; then
  echo "usage: $0 PORT DATA_DIR" >&2; exit 2
fi
port=$1
if ! [[ $port =~ ^[0-9]{1,5}$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then
  say "bad port: $port"; exit 2
fi
mkdir -p "$2"
data=$(cd "$2" && pwd -P)
# LocalStack deletes DATA_DIR/tmp/localstack with `rm -rf "<path>"` through a shell on start and stop.
if [ "$data" = / ] || [[ $data == *[\"\$\`\\]* ]] || [[ $data == *$'\n'* ]]; then
  say "refusing DATA_DIR $data (the root, or a name with \" \$ \` \\ or a newline)"; exit 2
fi
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  say "port $port is already in use"; exit 1
fi

py=$("$here/install.sh")
# The service catalog index that install.sh built (LocalStack would build it at the first request).
mkdir -p "$data/usr/lib/localstack"
for f in "$(dirname "$(dirname "$py")")"/static-libs/service-catalog-*.dill; do
  if [ -e "$f" ] && [ ! -e "$data/usr/lib/localstack/${f##*/}" ]; then cp "$f" "$data/usr/lib/localstack/"; fi
done

env=(
  OVERRIDE_IN_DOCKER=0
  FILESYSTEM_ROOT="$data"
  CONFIG_DIR="$data/config"   # not ~/.localstack/*.env profiles
  CONFIG_PROFILE=
  GATEWAY_LISTEN="127.0.0.1:$port"
  LOCALSTACK_HOST="127.0.0.1:$port"
  SERVICES="${LOCALSTACK_SERVICES:-sqs,sns,ec2,apigateway,kms}"
  SQS_ENDPOINT_STRATEGY=path
  DYNAMODB_IN_MEMORY=1
  DNS_ADDRESS=0
  DISABLE_EVENTS=1
  LOCALSTACK_TELEMETRY_DISABLED=1
  SKIP_SSL_CERT_DOWNLOAD=1
  AWS_EC2_METADATA_DISABLED=true   # API Gateway's internal client looks for credentials at 169.254.169.254
)
# The parent-death signal makes LocalStack stop if this script is killed with SIGKILL.
launch=(setsid)
if setpriv --help 2>/dev/null | grep -q -- --pdeathsig; then
  launch+=(setpriv --pdeathsig TERM)
fi

cd "$data"
# setsid does not fork here (a background job is no group leader), so $child leads its own group.
env "${env[@]}" "${launch[@]}" "$py" "$here/launch.py" &
child=$!

# shellcheck disable=SC2329  # used by stop(), which the trap calls
alive() { # running, not exited (an exited child stays a zombie until waited for)
  local state
  state=$(awk '{print $3}' "/proc/$child/stat" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}
reap() { # kill what is left of LocalStack's process group
  kill -KILL -- "-$child" 2>/dev/null || true
}
# shellcheck disable=SC2329  # called by the trap
stop() {
  trap '' TERM INT HUP
  kill -TERM "$child" 2>/dev/null || true
  local waited=0 limit=$((${LOCALSTACK_STOP_TIMEOUT:-15} * 10))
  while alive && [ "$waited" -lt "$limit" ]; do
    sleep 0.1; waited=$((waited + 1))
  done
  reap
  wait "$child" 2>/dev/null || true
  exit 143
}
trap stop TERM INT HUP

set +e
wait "$child"
rc=$?
set -e
reap
exit "$rc"
