"""The rate posterior, piece by piece (issue 31, item 2): the estimated
`freshness` and `ncis` with one Gamma rate per host (`gamma`, the default before 2026-11-27),
with a distribution of rates per host (`--rate-model mixture`), each with and
without exploration (`--explore`), on the acceptance webs and budgets, so each
piece's gain (or loss) is measured against the same seeds.

Rendered on its own (`scripts/results.py --only posterior`) into
docs/RESULTS-posterior.md; `mixture + explore` is the default.
"""

from .item_acceptance import BUDGETS, ESTIMATED, SEEDS, WEBS
from .stats import mean_se, oracle_gap, paired, pm, results

VARIANTS = [
    ("gamma", ["--rate-model", "gamma", "--no-explore"]),
    ("gamma + explore", ["--rate-model", "gamma", "--explore"]),
    ("mixture", ["--rate-model", "mixture", "--no-explore"]),
    ("mixture + explore", ["--rate-model", "mixture", "--explore"]),
]


def submit(study):
    """-> {(web, policy, R, variant or 'oracle' or 'uniform'): futures}."""
    runs = {}
    for web in WEBS:
        for r in BUDGETS:
            runs[(web, "uniform", r, "uniform")] = study.run(
                web, "uniform", r, seeds=SEEDS
            )
            for p in ESTIMATED:
                runs[(web, p, r, "oracle")] = study.run(web, p, r, True, seeds=SEEDS)
                for name, extra in VARIANTS:
                    runs[(web, p, r, name)] = study.run(
                        web, p, r, extra=extra, seeds=SEEDS
                    )
    return runs


def section_posterior(study, runs):
    study.out("## The rate posterior, piece by piece (issue 31, item 2)")
    study.out()
    study.out(
        "Estimated `freshness` and `ncis` on the acceptance webs, %d seeds, "
        "R/n = %s, four ways: `gamma` (one Gamma rate per host as every page's "
        "prior, its posterior mode the estimate: the default until 2026-11-27), "
        "`mixture` "
        "(`--rate-model mixture`: a histogram of rates per host on a grid, each "
        "page's posterior on it, censored where every interval changed; the "
        "policies without signals value a page over its three terciles, "
        "`estimated_freshness` averages over them for every policy) and each "
        "`+ explore` (`--explore`: a page fetched once is due again after N/R; "
        "with the mixture, one probe at a quarter of the interval for a page "
        "whose last 3+ intervals all changed over a wide posterior; `mixture + "
        "explore` is the default). Command: "
        "`%s`. `vs gamma`: the paired difference in freshness against `gamma`."
        % (
            SEEDS,
            ", ".join("%g" % (r / 1000) for r in BUDGETS),
            study.cmd_line(
                "noisy",
                "POLICY",
                "R",
                extra=["--rate-model gamma|mixture --explore|--no-explore"],
                seed="1..%d" % SEEDS,
            ).replace(study.webs["noisy"], "sim/webs/WEB.toml"),
        )
    )
    study.out()
    checks = {}  # (variant, target) -> [ok per cell]
    rows = []
    for web in WEBS:
        for r in BUDGETS:
            uni = results(runs[(web, "uniform", r, "uniform")])
            for p in ESTIMATED:
                ora = results(runs[(web, p, r, "oracle")])
                base = results(runs[(web, p, r, "gamma")])
                for name, _ in VARIANTS:
                    est = results(runs[(web, p, r, name)])
                    gap = oracle_gap(ora, est)
                    calib = [j["estimated_freshness"] - j["freshness"] for j in est]
                    host = [
                        e["least_host_crawl_share"]
                        / max(o["least_host_crawl_share"], 1e-9)
                        for e, o in zip(est, ora)
                    ]
                    ok_uni = mean_se(paired(est, uni))[0] >= 0
                    ok_cal = abs(mean_se(calib)[0]) <= 0.03
                    ok_host = mean_se(host)[0] >= 0.5
                    checks.setdefault((name, "≥ uniform"), []).append(ok_uni)
                    checks.setdefault((name, "estimated_freshness ± 0.03"), []).append(
                        ok_cal
                    )
                    checks.setdefault((name, "least host ≥ 0.5× oracle"), []).append(
                        ok_host
                    )
                    if r >= 100:
                        ok_gap = mean_se(gap)[0] <= 0.08
                        checks.setdefault((name, "within 8% of oracle"), []).append(
                            ok_gap
                        )
                    rows.append(
                        [
                            study.webs[web],
                            "%g" % (r / 1000),
                            p,
                            name,
                            pm([j["freshness"] for j in est]),
                            pm(paired(est, base), 4) if name != "gamma" else "–",
                            pm(gap, 1, 100) + "%",
                            pm(calib, 3),
                            pm(host, 2),
                        ]
                    )
    study.table(
        [
            "web",
            "R/n",
            "policy",
            "rate model",
            "freshness",
            "vs gamma",
            "gap to oracle",
            "estimated_freshness − true",
            "least host / oracle's",
        ],
        rows,
    )
    names = [n for n, _ in VARIANTS]
    target_names = []
    for _, t in checks:
        if t not in target_names:
            target_names.append(t)
    study.out("The acceptance targets (issue 31 item 3), cells passing per variant:")
    study.out()
    study.table(
        ["target"] + names,
        [
            [t]
            + ["%d of %d" % (sum(checks[(n, t)]), len(checks[(n, t)])) for n in names]
            for t in target_names
        ],
    )
    return checks
