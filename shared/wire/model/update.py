#!/usr/bin/env python3
"""Regenerates the service models Phantom speaks from the installed botocore's.

Phantom decodes requests and renders responses by walking these models, so the wire format is the one
boto3 and the AWS CLI parse against. Documentation strings are dropped; everything else is kept.
Run: python3 shared/wire/model/update.py
"""
import gzip, json, os
import botocore

SERVICES = [("autoscaling", "2011-01-01"), ("cloudwatch", "2010-08-01"), ("iam", "2010-05-08"), ("sts", "2011-06-15"),
            ("cloudtrail", "2013-11-01")]


def strip(node):
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items() if k not in ("documentation", "documentationUrl", "examples")}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


for name, version in SERVICES:
    src = os.path.join(os.path.dirname(botocore.__file__), f"data/{name}/{version}/service-2.json.gz")
    model = json.load(gzip.open(src))
    out = {"botocore": botocore.__version__, "metadata": model["metadata"],
           "operations": strip(model["operations"]), "shapes": strip(model["shapes"])}
    dst = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}-{version}.json")
    with open(dst, "w") as f:
        json.dump(out, f, indent=0)
        f.write("\n")
    print(dst, os.path.getsize(dst), "bytes")
