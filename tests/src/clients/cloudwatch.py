"""boto3's CloudWatch client in one protocol CloudWatch's clients speak, for the tests.

botocore 1.43 sends JSON 1.0 to CloudWatch; the Go SDK (so Terraform) sends Smithy RPC v2 CBOR and
older SDKs the Query protocol. botocore implements all three: here the client is made with the
service model's protocol set to the one asked for, so each is spoken by a real client and its
answers parsed by a real parser.

stdin: {"endpoint", "region", "key", "secret", "protocol", "calls": [{"op", "params"}]}
stdout: one JSON line, a list of {"ok": answer} or {"error": {"code", "message", "status"}}
"""
import json
import sys

import botocore.session
from botocore.config import Config
from botocore.exceptions import ClientError

request = json.load(sys.stdin)
protocol = request["protocol"]
session = botocore.session.get_session()
loader = session.get_component("data_loader")
load = loader.load_service_model


def with_protocol(service_name, type_name, api_version=None):
    model = load(service_name, type_name, api_version)
    if service_name == "cloudwatch" and type_name == "service-2":
        model = dict(model)
        model["metadata"] = dict(model["metadata"], protocol=protocol, protocols=[protocol])
    return model


loader.load_service_model = with_protocol
client = session.create_client(
    "cloudwatch",
    endpoint_url=request["endpoint"],
    region_name=request["region"],
    aws_access_key_id=request["key"],
    aws_secret_access_key=request["secret"],
    config=Config(retries={"max_attempts": 1}),
)
out = []
for call in request["calls"]:
    op = getattr(client, call["op"])
    try:
        answer = op(**call["params"])
        answer.pop("ResponseMetadata", None)
        out.append({"ok": answer})
    except ClientError as e:
        err = e.response.get("Error", {})
        out.append({"error": {"code": err.get("Code"), "message": err.get("Message"),
                              "status": e.response["ResponseMetadata"]["HTTPStatusCode"]}})
print(json.dumps(out, default=lambda t: t.isoformat()))
