#!/usr/bin/env python3
"""Draws docs/plots/real-<site>.svg from the per-site tables of
docs/real-histories.md (written from scripts/trace_baselines.py output):
freshness against the budget R/n, uniform against the Cho-GM optimum over
the whole window, and uniform, the optimum and the learned-rate optimum
(rates from the first 18 months) on the last 18 months. Rewrites the page's
'Plots' list so each site links its plot. Standard library only.

Usage: scripts/real_history_plots.py [docs/real-histories.md]
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from freshd_results.plots import number, tables  # noqa: E402
from freshd_results.svg import line_plot  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- plots: scripts/real_history_plots.py -->"
END = "<!-- /plots -->"


def budget(cell):
    """'1/365' -> 1/365 (per day)."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*/\s*([0-9.]+)\s*", cell)
    return float(m.group(1)) / float(m.group(2)) if m else number(cell)


def site_series(markdown):
    """{site: [(series name, [(R/n, freshness)])]}, from the '### site'
    sections under '## Per site' (their first two tables)."""
    part = markdown.split("\n## Per site\n", 1)
    if len(part) < 2:
        raise ValueError("no '## Per site' section")
    sites = {}
    for block in re.split(r"\n### ", part[1])[1:]:
        site = block.split("\n", 1)[0].strip()
        if " " in site:  # '### Without mass commits ...': not a site
            continue
        series = []
        for header, rows in tables(block):
            col = {h: i for i, h in enumerate(header)}
            if "optimal" in col:
                names = [("uniform", "uniform, 3 years"),
                         ("optimal", "optimum, 3 years")]
            elif "optimum, past rates" in col:
                names = [("uniform", "uniform, last 18 months"),
                         ("optimum, true rates", "optimum, last 18 months"),
                         ("optimum, past rates", "learned rates, last 18 months")]
            else:
                continue
            for key, name in names:
                series.append((name, [(budget(r[0]), number(r[col[key]]))
                                      for r in rows]))
        if series:
            sites[site] = (series, {budget(r[0]): r[0] for r in rows})
    return sites


def draw(markdown, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    drawn = []
    for site, (series, ticks) in site_series(markdown).items():
        name = "real-%s.svg" % site
        svg = line_plot("%s: freshness against budget (real history)" % site,
                        "budget R/n (crawls per page per day)", "freshness",
                        series, logx=True, xticklabels=ticks)
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(svg)
        drawn.append((site, name))
    return drawn


def with_links(markdown, drawn):
    block = [BEGIN, "",
             "Plots (drawn by `scripts/real_history_plots.py` from the tables "
             "below; rerun it after changing them):", ""]
    block += ["- %s: [plots/%s](plots/%s)" % (s, n, n) for s, n in drawn]
    block += ["", END]
    text = "\n".join(block)
    if BEGIN in markdown:
        head, rest = markdown.split(BEGIN, 1)
        return head + text + rest.split(END, 1)[1]
    return markdown.replace("\n## Per site\n", "\n## Per site\n\n" + text + "\n", 1)


def main(argv):
    path = argv[0] if argv else os.path.join(ROOT, "docs", "real-histories.md")
    with open(path) as f:
        text = f.read()
    drawn = draw(text, os.path.join(os.path.dirname(os.path.abspath(path)), "plots"))
    with open(path, "w") as f:
        f.write(with_links(text, drawn))
    for site, name in drawn:
        print("drew plots/%s (%s)" % (name, site))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
