#!/usr/bin/env python3
"""Creates the local stack's DynamoDB tables, KMS keys and SQS queues from template.yaml, the one place they
are defined, and prints shell `export` lines naming them (PHANTOM_TABLE, PHANTOM_QUEUE_URL, ...).
With --gateway-to URL, also the template's REST API (API Gateway v1, as LocalStack serves it) with
HTTP_PROXY integrations to URL, the runner standing in for the api function: PHANTOM_GATEWAY_URL.
With --functions FILE, the template's functions as Lambda would run them, written to FILE as JSON
for the runner's Lambda mode (PHANTOM_RUNTIME=lambda): each one's binary, timeout, memory, the
environment the template gives it (its intrinsics resolved to the local stack's resources) and its
events (API routes and stage, SQS queues with their batch sizes, schedules). --param NAME=VALUE
overrides a template parameter's default, as `sam deploy --parameter-overrides` does.

Usage: bootstrap.py TEMPLATE [--stack NAME] [--gateway-to URL] [--functions FILE] [--param NAME=VALUE ...]
(endpoint, region, credentials from the environment)
"""
import argparse
import json
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


def add_indexes(ddb, table):
    """An existing table (a stack bootstrapped by an older template) gets the indexes it lacks."""
    name = table["TableName"]
    have = {i["IndexName"] for i in ddb.describe_table(TableName=name)["Table"].get("GlobalSecondaryIndexes", [])}
    for index in table.get("GlobalSecondaryIndexes", []):
        if index["IndexName"] not in have:
            ddb.update_table(TableName=name, AttributeDefinitions=table["AttributeDefinitions"],
                             GlobalSecondaryIndexUpdates=[{"Create": index}])


def env_name(logical_id):
    return "PHANTOM_" + re.sub(r"(?<!^)(?=[A-Z])", "_", logical_id).upper()


def rest_api(resources, stack):
    """The template's one REST API: its name, stage and routes (path, method) from the Api
    events of the functions that name it. Exits if any of it is missing: no guessed defaults."""
    apis = [k for k, v in resources.items() if v["Type"] == "AWS::Serverless::Api"]
    if len(apis) != 1:
        sys.exit(f"bootstrap.py: --gateway-to needs exactly one AWS::Serverless::Api in the template, found {apis}")
    logical = apis[0]
    props = resources[logical].get("Properties", {})
    name, stage = (props.get(key) for key in ("Name", "StageName"))
    try:
        name, stage = resolve(name, stack, {}), resolve(stage, stack, {})
    except KeyError:  # a !Ref: to a parameter, say, which nothing here gives a value
        pass
    for key, value in (("Name", name), ("StageName", stage)):
        if not isinstance(value, str) or not value or "${" in value:
            sys.exit(f"bootstrap.py: {logical}'s {key} is missing or not resolved: {value!r}")
    routes = []
    for fn, res in resources.items():
        if res["Type"] != "AWS::Serverless::Function":
            continue
        for event, ev in (res.get("Properties", {}).get("Events") or {}).items():
            ev_props = ev.get("Properties", {})
            if ev.get("Type") != "Api" or ev_props.get("RestApiId") != {"Ref": logical}:
                continue
            path, method = ev_props.get("Path"), ev_props.get("Method")
            if not isinstance(path, str) or not path.startswith("/") or not isinstance(method, str):
                sys.exit(f"bootstrap.py: {fn}'s event {event} needs a Path (from /) and a Method: {path!r}, {method!r}")
            routes.append((path, method.upper()))  # SAM takes "any" as well as "ANY"
    if not routes:
        sys.exit(f"bootstrap.py: no function has an event of Type Api with RestApiId !Ref {logical}")
    return name, stage, routes


def create_gateway(name, stage, routes, runner):
    """The REST API, found again by its name on a second run, its methods replaced (the runner's URL
    may have changed) and the stage deployed; returns its id."""
    apigw = boto3.client("apigateway")
    found = [a["id"] for page in apigw.get_paginator("get_rest_apis").paginate()
             for a in page["items"] if a["name"] == name]
    if len(found) > 1:
        sys.exit(f"bootstrap.py: {len(found)} REST APIs are named {name}; delete the extra ones")
    api_id = found[0] if found else apigw.create_rest_api(name=name)["id"]
    ids = {r["path"]: r["id"] for page in apigw.get_paginator("get_resources").paginate(restApiId=api_id)
           for r in page["items"]}
    for path, method in routes:
        # Each missing segment of the path, e.g. /{proxy+} under /.
        parent, parts = ids["/"], [p for p in path.split("/") if p]
        for i, part in enumerate(parts):
            here = "/" + "/".join(parts[:i + 1])
            if here not in ids:
                ids[here] = apigw.create_resource(restApiId=api_id, parentId=parent, pathPart=part)["id"]
            parent = ids[here]
        params = re.findall(r"\{([^}+]+)\+?\}", path)
        # The runner sees neither the client's Host (HTTP_PROXY drops it) nor the /_aws/execute-api/ID/STAGE
        # prefix, both of which the client's SigV4 signature covers: they arrive as X-Forwarded-*. The Host
        # from $context.domainName: LocalStack matches method.request.header.Host case-sensitively, and
        # the Rust SDK (hyper) sends `host`.
        mapping = {"integration.request.header.X-Forwarded-Host": "context.domainName",
                   "integration.request.header.X-Forwarded-Prefix": f"'/_aws/execute-api/{api_id}/{stage}'"}
        mapping.update({f"integration.request.path.{p}": f"method.request.path.{p}" for p in params})
        method_params = {f"method.request.path.{p}": True for p in params}
        try:
            apigw.delete_method(restApiId=api_id, resourceId=parent, httpMethod=method)
        except apigw.exceptions.NotFoundException:
            pass
        apigw.put_method(restApiId=api_id, resourceId=parent, httpMethod=method, authorizationType="NONE",
                         requestParameters=method_params)
        apigw.put_integration(restApiId=api_id, resourceId=parent, httpMethod=method, type="HTTP_PROXY",
                              integrationHttpMethod="ANY", uri=runner + re.sub(r"\{([^}+]+)\+\}", r"{\1}", path),
                              requestParameters=mapping)
    apigw.create_deployment(restApiId=api_id, stageName=stage)
    return api_id


def functions(template, refs, atts, region):
    """The template's functions as Lambda runs them (see the module's comment). Exits on anything
    it cannot resolve: a function must get the environment the template gives it, or none."""
    glob = template.get("Globals", {}).get("Function", {})
    pseudo = {"AWS::Region": region, "AWS::StackName": None}

    def value(v, where):
        if isinstance(v, dict) and len(v) == 1:
            (fn, arg), = v.items()
            if fn == "Ref":
                if arg in pseudo and pseudo[arg] is not None:
                    return pseudo[arg]
                if arg in refs:
                    return refs[arg]
            if fn == "Fn::GetAtt" and tuple(arg) in atts:
                return atts[tuple(arg)]
            sys.exit(f"bootstrap.py: {where}: cannot resolve {v!r} locally")
        if isinstance(v, (str, int, float)) and not isinstance(v, bool):
            return str(v)
        sys.exit(f"bootstrap.py: {where}: {v!r} is not a value")

    out = []
    for logical, res in template["Resources"].items():
        if res["Type"] != "AWS::Serverless::Function":
            continue
        props = res.get("Properties", {})
        env = dict(glob.get("Environment", {}).get("Variables", {}))
        env.update(props.get("Environment", {}).get("Variables", {}))
        events = []
        for name, ev in props.get("Events", {}).items():
            ep = ev.get("Properties", {})
            where = f"{logical}.Events.{name}"
            if ev["Type"] == "Api":
                events.append({"type": "Api", "path": ep["Path"], "method": ep["Method"]})
            elif ev["Type"] == "SQS":
                queue = ep["Queue"].get("Fn::GetAtt", [None])[0]
                if queue not in refs:
                    sys.exit(f"bootstrap.py: {where}: the queue {ep['Queue']!r} is not the template's")
                events.append({
                    "type": "SQS", "queue_url": refs[queue],
                    "batch_size": int(ep.get("BatchSize", 10)),
                    "report_failures": "ReportBatchItemFailures" in ep.get("FunctionResponseTypes", []),
                    "max_concurrency": ep.get("ScalingConfig", {}).get("MaximumConcurrency"),
                })
            elif ev["Type"] == "Schedule":
                events.append({"type": "Schedule", "schedule": value(ep["Schedule"], where)})
            else:
                sys.exit(f"bootstrap.py: {where}: no local stand-in for a {ev['Type']} event")
        out.append({
            "logical_id": logical,
            "name": res["Metadata"]["BuildProperties"]["Binary"],
            "timeout_secs": int(value(props.get("Timeout", glob.get("Timeout", 3)), f"{logical}.Timeout")),
            "memory_mb": int(value(props.get("MemorySize", glob.get("MemorySize", 128)), f"{logical}.MemorySize")),
            "env": {k: value(v, f"{logical}.Environment.{k}") for k, v in env.items()},
            "events": events,
        })
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("template")
    ap.add_argument("--stack", default="phantom")
    ap.add_argument("--gateway-to", metavar="URL",
                    help="the api runner's URL (e.g. http://127.0.0.1:4580): the REST API proxies to it")
    ap.add_argument("--functions", metavar="FILE",
                    help="write the functions as Lambda runs them (JSON) to FILE")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="a template parameter's value (default: its Default)")
    args = ap.parse_args()
    template = cfn.load(args.template)
    resources = template["Resources"]
    # Checked before anything is created, so that a template without its API fails at once.
    gateway = None
    if args.gateway_to is not None:
        if not re.match(r"^https?://[^/]+/?$", args.gateway_to):
            sys.exit(f"bootstrap.py: --gateway-to wants http(s)://HOST:PORT, not {args.gateway_to!r}")
        # LocalStack's URL for a stage (/_aws/execute-api/ID/STAGE) is on the endpoint the client calls.
        endpoint = boto3.client("apigateway").meta.endpoint_url.rstrip("/")
        if endpoint.endswith(".amazonaws.com"):
            sys.exit("bootstrap.py: --gateway-to is for LocalStack: set AWS_ENDPOINT_URL")
        gateway = rest_api(resources, args.stack)

    ddb, sqs = boto3.client("dynamodb"), boto3.client("sqs")
    # A parameter's default stands for its value (the pulse queue's delay, say).
    names = {k: str(v["Default"]) for k, v in template.get("Parameters", {}).items() if "Default" in v}
    for given in args.param:
        k, sep, v = given.partition("=")
        if not sep or k not in template.get("Parameters", {}):
            sys.exit(f"bootstrap.py: --param {given!r} names no parameter of the template")
        names[k] = v
    refs, atts = dict(names), {}
    exports = []
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
            add_indexes(ddb, kwargs)
        ddb.get_waiter("table_exists").wait(TableName=props["TableName"])
        ttl = props.get("TimeToLiveSpecification")
        if ttl and ttl.get("Enabled"):
            ddb.update_time_to_live(TableName=props["TableName"], TimeToLiveSpecification={
                "AttributeName": ttl["AttributeName"], "Enabled": True})
        names[logical] = props["TableName"]
        refs[logical] = props["TableName"]
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
        refs[logical] = atts[(logical, "Arn")] = key_id
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
            attributes = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in props.items()
                          if k in ("VisibilityTimeout", "MessageRetentionPeriod", "FifoQueue", "DelaySeconds")}
            if redrive:
                target = arns[redrive["deadLetterTargetArn"]["__getatt__"][0]]
                attributes["RedrivePolicy"] = f'{{"deadLetterTargetArn":"{target}","maxReceiveCount":"{redrive["maxReceiveCount"]}"}}'
            url = sqs.create_queue(QueueName=props["QueueName"], Attributes=attributes)["QueueUrl"]
            arns[logical] = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
            refs[logical] = url
            atts[(logical, "Arn")] = arns[logical]
            atts[(logical, "QueueName")] = props["QueueName"]
            exports.append((env_name(logical) + "_URL", url))
            del pending[logical]

    if gateway:
        name, stage, routes = gateway
        api_id = create_gateway(name, stage, routes, args.gateway_to.rstrip("/"))
        # With the slash, as template.yaml's ApiUrl: the AWS CLI signs the path as given, and the
        # gateway forwards `/` for both `.../Prod` and `.../Prod/`.
        exports.append(("PHANTOM_GATEWAY_URL", f"{endpoint}/_aws/execute-api/{api_id}/{stage}/"))

    if args.functions:
        region = boto3.session.Session().region_name
        with open(args.functions, "w") as f:
            json.dump({"functions": functions(template, refs, atts, region)}, f, indent=2)

    for k, v in exports:
        print(f"export {k}={v}")


if __name__ == "__main__":
    sys.exit(main())
