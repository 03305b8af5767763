#!/usr/bin/env python3
"""Where a freshd build spends its time (issue: a faster build).

  scripts/build_profile.py ninja-log BUILD_DIR [--top N]
      Reads BUILD_DIR/.ninja_log (the last build's entries) and prints the
      total time of each kind of step (library, test, bench, fuzz and binary
      compiles; links; other) and the N slowest steps.
  scripts/build_profile.py time-trace DIR [--top N]
      Reads clang's -ftime-trace JSON files under DIR (configure with
      CMAKE_CXX_COMPILER=clang++ and CMAKE_CXX_FLAGS=-ftime-trace) and prints
      the front-end and back-end totals and the N headers whose parsing costs
      most summed over every translation unit (inclusive of what they include).

Standard library only. Times are summed CPU-ish seconds of each step, not
wall time: on 2 cores a build's wall time is about half the sum.
"""
import argparse
import collections
import json
import os
import sys


def read_ninja_log(build):
    entries = {}
    with open(os.path.join(build, ".ninja_log")) as f:
        for line in f:
            if line.startswith("#"):
                continue
            start, end, _mtime, output, _hash = line.rstrip("\n").split("\t")
            entries[output] = (int(start), int(end))  # later builds overwrite
    return entries


def kind(output):
    if output.endswith((".o", ".obj")):
        if output.endswith(".gch") or "cmake_pch" in output:
            return "pch"
        for prefix, name in (("tests/", "compile: tests"), ("bench/", "compile: bench"),
                             ("fuzz/", "compile: fuzz"), ("cli/", "compile: cli")):
            if output.startswith(prefix):
                return name
        return "compile: libraries"
    if "cmake_pch" in output or output.endswith(".gch"):
        return "pch"
    if output.endswith(".a"):
        return "archive"
    if output.endswith((".deb", ".gz", ".8", ".5")):
        return "other"
    return "link"


def ninja_log(args):
    entries = read_ninja_log(args.build)
    totals = collections.Counter()
    counts = collections.Counter()
    for output, (start, end) in entries.items():
        k = kind(output)
        totals[k] += (end - start) / 1000
        counts[k] += 1
    span = (max(e for _, e in entries.values()) - min(s for s, _ in entries.values())) / 1000
    print(f"{len(entries)} steps, {sum(totals.values()):.0f} s summed, {span:.0f} s wall")
    for k, t in totals.most_common():
        print(f"  {k:<20} {counts[k]:4d} steps {t:8.1f} s")
    print(f"slowest {args.top}:")
    by_time = sorted(entries.items(), key=lambda kv: kv[1][0] - kv[1][1])
    for output, (start, end) in by_time[:args.top]:
        print(f"  {(end - start) / 1000:7.1f} s  {output}")


def time_trace(args):
    headers = collections.Counter()
    header_tus = collections.Counter()
    phases = collections.Counter()
    tus = 0
    for root, _dirs, files in os.walk(args.dir):
        for name in files:
            if not name.endswith(".json") or name == "compile_commands.json":
                continue
            try:
                events = json.load(open(os.path.join(root, name))).get("traceEvents", [])
            except (ValueError, OSError):
                continue
            tus += 1
            seen = set()
            for e in events:
                if e.get("ph") != "X":
                    continue
                n = e.get("name", "")
                if n in ("Frontend", "Backend", "ExecuteCompiler"):
                    phases[n] += e["dur"] / 1e6
                elif n == "Source":
                    detail = e.get("args", {}).get("detail", "")
                    headers[detail] += e["dur"] / 1e6
                    if detail not in seen:
                        seen.add(detail)
                        header_tus[detail] += 1
    print(f"{tus} translation units")
    for n in ("ExecuteCompiler", "Frontend", "Backend"):
        print(f"  {n:<16} {phases[n]:8.1f} s")
    # Inclusive parse time: nested headers are counted in their includers too.
    print(f"headers by parse time summed over units (inclusive), top {args.top}:")
    for h, t in headers.most_common(args.top):
        print(f"  {t:7.1f} s in {header_tus[h]:3d} units  {h}")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("ninja-log")
    a.add_argument("build")
    a.add_argument("--top", type=int, default=20)
    b = sub.add_parser("time-trace")
    b.add_argument("dir")
    b.add_argument("--top", type=int, default=25)
    args = p.parse_args()
    return ninja_log(args) if args.cmd == "ninja-log" else time_trace(args)


if __name__ == "__main__":
    sys.exit(main())
