#!/usr/bin/env python3
"""Checks that template.yaml and the code agree, both ways:
- the functions: each function's BuildProperties.Binary is a binary of a crate under functions/,
  and each such binary has a function;
- the environment: the variables the template sets are the PHANTOM_* variables the Lambda code reads
  (shared/, functions/), plus RUST_LOG (tracing's filter);
- the table: its key attributes and TTL attribute are the ones shared/seams/src/store names, and its
  indexes are the ones the code queries (`.index_name("...")`).

Usage: check_template.py [TEMPLATE]   (default: template.yaml at the repository root). Exit 1 on drift.
"""
import json
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "infra"))
import cfn  # noqa: E402


def rust_sources(*dirs):
    for d in dirs:
        for base, _, files in os.walk(os.path.join(root, d)):
            for f in files:
                if f.endswith(".rs"):
                    with open(os.path.join(base, f)) as fh:
                        yield fh.read()


def main():
    template = cfn.load(sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "template.yaml"))
    resources = template["Resources"]
    problems = []

    # Functions <-> binaries of functions/*.
    meta = json.loads(subprocess.check_output(
        ["cargo", "metadata", "--no-deps", "--format-version", "1", "--offline"], cwd=root))
    binaries = {t["name"] for p in meta["packages"]
                if os.path.relpath(p["manifest_path"], root).startswith("functions" + os.sep)
                for t in p["targets"] if "bin" in t["kind"]}
    functions = {name: r for name, r in resources.items() if r["Type"] == "AWS::Serverless::Function"}
    named = {}
    for name, r in functions.items():
        md = r.get("Metadata", {})
        if md.get("BuildMethod") != "rust-cargolambda":
            problems.append(f"{name}: Metadata.BuildMethod is not rust-cargolambda")
        named[md.get("BuildProperties", {}).get("Binary")] = name
    for b in sorted(set(named) - binaries):
        problems.append(f"{named[b]} builds binary {b!r}, which no crate under functions/ has")
    for b in sorted(binaries - set(named)):
        problems.append(f"binary {b!r} (functions/) has no function in the template")

    # Environment variables.
    env = set(template.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {}))
    for r in functions.values():
        env |= set(r["Properties"].get("Environment", {}).get("Variables", {}))
    code = "\n".join(rust_sources("shared", "functions"))
    used = set(re.findall(r'"(PHANTOM_[A-Z0-9_]+)"', code)) | {"RUST_LOG"}
    for v in sorted(env - used):
        problems.append(f"the template sets {v}, which the code does not read")
    for v in sorted(used - env):
        problems.append(f"the code reads {v}, which the template does not set")

    # The table.
    store = "\n".join(rust_sources("shared/seams/src"))
    const = lambda n: re.search(rf'pub const {n}: &str = "([^"]+)";', store).group(1)  # noqa: E731
    tables = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::DynamoDB::Table"]
    if len(tables) != 1:
        problems.append(f"expected one DynamoDB table, found {len(tables)}")
    for t in tables:
        keys = {k["KeyType"]: k["AttributeName"] for k in t["KeySchema"]}
        if keys != {"HASH": const("PARTITION_KEY"), "RANGE": const("SORT_KEY")}:
            problems.append(f"table keys {keys} are not the store's ({const('PARTITION_KEY')}, {const('SORT_KEY')})")
        ttl = t.get("TimeToLiveSpecification", {}).get("AttributeName")
        if ttl != const("TTL_ATTRIBUTE"):
            problems.append(f"table TTL attribute {ttl!r} is not the store's {const('TTL_ATTRIBUTE')!r}")
        declared = {i["IndexName"]: i for i in t.get("GlobalSecondaryIndexes", []) + t.get("LocalSecondaryIndexes", [])}
        indexes = set(declared)
        # Indexes the code queries: by name, or by a constant `pub const <X>_INDEX` with its key
        # attributes in `<X>_PARTITION` and `<X>_SORT`.
        queried = set(re.findall(r'\.index_name\("([^"]+)"\)', code))
        for c in set(re.findall(r'\b([A-Z][A-Z_]*)_INDEX\b(?!:)', code)):
            name = const(f"{c}_INDEX")
            queried.add(name)
            if name in declared:
                keys = {k["KeyType"]: k["AttributeName"] for k in declared[name]["KeySchema"]}
                want = {"HASH": const(f"{c}_PARTITION"), "RANGE": const(f"{c}_SORT")}
                if keys != want:
                    problems.append(f"index {name!r} has keys {keys}, not the store's {want}")
        for i in sorted(indexes - queried):
            problems.append(f"the table has index {i!r}, which the code never queries")
        for i in sorted(queried - indexes):
            problems.append(f"the code queries index {i!r}, which the table does not have")

    for p in problems:
        print(f"drift: {p}", file=sys.stderr)
    if not problems:
        print(f"template and code agree: {len(functions)} functions, {len(env)} variables, {len(tables)} table")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
