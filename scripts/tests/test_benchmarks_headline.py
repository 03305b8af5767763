"""BENCHMARKS.md's headline table: numbers in its cells, each figure found in
the file its row links (so the headline cannot drift from the bench's own
RESULTS file), and every relative link of the benchmark pages and the
plotted docs pages resolves."""

import os
import re
import sys
import unittest

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(SCRIPTS)
sys.path.insert(0, SCRIPTS)

from freshd_results.plots import tables  # noqa: E402

NUMBER_CELL = re.compile(r"^(–|[0-9][0-9,.]*( [0-9]+)?( ?[^\s0-9|][^|]*)?)$")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def read(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


def headline():
    for header, rows in tables(read("BENCHMARKS.md")):
        if header == ["figure", "freshd", "reference", "ratio", "details"]:
            return rows
    raise AssertionError("BENCHMARKS.md has no headline table")


def anchor(title):
    t = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return t.replace(" ", "-")


class HeadlineTest(unittest.TestCase):
    def test_cells_are_numbers_and_at_most_twelve_rows(self):
        rows = headline()
        self.assertLessEqual(len(rows), 12)
        for r in rows:
            for cell in r[1:4]:
                self.assertRegex(cell, NUMBER_CELL, r[0])
                self.assertLessEqual(len(cell), 24, r[0])

    def test_each_figure_is_in_the_file_its_row_links(self):
        for r in headline():
            target = LINK.search(r[4]).group(1)
            path = target.split("#")[0] or "BENCHMARKS.md"
            text = read(path)
            for cell in r[1:3]:
                if cell == "–":
                    continue
                figure = re.match(r"[0-9][0-9,.:]*", cell).group(0)
                if cell.startswith(figure + " min"):
                    figure = re.match(r"[0-9]+ min [0-9]+ s", cell).group(0)
                self.assertIn(figure, text, "%s: %s not in %s" % (r[0], figure, path))


class LinksTest(unittest.TestCase):
    PAGES = ["BENCHMARKS.md", "docs/RESULTS.md", "docs/real-histories.md"]

    def pages(self):
        out = list(self.PAGES)
        for module in sorted(os.listdir(os.path.join(ROOT, "bench"))):
            d = os.path.join(ROOT, "bench", module)
            if os.path.isdir(d):
                out += ["bench/%s/%s" % (module, f) for f in sorted(os.listdir(d))
                        if f.startswith("RESULTS") and f.endswith(".md")]
        return out

    def test_relative_links_resolve(self):
        for page in self.pages():
            text = read(page)
            anchors = {anchor(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}
            for target in LINK.findall(text):
                if re.match(r"[a-z]+:", target):
                    continue
                path, _, frag = target.partition("#")
                if not path:
                    self.assertIn(frag, anchors, "%s: #%s" % (page, frag))
                    continue
                full = os.path.normpath(os.path.join(ROOT, os.path.dirname(page), path))
                self.assertTrue(os.path.exists(full), "%s -> %s" % (page, target))


if __name__ == "__main__":
    unittest.main()
