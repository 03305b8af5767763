"""Tests of freshd_results.item_acceptance: the section renders from the runs
it submitted and its verdicts follow the numbers."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from freshd_results import item_acceptance  # noqa: E402
from freshd_results.study import Study  # noqa: E402
from tests_fakes import FakeRunner  # noqa: E402


def fake_result(args):
    """A plausible `freshd sim` JSON: the oracle a little better, uniform
    worse, longevity lower on fragment staleness."""
    policy = args[args.index("--policy") + 1]
    oracle = "--oracle" in args
    fresh = {"uniform": 0.30, "nutch": 0.32}.get(policy, 0.40 if oracle else 0.38)
    stale = 0.30 if policy == "longevity" else 0.40
    return {
        "freshness": fresh,
        "fragment_staleness": stale,
        "estimated_freshness": fresh + 0.01,
        "least_host_crawl_share": 0.5,
    }


class AcceptanceTest(unittest.TestCase):
    def test_section_renders_and_passes_on_good_numbers(self):
        runner = FakeRunner(fake_result)
        study = Study(runner, seeds=3, quick=False)

        class Plan:
            acc_runs = item_acceptance.submit(study)

        item, claim, ok, detail = item_acceptance.section_acceptance(study, Plan)
        text = "\n".join(study.md)
        self.assertEqual(item, "acc")
        self.assertIs(ok, True, detail)
        self.assertIn("sim/webs/WEB.toml", text)
        self.assertIn("heavy-tail.toml", text)
        # 5 webs x 3 budgets, each with freshness, ncis (+ longevity on 2).
        self.assertEqual(text.count("| sim/webs/"), 5 * 3 * 2 + 2 * 3 + 2 * 3)

    def test_an_estimate_below_uniform_fails(self):
        def bad(args):
            j = fake_result(args)
            if "--oracle" not in args and "heavy-tail" in " ".join(args):
                j["freshness"] = 0.1
            return j

        study = Study(FakeRunner(bad), seeds=3, quick=False)

        class Plan:
            acc_runs = item_acceptance.submit(study)

        _, _, ok, detail = item_acceptance.section_acceptance(study, Plan)
        self.assertIn(ok, ("PARTIAL", False))
        self.assertRegex(detail, r"≥ uniform: \d+/\d+")


if __name__ == "__main__":
    unittest.main()
