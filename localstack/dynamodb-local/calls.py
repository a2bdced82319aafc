#!/usr/bin/env python3
"""What one DynamoDB Local call costs, as boto3 sees it (docs/benchmarks.md, "API latency"):
GetItem, PutItem (plain and conditional), UpdateItem, Query, and TransactWriteItems of two and
three items, each 100 times to warm up, then 400 timed, one at a time.

Usage: python3 localstack/dynamodb-local/calls.py PORT (a DynamoDB Local on 127.0.0.1:PORT, such as
the local stack's, PHANTOM_DYNAMODB_PORT, 4569). It makes a table of its own, `calls-bench`.
"""

import itertools
import sys
import time

import boto3

db = boto3.client(
    "dynamodb",
    endpoint_url=f"http://127.0.0.1:{sys.argv[1]}",
    region_name="us-east-1",
    aws_access_key_id="bench",
    aws_secret_access_key="bench",
)
TABLE = "calls-bench"
try:
    db.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
except db.exceptions.ResourceInUseException:
    pass
ids = (str(n) for n in itertools.count(time.time_ns()))
BODY = {"S": "x" * 200}


def item(pk):
    return {"pk": {"S": pk}, "sk": {"S": next(ids)}, "v": BODY}


def put(pk, condition=None):
    p = {"TableName": TABLE, "Item": item(pk)}
    if condition:
        p["ConditionExpression"] = condition
    return p


def count(sk):
    return {
        "TableName": TABLE,
        "Key": {"pk": {"S": "count"}, "sk": {"S": sk}},
        "UpdateExpression": "ADD n :one",
        "ExpressionAttributeValues": {":one": {"N": "1"}},
    }


CALLS = [
    ("GetItem", lambda: db.get_item(TableName=TABLE, Key={"pk": {"S": "a"}, "sk": {"S": "b"}})),
    ("PutItem", lambda: db.put_item(**put("p"))),
    ("PutItem, conditional", lambda: db.put_item(**put("q", "attribute_not_exists(pk)"))),
    ("UpdateItem", lambda: db.update_item(**count("a"))),
    ("Query", lambda: db.query(TableName=TABLE, KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "none"}})),
    ("TransactWriteItems, 2 items", lambda: db.transact_write_items(TransactItems=[
        {"Put": put("r", "attribute_not_exists(pk)")}, {"Put": put("audit")}])),
    ("TransactWriteItems, 3 items", lambda: db.transact_write_items(TransactItems=[
        {"Put": put("r", "attribute_not_exists(pk)")}, {"Put": put("audit")}, {"Update": count("b")}])),
]
print("| call | p50 | p90 |\n|---|---|---|")
for name, call in CALLS:
    for _ in range(100):
        call()
    took = []
    for _ in range(400):
        t = time.perf_counter()
        call()
        took.append((time.perf_counter() - t) * 1000)
    took.sort()
    print(f"| {name} | {took[200]:.2f} ms | {took[360]:.2f} ms |")
