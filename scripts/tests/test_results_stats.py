"""Tests of freshd_results.stats, the pure helpers behind RESULTS.md."""

import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from freshd_results import stats  # noqa: E402


class MeanSeTest(unittest.TestCase):
    def test_mean_and_standard_error(self):
        m, se = stats.mean_se([1.0, 2.0, 3.0])
        self.assertAlmostEqual(m, 2.0)
        self.assertAlmostEqual(se, math.sqrt(1.0 / 3.0))

    def test_skips_missing_and_non_finite_values(self):
        m, se = stats.mean_se([None, 4.0, float("nan"), 6.0, float("inf")])
        self.assertAlmostEqual(m, 5.0)
        self.assertAlmostEqual(se, 1.0)

    def test_one_or_no_value_has_no_standard_error(self):
        m, se = stats.mean_se([7.0])
        self.assertEqual(m, 7.0)
        self.assertTrue(math.isnan(se))
        m, se = stats.mean_se([])
        self.assertTrue(math.isnan(m) and math.isnan(se))

    def test_pm_formats_with_digits_and_scale(self):
        self.assertEqual(stats.pm([0.1, 0.3], 1, 100), "20.0 ± 10.0")
        self.assertEqual(stats.pm([0.5]), "0.5000 ± nan")


class ComparisonTest(unittest.TestCase):
    def test_paired_differences_by_seed(self):
        a = [{"freshness": 0.6}, {"freshness": 0.7}]
        b = [{"freshness": 0.5}, {"freshness": 0.75}]
        got = stats.paired(a, b)
        self.assertAlmostEqual(got[0], 0.1)
        self.assertAlmostEqual(got[1], -0.05)

    def test_oracle_gap_is_positive_when_worse(self):
        oracle = [{"freshness": 0.8, "age": 2.0}]
        other = [{"freshness": 0.6, "age": 3.0}]
        self.assertAlmostEqual(stats.oracle_gap(oracle, other)[0], 0.25)
        self.assertAlmostEqual(
            stats.oracle_gap(oracle, other, "age", lower_better=True)[0], 0.5
        )

    def test_forced_share_in_percent(self):
        js = [{"overdue_crawls": 10, "crawls_total": 100}]
        self.assertEqual(stats.forced(js), "10.0 ± nan%")
        # A run whose window held no crawl is left out, not divided by.
        js.append({"overdue_crawls": 0, "crawls_total": 0})
        self.assertEqual(stats.forced(js), "10.0 ± nan%")

    def test_fmt_keeps_strings_and_shortens_numbers(self):
        self.assertEqual(stats.fmt("R"), "R")
        self.assertEqual(stats.fmt(25 * 2**0.5), "35.3553")
        self.assertEqual(stats.fmt(100), "100")


class InterpRateTest(unittest.TestCase):
    def test_log_linear_between_bracketing_points(self):
        # staleness falls linearly in log R: 0.4 at R=100, 0.2 at R=400;
        # 0.3 is reached at the geometric mean, R=200.
        pts = [(400, 0.2), (100, 0.4), (1600, 0.1)]
        self.assertAlmostEqual(stats.interp_rate(pts, 0.3), 200.0)

    def test_exact_point(self):
        self.assertAlmostEqual(stats.interp_rate([(50, 0.5), (100, 0.4)], 0.4), 100)

    def test_no_bracket_is_none(self):
        self.assertIsNone(stats.interp_rate([(50, 0.5), (100, 0.4)], 0.1))
        self.assertIsNone(stats.interp_rate([(50, 0.5), (100, 0.5)], 0.5))


if __name__ == "__main__":
    unittest.main()
