"""Item (a): GREEDY against the continuous optimum.

Each section_* function appends its Markdown to `study` from the runs
`plan` submitted and returns its summary row(s).
"""

from .stats import mean_se, pm, results, verdict


def section_a(study, plan):
    study.out("## (a) GREEDY reaches the continuous optimum")
    study.out()
    study.out(
        "Paper claim (Azar et al.; Cho & Garcia-Molina; docs/MATH.md Paper 2 (b)): "
        "the discrete GREEDY policy (`freshness`, true parameters) comes "
        "within a few tenths of a percent of the continuous Lagrangian "
        "optimum; target ≥ 98% on 1,000 pages with Δ, μ ~ U(0,1)/day."
    )
    study.out()
    study.out(
        "Command: `%s` (R ∈ %s)"
        % (study.cmd_line("uniform", "freshness", "R", True), plan.A_RATES)
    )
    study.out()
    rows, all_ok, worst = [], True, []
    for r in plan.A_RATES:
        js = results(plan.a_runs[r])
        ratio = [j["freshness"] / j["continuous_optimum"] for j in js]
        worst.append(min(ratio))
        m, se = mean_se(ratio)
        ok = m >= 0.98 and min(ratio) >= 0.98
        all_ok &= ok
        rows.append(
            [
                r,
                pm([j["freshness"] for j in js]),
                pm([j["continuous_optimum"] for j in js]),
                "%.4f ± %.4f" % (m, se),
                "%.4f" % min(ratio),
                pm([j["crawls_per_day"] for j in js], 1),
                verdict(ok),
            ]
        )
    study.table(
        [
            "R/day",
            "GREEDY freshness",
            "continuous optimum",
            "ratio",
            "worst seed",
            "crawls/day",
            "≥ 0.98",
        ],
        rows,
    )
    return (
        "a",
        "GREEDY ≥ 98% of the continuous optimum",
        all_ok,
        "R = %s/day; worst seed %.4f" % (plan.A_RATES, min(worst)),
    )
