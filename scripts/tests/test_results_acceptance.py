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
        self.assertNotIn("Missed targets", text)

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

    def render(self, result_of_args):
        study = Study(FakeRunner(result_of_args), seeds=3, quick=False)

        class Plan:
            acc_runs = item_acceptance.submit(study)

        _, _, ok, detail = item_acceptance.section_acceptance(study, Plan)
        return ok, detail, "\n".join(study.md)

    def test_a_missed_target_names_its_designs_cells_and_verdict(self):
        def miscalibrated(args):
            j = fake_result(args)
            if "--oracle" not in args and "heavy-tail" in " ".join(args):
                j["estimated_freshness"] = j["freshness"] + 0.06
            return j

        ok, detail, text = self.render(miscalibrated)
        self.assertEqual(ok, "PARTIAL")
        self.assertIn("### Missed targets: the designs tried", text)
        self.assertIn("**estimated_freshness ± 0.03** (24 of 30 cells).", text)
        # The earlier designs with their numbers, then this run's.
        self.assertIn(
            "| one Gamma rate per host (the default until 2026-11-27) | 8 of 30 |",
            text,
        )
        self.assertIn("| rate mixture per host, no exploration | 21 of 30 |", text)
        self.assertIn(
            "| %s | 24 of 30 | above |" % item_acceptance.CURRENT_DESIGN, text
        )
        # Every cell missed, with its figure, and the verdict.
        self.assertIn("heavy-tail 0.05 freshness (+0.060)", text)
        self.assertIn("heavy-tail 0.3 ncis (+0.060)", text)
        self.assertEqual(text.count("(+0.060)"), 6)
        self.assertIn("Verdict: missed after 5 designs measured.", text)
        # Targets met are not listed.
        self.assertNotIn("**≥ uniform**", text)

    def test_the_longevity_target_sets_both_designs_staleness_side_by_side(self):
        def longevity_no_better(args):
            j = fake_result(args)
            j["fragment_staleness"] = 0.40
            return j

        _, detail, text = self.render(longevity_no_better)
        self.assertIn("longevity ≥ 10% below freshness: 0/6", detail)
        self.assertIn("**longevity ≥ 10% below freshness** (0 of 6 cells).", text)
        self.assertIn("| scroll | 0.05 | 0.3880 | 0.4000 | 0.3993 | 0.4000 |", text)
        self.assertIn("| feed-mix | 0.3 | 0.1370 | 0.4000 | 0.1437 | 0.4000 |", text)
        self.assertIn("scroll 0.1 (0.0%)", text)
        self.assertIn("Verdict: missed after 5 designs measured.", text)

    def test_every_target_has_its_earlier_designs_recorded(self):
        # Each target the section checks names at least one design before
        # this run's, so a missed one is reported with two; a new target
        # without its record fails here.
        ok, detail, _ = self.render(fake_result)
        targets = [part.rsplit(":", 1)[0] for part in detail.split("; ")]
        self.assertEqual(len(targets), 5)
        for target in targets:
            self.assertGreaterEqual(
                len(item_acceptance.DESIGNS_TRIED.get(target, [])), 1, target
            )
        self.assertEqual(set(targets), set(item_acceptance.DESIGNS_TRIED))


if __name__ == "__main__":
    unittest.main()
