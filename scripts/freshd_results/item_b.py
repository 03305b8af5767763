"""Item (b): the signal policies, their false positives and delayed signals.

Each section_* function appends its Markdown to `study` from the runs
`plan` submitted and returns its summary row(s).
"""

from .stats import mean_se, paired, pm, results, verdict


def section_b(study, plan):
    study.out("## (b) GREEDY-NCIS with noisy change signals")
    study.out()
    study.out(
        "Paper claim (Busa-Fekete et al. 2025, §5; our reconstruction in "
        "docs/MATH.md Paper 2 (d): +0.021..0.031 for NCIS over GREEDY, NCIS "
        "within 0.002 of its continuous optimum, CIS worst): with "
        "α ~ Beta(0.5,0.5), ν ~ U(0,0.5)/day, GREEDY-NCIS beats GREEDY; "
        "with pure-noise signals (α = 0) it loses ≤ 0.5%; GREEDY-CIS, which "
        "trusts every signal, degrades as false positives grow. 1,000 pages, "
        "R = 100/day (the paper's R/n = 0.1), true parameters."
    )
    study.out()
    study.out("Command: `%s`" % study.cmd_line("noisy", "POLICY", 100, True))
    study.out()
    g = results(plan.b_runs["freshness"])
    rows = []
    for p in plan.B_POL:
        js = results(plan.b_runs[p])
        rows.append(
            [
                p,
                pm([j["freshness"] for j in js]),
                pm(paired(js, g)),
                pm([j["freshness"] / j["continuous_optimum_ncis"] for j in js]),
            ]
        )
    study.out("Setting of the paper (`sim/webs/noisy.toml`):")
    study.out()
    study.table(
        ["policy", "freshness", "− GREEDY (paired)", "/ NCIS continuous optimum"], rows
    )
    ncis = results(plan.b_runs["ncis"])
    d_m, d_se = mean_se(paired(ncis, g))
    ok1 = d_m > 0 and d_m - 2 * d_se > 0
    co = [j["continuous_optimum_ncis"] for j in ncis]
    study.out(
        "Continuous optima: Azar %s, NCIS %s."
        % (pm([j["continuous_optimum"] for j in ncis]), pm(co))
    )
    study.out()
    gn = results(plan.b_noise["freshness"])
    rows = []
    for p in ("freshness", "ncis", "cis"):
        js = results(plan.b_noise[p])
        rows.append(
            [
                p,
                pm([j["freshness"] for j in js]),
                pm([a["freshness"] / b["freshness"] for a, b in zip(js, gn)]),
            ]
        )
    study.out(
        "Pure-noise signals (`sim/webs/noise-only.toml`, α = 0, " "ν ~ U(0,0.5)):"
    )
    study.out()
    study.table(["policy", "freshness", "/ GREEDY (paired)"], rows)
    ratio = [
        a["freshness"] / b["freshness"]
        for a, b in zip(results(plan.b_noise["ncis"]), gn)
    ]
    r_m, _ = mean_se(ratio)
    ok2 = r_m >= 0.995
    rows, cis_gap = [], []
    labels = {
        "noisy-nofp": "ν = 0",
        "noisy-lowfp": "ν ~ U(0, 0.1)",
        "noisy": "ν ~ U(0, 0.5)",
    }
    for w in plan.B_FP:
        gw = results(plan.b_fp[(w, "freshness")])
        cw = results(plan.b_fp[(w, "cis")])
        nw = results(plan.b_fp[(w, "ncis")])
        cis_gap.append(mean_se(paired(cw, gw))[0])
        rows.append(
            [
                labels[w],
                pm([j["freshness"] for j in gw]),
                pm(paired(cw, gw)),
                pm(paired(nw, gw)),
            ]
        )
    study.out(
        "False positives (α ~ Beta(0.5,0.5); `sim/webs/noisy-nofp.toml`, "
        "`noisy-lowfp.toml`, `noisy.toml`):"
    )
    study.out()
    study.table(["false signals", "GREEDY", "CIS − GREEDY", "NCIS − GREEDY"], rows)
    ok3 = all(x > y for x, y in zip(cis_gap, cis_gap[1:])) and cis_gap[-1] < 0
    section_b_delay(study, plan)
    study.out(
        "Verdicts: NCIS beats GREEDY (paired difference > 2 stderr): %s. "
        "NCIS/GREEDY with pure noise ≥ 0.995: %s (%.4f). CIS − GREEDY falls "
        "as ν grows and is negative at the paper's ν: %s."
        % (verdict(ok1), verdict(ok2), r_m, verdict(ok3))
    )
    study.out()
    return [
        (
            "b1",
            "NCIS beats GREEDY on noisy signals",
            ok1,
            "+%.4f ± %.4f freshness" % (d_m, d_se),
        ),
        ("b2", "NCIS loses ≤ 0.5% on pure noise", ok2, "ratio %.4f" % r_m),
        (
            "b3",
            "CIS degrades with false positives",
            ok3,
            "CIS − GREEDY: " + ", ".join("%+.4f" % x for x in cis_gap),
        ),
    ]


def section_b_delay(study, plan):
    study.out(
        "Delayed signals (`sim/webs/noisy-delay.toml`: `noisy.toml` with each "
        "signal arriving U(0, 1) day after its change; not an issue-4 "
        "claim, the deployment's case). A late signal about a change that "
        "a fetch already saw makes the fresh copy look changed. Taken as "
        'they come ("hints", no change time); hints dropped when they '
        "arrive within W days after the page's fetch (the noisy-signals "
        "paper's appendix C; `--signal-window-days W`, the daemon's "
        "`[sched] signal_window`); and as sitemap lastmods, which claim "
        "their change time and are dropped when it is not after the fetch "
        "(`sim/webs/noisy-delay-lastmod.toml`; the daemon does this with "
        "every sitemap). True parameters (oracle) and estimated:"
    )
    study.out()
    study.out(
        "Commands: `%s`, `%s`, `%s`"
        % (
            study.cmd_line("noisy-delay", "POLICY", 100, True),
            study.cmd_line(
                "noisy-delay", "POLICY", 100, True, ("--signal-window-days", "W")
            ),
            study.cmd_line("noisy-delay-lastmod", "POLICY", 100, True),
        )
    )
    study.out()
    rows, recovered = [], []
    for o in (True, False):
        for p in plan.B_DELAY_POL:
            base = results(plan.b_runs[p] if o else plan.d_runs[(p, False)])
            late = results(plan.b_delay[(p, o)])
            lm = results(plan.b_lastmod[(p, o)])
            row = [
                "%s, %s" % (p, "oracle" if o else "estimated"),
                pm([j["freshness"] for j in base]),
                pm([j["freshness"] for j in late]),
            ]
            for w in plan.B_WINDOWS:
                row.append(
                    pm([j["freshness"] for j in results(plan.b_window[(p, o, w)])])
                )
            row.append(pm([j["freshness"] for j in lm]))
            rows.append(row)
            if p == "ncis":
                cost = mean_se(paired(base, late))[0]
                best_w = max(
                    plan.B_WINDOWS,
                    key=lambda w: mean_se(
                        [j["freshness"] for j in results(plan.b_window[(p, o, w)])]
                    )[0],
                )
                win = mean_se(paired(results(plan.b_window[(p, o, best_w)]), late))[0]
                got = mean_se(paired(lm, late))[0]
                recovered.append((o, cost, best_w, win, got))
    study.table(
        ["policy", "undelayed", "delayed hints"]
        + ["hints, W = %g d" % w for w in plan.B_WINDOWS]
        + ["delayed lastmods"],
        rows,
    )
    for o, cost, best_w, win, got in recovered:
        share = lambda x: " (%.0f%% of the cost)" % (100 * x / cost) if cost > 0 else ""
        study.out(
            "NCIS %s: the delay costs %+.4f freshness (undelayed − delayed "
            "hints, paired); the best window (W = %g d) gains %+.4f%s, "
            "lastmods %+.4f%s."
            % (
                "oracle" if o else "estimated",
                cost,
                best_w,
                win,
                share(win),
                got,
                share(got),
            )
        )
        study.out()
    cis_un = mean_se([j["freshness"] for j in results(plan.b_runs["cis"])])[0]
    cis_w = {
        w: mean_se([j["freshness"] for j in results(plan.b_window[("cis", True, w)])])[
            0
        ]
        for w in plan.B_WINDOWS
    }
    above = [w for w in plan.B_WINDOWS if cis_w[w] > cis_un]
    study.out(
        "A window drops every signal arriving soon after a fetch, false "
        "alarms included, which lastmods never do (a false lastmod claims "
        "the time it is sent, after the fetch): it filters noise as well "
        "as staleness. CIS, which trusts every signal, %s."
        % (
            "does better with delayed hints and W = %s d than with instant "
            "signals and no window (oracle)" % ", ".join("%g" % w for w in above)
            if above
            else "is never better with a window than with instant " "signals (oracle)"
        )
    )
    study.out()
    g = results(plan.b_delay[("freshness", False)])
    n = results(plan.b_delay[("ncis", False)])
    d_m, d_se = mean_se(paired(n, g))
    study.out(
        "Estimated NCIS − GREEDY with delayed hints: %+.4f ± %.4f "
        "(paired): %s. What the lastmods cannot recover is a signal about "
        "a change after the fetch arriving late: the page is refreshed "
        "later than with an instant signal."
        % (
            d_m,
            d_se,
            "NCIS still ahead" if d_m > 2 * d_se else "NCIS no longer clearly ahead",
        )
    )
    study.out()
