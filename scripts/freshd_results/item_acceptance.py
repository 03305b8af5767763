"""Acceptance across webs (issue 31, item 3): every estimated policy against
`uniform` and its own oracle, on the reference webs and three that differ
from them, at R/n = 0.05, 0.1 and 0.3, with a verdict per target.

The targets: every estimated policy at least `uniform` at every budget;
estimated `freshness` and `ncis` within 8% of their oracle at R/n >= 0.1;
estimated `longevity` below estimated `freshness` on fragment staleness by
>= 10% on the scroll webs; `estimated_freshness` within 0.03 of the truth;
no host starved (least host share >= 0.5x the oracle's).
"""

from .stats import mean_se, oracle_gap, paired, pm, results, verdict

WEBS = ["noisy", "heavy-tail", "signal-quality", "scroll", "feed-mix"]
SCROLL_WEBS = ("scroll", "feed-mix")
BUDGETS = [50, 100, 300]  # R/n on 1,000 pages
ESTIMATED = ["freshness", "ncis"]
SEEDS = 3
BASELINES = ("uniform", "nutch", "stormcrawler")


# Issue 31 bounds the pursuit: a target that resists two honest designs is
# recorded with both and their numbers, and resolved with the verdict. The
# designs measured on this section's cells before the one it runs now (the
# rate mixture per host with exploration, the default since 2026-11-27), per
# target: (design, cells passing, where the figures are).
CURRENT_DESIGN = (
    "rate mixture per host + exploration, its median the rate of every "
    "policy (the default since 2026-11-29: this section)"
)
MIXTURE_GAMMA_SIGNALS = (
    "rate mixture per host + exploration, the signal policies' rate the "
    "Gamma mode (the default 2026-11-27..29)"
)
AT_A26CA18 = "docs/RESULTS.md at a26ca18; paired figures in docs/real-histories.md"
GAMMA = "one Gamma rate per host (the default until 2026-11-27)"
AT_25E9EEB = "docs/RESULTS.md at 25e9eeb"
POSTERIOR = "docs/RESULTS-posterior.md at 9b1000a"
SESSION28 = "`freshd sim` at 53b68f0, 3 seeds (the commit that added this row)"
DESIGNS_TRIED = {
    "≥ uniform": [
        (GAMMA, "36 of 36", AT_25E9EEB),
        (MIXTURE_GAMMA_SIGNALS, "36 of 36", AT_A26CA18),
    ],
    "estimated_freshness ± 0.03": [
        (GAMMA, "8 of 30", AT_25E9EEB + "; " + POSTERIOR),
        ("one Gamma rate per host + exploration", "7 of 30", POSTERIOR),
        ("rate mixture per host, no exploration", "21 of 30", POSTERIOR),
        (MIXTURE_GAMMA_SIGNALS, "24 of 30", AT_A26CA18),
    ],
    "least host ≥ 0.5× oracle": [
        (GAMMA, "33 of 36", AT_25E9EEB),
        (MIXTURE_GAMMA_SIGNALS, "36 of 36", AT_A26CA18),
    ],
    "within 8% of oracle": [
        (GAMMA, "12 of 20", AT_25E9EEB + "; " + POSTERIOR),
        ("one Gamma rate per host + exploration", "13 of 20", POSTERIOR),
        ("rate mixture per host, no exploration", "13 of 20", POSTERIOR),
        (MIXTURE_GAMMA_SIGNALS, "14 of 20", AT_A26CA18),
    ],
    "longevity ≥ 10% below freshness": [
        (GAMMA, "0 of 6", AT_25E9EEB),
        ("one Gamma rate per host + exploration", "0 of 6", SESSION28),
        ("rate mixture per host, no exploration", "2 of 6", SESSION28),
        (MIXTURE_GAMMA_SIGNALS, "2 of 6", AT_A26CA18),
    ],
}
# Fragment staleness of estimated longevity and freshness under the Gamma
# rate (docs/RESULTS.md at 25e9eeb), by (web, R): the longevity target's
# first design, set beside this run's.
GAMMA_STALENESS = {
    ("scroll", 50): (0.3880, 0.3993),
    ("scroll", 100): (0.2882, 0.3110),
    ("scroll", 300): (0.1621, 0.1743),
    ("feed-mix", 50): (0.4179, 0.4112),
    ("feed-mix", 100): (0.2993, 0.3009),
    ("feed-mix", 300): (0.1370, 0.1437),
}
NOTES = {
    "within 8% of oracle": "Before these webs existed, `ncis`'s gap to its "
    "oracle on `noisy.toml` was worked on by a host pull that follows how far "
    "hosts differ (b5354ee, 7fee381), valuing a page over three draws of its "
    "rate (3a63495) and leaving Last-Modified's quiet time out of the signal "
    "policies' rate (083e669): section (d) has those figures.",
    "longevity ≥ 10% below freshness": "These designs are rate models: no "
    "design aimed at this target was built under issue 31 (the longevity "
    "policy's learning phase and curve fits were worked on before it: "
    "section (d)). Fragment staleness under the first and the last, "
    "estimated:",
}


def section_missed(study, checks, missed, lon_now=None):
    """For each target missed: the designs measured with their numbers, the
    cells it misses now, and the verdict (issue 31's bound: two designs).
    `lon_now`: {(web, R): (longevity, freshness) staleness} of this run."""
    failed = [t for t, oks in checks.items() if not all(oks)]
    if not failed:
        return
    study.out("### Missed targets: the designs tried")
    study.out()
    for target in failed:
        oks = checks[target]
        tried = DESIGNS_TRIED.get(target, [])
        rows = [[d, n, src] for d, n, src in tried]
        rows.append([CURRENT_DESIGN, "%d of %d" % (sum(oks), len(oks)), "above"])
        study.out("**%s** (%d of %d cells)." % (target, sum(oks), len(oks)))
        study.out()
        study.table(["design", "cells passing", "figures"], rows)
        if target in NOTES:
            study.out(NOTES[target])
            study.out()
        if target == "longevity ≥ 10% below freshness" and lon_now:
            lrows = []
            for (web, r), (lon, fre) in lon_now.items():
                g = GAMMA_STALENESS.get((web, r))
                lrows.append(
                    [
                        web,
                        "%g" % (r / 1000),
                        "%.4f" % g[0] if g else "–",
                        "%.4f" % lon,
                        "%.4f" % g[1] if g else "–",
                        "%.4f" % fre,
                    ]
                )
            study.table(
                [
                    "web",
                    "R/n",
                    "longevity, Gamma rate",
                    "longevity, now",
                    "freshness, Gamma rate",
                    "freshness, now",
                ],
                lrows,
            )
        designs = len(tried) + 1
        study.out(
            "Missed in: %s. Verdict: %s."
            % (
                "; ".join(missed.get(target, [])),
                "missed after %d designs measured" % designs
                if designs >= 2
                else "missed after one design: issue 31 asks for a second "
                "before resolving",
            )
        )
        study.out()


def policies(web):
    """Our estimated policies on `web` (longevity where fragments scroll)."""
    return ESTIMATED + (["longevity"] if web in SCROLL_WEBS else [])


def submit(study):
    """-> {(web, policy, R, oracle?): futures}; uniform, nutch and
    stormcrawler for scale."""
    runs = {}
    for web in WEBS:
        for r in BUDGETS:
            for p in policies(web):
                for o in (True, False):
                    runs[(web, p, r, o)] = study.run(web, p, r, o, seeds=SEEDS)
            for p in BASELINES:
                runs[(web, p, r, False)] = study.run(web, p, r, seeds=SEEDS)
    return runs


def metric(policy):
    """(JSON key, lower is better) a policy is judged by."""
    if policy == "longevity":
        return "fragment_staleness", True
    return "freshness", False


def section_acceptance(study, plan):
    runs = plan.acc_runs
    study.out("## Acceptance across webs")
    study.out()
    study.out(
        "Issue 31, item 3: the estimated policies on the reference webs "
        "(`noisy.toml`, `scroll.toml`) and three that differ from them: "
        "`heavy-tail.toml` (5%% of pages change 2..20 times a day and draw "
        "most requests, 75%% change every 5..500 days), `signal-quality.toml` "
        "(hosts with clean, noisy, spam and no signals) and `feed-mix.toml` "
        "(fast feeds of small items, pages that both scroll and churn, slow "
        "articles). %d seeds, R/n = %s. Command: `%s`, with each web's days and "
        "warm-up as in the Setup table."
        % (
            SEEDS,
            ", ".join("%g" % (r / 1000) for r in BUDGETS),
            study.cmd_line("noisy", "POLICY", "R", seed="1..%d" % SEEDS).replace(
                study.webs["noisy"], "sim/webs/WEB.toml"
            ),
        )
    )
    study.out()
    checks = {}  # target -> [passed per cell]
    missed = {}  # target -> ["web R/n policy (figure)" per failed cell]

    def check(target, ok, cell, figure):
        checks.setdefault(target, []).append(ok)
        if not ok:
            missed.setdefault(target, []).append("%s (%s)" % (cell, figure))

    rows = []
    for web in WEBS:
        for r in BUDGETS:
            uni = results(runs[(web, "uniform", r, False)])
            nut = results(runs[(web, "nutch", r, False)])
            storm = results(runs[(web, "stormcrawler", r, False)])
            for p in policies(web):
                key, lower = metric(p)
                est = results(runs[(web, p, r, False)])
                ora = results(runs[(web, p, r, True)])
                sign = -1 if lower else 1
                over_uni = [sign * d for d in paired(est, uni, key)]
                gap = oracle_gap(ora, est, key, lower)
                calib = [j["estimated_freshness"] - j["freshness"] for j in est]
                host = [
                    e["least_host_crawl_share"] / max(o["least_host_crawl_share"], 1e-9)
                    for e, o in zip(est, ora)
                ]
                cell = "%s %g %s" % (web, r / 1000, p)
                ok_uni = mean_se(over_uni)[0] >= 0
                check("≥ uniform", ok_uni, cell, pm(over_uni, 4))
                cells = [verdict(ok_uni)]
                if r >= 100 and p in ESTIMATED:
                    ok_gap = mean_se(gap)[0] <= 0.08
                    figure = "%.1f%%" % (100 * mean_se(gap)[0])
                    check("within 8% of oracle", ok_gap, cell, figure)
                    cells.append(verdict(ok_gap))
                else:
                    cells.append("–")
                if p in ESTIMATED:
                    ok_cal = abs(mean_se(calib)[0]) <= 0.03
                    figure = "%+.3f" % mean_se(calib)[0]
                    check("estimated_freshness ± 0.03", ok_cal, cell, figure)
                    cells.append("%s %s" % (pm(calib, 3), verdict(ok_cal)))
                else:
                    cells.append("–")
                ok_host = mean_se(host)[0] >= 0.5
                figure = "%.2f×" % mean_se(host)[0]
                check("least host ≥ 0.5× oracle", ok_host, cell, figure)
                cells.append("%s %s" % (pm(host, 2), verdict(ok_host)))
                rows.append(
                    [
                        study.webs[web],
                        "%g" % (r / 1000),
                        p,
                        key,
                        pm([j[key] for j in est]),
                        pm([j[key] for j in ora]),
                        pm([j[key] for j in uni]),
                        pm([j[key] for j in nut]),
                        pm([j[key] for j in storm]),
                        pm(gap, 1, 100) + "%",
                    ]
                    + cells
                )
    study.table(
        [
            "web",
            "R/n",
            "policy",
            "metric",
            "estimated",
            "oracle",
            "uniform",
            "nutch",
            "stormcrawler",
            "gap to oracle",
            "≥ uniform",
            "≤ 8% (R/n ≥ 0.1)",
            "estimated_freshness − true",
            "least host / oracle's",
        ],
        rows,
    )
    study.out(
        "`gap to oracle`: how far the estimated policy falls short of the same "
        "policy with true parameters, relative to the oracle (fragment "
        "staleness for `longevity`, freshness otherwise), paired by seed."
    )
    study.out()
    lrows = []
    lon_now = {}
    for web in SCROLL_WEBS:
        for r in BUDGETS:
            lon = results(runs[(web, "longevity", r, False)])
            fre = results(runs[(web, "freshness", r, False)])
            lon_now[(web, r)] = (
                mean_se([j["fragment_staleness"] for j in lon])[0],
                mean_se([j["fragment_staleness"] for j in fre])[0],
            )
            gain = [
                (f["fragment_staleness"] - l["fragment_staleness"])
                / f["fragment_staleness"]
                for l, f in zip(lon, fre)
            ]
            ok = mean_se(gain)[0] >= 0.10
            check(
                "longevity ≥ 10% below freshness",
                ok,
                "%s %g" % (web, r / 1000),
                "%.1f%%" % (100 * mean_se(gain)[0]),
            )
            lrows.append(
                [
                    study.webs[web],
                    "%g" % (r / 1000),
                    pm([j["fragment_staleness"] for j in lon]),
                    pm([j["fragment_staleness"] for j in fre]),
                    pm(gain, 1, 100) + "%",
                    verdict(ok),
                ]
            )
    study.out(
        "Estimated `longevity` against estimated `freshness` on fragment "
        "staleness (target ≥ 10% lower):"
    )
    study.out()
    study.table(
        [
            "web",
            "R/n",
            "longevity",
            "freshness",
            "longevity lower by",
            "≥ 10%",
        ],
        lrows,
    )
    trows = [
        [target, "%d of %d" % (sum(oks), len(oks)), verdict(all(oks))]
        for target, oks in checks.items()
    ]
    study.table(["target", "cells passing", "verdict"], trows)
    section_missed(study, checks, missed, lon_now)
    passed = sum(all(oks) for oks in checks.values())
    detail = "; ".join(
        "%s: %d/%d" % (t, sum(oks), len(oks)) for t, oks in checks.items()
    )
    ok = True if passed == len(checks) else ("PARTIAL" if passed else False)
    return (
        "acc",
        "every estimated policy ≥ uniform, within 8% of its oracle, calibrated,"
        " no host starved, on 5 webs × 3 budgets",
        ok,
        detail,
    )
