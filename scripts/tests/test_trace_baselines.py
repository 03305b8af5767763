"""Tests for scripts/trace_baselines.py on tiny traces."""

import contextlib
import gzip
import io
import json
import math
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import trace_baselines as tb  # noqa: E402

DAY = 86400


def brute_force_freshness(lives, start, end, frequencies, step):
    """Freshness by its definition on a time grid: a live page is fresh at t
    when no content event lies in (its last refresh before t, t]; before
    its first refresh, in (start, t] for a page existing at start."""
    n = len(lives)
    fresh = live = 0.0
    t = start + step / 2
    while t < end:
        for i, (x, f) in enumerate(zip(lives, frequencies)):
            if not any(a <= t < b for a, b in x.intervals):
                continue
            live += x.weight
            since = start
            if f > 0:
                period = DAY / f
                k = math.floor((t - start) / period - (i + 0.5) / n)
                if k >= 0:
                    since = start + (k + (i + 0.5) / n) * period
            born = [a for a, b in x.intervals if a <= t < b][0]
            # A page created at `born` is stale from then until a refresh.
            events = [c for c in x.changes if since < c <= t or (c == born and c >= since)]
            if not events:
                fresh += x.weight
        t += step
    return fresh / live


class TraceBaselinesTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="trace_baselines_")
        self.addCleanup(shutil.rmtree, self.dir)

    def write(self, text, name="t.csv"):
        path = os.path.join(self.dir, name)
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "wt") as f:
            f.write(text)
        return path

    def tiny(self):
        # a: a burst (days 10 and 10.5) and a change at day 50; b: never
        # changes; c: created at day 20, deleted at day 60. Window 100 days.
        return self.write(
            "url,time,event\n"
            f"a,{10 * DAY},change\n"
            f"a,{int(10.5 * DAY)},\n"
            f"a,{10 * DAY},change\n"  # a duplicate: counts once
            f"a,{50 * DAY},change\n"
            "b,,\n"
            f"c,{20 * DAY},create\n"
            f"c,{60 * DAY},delete\n"
        )

    def test_uniform_freshness_by_hand(self):
        pages = tb.read_trace(self.tiny())
        lives, start, end = tb.build_lives(pages, 0, 100 * DAY)
        rows = tb.baselines(lives, start, ["1/30"])
        # Phases 1/6, 1/2, 5/6 of a 30-day period. a is refreshed on days 5,
        # 35, 65, 95: stale 10 -> 35 and 50 -> 65 (40 days of 100). c is
        # refreshed on days 25, 55: stale 20 -> 25 (5 of its 40 days).
        self.assertAlmostEqual(rows[0]["uniform"], 1 - 45 / 240, places=12)

    def test_optimal_spends_the_budget_and_equalises_marginals(self):
        pages = tb.read_trace(self.tiny())
        lives, start, end = tb.build_lives(pages, 0, 100 * DAY)
        weights = [x.lifetime for x in lives]
        rates = [len(x.changes) / (x.lifetime / DAY) for x in lives]
        self.assertEqual(rates[1], 0)
        freqs, mu = tb.optimal_allocation(rates, weights, 1 / 30)
        self.assertAlmostEqual(
            sum(w * f for w, f in zip(weights, freqs)) / sum(weights), 1 / 30, places=9
        )
        self.assertEqual(freqs[1], 0)  # the page that never changes
        for r, f in zip(rates, freqs):
            if r > 0:
                x = r / f
                marginal = (1 - (1 + x) * math.exp(-x)) / r
                self.assertAlmostEqual(marginal, mu, places=9)
        # The faster page gets more refreshes here (budget not tight).
        self.assertGreater(freqs[0], freqs[2])

    def test_freshness_matches_a_brute_force_on_a_grid(self):
        pages = tb.read_trace(self.tiny())
        lives, start, end = tb.build_lives(pages, 0, 100 * DAY)
        weights = [x.lifetime for x in lives]
        rates = [len(x.changes) / (x.lifetime / DAY) for x in lives]
        for budget in ("1/30", "1/7", "1/90"):
            rows = tb.baselines(lives, start, [budget])
            b = tb.parse_budget(budget)
            optimal, _ = tb.optimal_allocation(rates, weights, b)
            for name, freqs in (("uniform", [b] * 3), ("optimal", optimal)):
                expected = brute_force_freshness(lives, start, end, freqs, DAY / 40)
                self.assertAlmostEqual(rows[0][name], expected, delta=2e-3, msg=(budget, name))

    def test_too_fast_pages_get_no_refreshes_under_a_tight_budget(self):
        rates = [100.0, 0.01]
        freqs, mu = tb.optimal_allocation(rates, [1, 1], 0.001)
        self.assertEqual(freqs[0], 0)
        self.assertAlmostEqual(freqs[1], 0.002, places=9)
        self.assertGreaterEqual(mu * rates[0], 1)

    def test_statistics(self):
        pages = tb.read_trace(self.tiny())
        lives, start, end = tb.build_lives(pages, 0, 100 * DAY)
        stats = tb.site_statistics(pages, lives, start, end)
        self.assertEqual(stats["pages"], 3)
        self.assertEqual((stats["changes"], stats["creates"], stats["deletes"]), (3, 1, 1))
        self.assertEqual(stats["share_successive_changes_under_1_day"], 0.5)
        # a's gaps: 0.5 and 39.5 days: mean 20, population sd 19.5.
        self.assertAlmostEqual(stats["median_cv_of_gaps"], 19.5 / 20)
        self.assertEqual(stats["pages_never_changing"], 1)
        self.assertEqual(stats["largest_pages_at_one_time"], 1)
        self.assertEqual(stats["span_days"], 100)
        # a changed in both halves; c (born day 20) only in the first; b in
        # neither.
        self.assertEqual(stats["p_change_2nd_half_if_changed_1st"], 0.5)
        self.assertEqual(stats["p_change_2nd_half_if_quiet_1st"], 0.0)
        self.assertEqual(stats["created_pages_share_of_events_in_first_90_days"], 1.0)
        self.assertIsNone(stats["created_pages_quiet_after_90_days"])  # dead by day 60

    def test_reader_accepts_gzip_rfc3339_and_any_column_order(self):
        path = self.write(
            "event,time,url,importance\n"
            "change,1970-01-02T00:00:00Z,a,2\n"
            "change,1970-01-03T00:00:00+00:00,a,2\n"
            ',,"b,with comma",\n',
            name="t.csv.gz",
        )
        pages = tb.read_trace(path)
        self.assertEqual(sorted(pages), ["a", "b,with comma"])
        self.assertEqual(sorted(t for t, _ in pages["a"].events), [DAY, 2 * DAY])
        self.assertEqual(pages["a"].importance, 2)

    def test_malformed_rows_name_their_line_and_exit_2(self):
        for text, message in (
            ("url,time\na,1\na,yesterday\n", "line 3"),
            ("url,time,importance\na,1,1\na,2,3\n", "conflicting importance"),
            ("url,time,event\na,1,edit\n", "bad event"),
            ("url,when\na,1\n", "header"),
        ):
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                code = tb.main([self.write(text)])
            self.assertEqual(code, 2)
            self.assertIn(message, err.getvalue())

    def test_past_rates_are_learned_before_the_split_only(self):
        path = self.write(
            "url,time,event\n"
            f"a,{10 * DAY},change\n"
            f"a,{30 * DAY},change\n"
            f"a,{70 * DAY},change\n"  # after the split: not learned
            "b,,\n"
            f"c,{60 * DAY},create\n"  # born after the split
        )
        pages = tb.read_trace(path)
        lives, _, _ = tb.build_lives(pages, 50 * DAY, 100 * DAY)
        rates = tb.past_rates(pages, lives, 0, 50 * DAY)
        self.assertEqual([x.url for x in lives], ["a", "b", "c"])
        self.assertAlmostEqual(rates[0], 2.5 / 50)
        self.assertAlmostEqual(rates[1], 0.5 / 50)
        self.assertAlmostEqual(rates[2], (2.5 / 50 + 0.5 / 50) / 2)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = tb.main([path, "--start", "0", "--end", str(100 * DAY),
                            "--learn-until", str(50 * DAY), "--json"])
        self.assertEqual(code, 0)
        self.assertIn("past", json.loads(out.getvalue())["baselines"][0])

    def test_figures_are_means_over_the_phase_shifts(self):
        pages = tb.read_trace(self.tiny())
        lives, start, end = tb.build_lives(pages, 0, 100 * DAY)
        one = [tb.baselines(lives, start, ["1/30"], None, [s])[0] for s in (0.0, 0.5)]
        both = tb.baselines(lives, start, ["1/30"], None, [0.0, 0.5])[0]
        for name in ("uniform", "optimal"):
            self.assertAlmostEqual(both[name], (one[0][name] + one[1][name]) / 2)
        gains = [r["optimal"] - r["uniform"] for r in one]
        self.assertAlmostEqual(both["optimal_spread"][0], min(gains))
        self.assertAlmostEqual(both["optimal_spread"][1], max(gains))
        # Shifted by half a period, a's refreshes fall on days 20 and 50:
        # its change at day 50 is caught at once (a different figure).
        self.assertNotAlmostEqual(one[0]["uniform"], one[1]["uniform"])

    def test_drop_mass_removes_changes_shared_by_many_pages(self):
        path = self.write(
            "url,time,event\n"
            "a,10,change\nb,10,change\nc,10,create\n"  # 3 of 3 pages at t=10
            "a,20,change\n"
        )
        pages = tb.read_trace(path)
        self.assertEqual(tb.drop_mass_events(pages, 0.5), 1)
        self.assertEqual(pages["a"].events, {(20, "change")})
        self.assertEqual(pages["b"].events, set())
        self.assertEqual(pages["c"].events, {(10, "create")})  # kept

    def test_json_output(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = tb.main([self.tiny(), "--start", "0", "--end", str(100 * DAY), "--json",
                            "--budgets", "1/30,1/7"])
        self.assertEqual(code, 0)
        data = json.loads(out.getvalue())
        self.assertEqual([r["budget"] for r in data["baselines"]], ["1/30", "1/7"])
        self.assertGreater(data["baselines"][1]["uniform"], data["baselines"][0]["uniform"])


if __name__ == "__main__":
    unittest.main()
