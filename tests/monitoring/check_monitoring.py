#!/usr/bin/env python3
"""The shipped alerting rules and Grafana dashboard (packaging/prometheus,
packaging/grafana; docs/alerting.md) are valid and name only metrics freshd
exports:

  1. `promtool check rules` and `promtool test rules` pass;
  2. the dashboard is JSON, every panel has targets, every target an expr;
  3. every metric name in the rules' and the dashboard's expressions is a
     family in the /metrics of a real freshd (`freshd demo`, which runs the
     daemon loop against its embedded web on loopback); freshd_cluster_*
     families exist only on a cluster node, so those are checked against the
     names the daemon's sources write instead.

Usage: check_monitoring.py --freshd PATH/TO/freshd
Standard library only; listens and connects on 127.0.0.1 only.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
RULES = ROOT / "packaging" / "prometheus" / "freshd-alerts.yml"
RULE_TESTS = ROOT / "packaging" / "prometheus" / "freshd-alerts.test.yml"
DASHBOARD = ROOT / "packaging" / "grafana" / "freshd-dashboard.json"

# A metric name in PromQL: freshd_* or process_* (label names and functions
# never start so).
_NAME = re.compile(r"\b((?:freshd|process)_[a-z0-9_]+)\b")
_SUFFIXES = ("_bucket", "_sum", "_count")


def rule_expressions(text):
    """The expr: values of a rules file (single-line or a `|` block)."""
    exprs, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = re.match(r"^(\s*)expr:\s*(.*)$", lines[i])
        i += 1
        if not m:
            continue
        if m.group(2).strip() not in ("|", ">", "|-", ">-"):
            exprs.append(m.group(2))
            continue
        indent, block = len(m.group(1)), []
        while i < len(lines) and (not lines[i].strip() or
                                  len(lines[i]) - len(lines[i].lstrip()) > indent):
            block.append(lines[i])
            i += 1
        exprs.append("\n".join(block))
    return exprs


def dashboard_expressions(dash):
    exprs, problems = [], []
    for panel in dash.get("panels", []):
        targets = panel.get("targets") or []
        if not targets:
            problems.append(f"panel {panel.get('title')!r} has no targets")
        for t in targets:
            if not t.get("expr"):
                problems.append(f"panel {panel.get('title')!r} has a target without expr")
            exprs.append(t.get("expr", ""))
    for var in dash.get("templating", {}).get("list", []):
        q = var.get("query")
        if isinstance(q, dict):
            exprs.append(q.get("query", ""))
    return exprs, problems


def live_families(freshd):
    """# TYPE families of a running freshd demo's /metrics."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([freshd, "demo", "--seconds", "20", "--rate", "20"],
                                stdout=subprocess.DEVNULL, stderr=err)
        try:
            url, deadline = None, time.time() + 60
            while url is None and time.time() < deadline:
                time.sleep(0.2)
                err.seek(0)
                m = re.search(rb"status at (http://127\.0\.0\.1:\d+)", err.read())
                if m:
                    url = m.group(1).decode()
            if url is None:
                raise RuntimeError("freshd demo printed no status address")
            time.sleep(3)  # some fetches, so the histograms have samples
            with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
                text = r.read().decode()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    return set(re.findall(r"^# TYPE (\S+) ", text, re.M)), text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--freshd", required=True)
    args = ap.parse_args()
    problems = []

    for cmd in (["promtool", "check", "rules", str(RULES)],
                ["promtool", "test", "rules", str(RULE_TESTS)]):
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=RULES.parent)
        print("$", " ".join(cmd), "->", r.returncode)
        if r.returncode != 0:
            problems.append(f"{' '.join(cmd)} failed:\n{r.stdout}{r.stderr}")

    dash = json.loads(DASHBOARD.read_text())
    dash_exprs, dash_problems = dashboard_expressions(dash)
    problems += dash_problems
    rule_exprs = rule_expressions(RULES.read_text())
    if len(rule_exprs) < 5:
        problems.append(f"only {len(rule_exprs)} rule expressions found")

    families, metrics = live_families(args.freshd)
    if "freshd_rate_actual" not in families:
        problems.append("the daemon's /metrics lacks freshd_rate_actual:\n" + metrics[:2000])
    sources = "\n".join(p.read_text() for p in (ROOT / "daemon").glob("*.cc"))
    used = {}
    for where, exprs in (("rules", rule_exprs), ("dashboard", dash_exprs)):
        for e in exprs:
            for name in _NAME.findall(e):
                used.setdefault(name, set()).add(where)
    for name, where in sorted(used.items()):
        family = name
        for s in _SUFFIXES:
            if name.endswith(s) and name[: -len(s)] in families:
                family = name[: -len(s)]
        if name.startswith("freshd_cluster_"):
            ok = f'"{name}' in sources or f"{name} " in sources
        else:
            ok = family in families
        if not ok:
            problems.append(f"{name} (in the {', '.join(sorted(where))}) is not a metric freshd exports")
    print(f"{len(used)} metric names checked "
          f"({len(rule_exprs)} rule and {len(dash_exprs)} dashboard expressions) "
          f"against {len(families)} live families")
    for p in problems:
        print("FAIL:", p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
