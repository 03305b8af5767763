"""Operators' rules: what they cost (issue 31, item 7). On two webs, the
default estimated policy (`ncis`) without a rule, with a max_interval rule on
the slow class and with a min_interval rule on the fast class (`freshd sim
--rule CLASS:max=DUR` / `CLASS:min=DUR`, sched::PageRule on every page of the
class), paired over seeds: the freshness each rule costs, the ruled class's
freshness and crawls, and the longest / shortest interval its pages saw
against the rule.

Rendered on its own (`scripts/results.py --only rules`) into
docs/RESULTS-rules.md.
"""

from .stats import mean_se, paired, pm, results

POLICY = "ncis"
RATE = 100  # R/n 0.1 on 1,000 pages
SEEDS = 3
DAY = 86400.0
# web -> [(label, class, flag value, kind)]; kind "max" or "min".
RULES = {
    "heavy-tail": [
        ("cold: max_interval 20 d", "cold", "cold:max=20d", "max"),
        ("cold: max_interval 30 d", "cold", "cold:max=30d", "max"),
        ("hot: min_interval 1 d", "hot", "hot:min=1d", "min"),
    ],
    "feed-mix": [
        ("article: max_interval 14 d", "article", "article:max=14d", "max"),
        ("feed: min_interval 7 d", "feed", "feed:min=7d", "min"),
    ],
}
# `freshd sim`'s kRuleSlackS: an interval longer than max_interval + this
# (one selection step and a host's delay) is late.
MAX_SLACK_S = 3600.0


def submit(study):
    """-> {(web, rule flag or None): futures}."""
    runs = {}
    for web, rules in RULES.items():
        runs[(web, None)] = study.run(web, POLICY, RATE, seeds=SEEDS)
        for _, _, flag, _ in rules:
            runs[(web, flag)] = study.run(
                web, POLICY, RATE, extra=["--rule", flag], seeds=SEEDS
            )
    return runs


def rule_holds(kind, bound_s, observed_s, late=0):
    """Whether the ruled pages' extreme interval (and late count) honours
    the rule."""
    if kind == "max":
        return late == 0 and observed_s <= bound_s + MAX_SLACK_S
    return observed_s < 0 or observed_s >= bound_s  # (-1: none closed)


def section_rules(study, runs):
    study.out("## Operators' rules: what they cost (issue 31, item 7)")
    study.out()
    study.out(
        "Estimated `%s`, R/n = %g, %d seeds, on two webs, without a rule and "
        "with one rule on every page of a class: a `max_interval` on the slow "
        "class (the optimum leaves many of its pages longer) and a "
        "`min_interval` on the fast class (the optimum fetches some of them "
        "more often). A rule is a constraint: the slow pages are due ahead of "
        "value order once their max_interval has passed, the fast ones not "
        "eligible before their min_interval; the same token bucket pays, and "
        "value order spends what is left. Command: `%s`. `cost`: the paired "
        "difference in freshness against no rule (negative: the rule costs "
        "freshness); the ruled class's freshness and crawls a day likewise "
        "against no rule; `interval seen`: the longest interval of the ruled "
        "pages over the measured window (open ones at its end included) for "
        "a max rule, the shortest for a min rule, the extreme over seeds."
        % (
            POLICY,
            RATE / 1000,
            SEEDS,
            study.cmd_line(
                "heavy-tail",
                POLICY,
                RATE,
                extra=["--rule CLASS:max=DUR|CLASS:min=DUR"],
                seed="1..%d" % SEEDS,
            ).replace(study.webs["heavy-tail"], "sim/webs/WEB.toml"),
        )
    )
    study.out()
    rows = []
    held = []
    gains = []  # rules that raised freshness beyond two standard errors
    for web, rules in RULES.items():
        base = results(runs[(web, None)])
        rows.append(
            [
                study.webs[web],
                "none",
                pm([j["freshness"] for j in base]),
                "–",
                "–",
                "–",
                "–",
                "–",
                "–",
            ]
        )
        for label, cls, flag, kind in rules:
            ruled = results(runs[(web, flag)])
            info = [j["rules"][0] for j in ruled]
            bound = info[0]["%s_interval_s" % kind]
            if kind == "max":
                seen = max(x["longest_interval_s"] for x in info)
            else:
                closed = [x["shortest_interval_s"] for x in info]
                seen = min((s for s in closed if s >= 0), default=-1)
            late = sum(x.get("late_intervals", 0) for x in info)
            intervals = sum(x["crawls"] for x in info)
            ok = rule_holds(kind, bound, seen, late)
            cost, cost_se = mean_se(paired(ruled, base))
            if cost > 2 * cost_se:
                gains.append("%s on `%s`" % (label, web))
            held.append(ok)
            cls_fresh = [j["per_class"][cls]["freshness"] for j in ruled]
            cls_base = [j["per_class"][cls]["freshness"] for j in base]
            cls_crawls = [j["per_class"][cls]["crawls_per_day"] for j in ruled]
            base_crawls = [j["per_class"][cls]["crawls_per_day"] for j in base]
            rows.append(
                [
                    study.webs[web],
                    label,
                    pm([j["freshness"] for j in ruled]),
                    pm(paired(ruled, base), 4),
                    "%.3f (%+.3f)"
                    % (
                        mean_se(cls_fresh)[0],
                        mean_se(cls_fresh)[0] - mean_se(cls_base)[0],
                    ),
                    "%.1f (%+.1f)"
                    % (
                        mean_se(cls_crawls)[0],
                        mean_se(cls_crawls)[0] - mean_se(base_crawls)[0],
                    ),
                    ("%.2f d" % (seen / DAY)) if seen >= 0 else "none",
                    "%d of %d" % (late, intervals) if kind == "max" else "–",
                    "**holds**" if ok else "**late**",
                ]
            )
    study.table(
        [
            "web",
            "rule",
            "freshness",
            "cost",
            "class freshness (vs none)",
            "class crawls/day (vs none)",
            "interval seen",
            "late intervals",
            "rule",
        ],
        rows,
    )
    why_late = (
        " Late intervals are what earliest-deadline-first gives when a "
        "rule's pages come due together faster than the budget fetches: "
        "every simulated page starts fetched at time 0, so a rule's pages "
        "can all come due at once inside the measured window (a 30-day rule "
        "on `heavy-tail`'s 745 cold pages, at day 30). A daemon adding a max "
        "rule to many old pages at once sees the same wave."
        if not all(held)
        else " No interval was late here. Under the rate model before "
        "2026-11-27 (one Gamma rate a host, no exploration: RESULTS-rules.md "
        "at 6662d6d) the 30-day rule on `heavy-tail` had 2,044 of 6,790 "
        "late: every simulated page starts fetched at time 0, so its 745 cold "
        "pages all came due at day 30, faster than the budget fetches, and "
        "earliest deadline first makes such a wave late. A daemon adding a "
        "max rule to many old pages at once can see the same wave."
    )
    study.out(
        "The rules held in %d of %d cells. A max rule holds when no interval "
        "of its pages (closed by a fetch, or open at the end) is longer than "
        "max_interval + %.0f min (one selection step and a host's delay): "
        "`late intervals` counts those, of all the intervals closed in the "
        "measured window (3 seeds).%s"
        % (sum(held), len(held), MAX_SLACK_S / 60, why_late)
    )
    study.out()
    if gains:
        study.out(
            "A rule raised freshness (beyond two standard errors) in: %s. "
            "The estimated policy is not at its optimum there, so a "
            "constraint can move fetches to where they buy more."
            % "; ".join(gains)
        )
        study.out()
    return held
