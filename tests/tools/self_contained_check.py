#!/usr/bin/env python3
"""Fails when a test input can lead outside the repository and the installed
packages: a clone must test itself (issue: a clone that tests itself).

  self_contained_check.py SOURCE_DIR BINARY_DIR

Checks, printing every finding and exiting 1 if there is one:
  1. no file of the repository names the team's sibling reading folder
     (the folder beside a checkout) or the macro that used to point at it;
  2. every path a test is compiled with (-DNAME="/abs/path" in the build's
     compile_commands.json) lies inside the source or the build tree;
  3. every test data path the test sources build from FRESHD_TEST_DATA_DIR
     or FRESHD_SOURCE_DIR names a file or folder that exists in the tree.
"""
import json
import os
import re
import subprocess
import sys

# Spelled in pieces so that this file does not match itself.
FORBIDDEN = ["../" + "shared", "FRESHD_" + "SHARED_DIR", "/work/" + "shared"]
SKIP_DIRS = {".git", "node_modules"}


def repository_files(src):
    try:
        out = subprocess.run(["git", "-C", src, "ls-files", "-co", "--exclude-standard"],
                             capture_output=True, text=True, check=True).stdout
        return [f for f in out.splitlines() if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for root, dirs, names in os.walk(src):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
            files += [os.path.relpath(os.path.join(root, n), src) for n in names]
        return files


def check_references(src, findings):
    for rel in repository_files(src):
        if rel.startswith("build") or "/node_modules/" in rel:
            continue
        path = os.path.join(src, rel)
        try:
            with open(path, "rb") as f:
                data = f.read(4 << 20)
        except OSError:
            continue
        if b"\0" in data[:4096]:
            continue
        text = data.decode("utf-8", "replace")
        for needle in FORBIDDEN:
            for n, line in enumerate(text.splitlines(), 1):
                if needle in line:
                    findings.append(f"{rel}:{n}: names {needle!r}: {line.strip()[:120]}")


DEFINE = re.compile(r'-D(\w+)=\\?"(/[^"\\]*)\\?"')


def check_compile_paths(src, build, findings):
    db = os.path.join(build, "compile_commands.json")
    if not os.path.exists(db):
        findings.append(f"{db} missing (CMAKE_EXPORT_COMPILE_COMMANDS)")
        return
    roots = [os.path.realpath(src), os.path.realpath(build)]
    seen = set()
    for entry in json.load(open(db)):
        for name, value in DEFINE.findall(entry.get("command", "")):
            real = os.path.realpath(value)
            if (name, value) in seen:
                continue
            seen.add((name, value))
            if not any(real == r or real.startswith(r + os.sep) for r in roots):
                findings.append(f"{entry['file']}: -D{name}={value} lies outside the "
                                f"source and build trees")


DATA_PATH = re.compile(r'(FRESHD_TEST_DATA_DIR|FRESHD_SOURCE_DIR)\)?\s*(?:\+\s*)?"(/[^"]+)"')


def check_data_paths(src, findings):
    bases = {"FRESHD_TEST_DATA_DIR": os.path.join(src, "tests", "data"),
             "FRESHD_SOURCE_DIR": src}
    for rel in repository_files(src):
        if not rel.startswith("tests/") or not rel.endswith((".cc", ".h")):
            continue
        text = open(os.path.join(src, rel), encoding="utf-8", errors="replace").read()
        joined = re.sub(r'"\s*\n\s*"', "", text)  # adjacent string literals
        for macro, tail in DATA_PATH.findall(joined):
            path = os.path.normpath(bases[macro] + tail)
            real = os.path.realpath(path)
            if not real.startswith(os.path.realpath(src) + os.sep):
                findings.append(f"{rel}: {macro} + {tail!r} leads outside the repository")
            elif not (os.path.exists(path) or os.path.exists(path.rstrip("/ ")) or
                      os.path.exists(os.path.dirname(path))):
                findings.append(f"{rel}: {macro} + {tail!r} names nothing in the tree")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    src, build = sys.argv[1], sys.argv[2]
    findings = []
    check_references(src, findings)
    check_compile_paths(src, build, findings)
    check_data_paths(src, findings)
    for f in findings:
        print(f)
    print(f"self-contained: {len(findings)} finding(s)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
