"""Tests of freshd_results.item_rules: each rule is run with its own flag
beside a run without, the cost is the paired difference, and a rule the
intervals break is reported as broken."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from freshd_results import item_rules  # noqa: E402
from freshd_results.study import Study  # noqa: E402
from tests_fakes import FakeRunner  # noqa: E402

DAY = 86400.0


def fake_result(args):
    """A rule costs 0.01; the article max rule is broken by a day, the 30-day
    cold rule has late intervals."""
    rule = args[args.index("--rule") + 1] if "--rule" in args else None
    classes = {"cold", "hot"} if "heavy-tail" in " ".join(args) else {
        "article",
        "feed",
    }
    j = {
        "freshness": 0.5 - (0.01 if rule else 0),
        "per_class": {
            c: {"freshness": 0.4, "crawls_per_day": 10.0} for c in classes
        },
    }
    if rule:
        kind = "max" if ":max=" in rule else "min"
        days = {"cold:max=20d": 20, "cold:max=30d": 30, "article:max=14d": 14}
        bound = days.get(rule, 1) * DAY
        info = {"min_interval_s": 0, "max_interval_s": 0, "crawls": 100}
        info["%s_interval_s" % kind] = bound
        info["longest_interval_s"] = bound + (DAY if "article" in rule else 600)
        info["shortest_interval_s"] = bound + 60 if kind == "min" else 60
        info["late_intervals"] = 5 if rule == "cold:max=30d" else 0
        j["rules"] = [info]
    return j


class RulesTest(unittest.TestCase):
    def test_each_rule_runs_with_its_flag_and_verdicts_follow(self):
        runner = FakeRunner(fake_result)
        study = Study(runner, seeds=3, quick=False)
        held = item_rules.section_rules(study, item_rules.submit(study))
        text = "\n".join(study.md)
        # (none + 3 rules) + (none + 2 rules), 3 seeds each.
        self.assertEqual(len(runner.args), (4 + 3) * 3)
        ruled = [a for a in runner.args if "--rule" in a]
        self.assertEqual(len(ruled), 5 * 3)
        self.assertTrue(all(a[a.index("--policy") + 1] == "ncis" for a in ruled))
        # cold 30 d: late intervals; article: an interval a day too long.
        self.assertEqual(held, [True, False, True, False, True])
        self.assertIn("-0.0100 ± 0.0000", text)
        self.assertIn("| 15.00 d | 0 of 300 | **late** |", text)
        self.assertIn("| 30.01 d | 15 of 300 | **late** |", text)
        self.assertIn("The rules held in 3 of 5 cells", text)

    def test_rule_holds(self):
        self.assertTrue(item_rules.rule_holds("max", DAY, DAY + 3000))
        self.assertFalse(item_rules.rule_holds("max", DAY, DAY + 4000))
        self.assertFalse(item_rules.rule_holds("max", DAY, DAY, late=1))
        self.assertTrue(item_rules.rule_holds("min", DAY, DAY))
        self.assertFalse(item_rules.rule_holds("min", DAY, DAY - 1))
        self.assertTrue(item_rules.rule_holds("min", DAY, -1))


if __name__ == "__main__":
    unittest.main()
