"""Tests of the SVG plots results.py and real_history_plots.py draw: parsed
from RESULTS-like tables, well-formed, one polyline per policy inside the
plot area, and following the figures (a changed figure moves its point)."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)

from freshd_results import plots, svg  # noqa: E402

NS = "{http://www.w3.org/2000/svg}"

ACC = """## Acceptance across webs

| web | R/n | policy | metric | estimated | oracle | uniform | nutch | stormcrawler | gap to oracle |
|---|---|---|---|---|---|---|---|---|---|
| sim/webs/a.toml | 0.05 | freshness | freshness | 0.2318 ± 0.0023 | 0.2634 ± 0.0029 | 0.1708 ± 0.0029 | 0.1879 ± 0.0035 | 0.1819 ± 0.0045 | 12.0 ± 0.3% |
| sim/webs/a.toml | 0.1 | freshness | freshness | 0.3549 ± 0.0016 | 0.3710 ± 0.0014 | 0.2804 ± 0.0038 | 0.2071 ± 0.0047 | 0.2947 ± 0.0029 | 4.3 ± 0.6% |
| sim/webs/a.toml | 0.3 | freshness | freshness | 0.6028 ± 0.0003 | 0.6085 ± 0.0010 | 0.5428 ± 0.0030 | 0.2121 ± 0.0076 | 0.5493 ± 0.0017 | 0.9 ± 0.1% |
| sim/webs/a.toml | 0.05 | ncis | freshness | 0.2435 ± 0.0030 | 0.2815 ± 0.0028 | 0.1708 ± 0.0029 | 0.1879 ± 0.0035 | 0.1819 ± 0.0045 | 13.5 ± 0.2% |
| sim/webs/a.toml | 0.1 | ncis | freshness | 0.3692 ± 0.0014 | 0.3999 ± 0.0018 | 0.2804 ± 0.0038 | 0.2071 ± 0.0047 | 0.2947 ± 0.0029 | 7.7 ± 0.4% |
| sim/webs/a.toml | 0.3 | ncis | freshness | 0.6533 ± 0.0004 | 0.6743 ± 0.0011 | 0.5428 ± 0.0030 | 0.2121 ± 0.0076 | 0.5493 ± 0.0017 | 3.1 ± 0.2% |
| sim/webs/a.toml | 0.3 | longevity | fragment_staleness | 0.1609 ± 0.0039 | 0.1549 ± 0.0034 | 0.1767 ± 0.0045 | 0.4332 ± 0.0057 | 0.1728 ± 0.0042 | 3.9 ± 0.3% |
| sim/webs/b.toml | 0.05 | freshness | freshness | 0.3109 ± 0.0070 | 0.3498 ± 0.0072 | 0.2953 ± 0.0081 | 0.2453 ± 0.0041 | 0.2991 ± 0.0083 | 11.1 ± 0.2% |
| sim/webs/b.toml | 0.3 | freshness | freshness | 0.5529 ± 0.0093 | 0.5714 ± 0.0072 | 0.5074 ± 0.0084 | 0.2688 ± 0.0056 | 0.5303 ± 0.0085 | 3.3 ± 0.4% |

Text after.
"""


def polylines(text):
    """{series name: [(x, y) pixels]} and the plot area of an SVG."""
    root = ET.fromstring(text)
    area = root.find(".//%srect[@class='plot-area']" % NS)
    box = [float(area.get(k)) for k in ("x", "y", "width", "height")]
    lines = {}
    for g in root.iter(NS + "g"):
        name = g.find(NS + "title").text
        pts = g.find(NS + "polyline").get("points").split()
        lines[name] = [tuple(float(v) for v in p.split(",")) for p in pts]
    return lines, box


class ResultsPlotTest(unittest.TestCase):
    def draw(self, markdown):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        drawn = plots.draw(markdown, d)
        return {w: open(os.path.join(d, n)).read() for w, n in drawn}

    def test_one_polyline_per_policy_monotone_inside_the_area(self):
        out = self.draw(ACC)
        self.assertEqual(sorted(out), ["sim/webs/a.toml", "sim/webs/b.toml"])
        lines, (x, y, w, h) = polylines(out["sim/webs/a.toml"])
        self.assertEqual(
            sorted(lines),
            sorted(["freshness, estimated", "freshness, oracle", "ncis, estimated",
                    "ncis, oracle", "uniform", "nutch", "stormcrawler"]))
        for name, pts in lines.items():
            self.assertEqual(len(pts), 3, name)  # longevity's metric is not drawn
            xs = [p[0] for p in pts]
            self.assertEqual(xs, sorted(xs), name)
            self.assertEqual(len(set(xs)), 3, name)
            for px, py in pts:
                self.assertTrue(x <= px <= x + w and y <= py <= y + h, (name, px, py))
        # Higher freshness is drawn higher (smaller y).
        ora = lines["ncis, oracle"]
        self.assertLess(ora[2][1], ora[0][1])
        self.assertEqual(len(polylines(out["sim/webs/b.toml"])[0]["uniform"]), 2)

    def test_a_changed_figure_moves_its_point(self):
        before, _ = polylines(self.draw(ACC)["sim/webs/a.toml"])
        changed = ACC.replace("0.3692 ± 0.0014", "0.4692 ± 0.0014")
        after, _ = polylines(self.draw(changed)["sim/webs/a.toml"])
        b, a = before["ncis, estimated"], after["ncis, estimated"]
        self.assertEqual(b[1][0], a[1][0])
        self.assertLess(a[1][1], b[1][1])  # up: a larger freshness
        self.assertEqual(before["uniform"], after["uniform"])

    def test_links_section_replaced_not_duplicated(self):
        drawn = [("sim/webs/a.toml", "freshness-a.svg")]
        once = plots.with_links(ACC, drawn, "plots")
        twice = plots.with_links(once, drawn, "plots")
        self.assertEqual(once, twice)
        self.assertIn("[freshness-a.svg](plots/freshness-a.svg)", once)
        self.assertIn("Text after.", once)

    def test_no_acceptance_table_is_an_error(self):
        with self.assertRaises(ValueError):
            plots.acceptance_series("| a | b |\n|---|---|\n| 1 | 2 |\n")

    def test_log_axis_when_budgets_span_decades(self):
        text = svg.line_plot("t", "x", "y", [("s", [(0.001, 0.1), (0.1, 0.5)])])
        self.assertIn("(log scale)", text)
        text = svg.line_plot("t", "x", "y", [("s", [(0.05, 0.1), (0.3, 0.5)])])
        self.assertNotIn("(log scale)", text)


REAL = """# Real

## Per site

### siteA

| R/n per day | uniform | optimal | optimal - uniform [range] | uniform (model) | optimal (model) |
|---|---|---|---|---|---|
| 1/365 | 0.6891 | 0.6992 | +0.0100 [-0.0068, +0.0356] | 0.6973 | 0.7056 |
| 1/30 | 0.9616 | 0.9674 | +0.0059 [+0.0046, +0.0076] | 0.9571 | 0.9657 |
| 1/7 | 0.9901 | 0.9922 | +0.0021 [+0.0016, +0.0026] | 0.9891 | 0.9918 |

| R/n per day | uniform | optimum, true rates | optimum, past rates | past - uniform [range] |
|---|---|---|---|---|
| 1/365 | 0.6381 | 0.6574 | 0.6302 | -0.0079 [-0.0331, +0.0080] |
| 1/30 | 0.9573 | 0.9642 | 0.9529 | -0.0044 [-0.0083, -0.0007] |
| 1/7 | 0.9890 | 0.9914 | 0.9881 | -0.0009 [-0.0014, -0.0004] |

### Without mass commits (not a site)

| R/n per day | uniform | optimal |
|---|---|---|
| 1/365 | 0.1 | 0.2 |
"""


class RealHistoryPlotTest(unittest.TestCase):
    def test_script_draws_and_links_each_site(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        page = os.path.join(d, "real.md")
        with open(page, "w") as f:
            f.write(REAL)
        for _ in range(2):  # twice: the links block is replaced, not repeated
            subprocess.run([sys.executable,
                            os.path.join(SCRIPTS, "real_history_plots.py"), page],
                           check=True, capture_output=True)
        self.assertEqual(os.listdir(os.path.join(d, "plots")), ["real-siteA.svg"])
        text = open(page).read()
        self.assertEqual(text.count("(plots/real-siteA.svg)"), 1)
        lines, (x, y, w, h) = polylines(
            open(os.path.join(d, "plots", "real-siteA.svg")).read())
        self.assertEqual(len(lines), 5)
        self.assertIn("learned rates, last 18 months", lines)
        for pts in lines.values():
            xs = [p[0] for p in pts]
            self.assertEqual(xs, sorted(xs))
            for px, py in pts:
                self.assertTrue(x <= px <= x + w and y <= py <= y + h)
        # log axis: 1/365 -> 1/30 is wider than 1/30 -> 1/7, as log10 says
        u = lines["uniform, 3 years"]
        self.assertGreater(u[1][0] - u[0][0], u[2][0] - u[1][0])
        self.assertIn(">1/365<", open(os.path.join(d, "plots", "real-siteA.svg")).read())


if __name__ == "__main__":
    unittest.main()
