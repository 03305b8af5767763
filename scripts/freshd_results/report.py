"""Regenerates docs/RESULTS.md: every claim of the papers next to what the
production scheduler measures in the simulator, mean ± standard error over
seeds, with a verdict computed from the numbers. Prints every command it
runs. Entry point: scripts/results.py (usage there and in `--help`).
"""

import argparse
import datetime
import os
import subprocess
import sys
import time

from .item_a import section_a
from .item_acceptance import section_acceptance
from .item_b import section_b
from .item_c import section_c
from .item_d import section_d
from .item_e import section_e, section_estimate, section_floor
from .item_posterior import section_posterior
from .item_posterior import submit as submit_posterior
from .item_real import section_real, section_real_embedded
from .item_real import TRACES as REAL_TRACES
from .item_real import submit as submit_real
from .item_rules import section_rules
from .item_rules import submit as submit_rules
from . import plots
from .plan import Plan
from .study import Runner, Study

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def positive_int(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError("takes a positive integer")
    return int(text)


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="scripts/results.py",
        description="Regenerates docs/RESULTS.md from `freshd sim` runs.",
        epilog="RESULTS_CACHE=DIR (development only) reuses a run's JSON by "
        "the binary's digest and the run's arguments.",
    )
    p.add_argument(
        "-j",
        dest="jobs",
        type=positive_int,
        default=2,
        help="simulations in parallel (default 2)",
    )
    p.add_argument(
        "--seeds",
        type=positive_int,
        default=None,
        help="seeds 1..K per configuration (default 5; 2 with " "--quick)",
    )
    p.add_argument(
        "--freshd",
        default=os.environ.get("FRESHD", os.path.join(ROOT, "build", "freshd")),
        help="the freshd binary (default: $FRESHD, else build/freshd)",
    )
    p.add_argument(
        "--out",
        default=os.path.join(ROOT, "docs", "RESULTS.md"),
        help="output (default docs/RESULTS.md)",
    )
    p.add_argument(
        "--only",
        choices=["posterior", "rules", "real"],
        help="render one companion section on its own (posterior: the rate "
        "posterior's pieces, default output docs/RESULTS-posterior.md; "
        "rules: what operators' rules cost, docs/RESULTS-rules.md; real: "
        "the real change histories of tests/data/traces, "
        "docs/RESULTS-real.md)",
    )
    p.add_argument(
        "--sites",
        help="with --only real: a comma-separated subset of the traces "
        "(default all: %s)" % ",".join(REAL_TRACES),
    )
    p.add_argument(
        "--plots-from",
        metavar="RESULTS_MD",
        help="runs nothing: redraws the SVG plots (into plots/ beside the "
        "file) from the tables of a RESULTS.md this program wrote, and "
        "rewrites its Plots section",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke test: 2 seeds, short runs (numbers not " "meaningful)",
    )
    a = p.parse_args(argv)
    if a.only and a.out == os.path.join(ROOT, "docs", "RESULTS.md"):
        a.out = os.path.join(ROOT, "docs", "RESULTS-%s.md" % a.only)
    if a.sites is not None:
        if a.only != "real":
            p.error("--sites goes with --only real")
        a.sites = [x for x in a.sites.split(",") if x]
        unknown = sorted(set(a.sites) - set(REAL_TRACES))
        if unknown or not a.sites:
            p.error("--sites: unknown %s (known: %s)"
                    % (",".join(unknown) or "(none given)", ",".join(REAL_TRACES)))
    if a.seeds is None:
        a.seeds = 2 if a.quick else 5
    if not a.plots_from and not os.access(a.freshd, os.X_OK):
        p.error("no freshd binary at '%s' (build it, or --freshd)" % a.freshd)
    return a


def commit_label():
    """The short commit measured; uncommitted code changes are named (the
    output itself does not count as one)."""

    def git(*args):
        return subprocess.run(
            ["git", "-C", ROOT] + list(args), capture_output=True, text=True
        )

    head = git("rev-parse", "--short", "HEAD")
    if head.returncode != 0:
        return "unknown"
    label = head.stdout.strip()
    dirty = git(
        "status",
        "--porcelain",
        "--untracked-files=no",
        "--",
        ".",
        ":(exclude)docs/RESULTS.md",
        ":(exclude)docs/RESULTS-*.md",
    )
    if dirty.returncode == 0 and dirty.stdout.strip():
        label += " (with uncommitted changes)"
    return label


def begin_header(study, title, started):
    """Sets the sections written so far aside and starts the page with its
    title; -> (the sections' lines, wall seconds so far)."""
    body, study.md = study.md, []
    study.out("# freshd: " + title)
    study.out()
    return body, time.time() - started


def write_report(study, plan, args, commit, started):
    """Runs the sections, then prepends the header, setup and summary."""
    summary = [section_a(study, plan)]
    summary += section_b(study, plan)
    summary.append(section_c(study, plan))
    summary.append(section_d(study, plan))
    summary.append(section_e(study, plan))
    summary.append(section_acceptance(study, plan))
    section_floor(study, plan)
    section_estimate(study, plan)
    section_real_embedded(study)
    body, wall = begin_header(study, "results against the papers", started)
    runner = study.runner
    study.out(
        "Generated by `scripts/results.py -j %d` — do not edit by hand. "
        "Commit %s, %s UTC. %d `freshd sim` runs, seeds %s, mean ± standard "
        "error over seeds (differences and ratios paired by seed: a seed "
        "fixes the web and its change and signal streams). Wall time %.0f s; "
        "the simulations used %.0f CPU-seconds in all (load average when "
        "done: %.1f)."
        % (
            args.jobs,
            commit,
            datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
            runner.count,
            "1..%d" % study.seeds,
            wall,
            runner.cpu,
            os.getloadavg()[0],
        )
    )
    if runner.cached:
        study.out()
        study.out(
            "%d of the runs were read from `RESULTS_CACHE`: results of the same "
            "binary and arguments from an earlier run; their CPU-seconds are "
            "counted above, the wall time is this run's." % runner.cached
        )
    if study.quick:
        study.out()
        study.out(
            "**QUICK MODE: short runs, 2 seeds; the numbers are a smoke "
            "test, not results.**"
        )
    study.out()
    study.out("## Setup")
    study.out()
    study.out(
        "Webs (`sim/webs/`, format in `sim/README.md`), 1,000 pages "
        "each; rates per day; metrics averaged over [warm-up, days], "
        "weighted by importance:"
    )
    study.out()
    study.table(
        ["web file", "days", "warm-up"],
        [
            [study.webs[k], study.days[k], study.warm[k]]
            for k in study.webs
            if not study.webs[k].startswith(plan.C_SWEEP_DIR)
        ],
    )
    study.out("## Summary")
    study.out()
    rows = []
    for item, claim, ok, detail in summary:
        v = ok if isinstance(ok, str) else ("PASS" if ok else "FAIL")
        rows.append(["(%s)" % item, claim, "**%s**" % v, detail])
    study.table(["item", "claim", "verdict", "measured"], rows)
    text = "\n".join(study.md + body).rstrip() + "\n"
    out_dir = os.path.dirname(os.path.abspath(args.out))
    drawn = plots.draw(text, os.path.join(out_dir, "plots"))
    text = plots.with_links(text, drawn, "plots")
    os.makedirs(out_dir, exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    return wall


def write_only(study, args, commit, started):
    """Renders one companion section (--only) with a short header."""
    if args.only == "rules":
        section_rules(study, submit_rules(study))
        title = "operators' rules, what they cost"
    elif args.only == "real":
        section_real(study, submit_real(study, args.sites))
        title = "real change histories"
    else:
        section_posterior(study, submit_posterior(study))
        title = "the rate posterior, measured"
    body, wall = begin_header(study, title, started)
    runner = study.runner
    study.out(
        "Generated by `scripts/results.py --only %s -j %d` — do not edit by "
        "hand. Commit %s, %s UTC. %d `freshd sim` runs, mean ± standard error "
        "over seeds. Wall time %.0f s; %.0f CPU-seconds in all. %s"
        % (
            args.only,
            args.jobs,
            commit,
            datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
            runner.count,
            wall,
            runner.cpu,
            "Sites, budgets and seeds below."
            if args.only == "real"
            else "Webs, days and warm-up as in docs/RESULTS.md's Setup.",
        )
    )
    if study.quick:
        study.out()
        study.out("**QUICK MODE: the numbers are a smoke test, not results.**")
    study.out()
    text = "\n".join(study.md + body).rstrip() + "\n"
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    return wall


def main(argv):
    args = parse_args(argv)
    if args.plots_from:
        for web, name in plots.redraw(args.plots_from):
            print("drew plots/%s (%s)" % (name, web), flush=True)
        return 0
    started = time.time()
    commit = commit_label()
    os.chdir(ROOT)  # the webs are named relative to the repository
    runner = Runner(args.freshd, args.jobs, os.environ.get("RESULTS_CACHE"))
    study = Study(runner, args.seeds, args.quick)
    try:
        if args.only:
            wall = write_only(study, args, commit, started)
        else:
            plan = Plan(study)
            wall = write_report(study, plan, args, commit, started)
    except BaseException:
        runner.shutdown(cancel=True)
        raise
    runner.shutdown()
    print(
        "wrote %s (%d runs, %.0f s wall, %.0f CPU-s)"
        % (args.out, runner.count, wall, runner.cpu),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
