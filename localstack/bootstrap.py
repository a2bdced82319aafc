#!/usr/bin/env python3
"""Creates the local stack's DynamoDB tables, KMS keys and SQS queues from template.yaml, the one place they
are defined, and prints shell `export` lines naming them (PHANTOM_TABLE, PHANTOM_QUEUE_URL, ...).

Usage: bootstrap.py TEMPLATE [--stack NAME]   (endpoint, region, credentials from the environment)
"""
import argparse
import os
import re
import sys

import boto3

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "infra"))
import cfn  # noqa: E402


def resolve(value, stack, names):
    """Resolves the intrinsic functions the table and queue definitions use."""
    if isinstance(value, dict) and len(value) == 1:
        (fn, arg), = value.items()
        if fn == "Fn::Sub":
            return re.sub(r"\$\{([^}]+)\}", lambda m: {"AWS::StackName": stack}.get(m.group(1), names.get(m.group(1), m.group(0))), arg)
        if fn == "Ref":
            return names[arg]
        if fn == "Fn::GetAtt":
            return {"__getatt__": arg}
    if isinstance(value, dict):
        return {k: resolve(v, stack, names) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, stack, names) for v in value]
    return value


def env_name(logical_id):
    return "PHANTOM_" + re.sub(r"(?<!^)(?=[A-Z])", "_", logical_id).upper()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("template")
    ap.add_argument("--stack", default="phantom")
    args = ap.parse_args()
    resources = cfn.load(args.template)["Resources"]

    ddb, sqs = boto3.client("dynamodb"), boto3.client("sqs")
    names, exports = {}, []
    for logical, res in resources.items():
        if res["Type"] != "AWS::DynamoDB::Table":
            continue
        props = resolve(res.get("Properties", {}), args.stack, names)
        kwargs = {k: props[k] for k in ("TableName", "AttributeDefinitions", "KeySchema",
                                        "BillingMode", "GlobalSecondaryIndexes", "LocalSecondaryIndexes")
                  if k in props}
        try:
            ddb.create_table(**kwargs)
        except ddb.exceptions.ResourceInUseException:
            pass
        ddb.get_waiter("table_exists").wait(TableName=props["TableName"])
        ttl = props.get("TimeToLiveSpecification")
        if ttl and ttl.get("Enabled"):
            ddb.update_time_to_live(TableName=props["TableName"], TimeToLiveSpecification={
                "AttributeName": ttl["AttributeName"], "Enabled": True})
        names[logical] = props["TableName"]
        exports.append((env_name(logical), props["TableName"]))

    # KMS keys (secrets at rest): one per declaration, found again by its alias on a second run.
    kms = boto3.client("kms")
    for logical, res in resources.items():
        if res["Type"] != "AWS::KMS::Key":
            continue
        alias = f"alias/{args.stack}-{logical}"
        try:
            key_id = kms.describe_key(KeyId=alias)["KeyMetadata"]["Arn"]
        except kms.exceptions.NotFoundException:
            key_id = kms.create_key(Description=f"{args.stack} {logical}")["KeyMetadata"]["Arn"]
            kms.create_alias(AliasName=alias, TargetKeyId=key_id)
        exports.append((env_name(logical), key_id))

    # Queues: dead-letter targets first, so a redrive policy can name their ARN.
    queues = {k: v for k, v in resources.items() if v["Type"] == "AWS::SQS::Queue"}
    arns = {}
    pending = dict(queues)
    while pending:
        for logical, res in list(pending.items()):
            props = resolve(res.get("Properties", {}), args.stack, names)
            redrive = props.get("RedrivePolicy")
            if redrive and redrive["deadLetterTargetArn"]["__getatt__"][0] not in arns:
                continue
            attributes = {k: str(v) for k, v in props.items() if k in ("VisibilityTimeout", "MessageRetentionPeriod")}
            if redrive:
                target = arns[redrive["deadLetterTargetArn"]["__getatt__"][0]]
                attributes["RedrivePolicy"] = f'{{"deadLetterTargetArn":"{target}","maxReceiveCount":"{redrive["maxReceiveCount"]}"}}'
            url = sqs.create_queue(QueueName=props["QueueName"], Attributes=attributes)["QueueUrl"]
            arns[logical] = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
            exports.append((env_name(logical) + "_URL", url))
            del pending[logical]

    for k, v in exports:
        print(f"export {k}={v}")


if __name__ == "__main__":
    sys.exit(main())
