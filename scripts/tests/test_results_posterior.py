"""Tests of freshd_results.item_posterior: every variant is run with its own
flags, the table has a row per cell, and the per-variant counts follow the
numbers."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from freshd_results import item_posterior  # noqa: E402
from freshd_results.study import Study  # noqa: E402
from tests_fakes import FakeRunner  # noqa: E402


def fake_result(args):
    """The mixture calibrated, gamma 0.05 off; the oracle best."""
    policy = args[args.index("--policy") + 1]
    oracle = "--oracle" in args
    mixture = "mixture" in args
    fresh = 0.30 if policy == "uniform" else (0.40 if oracle else 0.38)
    if "--explore" in args:
        fresh += 0.01
    return {
        "freshness": fresh,
        "estimated_freshness": fresh + (0.0 if mixture or oracle else 0.05),
        "least_host_crawl_share": 0.5,
    }


class PosteriorTest(unittest.TestCase):
    def test_each_variant_runs_with_its_flags_and_counts_follow(self):
        runner = FakeRunner(fake_result)
        study = Study(runner, seeds=3, quick=False)
        checks = item_posterior.section_posterior(study, item_posterior.submit(study))
        text = "\n".join(study.md)
        # 5 webs x 3 budgets x 2 policies x 4 variants.
        self.assertEqual(text.count("| sim/webs/"), 5 * 3 * 2 * 4)
        explored = [a for a in runner.args if "--explore" in a]
        mixed = [a for a in runner.args if "mixture" in a]
        self.assertEqual(len(explored), len(mixed))
        self.assertTrue(all("--oracle" not in a for a in mixed))
        cal = "estimated_freshness ± 0.03"
        self.assertEqual(sum(checks[("gamma", cal)]), 0)
        self.assertEqual(
            sum(checks[("mixture + explore", cal)]),
            len(checks[("mixture + explore", cal)]),
        )
        self.assertIn("| estimated_freshness ± 0.03 | 0 of 30 |", text)


if __name__ == "__main__":
    unittest.main()
