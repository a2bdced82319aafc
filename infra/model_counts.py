#!/usr/bin/env python3
"""Counts what issue 22 (one typed model) sets out to remove, in the service's non-test Rust code
(shared/*/src, functions/*/src; a file's `#[cfg(test)]` module and tests/ folders
left out): reads of the form `x["Key"]`, `unwrap_or_default()` calls, and mentions of
serde_json's `Value`; each inside and outside the protocol layer (the files that read and write
the wire: PROTOCOL below).

Usage: infra/model_counts.py [--files]   (--files: the counts per file too)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = ["shared/model/src", "shared/metrics/src", "shared/wire/src", "shared/rules/src",
           "shared/seams/src", "functions/api/src", "functions/provisioner/src",
           "functions/health-check/src"]
# Where JSON or the Query wire is read and written by design: the Query protocol, and the JSON
# body of Phantom's own API (/phantom/v1).
PROTOCOL = {"shared/wire/src/query.rs", "shared/wire/src/xml.rs", "shared/wire/src/shapes.rs",
            "functions/api/src/self_service/mod.rs"}

# An index by a string key (`x["Key"]`, `f()["Key"]`), not a slice of strings (`&["a", "b"]`).
KEY_READ = re.compile(r'[\w)\]]\[\s*"[A-Za-z][A-Za-z0-9:_.-]*"\s*\]')
DEFAULTED = re.compile(r"\bunwrap_or_default\s*\(")
VALUE = re.compile(r"\bValue\b")
# A string literal (no raw strings in these sources): `Value` or a call inside one is text.
STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


def code_of(path):
    """The file's lines before its `#[cfg(test)]` module, comments dropped."""
    lines = []
    for line in path.read_text().splitlines():
        if line.strip() == "#[cfg(test)]":
            break
        lines.append(line.split("//")[0])
    return "\n".join(lines)


def main():
    per_file = "--files" in sys.argv
    totals = {True: [0, 0, 0], False: [0, 0, 0]}
    for src in SOURCES:
        for path in sorted((ROOT / src).rglob("*.rs")):
            rel = str(path.relative_to(ROOT))
            if "/tests/" in rel:
                continue
            code = code_of(path)
            text_free = STRING.sub('""', code)
            counts = [len(KEY_READ.findall(code)), len(DEFAULTED.findall(text_free)),
                      len(VALUE.findall(text_free))]
            protocol = rel in PROTOCOL
            for i, n in enumerate(counts):
                totals[protocol][i] += n
            if per_file and any(counts):
                print(f"{rel}\t{counts[0]}\t{counts[1]}\t{counts[2]}")
    for protocol, name in ((False, "outside the protocol layer"), (True, "in the protocol layer")):
        keys, defaults, values = totals[protocol]
        print(f'{name}: x["Key"] reads {keys}, unwrap_or_default {defaults}, Value {values}')


if __name__ == "__main__":
    main()
