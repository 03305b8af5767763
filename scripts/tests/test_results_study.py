"""Tests of freshd_results.study and plan: the runner runs each command once
and caches only for the same binary; the plan asks for webs that exist."""

import concurrent.futures
import json
import os
import stat
import sys
import tempfile
import unittest

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, SCRIPTS)

from freshd_results.plan import Plan  # noqa: E402
from freshd_results.study import Runner, Study  # noqa: E402

ROOT = os.path.dirname(SCRIPTS)

# A stand-in for the freshd binary: logs each call, prints a JSON result.
FAKE_FRESHD = """#!/bin/sh
echo "$*" >> "%s"
echo '{"cpu_seconds": 1.5, "args": "'"$*"'"}'
"""


class RecordingRunner:
    """Duck-types Runner.submit: records the arguments, runs nothing."""

    def __init__(self):
        self.args = []

    def submit(self, args):
        self.args.append(list(args))
        f = concurrent.futures.Future()
        f.set_result({})
        return f


class StudyTest(unittest.TestCase):
    def test_sim_args_and_command_line(self):
        s = Study(RecordingRunner(), seeds=3, quick=False)
        a = s.sim_args("noisy", "ncis", 100, 2, oracle=True, extra=["--x"])
        self.assertEqual(
            a,
            [
                "sim",
                "--web",
                "sim/webs/noisy.toml",
                "--policy",
                "ncis",
                "--rate",
                "100",
                "--days",
                "120",
                "--warmup-days",
                "30",
                "--seed",
                "2",
                "--oracle",
                "--x",
            ],
        )
        self.assertEqual(
            s.cmd_line("scroll", "longevity", "R"),
            "freshd sim --web sim/webs/scroll.toml --policy longevity --rate R "
            "--days 60 --warmup-days 20 --seed S",
        )

    def test_quick_shortens_every_web_and_variants_follow_noisy(self):
        s = Study(RecordingRunner(), seeds=2, quick=True)
        self.assertEqual(s.days["uniform"], 30)
        self.assertEqual(s.warm["scroll"], 5)
        self.assertEqual(s.days["noisy-delay"], s.days["noisy"])
        self.assertEqual(s.warm["hosts-apart"], s.warm["noisy"])

    def test_run_submits_one_command_per_seed(self):
        r = RecordingRunner()
        s = Study(r, seeds=4, quick=False)
        self.assertEqual(len(s.run("uniform", "freshness", 50)), 4)
        self.assertEqual(
            [a[a.index("--seed") + 1] for a in r.args], ["1", "2", "3", "4"]
        )

    def test_table_is_markdown(self):
        s = Study(RecordingRunner(), seeds=1, quick=False)
        s.table(["a", "b"], [[1, "x"]])
        self.assertEqual(s.md, ["| a | b |", "|---|---|", "| 1 | x |", ""])


class PlanTest(unittest.TestCase):
    def test_every_run_names_a_web_that_exists(self):
        r = RecordingRunner()
        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            plan = Plan(Study(r, seeds=1, quick=True))
            self.assertGreater(len(r.args), 250)
            for a in r.args:
                web = a[a.index("--web") + 1]
                self.assertTrue(os.path.isfile(web), web)
            # The (c) sweep writes its webs into a directory of its own.
            self.assertTrue(
                any(
                    a[a.index("--web") + 1].startswith(plan.C_SWEEP_DIR) for a in r.args
                )
            )
        finally:
            os.chdir(cwd)

    def test_quick_plan_is_shorter(self):
        full, quick = RecordingRunner(), RecordingRunner()
        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            Plan(Study(full, seeds=1, quick=False))
            Plan(Study(quick, seeds=1, quick=True))
        finally:
            os.chdir(cwd)
        days = lambda args: sum(float(a[a.index("--days") + 1]) for a in args)
        self.assertLess(days(quick.args), days(full.args) / 3)


class RunnerTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.dir.name, "calls.log")
        self.freshd = os.path.join(self.dir.name, "freshd")
        self.write_binary("")

    def tearDown(self):
        self.dir.cleanup()

    def write_binary(self, extra):
        with open(self.freshd, "w") as f:
            f.write(FAKE_FRESHD % self.log + extra)
        os.chmod(self.freshd, os.stat(self.freshd).st_mode | stat.S_IXUSR)

    def calls(self):
        if not os.path.exists(self.log):
            return 0
        with open(self.log) as f:
            return len(f.read().splitlines())

    def test_each_command_line_runs_once(self):
        r = Runner(self.freshd, 2)
        a = r.submit(["sim", "--seed", "1"])
        b = r.submit(["sim", "--seed", "1"])
        c = r.submit(["sim", "--seed", "2"])
        self.assertEqual(a.result()["args"], "sim --seed 1")
        self.assertIs(a, b)
        self.assertEqual(c.result()["args"], "sim --seed 2")
        r.shutdown()
        self.assertEqual(self.calls(), 2)
        self.assertEqual(r.count, 2)
        self.assertAlmostEqual(r.cpu, 3.0)

    def test_cache_is_kept_per_binary(self):
        cache = os.path.join(self.dir.name, "cache")
        os.mkdir(cache)
        first = Runner(self.freshd, 1, cache)
        first.get(["sim", "--seed", "1"])
        second = Runner(self.freshd, 1, cache)
        second.get(["sim", "--seed", "1"])
        self.assertEqual(self.calls(), 1)  # the second came from the cache
        self.assertEqual((first.cached, second.cached), (0, 1))
        self.assertAlmostEqual(second.cpu, 1.5)  # its CPU-seconds still count
        self.write_binary("# rebuilt\n")
        j = Runner(self.freshd, 1, cache).get(["sim", "--seed", "1"])
        self.assertEqual(self.calls(), 2)  # a new binary runs again
        self.assertEqual(j["cpu_seconds"], 1.5)

    def test_a_failing_run_raises_with_its_command(self):
        self.write_binary("exit 3\n")
        with open(self.freshd) as f:
            text = f.read().replace("echo '{", "exit 3\necho '{")
        with open(self.freshd, "w") as f:
            f.write(text)
        with self.assertRaisesRegex(RuntimeError, r"failed \(3\).*--seed 9"):
            Runner(self.freshd, 1).get(["sim", "--seed", "9"])


if __name__ == "__main__":
    unittest.main()
