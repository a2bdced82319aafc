#!/usr/bin/env python3
"""Build once: the tests' build must reuse what up.sh's build compiled.

Runs up.sh's build (`cargo build -p phantom-local -p phantomctl -p api -p provisioner -p
health-check`), then the tests' build
(`cargo test --workspace --no-run`) and the builds of one test file, and fails when a library of
the first was compiled again with other features, dependencies or profile: cargo gives each
variant a file of its own, so the later build pays for it again (aws-sdk-dynamodb alone takes half
a minute on 2 cores). CI runs it before the tests.

  python3 infra/build_once.py            # the builds, then the comparison
"""

import glob
import json
import os
import subprocess
import sys

# The libraries a split costs most for, which must be in both builds (the check covers all).
WATCHED = ["aws_sdk_dynamodb", "aws_smithy_runtime", "tokio", "phantom_rules", "phantom_seams"]

SERVICE = ["build", "-p", "phantom-local", "-p", "phantomctl", "-p", "api", "-p", "provisioner", "-p", "health-check"]
TESTS = [
    ["test", "--workspace", "--no-run"],
    # One test file, as CI's runs on other emulators and a developer build it.
    ["test", "--workspace", "--test", "e2e", "--no-run"],
    ["test", "-p", "phantom-e2e", "--test", "e2e", "--no-run"],
]


def canonical(path):
    """A library's file as the build named it (deps/libX-HASH.rlib): the uplifted copy of a package
    the command names (target/debug/libX.rlib) is a hard link to it."""
    folder, name = os.path.split(path)
    if os.path.basename(folder) == "deps":
        return name
    inode = os.stat(path).st_ino
    for candidate in glob.glob(os.path.join(folder, "deps", name[: -len(".rlib")] + "-*.rlib")):
        if os.stat(candidate).st_ino == inode:
            return os.path.basename(candidate)
    return name


def libraries(args):
    """Each library cargo built for `cargo ARGS` (by package and target): its rlib files."""
    cmd = ["cargo", *args, "--quiet", "--message-format=json-render-diagnostics"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"build once: `cargo {' '.join(args)}` failed (exit {proc.returncode})")
    built = {}
    for line in proc.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") != "compiler-artifact":
            continue
        rlibs = {canonical(f) for f in msg["filenames"] if f.endswith(".rlib")}
        if rlibs:
            key = (msg["package_id"], msg["target"]["name"])
            built.setdefault(key, set()).update(rlibs)
    return built


def main():
    service = libraries(SERVICE)
    split = []
    for args in TESTS:
        tests = libraries(args)
        for key, files in sorted(service.items()):
            again = tests.get(key, set()) - files
            if again:
                split.append(
                    f"  `cargo {' '.join(args)}`: {key[1]} ({key[0]}): {sorted(files)} then "
                    f"{sorted(again)}"
                )
    names = {target for (_, target) in service}
    missing = [w for w in WATCHED if w not in names]
    if missing:
        sys.exit(f"build once: up.sh's build no longer builds {', '.join(missing)}: update WATCHED")
    if split:
        sys.exit(
            "build once: the tests' builds compile again, with other features or dependencies, "
            "libraries of up.sh's build (`cargo tree -e features -i NAME` shows who asks for "
            "what):\n" + "\n".join(split)
        )
    print(
        f"build once: the tests' builds reuse all {len(service)} libraries of up.sh's build "
        f"({', '.join(WATCHED)} among them)"
    )


if __name__ == "__main__":
    main()
