"""The plan: every `freshd sim` configuration RESULTS.md reports, submitted
up front so the pool stays busy; sections read the futures in order.

Names keep the report's item letters: `a_runs` holds item (a)'s runs,
`B_POL` item (b)'s policies, and so on. A few sizes shrink in quick mode.
"""

import atexit
import os
import shutil
import tempfile

from . import item_acceptance
from .stats import fmt


class Plan:
    """Submits every run through `study` at construction."""

    def __init__(self, study):
        self.study = study
        # Every run is submitted first so the pool stays busy; results are read
        # in section order below.
        self.A_RATES = [50, 100, 200, 400]
        self.a_runs = {
            r: study.run("uniform", "freshness", r, True) for r in self.A_RATES
        }
        self.B_POL = ["freshness", "ncis", "ncis1", "ncis2", "cis"]
        self.b_runs = {p: study.run("noisy", p, 100, True) for p in self.B_POL}
        self.B_FP = ["noisy-nofp", "noisy-lowfp", "noisy"]
        self.b_fp = {
            (w, p): study.run(w, p, 100, True)
            for w in self.B_FP
            for p in ("freshness", "cis", "ncis")
        }
        self.b_noise = {
            p: study.run("noise-only", p, 100, True)
            for p in ("freshness", "ncis", "cis")
        }
        # Signals delayed by up to a day, oracle and estimated: as hints claiming
        # no change time (taken as they come, or dropped within a window after a
        # fetch, the paper's appendix C) and as lastmods (dropped when not after
        # the fetch); the undelayed runs are b_runs and (d)'s d_runs.
        self.B_DELAY_POL = ["freshness", "ncis", "cis"]
        self.B_WINDOWS = [0.25, 0.5, 1]  # days
        self.b_delay = {
            (p, o): study.run("noisy-delay", p, 100, o)
            for p in self.B_DELAY_POL
            for o in (True, False)
        }
        self.b_lastmod = {
            (p, o): study.run("noisy-delay-lastmod", p, 100, o)
            for p in self.B_DELAY_POL
            for o in (True, False)
        }
        self.b_window = {
            (p, o, w): study.run(
                "noisy-delay", p, 100, o, ("--signal-window-days", fmt(w))
            )
            for p in self.B_DELAY_POL
            for o in (True, False)
            for w in self.B_WINDOWS
        }
        # (c): longevity at a few budgets; freshness on a grid of budgets, per seed
        # the budget where freshness reaches longevity's staleness is interpolated
        # (log R, linear staleness) and then checked by one more run (secant step).
        self.C_RATES = {"scroll": [50, 100, 200, 400], "paper": [50, 100, 200, 400]}
        self.C_GRID = [25 * 2 ** (k / 2) for k in range(0, 11)]  # 25 .. 800 per day
        self.C_MODES = {"scroll": (True, False), "paper": (True,)}  # oracle?
        self.c_long, self.c_grid = {}, {}
        for web in self.C_RATES:
            for oracle in self.C_MODES[web]:
                for r in self.C_RATES[web]:
                    self.c_long[(web, oracle, r)] = study.run(
                        web, "longevity", r, oracle
                    )
                for r in self.C_GRID:
                    self.c_grid[(web, oracle, r)] = study.run(
                        web, "freshness", r, oracle
                    )
        # (c), what the claim needs of the web: scroll-paper.toml with more scroll
        # pages (taken from the churn pages) and more words per scroll item (taken
        # from the page's static words); only the continuous optima of each variant
        # are used, so the runs are one simulated day.
        self.C_SWEEP_SHARE = [
            0.1,
            0.2,
            0.3,
            0.4,
        ]  # scroll pages; churn pages 0.5 − this
        self.C_SWEEP_WORDS = [2, 5, 10]  # words per scroll item (10 items)
        self.C_SWEEP_R = 100
        self.C_SWEEP_DIR = tempfile.mkdtemp(prefix="freshd-results-")
        atexit.register(shutil.rmtree, self.C_SWEEP_DIR, True)
        self.c_sweep = {
            (sh, w): study.run(
                self.paper_variant(sh, w), "longevity", self.C_SWEEP_R, True
            )
            for sh in self.C_SWEEP_SHARE
            for w in self.C_SWEEP_WORDS
        }
        self.D_POL = ["freshness", "age", "ncis", "ncis1", "ncis2", "cis"]
        self.d_runs = {
            (p, o): study.run("noisy", p, 100, o)
            for p in self.D_POL
            for o in (True, False)
        }
        self.BASELINES = ("nutch", "stormcrawler", "uniform")
        self.d_base = {p: study.run("noisy", p, 100) for p in self.BASELINES}
        self.D_SCROLL_R = 200
        self.d_scroll = {
            (p, o): study.run("scroll", p, self.D_SCROLL_R, o)
            for p, o in [
                ("longevity", True),
                ("longevity", False),
                ("longevity-bound", False),
                ("freshness", True),
                ("freshness", False),
                ("nutch", False),
                ("stormcrawler", False),
                ("uniform", False),
            ]
        }
        # (d) by budget: the same comparison at R/n = 0.05 .. 0.4 per page per day
        # (R = 100 reuses d_runs; the scroll longevity runs are (c)'s).
        self.D_BUDGETS = [50, 100, 200, 400]
        self.d_budget = {
            (p, r, o): (
                self.d_runs[(p, o)] if r == 100 else study.run("noisy", p, r, o)
            )
            for p in self.D_POL
            for r in self.D_BUDGETS
            for o in (True, False)
        }
        self.d_budget_bound = {
            r: (
                self.d_scroll[("longevity-bound", False)]
                if r == self.D_SCROLL_R
                else study.run("scroll", "longevity-bound", r)
            )
            for r in self.C_RATES["scroll"]
        }
        # ... and after a warm-up of D_LEARN_WARM fetches per page, measured over
        # D_LEARN_MEASURE more (1,000 pages on every web).
        self.D_LEARN_WARM, self.D_LEARN_MEASURE = (12, 8) if not study.quick else (3, 2)
        self.d_learn = {}
        for r in self.D_BUDGETS:
            w, d = self.learn_days(r)
            for o in (True, False):
                for p in self.D_POL:
                    self.d_learn[(p, r, o)] = study.run("noisy", p, r, o, (), d, w)
                self.d_learn[("longevity", r, o)] = study.run(
                    "scroll", "longevity", r, o, (), d, w
                )
            self.d_learn[("longevity-bound", r, False)] = study.run(
                "scroll", "longevity-bound", r, False, (), d, w
            )
        # (d) where the gap comes from: estimated with each page's true change rate
        # (--oracle-rate), and after a long warm-up.
        self.D_SPLIT = ["freshness", "ncis", "ncis1", "ncis2", "cis"]
        self.d_true_rate = {
            p: study.run("noisy", p, 100, False, ["--oracle-rate"])
            for p in self.D_SPLIT
        }
        self.d_scroll_true_rate = study.run(
            "scroll", "longevity", self.D_SCROLL_R, False, ["--oracle-rate"]
        )
        # ... and with the exact posterior mean under the web's own distributions
        # (the best point estimate from the same bits and signal counts).
        self.d_posterior = {
            p: study.run("noisy", p, 100, True, ["--oracle-posterior"])
            for p in self.D_SPLIT
        }
        # ... and valued over draws from that posterior (the Bayes decision of the
        # same greedy policy).
        self.D_DRAWS = 32
        self.d_posterior_value = {
            p: study.run(
                "noisy",
                p,
                100,
                True,
                ["--oracle-posterior", "--oracle-posterior-draws", str(self.D_DRAWS)],
            )
            for p in self.D_SPLIT
        }
        # ... and with an exact Last-Modified from every server (same pages, changes
        # and signals as noisy.toml).
        self.d_lm = {p: study.run("noisy-lm", p, 100) for p in self.D_SPLIT}
        # ... and with delayed sitemap lastmods as well (the daemon's case; its
        # oracle and its runs without Last-Modified are b_lastmod's).
        self.d_lm_delay = {
            p: study.run("noisy-lm-delay", p, 100) for p in self.B_DELAY_POL
        }
        # ... and on a web whose hosts differ (each host's pages share one class).
        self.d_apart = {
            (p, o): study.run("hosts-apart", p, 100, o)
            for p in self.D_SPLIT
            for o in (True, False)
        }
        self.D_LONG_DAYS, self.D_LONG_WARM = (360, 240) if not study.quick else (90, 60)
        self.d_long = {
            (p, o): study.run(
                "noisy", p, 100, o, (), self.D_LONG_DAYS, self.D_LONG_WARM
            )
            for p in ("freshness", "ncis")
            for o in (True, False)
        }
        self.E_R = 100
        self.E_DAYS = 150 if not study.quick else 45
        self.E_CH = [self.E_DAYS / 3, 2 * self.E_DAYS / 3]
        self.e_runs = {}
        for oracle in (True, False):
            self.e_runs[("change", oracle)] = study.run(
                "uniform",
                "freshness",
                self.E_R,
                oracle,
                self.e_extra(self.E_R, 2 * self.E_R, self.E_R),
                self.E_DAYS,
                0,
            )
            self.e_runs[("R", oracle)] = study.run(
                "uniform",
                "freshness",
                self.E_R,
                oracle,
                self.e_extra(self.E_R, self.E_R, self.E_R),
                self.E_DAYS,
                0,
            )
            self.e_runs[("2R", oracle)] = study.run(
                "uniform",
                "freshness",
                2 * self.E_R,
                oracle,
                self.e_extra(2 * self.E_R, 2 * self.E_R, 2 * self.E_R),
                self.E_DAYS,
                0,
            )
        self.F_R = 50
        self.F_FLOORS = [0, 90, 60, 30]
        self.F_DAYS, self.F_WARM = (
            (240, 120) if not study.quick else (60, 30)
        )  # floors all active
        self.f_runs = {
            (fl, o): study.run(
                "uniform",
                "freshness",
                self.F_R,
                o,
                ["--max-interval-days", str(fl)],
                self.F_DAYS,
                self.F_WARM,
            )
            for fl in self.F_FLOORS
            for o in (True, False)
        }
        self.BUDGET_POL = self.D_POL + ["longevity", "longevity-bound"]
        self.D_SHAPE = ["freshness", "ncis"]

        # Acceptance across webs (issue 31, item 3); its module says what.
        self.acc_runs = item_acceptance.submit(study)

    def paper_variant(self, share, words):
        """scroll-paper.toml with the scroll class at `share` of pages (churn at
        0.5 − share) and `words` per item; returns its WEBS key."""
        with open(self.study.webs["paper"]) as f:
            blocks = f.read().split("[[class]]")
        for i, b in enumerate(blocks):
            if 'name = "churn"' in b:
                b = b.replace("share = 0.3\n", "share = %.1f\n" % (0.5 - share))
            elif 'name = "scroll"' in b:
                b = b.replace("share = 0.2\n", "share = %.1f\n" % share)
                b = b.replace(
                    "static_words = 80\n", "static_words = %d\n" % (100 - 10 * words)
                )
                b = b.replace("words_per_item = 2\n", "words_per_item = %d\n" % words)
            blocks[i] = b
        text = "[[class]]".join(blocks)
        key = "paper-s%.1f-w%d" % (share, words)
        if share == 0.2 and words == 2:
            assert (
                text == open(self.study.webs["paper"]).read()
            ), "scroll-paper.toml changed"
        path = os.path.join(self.C_SWEEP_DIR, key + ".toml")
        with open(path, "w") as f:
            f.write(text)
        self.study.webs[key], self.study.days[key], self.study.warm[key] = path, 1, 0.5
        return key

    def learn_days(self, r):
        """(warm-up, total days) at budget r."""
        return (
            self.D_LEARN_WARM * 1000 // r,
            (self.D_LEARN_WARM + self.D_LEARN_MEASURE) * 1000 // r,
        )

    def e_extra(self, r1, r2, r3):
        return [
            "--rate-change",
            "%g:%g" % (self.E_CH[0], r2),
            "--rate-change",
            "%g:%g" % (self.E_CH[1], r3),
        ]
