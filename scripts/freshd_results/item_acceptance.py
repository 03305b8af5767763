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


def policies(web):
    """Our estimated policies on `web` (longevity where fragments scroll)."""
    return ESTIMATED + (["longevity"] if web in SCROLL_WEBS else [])


def submit(study):
    """-> {(web, policy, R, oracle?): futures}; uniform and nutch for scale."""
    runs = {}
    for web in WEBS:
        for r in BUDGETS:
            for p in policies(web):
                for o in (True, False):
                    runs[(web, p, r, o)] = study.run(web, p, r, o, seeds=SEEDS)
            for p in ("uniform", "nutch"):
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
    rows = []
    for web in WEBS:
        for r in BUDGETS:
            uni = results(runs[(web, "uniform", r, False)])
            nut = results(runs[(web, "nutch", r, False)])
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
                ok_uni = mean_se(over_uni)[0] >= 0
                checks.setdefault("≥ uniform", []).append(ok_uni)
                cells = [verdict(ok_uni)]
                if r >= 100 and p in ESTIMATED:
                    ok_gap = mean_se(gap)[0] <= 0.08
                    checks.setdefault("within 8% of oracle", []).append(ok_gap)
                    cells.append(verdict(ok_gap))
                else:
                    cells.append("–")
                if p in ESTIMATED:
                    ok_cal = abs(mean_se(calib)[0]) <= 0.03
                    checks.setdefault("estimated_freshness ± 0.03", []).append(ok_cal)
                    cells.append("%s %s" % (pm(calib, 3), verdict(ok_cal)))
                else:
                    cells.append("–")
                ok_host = mean_se(host)[0] >= 0.5
                checks.setdefault("least host ≥ 0.5× oracle", []).append(ok_host)
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
    for web in SCROLL_WEBS:
        for r in BUDGETS:
            lon = results(runs[(web, "longevity", r, False)])
            fre = results(runs[(web, "freshness", r, False)])
            gain = [
                (f["fragment_staleness"] - l["fragment_staleness"])
                / f["fragment_staleness"]
                for l, f in zip(lon, fre)
            ]
            ok = mean_se(gain)[0] >= 0.10
            checks.setdefault("longevity ≥ 10% below freshness", []).append(ok)
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
