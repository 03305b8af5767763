"""Item (c): longevity against freshness on the scroll webs, budget-matched.

Each section_* function appends its Markdown to `study` from the runs
`plan` submitted and returns its summary row(s).
"""

import math

from .stats import interp_rate, mean_se, pm, results, verdict


def match_prepare(study, plan, web, oracle, long_oracle=None):
    """Per longevity budget and seed: interpolates the freshness budget with
    the same fragment staleness and submits one refining run there.
    long_oracle: the longevity runs' mode when it differs from freshness's."""
    res = {}
    for r in plan.C_RATES[web]:
        lj = results(
            plan.c_long[(web, oracle if long_oracle is None else long_oracle, r)]
        )
        per_seed = []
        for i, s in enumerate(study.seed_list):
            pts = [
                (g, plan.c_grid[(web, oracle, g)][i].result()["fragment_staleness"])
                for g in plan.C_GRID
            ]
            target = lj[i]["fragment_staleness"]
            est = interp_rate(pts, target)
            fut = (
                study.runner.submit(study.sim_args(web, "freshness", est, s, oracle))
                if est is not None
                else None
            )
            per_seed.append((target, pts, est, fut))
        res[r] = (lj, per_seed)
    return res


def match_finish(prepared):
    """-> {R: (longevity results, ratios R/R_F per seed, |Δstaleness| of
    the refining runs)}."""
    out_rows = {}
    for r, (lj, per_seed) in prepared.items():
        ratios, checks = [], []
        for target, pts, est, fut in per_seed:
            if est is None:
                ratios.append(None)
                continue
            j = fut.result()
            pts2 = pts + [(est, j["fragment_staleness"])]
            est2 = interp_rate(pts2, target) or est
            ratios.append(r / est2)
            checks.append(j["fragment_staleness"] - target)
        out_rows[r] = (lj, ratios, checks)
    return out_rows


def class_table(study, plan, web):
    """Where each policy spends its crawls (oracle, seed means): per class,
    crawls per day and fragment staleness, longevity at R and freshness at
    the nearest grid budget to 2R."""
    names = list(
        results(plan.c_long[(web, True, plan.C_RATES[web][0])])[0]["per_class"].keys()
    )
    rows = []
    for r in plan.C_RATES[web]:
        g = min(plan.C_GRID, key=lambda x: abs(math.log(x / (2 * r))))
        for label, futs in (
            ("longevity R=%d" % r, plan.c_long[(web, True, r)]),
            ("freshness R=%.0f" % g, plan.c_grid[(web, True, g)]),
        ):
            js = results(futs)
            row = [label]
            for c in names:
                row.append(
                    "%.1f / %.3f"
                    % (
                        mean_se([j["per_class"][c]["crawls_per_day"] for j in js])[0],
                        mean_se([j["per_class"][c]["fragment_staleness"] for j in js])[
                            0
                        ],
                    )
                )
            rows.append(row)
    study.out(
        "Per class (oracle; crawls/day / fragment staleness, seed means; "
        "longevity at R next to freshness at ≈ 2R):"
    )
    study.out()
    study.table(["run"] + names, rows)


def optima_table(study, plan, web, optima):
    """The continuous optima of the web's true curves, from the longevity
    oracle runs' JSON (sim/README.md): what any policy could reach."""
    rows = []
    for r in plan.C_RATES[web]:
        js = results(plan.c_long[(web, True, r)])
        ratio = [r / j["freshness_rate_for_staleness_optimum"] for j in js]
        rm = mean_se(ratio)[0]
        optima.append(
            (
                web,
                r,
                rm,
                mean_se([j["fragment_staleness"] / j["staleness_optimum"] for j in js])[
                    0
                ],
            )
        )
        rows.append(
            [
                r,
                pm([j["staleness_optimum"] for j in js]),
                pm([j["fragment_staleness"] / j["staleness_optimum"] for j in js]),
                pm([j["staleness_at_freshness_optimum"] for j in js]),
                "%.0f"
                % mean_se([j["freshness_rate_for_staleness_optimum"] for j in js])[0],
                pm(ratio, 3),
                verdict(rm <= 0.6),
            ]
        )
    study.out(
        "Continuous optima of the same webs (no simulation: each seed's "
        "true curves, `sched::LongevityContinuousOptimum`; "
        "`staleness_optimum` and friends in the longevity runs' JSON). "
        '"Azar optimum" is the freshness policy\'s continuous optimum, '
        "whose fragment staleness is evaluated on the same curves; R*_F is "
        "the budget at which it is as stale as the staleness optimum at R, "
        "so R/R*_F is the ratio the two policies would show if each "
        "reached its own optimum exactly:"
    )
    study.out()
    study.table(
        [
            "R/day",
            "staleness optimum",
            "longevity oracle / optimum",
            "Azar optimum's staleness at R",
            "R*_F",
            "optima ratio R/R*_F",
            "≤ 0.6",
        ],
        rows,
    )


def sweep_table(study, plan):
    """The optima's ratio at R = C_SWEEP_R on variants of scroll-paper."""
    rows, held = [], []
    for sh in plan.C_SWEEP_SHARE:
        row = ["%.1f / %.1f" % (sh, 0.5 - sh)]
        for w in plan.C_SWEEP_WORDS:
            js = results(plan.c_sweep[(sh, w)])
            rm = mean_se(
                [plan.C_SWEEP_R / j["freshness_rate_for_staleness_optimum"] for j in js]
            )[0]
            # Scroll words among all words: scroll pages × 10 items × w / 100.
            row.append("%.2f× (%.0f%%)" % (rm, 100 * sh * 10 * w / 100))
            if rm <= 0.6:
                held.append("%.1f scroll pages, %d words per item" % (sh, w))
        rows.append(row)
    study.out(
        "What the claim needs of the web: the optima's ratio at R = %d "
        "(the paper's cost 0.2) on variants of `scroll-paper.toml`, with "
        "scroll pages taken from the churn pages and more words per scroll "
        "item (taken from the static words; 10 items, 100 words per page). "
        "In brackets: scroll words as a share of all words. The variants are "
        "written by the script; the cell 0.2 / 0.3 with 2 words per item is "
        "`scroll-paper.toml` itself:" % plan.C_SWEEP_R
    )
    study.out()
    study.table(
        ["scroll / churn pages"]
        + ["%d words per item" % w for w in plan.C_SWEEP_WORDS],
        rows,
    )
    study.out(
        "Within 0.6×: %s. Half the pages stay static in every variant."
        % ("; ".join(held) or "none")
    )
    study.out()


def section_c(study, plan):
    study.out("## (c) Longevity vs holistic freshness on scroll-heavy webs")
    study.out()
    study.out(
        "Paper claim (Olston & Pandey 2008, §5.3, Fig. 11, high-quality "
        "data set): to reach the same moderate fragment staleness the "
        "longevity policy needs refresh cost 0.2 where Cho & Garcia-Molina's "
        "freshness policy needs 0.4 (0.5×); target ≤ 0.6× the crawls. "
        "The paper also says the gap is small at low cost / high staleness "
        "and substantial from moderate cost on."
    )
    study.out()
    study.out(
        "Method: for each longevity budget R and seed, `freshness` runs on a "
        "grid of budgets (25·2^(k/2)/day, k = 0..10); the budget R_F at "
        "which its fragment staleness equals longevity's is interpolated "
        "(linear in log R), then one more run at R_F refines it (secant "
        "step). Ratio = R / R_F (crawls are exactly R per day for every "
        "policy). Both policies with true parameters (`--oracle`: the "
        "policy comparison of the paper's Fig. 11) and, on `scroll.toml`, "
        "both estimated from observations (online)."
    )
    study.out()
    study.out(
        "Commands: `%s`, `%s`"
        % (
            study.cmd_line("scroll", "longevity", "R", True),
            study.cmd_line("scroll", "freshness", "R_grid", True),
        )
    )
    study.out()
    verdicts, bound_ratios, optima = [], [], []
    prepared = {
        (w, o): match_prepare(study, plan, w, o)
        for w in plan.C_RATES
        for o in plan.C_MODES[w]
    }
    # The most an estimated longevity could show against estimated freshness:
    # longevity's oracle staleness, matched by estimated freshness.
    prepared[("scroll", "bound")] = match_prepare(study, plan, "scroll", False, True)
    for web, title in (
        (
            "scroll",
            "`sim/webs/scroll.toml` (50% scroll pages "
            "with 62% scroll words, 30% churn pages, 20% slow)",
        ),
        (
            "paper",
            "`sim/webs/scroll-paper.toml` (shaped like "
            "the paper's high-quality set: 50% static pages, "
            "~90% static fragments, dynamic ones 2/3 churn, "
            "1/3 scroll; R = 100/day ≙ the paper's cost 0.2)",
        ),
    ):
        study.out("### " + title)
        study.out()
        rows = []
        for oracle in plan.C_MODES[web]:
            m = match_finish(prepared[(web, oracle)])
            for r in plan.C_RATES[web]:
                lj, ratios, checks = m[r]
                ok_r = [x for x in ratios if x is not None]
                rm, rse = mean_se(ok_r)
                fs = [j["fragment_staleness"] for j in lj]
                ok = len(ok_r) == len(ratios) and rm <= 0.6
                rows.append(
                    [
                        "oracle" if oracle else "estimated",
                        r,
                        pm(fs),
                        "%.0f" % (r / rm) if ok_r else "n/a",
                        "%.3f ± %.3f" % (rm, rse) if ok_r else "not reached",
                        "%.4f" % max(map(abs, checks)) if checks else "",
                        verdict(ok),
                    ]
                )
                verdicts.append((web, oracle, r, ok, rm))
        if (web, "bound") in prepared:
            m = match_finish(prepared[(web, "bound")])
            for r in plan.C_RATES[web]:
                lj, ratios, checks = m[r]
                ok_r = [x for x in ratios if x is not None]
                rm, rse = mean_se(ok_r) if ok_r else (float("nan"), 0)
                bound_ratios.append((r, rm))
                rows.append(
                    [
                        "bound: oracle longevity, estimated freshness",
                        r,
                        pm([j["fragment_staleness"] for j in lj]),
                        "%.0f" % (r / rm) if ok_r else "n/a",
                        "%.3f ± %.3f" % (rm, rse) if ok_r else "not reached",
                        "%.4f" % max(map(abs, checks)) if checks else "",
                        "",
                    ]
                )
        for row in rows:
            row.insert(2, "%.2f" % (row[1] / 500))
        study.table(
            [
                "mode",
                "longevity R/day",
                "paper cost",
                "longevity staleness",
                "freshness R_F for it",
                "ratio R/R_F",
                "refine |Δstaleness|",
                "≤ 0.6",
            ],
            rows,
        )
        optima_table(study, plan, web, optima)
        class_table(study, plan, web)
    held = [(w, r) for w, o, r, ok, _ in verdicts if o and ok]
    study.out(
        "Where the claim holds (oracle): %s."
        % (", ".join("%s R=%d" % x for x in held) or "nowhere")
    )
    study.out()
    study.out(
        'Reading. "Paper cost" is the paper\'s normalized refresh cost '
        "(1 = every page every 2 days, i.e. R = 500/day for 1,000 pages). "
        "The paper's Fig. 11 spans cost 0..0.5 and its claim is at 0.2 vs "
        "0.4, i.e. R = 100 vs 200 here. On `scroll.toml` the per-class table "
        "shows where longevity's advantage comes from: it moves crawls from "
        "churn pages "
        "(their new content is replaced before the next visit, so fetching "
        "it buys little fragment freshness) to scroll pages (items stay for "
        "K updates). Once the budget covers the scroll and slow pages, the "
        "extra crawls go to churn pages for both policies, where longevity "
        "has no edge, so the ratio rises toward 1 as R grows. "
        "`scroll-paper.toml` has much less scroll content (about 4%% of all "
        "fragments against about 28%%), and there longevity's gain is "
        "smaller at every budget. Its "
        "proportions are our reading of the paper's §3.3 and §5.3 text, "
        "not the paper's data, which we do not have. The estimated rows "
        "include learning: with %d days, of which %d are warm-up, the "
        "curve fits are still young (item (d))."
        % (study.days["scroll"], study.warm["scroll"])
    )
    study.out()

    def optima_list(w):
        return ", ".join("R=%d %.2f×" % (r, x) for ww, r, x, _ in optima if ww == w)

    reach = [x for _, _, _, x in optima]
    study.out(
        "The continuous optima separate the policy from the web. The "
        "longevity oracle's staleness is %.3f to %.3f times the staleness "
        'optimum over both webs and all budgets ("longevity oracle / '
        'optimum"; below 1 is sampling noise of one realization of the '
        "change streams against their expectation), as GREEDY's freshness "
        "is of the freshness optimum in (a). The optima's ratio on "
        "`scroll.toml` is %s; on `scroll-paper.toml` %s. Where that ratio "
        "is above 0.6, no policy can show the paper's 0.5× on that web: "
        "with as little scroll content as our reading of the paper's set, "
        "the claim cannot hold whatever the scheduler does."
        % (min(reach), max(reach), optima_list("scroll"), optima_list("paper"))
    )
    study.out()
    sweep_table(study, plan)
    study.out(
        'The "bound" rows match the longevity oracle\'s staleness with '
        "estimated freshness: an estimated longevity that reached its "
        "oracle's staleness would show these ratios (%s). Estimated "
        "freshness is a harder baseline for fragment staleness than oracle "
        "freshness (item (d)'s longevity table has both at R = %d): it "
        "optimizes holistic freshness with change rates estimated from "
        "bits, which come out low for fast pages (item (d) on "
        "`noisy.toml`), so it keeps crawling pages the oracle gives up. So "
        "on `scroll.toml` the estimated comparison cannot reach 0.6 by a "
        "better longevity estimator alone."
        % (", ".join("R=%d %.2f×" % x for x in bound_ratios), plan.D_SCROLL_R)
    )
    study.out()
    ok_any = any(ok for w, o, r, ok, _ in verdicts if o and w == "scroll")
    ok_all = all(ok for w, o, r, ok, _ in verdicts if o and w == "scroll")
    detail = "; ".join("%s R=%d %.2f×" % (w, r, x) for w, o, r, ok, x in verdicts if o)
    detail += " (at the continuous optima: %s)" % "; ".join(
        "%s R=%d %.2f×" % x[:3] for x in optima
    )
    return (
        "c",
        "longevity ≤ 0.6× the crawls of freshness",
        "PASS" if ok_all else ("PARTIAL" if ok_any else False),
        detail,
    )
