"""Real change histories (issue 42, items 3 and 4): the production scheduler
replaying the public sites' histories in tests/data/traces (`freshd sim
--trace`), each estimated policy against uniform on the same refresh phases
(`--seed`: the pages existing at t0 added in a shuffled order), the
stationary oracle beside them, and the default with its sites' sitemap
lastmod as signals.

Rendered on its own (`scripts/results.py --only real`) into
docs/RESULTS-real.md. The bars it checks are the issue's: no estimated
policy below uniform by more than 0.002 of freshness (mean over seeds), and
the default within 1% (relative) of the better of uniform and the
stationary oracle.
"""

import os
import sys

from .stats import mean_se, paired, results, verdict

_SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, _SCRIPTS)
import trace_baselines  # noqa: E402  (scripts/trace_baselines.py)

_ROOT = os.path.dirname(_SCRIPTS)

TRACES = ["peps", "php-doc-en", "rust-rfcs", "rustc-dev-guide", "tldr"]
TRACE_DIR = "tests/data/traces"
# Refreshes per live page per day: R/n from once a year to once a week.
BUDGETS = [365, 180, 90, 30, 14, 7]
QUICK_BUDGETS = [365, 30]
ESTIMATED = ["freshness", "ncis"]
DEFAULT = "ncis"  # [sched] policy's default; the rate model and
# exploration are the daemon's defaults too (mixture, explore)
# A sitemap that lists each change with this recall and precision, read
# within a day (docs sites generate lastmod from their sources).
SIGNALS = ["--trace-signals", "0.9", "0.8", "1"]
# The traces' window (scripts/real_traces.sh): 2023-01-01 to 2026-01-01 UTC.
WINDOW = (1672531200.0, 1767225600.0)
LOSS_TOLERANCE = 0.002
ORACLE_TOLERANCE = 0.01


def trace_path(site):
    return os.path.join(TRACE_DIR, site + ".csv.gz")


def trace_args(site, policy, rate, seed, extra=()):
    return [
        "sim",
        "--trace",
        trace_path(site),
        "--policy",
        policy,
        "--rate",
        "%.6g" % rate,
        "--seed",
        str(seed),
    ] + list(extra)


def submit(study, sites=None):
    """-> ({site: live pages}, {(site, b, name): futures}) for `sites` (a
    subset of TRACES; default all, the first two with --quick)."""
    budgets = QUICK_BUDGETS if study.quick else BUDGETS
    if sites is None:
        sites = TRACES[:2] if study.quick else TRACES
    sites = [t for t in TRACES if t in sites]
    pages = {}
    for site in sites:
        # The live pages of the run, from a replay at a negligible budget.
        probe = study.runner.submit(trace_args(site, "uniform", 1e-3, 1)).result()
        pages[site] = probe["pages"]
    runs = {}
    for site in sites:
        for b in budgets:
            rate = pages[site] / b
            variants = [("uniform", "uniform", []), ("nutch", "nutch", [])]
            variants += [(p, p, []) for p in ESTIMATED]
            variants += [
                ("oracle", "freshness", ["--oracle"]),
                ("default + sitemaps", DEFAULT, SIGNALS),
            ]
            for name, policy, extra in variants:
                runs[(site, b, name)] = [
                    study.runner.submit(trace_args(site, policy, rate, s, extra))
                    for s in study.seed_list
                ]
    return pages, runs


def site_statistics(site):
    """The site's statistics from its trace, computed by
    scripts/trace_baselines.py (independently of freshd)."""
    pages = trace_baselines.read_trace(os.path.join(_ROOT, trace_path(site)))
    lives, start, end = trace_baselines.build_lives(pages, WINDOW[0], WINDOW[1])
    return trace_baselines.site_statistics(pages, lives, start, end)


def statistics_line(st):
    cv = st["median_cv_of_gaps"]
    under = st["share_successive_changes_under_1_day"]
    return (
        "%d pages (%d live), %d changes (+%d creates, %d deletes) over %.0f "
        "days; successive changes < 1 day apart: %s; median CV of a page's "
        "gaps: %s (Poisson: 1); one commit touches up to %d pages; pages "
        "never changing: %d."
        % (
            st["pages"],
            st["pages_live"],
            st["changes"],
            st["creates"],
            st["deletes"],
            st["span_days"],
            "%.1f%%" % (100 * under) if under is not None else "n/a",
            "%.2f" % cv if cv is not None else "n/a",
            st["largest_pages_at_one_time"],
            st["pages_never_changing"],
        )
    )


def cell(diffs):
    m, se = mean_se(diffs)
    return "%+.4f ± %.4f" % (m, se)


def section_real(study, submitted):
    pages, runs = submitted
    budgets = QUICK_BUDGETS if study.quick else BUDGETS
    study.out("## Real change histories (issue 42)")
    study.out()
    study.out(
        "The sites of docs/real-histories.md (their traces in %s: origin, "
        "commits and licences in its README), 2023-01-01 to 2026-01-01, "
        "replayed through the production scheduler: `freshd sim --trace "
        "%s/SITE.csv.gz --policy P --rate R --seed S` (R = live pages / b "
        "a day for R/n = 1/b; 10%% warm-up). Seeds 1..%d shuffle the "
        "refresh phases (sim/README.md, Traces); each figure is the mean ± "
        "standard error over them, every policy paired with uniform on the "
        "same seed. `oracle`: `freshness --oracle`, each page valued at its "
        "true mean rate over the run (the stationary oracle). `+ sitemaps`: "
        "`%s`, each host's sitemap listing each change (recall 0.9, "
        "precision 0.8, read within a day). Default: `%s` with the "
        "daemon's defaults (rate model `mixture`, exploration on). `short "
        "of best`: how far the default's freshness falls below the better of "
        "uniform and the oracle, relative to it (negative: above both)."
        % (
            TRACE_DIR,
            TRACE_DIR,
            study.seeds,
            " ".join(SIGNALS),
            DEFAULT,
        )
    )
    study.out()
    left_out = [t for t in TRACES if t not in pages]
    if left_out and not study.quick:
        study.out(
            "**This rendering covers %d of the %d sites** (`--sites %s`); "
            "not run: %s. The verdicts below are over these sites only."
            % (len(pages), len(TRACES), ",".join(pages), ", ".join(left_out))
        )
        study.out()
    loss_ok = {}  # (site, b, policy) -> bool
    oracle_ok = {}  # (site, b) -> bool, without and with signals
    for site in pages:
        study.out("### %s (%d pages)" % (site, pages[site]))
        study.out()
        study.out("Statistics: " + statistics_line(site_statistics(site)))
        study.out()
        rows = []
        for b in budgets:
            uni = results(runs[(site, b, "uniform")])
            row = ["1/%d" % b, "%.4f" % mean_se([j["freshness"] for j in uni])[0]]
            for name in ["nutch"] + ESTIMATED + ["oracle"]:
                row.append(cell(paired(results(runs[(site, b, name)]), uni)))
            for p in ESTIMATED:
                m = mean_se(paired(results(runs[(site, b, p)]), uni))[0]
                loss_ok[(site, b, p)] = m >= -LOSS_TOLERANCE
            # The default within 1% of the better of uniform and the oracle.
            ora = results(runs[(site, b, "oracle")])
            best = max(
                mean_se([j["freshness"] for j in uni])[0],
                mean_se([j["freshness"] for j in ora])[0],
            )
            default = mean_se(
                [j["freshness"] for j in results(runs[(site, b, DEFAULT)])]
            )[0]
            short = (best - default) / best
            oracle_ok[(site, b, "no signals")] = short <= ORACLE_TOLERANCE
            row.append("%.1f%%" % (100 * short))
            # The stationary oracle knows rates, not signals: the same bar.
            sig = results(runs[(site, b, "default + sitemaps")])
            short_sig = (best - mean_se([j["freshness"] for j in sig])[0]) / best
            oracle_ok[(site, b, "sitemaps")] = short_sig <= ORACLE_TOLERANCE
            row.append(cell(paired(sig, uni)))
            row.append("%.1f%%" % (100 * short_sig))
            rows.append(row)
        study.table(
            [
                "R/n per day",
                "uniform",
                "nutch − uniform",
                "freshness − uniform",
                "ncis (default) − uniform",
                "oracle − uniform",
                "default short of best",
                "default + sitemaps − uniform",
                "+ sitemaps, short of best",
            ],
            rows,
        )
    study.out("### Verdicts")
    study.out()
    rows = []
    for p in ESTIMATED:
        bad = [
            "%s 1/%d" % (site, b)
            for (site, b, q), ok in sorted(loss_ok.items())
            if q == p and not ok
        ]
        rows.append(
            [
                "`%s` never below uniform by more than %g" % (p, LOSS_TOLERANCE),
                verdict(not bad),
                "every site and budget" if not bad else "below at " + ", ".join(bad),
            ]
        )
    for mode in ["no signals", "sitemaps"]:
        bad = [
            "%s 1/%d" % (site, b)
            for (site, b, m), ok in sorted(oracle_ok.items())
            if m == mode and not ok
        ]
        rows.append(
            [
                "default within %d%% of the better of uniform and the oracle (%s)"
                % (100 * ORACLE_TOLERANCE, mode),
                verdict(not bad),
                "every site and budget" if not bad else "missed at " + ", ".join(bad),
            ]
        )
    study.table(["claim", "verdict", "where"], rows)


COMPANION = "docs/RESULTS-real.md"


def embedded_lines(path=None):
    """docs/RESULTS-real.md's section, as docs/RESULTS.md carries it: the
    companion is generated on its own (its runs take hours), and the full
    report copies its latest rendering, saying from which commit."""
    path = path or os.path.join(_ROOT, COMPANION)
    if not os.path.exists(path):
        return [
            "## Real change histories (issue 42)",
            "",
            "Not rendered yet: run `scripts/results.py --only real` (writes %s)."
            % COMPANION,
            "",
        ]
    with open(path) as f:
        text = f.read().splitlines()
    commit = "?"
    for line in text:
        if line.startswith("Generated by") and "Commit " in line:
            commit = line.split("Commit ", 1)[1].split(",", 1)[0]
            break
    start = next(
        (i for i, line in enumerate(text) if line.startswith("## Real change")), None
    )
    if start is None:
        raise ValueError("%s has no 'Real change histories' section" % path)
    body = text[start:]
    return (
        [body[0], ""]
        + [
            "*Copied from %s (`scripts/results.py --only real`, commit %s), "
            "which has the run's header.*" % (COMPANION, commit),
        ]
        + body[1:]
        + [""]
    )


def section_real_embedded(study):
    for line in embedded_lines():
        study.out(line)

