"""The plots behind docs/RESULTS.md, drawn from its own tables, so a plot
and the table it shows cannot disagree: per web of the acceptance table,
freshness against the budget R/n, one line per policy (estimated and oracle
for each of ours; uniform, nutch and stormcrawler for scale).

tables(markdown) -> [(header, rows)]; acceptance_series(markdown) ->
{web: [(name, [(R/n, freshness)])]}; draw(markdown, out_dir) writes one SVG
per web and -> [(web, file name)]; links_section(drawn, rel_dir) is the
Markdown that RESULTS.md carries under PLOTS_HEADING.
"""

import os
import re

from .svg import line_plot

PLOTS_HEADING = "## Plots"
ACC_HEADER = ["web", "R/n", "policy", "metric", "estimated", "oracle"]
SCALE = ["uniform", "nutch", "stormcrawler"]


def tables(markdown):
    """Every pipe table: [(header cells, [row cells])]."""
    found, header, rows = [], None, []
    for line in markdown.splitlines() + [""]:
        s = line.strip()
        if s.startswith("|") and s.endswith("|"):
            cells = [c.strip() for c in s[1:-1].split("|")]
            if header is None:
                header = cells
            elif all(re.fullmatch(r":?-+:?", c) for c in cells):
                continue
            else:
                rows.append(cells)
        elif header is not None:
            found.append((header, rows))
            header, rows = None, []
    return found


def number(cell):
    """The leading figure of a cell ('0.3549 ± 0.0016' -> 0.3549)."""
    m = re.match(r"\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)", cell)
    if not m:
        raise ValueError("no number in cell '%s'" % cell)
    return float(m.group(1))


def acceptance_series(markdown):
    """{web: [(series name, [(R/n, freshness)])]} from the acceptance table
    (rows whose metric is freshness)."""
    for header, rows in tables(markdown):
        if header[: len(ACC_HEADER)] != ACC_HEADER:
            continue
        col = {h: i for i, h in enumerate(header)}
        webs = {}
        for r in rows:
            if r[col["metric"]] != "freshness":
                continue
            web, x, pol = r[col["web"]], number(r[col["R/n"]]), r[col["policy"]]
            lines = webs.setdefault(web, {})
            lines.setdefault(pol + ", estimated", {})[x] = number(
                r[col["estimated"]])
            lines.setdefault(pol + ", oracle", {})[x] = number(r[col["oracle"]])
            for s in SCALE:
                if s in col:
                    lines.setdefault(s, {})[x] = number(r[col[s]])
        return {w: [(n, sorted(p.items())) for n, p in lines.items()]
                for w, lines in webs.items()}
    raise ValueError("no acceptance table (header %s) found" % ACC_HEADER)


def file_name(web):
    return "freshness-" + os.path.basename(web).replace(".toml", "") + ".svg"


def draw(markdown, out_dir):
    """Writes one SVG per web into out_dir -> [(web, file name)]."""
    os.makedirs(out_dir, exist_ok=True)
    drawn = []
    for web, series in acceptance_series(markdown).items():
        name = file_name(web)
        svg = line_plot("%s: freshness against budget" % os.path.basename(web),
                        "budget R/n (crawls per page per day)",
                        "freshness (importance-weighted)", series)
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(svg)
        drawn.append((web, name))
    return drawn


def links_section(drawn, rel_dir):
    lines = [PLOTS_HEADING, "",
             "Drawn by `scripts/results.py` from the acceptance table above "
             "(`scripts/results.py --plots-from docs/RESULTS.md` redraws them "
             "from this page without running the simulator): freshness "
             "against R/n per web, one line per policy.", ""]
    for web, name in drawn:
        lines.append("- `%s`: [%s](%s/%s)" % (web, name, rel_dir, name))
    return "\n".join(lines) + "\n"


def with_links(markdown, drawn, rel_dir):
    """markdown with its Plots section replaced (or appended)."""
    head = markdown.split("\n" + PLOTS_HEADING + "\n")[0].rstrip() + "\n"
    return head + "\n" + links_section(drawn, rel_dir)


def redraw(results_md):
    """--plots-from: draws the plots from a RESULTS.md (into plots/ beside
    it) and rewrites its Plots section -> [(web, file name)]."""
    with open(results_md) as f:
        text = f.read()
    out_dir = os.path.join(os.path.dirname(os.path.abspath(results_md)), "plots")
    drawn = draw(text, out_dir)
    with open(results_md, "w") as f:
        f.write(with_links(text, drawn, "plots"))
    return drawn
