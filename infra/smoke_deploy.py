#!/usr/bin/env python3
"""Deploy smoke test: template.yaml through the SAM transform (aws-sam-translator, as `sam deploy`
does), deployed with CloudFormation to a moto server of its own, then the stack checked: the
table (keys, TTL), the queue and its dead-letter queue (redrive), the three functions (runtime,
environment), the SQS event source mapping (ReportBatchItemFailures), the schedule, the REST API.

moto's CloudFormation does not expand SAM (hence the local transform), builds no API methods from an
OpenAPI body (so the API's Deployment and Stage are left out) and reports every function as x86_64
(so arm64 is checked in the transformed template). Function code is a placeholder zip in moto's S3.

Usage: smoke_deploy.py PORT        Exit 1 with the reasons if a check fails.
"""
import copy
import io
import json
import os
import subprocess
import sys
import time
import zipfile

import boto3
from samtranslator.translator.transform import transform

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "infra"))
import cfn  # noqa: E402

BUCKET = "phantom-artifacts"


class NoManagedPolicies:
    """The transform's managed-policy lookup: the template uses SAM policy templates only."""

    def load(self):
        return {}


def sam_transform(region):
    t = copy.deepcopy(cfn.load(os.path.join(root, "template.yaml")))
    t["Globals"]["Function"].pop("CodeUri", None)
    functions = [n for n, r in t["Resources"].items() if r["Type"] == "AWS::Serverless::Function"]
    for n in functions:
        t["Resources"][n]["Properties"]["CodeUri"] = f"s3://{BUCKET}/{n}.zip"
    os.environ.setdefault("AWS_DEFAULT_REGION", region)
    out = transform(t, {}, NoManagedPolicies())
    return functions, out


def main():
    port = int(sys.argv[1])
    region = "us-east-1"
    url = f"http://127.0.0.1:{port}"
    moto = subprocess.Popen(["moto_server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    problems = []
    try:
        kw = dict(endpoint_url=url, region_name=region, aws_access_key_id="smoke", aws_secret_access_key="smoke")
        for _ in range(100):
            try:
                boto3.client("s3", **kw).list_buckets()
                break
            except Exception:
                time.sleep(0.1)
        functions, out = sam_transform(region)
        for n in functions:
            arch = out["Resources"][n]["Properties"].get("Architectures")
            if arch != ["arm64"]:
                problems.append(f"{n}: architectures {arch}, not arm64")
        for k in [k for k, r in out["Resources"].items()
                  if r["Type"] in ("AWS::ApiGateway::Deployment", "AWS::ApiGateway::Stage")]:
            del out["Resources"][k]

        s3 = boto3.client("s3", **kw)
        s3.create_bucket(Bucket=BUCKET)
        for n in functions:
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w") as z:
                z.writestr("bootstrap", "#!/bin/sh\n")
            s3.put_object(Bucket=BUCKET, Key=f"{n}.zip", Body=buf.getvalue())

        cf = boto3.client("cloudformation", **kw)
        cf.create_stack(StackName="phantom", TemplateBody=json.dumps(out), Capabilities=["CAPABILITY_IAM"])
        for _ in range(240):
            stack = cf.describe_stacks(StackName="phantom")["Stacks"][0]
            if not stack["StackStatus"].endswith("IN_PROGRESS"):
                break
            time.sleep(0.25)
        if stack["StackStatus"] != "CREATE_COMPLETE":
            events = [f'{e["LogicalResourceId"]} {e["ResourceStatus"]} {e.get("ResourceStatusReason")}'
                      for e in cf.describe_stack_events(StackName="phantom")["StackEvents"][:10]]
            raise SystemExit(f"stack {stack['StackStatus']}: {events}")
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
        for key in ("ApiUrl", "StateTableName", "WorkQueueUrl", "WorkDeadLetterQueueUrl"):
            if key not in outputs:
                problems.append(f"output {key} missing")

        table = boto3.client("dynamodb", **kw).describe_table(TableName="phantom-state")["Table"]
        if {k["AttributeName"]: k["KeyType"] for k in table["KeySchema"]} != {"pk": "HASH", "sk": "RANGE"}:
            problems.append(f"table keys {table['KeySchema']}")
        if table.get("BillingModeSummary", {}).get("BillingMode") != "PAY_PER_REQUEST":
            problems.append("table is not on-demand")

        sqs = boto3.client("sqs", **kw)
        work = sqs.get_queue_url(QueueName="phantom-work")["QueueUrl"]
        dlq = sqs.get_queue_url(QueueName="phantom-work-dlq")["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        redrive = json.loads(sqs.get_queue_attributes(QueueUrl=work, AttributeNames=["RedrivePolicy"])
                             ["Attributes"].get("RedrivePolicy", "{}"))
        if redrive.get("deadLetterTargetArn") != dlq_arn:
            problems.append(f"work queue redrive {redrive} does not target the dead-letter queue")

        lam = boto3.client("lambda", **kw)
        deployed = lam.list_functions()["Functions"]
        if len(deployed) != 3:
            problems.append(f"{len(deployed)} functions, not 3")
        for f in deployed:
            if f["Runtime"] != "provided.al2023" or f["Handler"] != "bootstrap":
                problems.append(f"{f['FunctionName']}: {f['Runtime']} {f['Handler']}")
            env = f.get("Environment", {}).get("Variables", {})
            if env.get("PHANTOM_STATE_TABLE") != "phantom-state" or not env.get("PHANTOM_WORK_QUEUE_URL"):
                problems.append(f"{f['FunctionName']}: environment {env}")
        provisioner = [f for f in deployed if "ProvisionerFunction" in f["FunctionName"]]
        mappings = lam.list_event_source_mappings()["EventSourceMappings"]
        work_arn = sqs.get_queue_attributes(QueueUrl=work, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        if not any(m["EventSourceArn"] == work_arn
                   and "ReportBatchItemFailures" in m.get("FunctionResponseTypes", [])
                   and provisioner and m["FunctionArn"] == provisioner[0]["FunctionArn"] for m in mappings):
            problems.append(f"no queue -> provisioner mapping with ReportBatchItemFailures: {mappings}")

        rules = boto3.client("events", **kw).list_rules()["Rules"]
        if not any(r.get("ScheduleExpression") == "rate(1 minute)" for r in rules):
            problems.append(f"no rate(1 minute) schedule: {rules}")
        apis = [a["name"] for a in boto3.client("apigateway", **kw).get_rest_apis()["items"]]
        if apis != ["phantom-api"]:
            problems.append(f"REST APIs {apis}")

        for p in problems:
            print(f"smoke: {p}", file=sys.stderr)
        if not problems:
            print(f"deployed to moto and checked: {len(out['Resources'])} resources, outputs {sorted(outputs)}")
        return 1 if problems else 0
    finally:
        moto.terminate()
        moto.wait()


if __name__ == "__main__":
    sys.exit(main())
