#!/usr/bin/env python3
"""Statistics and refresh baselines of a change trace, computed without freshd.

Reads a trace (CSV with a header naming `url` and `time`, optional
`importance` and `event`; time Unix seconds or RFC 3339; event change,
create or delete; an empty time declares a page that exists throughout and
never changes; plain or gzipped) and prints:

  * the site's statistics: pages, changes, span, burstiness (share of a
    page's successive changes less than a day apart, median coefficient of
    variation of a page's gaps), the largest number of pages with an event
    at one time (one commit), frozen pages;
  * for each budget R/n (refreshes per page per day), the time-averaged
    freshness on the trace's real change times of
      uniform  - every page refreshed every n/R days, phases staggered;
      optimal  - Cho & Garcia-Molina's allocation for each page's true mean
                 change rate (periodic refresh at the frequencies that
                 maximise the Poisson-model freshness under the budget);
    and, beside each, the freshness the Poisson model predicts for that
    allocation (what the stationary model believes it gets).

The model, chosen to be what the change-rate literature would accept as a
fair test (and stated so that freshd's replay can be compared with it):
  * Time runs over [start, end): --start/--end, by default the earliest
    and latest time in the file. A page existing at start has a fresh copy
    then (a change at exactly start is in it).
  * A page lives from start (or its `create`) to end (or its `delete`); a
    re-created page lives again. Freshness is the fresh page-time over the
    live page-time (each page weighted by its importance, default 1).
  * A page is fresh from a refresh until its next change after it; a
    `create` is a change (the crawler has no copy of a new page until it
    fetches it).
  * Refreshes are periodic: page i (of n, in URL order) is refreshed at
    start + (phase_i + k) / f_i with phase_i = (i + 0.5) / n + s (mod 1),
    whatever its frequency f_i, so both policies share the phases; each
    figure is the mean over the shifts s = 0, 1/K, ..., (K-1)/K
    (--phases K), and the table gives the range over s of a policy's gain
    on uniform.
  * The budget: sum over pages of f_i * lifetime_i * importance_i equals
    (R/n) * sum of lifetime_i * importance_i. Uniform gives every page
    f_i = R/n.
  * The optimum: lambda_i = content events (changes and creates) within
    its lifetime / lifetime; f_i maximises F(lambda_i, f) - mu * f with
    F(lambda, f) = (f / lambda) (1 - exp(-lambda / f)); mu is bisected to
    spend the budget. A page that never changes gets f = 0 (and stays
    fresh); a page with mu * lambda >= 1 gets f = 0 (Cho's "too fast to
    follow").

Standard library only.
"""

import argparse
import bisect
import csv
import datetime
import gzip
import json
import math
import re
import statistics
import sys

DAY = 86400.0
DEFAULT_BUDGETS = ["1/365", "1/180", "1/90", "1/30", "1/14", "1/7"]


class TraceError(Exception):
    pass


def parse_time(text, line):
    text = text.strip()
    if re.fullmatch(r"[+-]?\d+(\.\d*)?", text):
        return float(text)
    try:
        when = datetime.datetime.fromisoformat(re.sub(r"[zZ]$", "+00:00", text))
    except ValueError:
        raise TraceError(f"line {line}: bad time {text!r}") from None
    if when.tzinfo is None:
        raise TraceError(f"line {line}: time without a zone {text!r}")
    return when.timestamp()


class Page:
    __slots__ = ("url", "importance", "events")

    def __init__(self, url):
        self.url = url
        self.importance = None
        self.events = set()  # (time, kind)


def read_trace(path):
    """{url: Page}; rows with an empty time add no event."""
    opener = gzip.open if path.endswith(".gz") else open
    pages = {}
    with opener(path, "rt", newline="") as f:
        reader = csv.DictReader(f)
        if not reader.fieldnames or "url" not in reader.fieldnames or "time" not in reader.fieldnames:
            raise TraceError("line 1: the header must name url and time")
        for row in reader:
            line = reader.line_num
            url = (row.get("url") or "").strip()
            if not url:
                raise TraceError(f"line {line}: empty url")
            page = pages.get(url)
            if page is None:
                page = pages[url] = Page(url)
            imp = (row.get("importance") or "").strip()
            if imp:
                value = float(imp)
                if page.importance is not None and page.importance != value:
                    raise TraceError(f"line {line}: conflicting importance for {url}")
                page.importance = value
            kind = (row.get("event") or "").strip() or "change"
            if kind not in ("change", "create", "delete"):
                raise TraceError(f"line {line}: bad event {kind!r}")
            when = (row.get("time") or "").strip()
            if when:
                page.events.add((parse_time(when, line), kind))
    return pages


class Life:
    """A page's live intervals and its content events within them."""

    __slots__ = ("url", "weight", "intervals", "changes", "lifetime")

    def __init__(self, page, start, end):
        self.url = page.url
        self.weight = page.importance if page.importance is not None else 1.0
        order = {"delete": 0, "create": 1, "change": 2}
        every = sorted(page.events, key=lambda e: (e[0], order[e[1]]))
        before = [k for t, k in every if t < start]
        # Alive at start: its last event before start is not a delete, or,
        # with none before, its first event is not a create.
        if before:
            alive_at_start = before[-1] != "delete"
        else:
            alive_at_start = not every or every[0][1] != "create" or every[0][0] <= start
        events = [(t, k) for t, k in every if start <= t < end]
        alive_since = start if alive_at_start else None
        self.intervals = []
        self.changes = []  # content event times (changes and creates)
        for t, kind in events:
            if kind == "create":
                if alive_since is None:
                    alive_since = t
                    self.changes.append(t)
            elif kind == "delete":
                if alive_since is not None:
                    self.intervals.append((alive_since, t))
                    alive_since = None
            elif alive_since is not None and t > start:
                self.changes.append(t)
        if alive_since is not None and end > alive_since:
            self.intervals.append((alive_since, end))
        self.lifetime = sum(b - a for a, b in self.intervals)


def drop_mass_events(pages, fraction):
    """Removes every change (not create/delete) made at a time when more than
    `fraction` of the pages have an event: what the site looks like without
    its mass commits. Returns how many times were dropped."""
    at_time = {}
    for p in pages.values():
        for t, _ in p.events:
            at_time[t] = at_time.get(t, 0) + 1
    mass = {t for t, k in at_time.items() if k > fraction * len(pages)}
    for p in pages.values():
        p.events = {(t, k) for t, k in p.events if t not in mass or k != "change"}
    return len(mass)


def build_lives(pages, start=None, end=None):
    times = [t for p in pages.values() for t, _ in p.events]
    if start is None:
        start = min(times) if times else 0.0
    if end is None:
        end = max(times) if times else start
    if end <= start:
        raise TraceError("the trace spans no time (give --start/--end)")
    lives = [Life(pages[u], start, end) for u in sorted(pages)]
    return [x for x in lives if x.lifetime > 0], start, end


def stale_time(life, start, frequency, phase):
    """Seconds the page is stale, refreshed at start + (phase + k)/frequency."""
    stale = 0.0
    period = 1.0 / frequency if frequency > 0 else math.inf
    for a, b in life.intervals:
        lo = bisect.bisect_left(life.changes, a)
        hi = bisect.bisect_left(life.changes, b)
        stale_until = -math.inf
        for c in life.changes[lo:hi]:
            if c < stale_until:
                continue
            if period == math.inf:
                refresh = math.inf
            else:
                k = math.floor((c - start) / period - phase) + 1
                refresh = start + (phase + k) * period
            stale += min(refresh, b) - c
            stale_until = refresh
    return stale


def poisson_freshness(rate, frequency):
    """F(lambda, f) = (f / lambda)(1 - exp(-lambda / f)), rates per day."""
    if rate <= 0:
        return 1.0
    if frequency <= 0:
        return 0.0
    x = rate / frequency
    return (1.0 - math.exp(-x)) / x


def _g_inverse(y):
    """x > 0 with 1 - (1 + x) e^-x = y, for 0 < y < 1."""
    lo, hi = 0.0, 1.0
    while 1.0 - (1.0 + hi) * math.exp(-hi) < y:
        hi *= 2.0
        if hi > 1e6:
            return hi
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if 1.0 - (1.0 + mid) * math.exp(-mid) < y:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def optimal_frequency(rate, mu):
    """argmax_f F(rate, f) - mu f (per day); 0 for a page that never changes
    or changes too fast to follow (mu * rate >= 1)."""
    if rate <= 0 or mu * rate >= 1.0:
        return 0.0
    return rate / _g_inverse(mu * rate)


def optimal_allocation(rates, weights, budget):
    """Frequencies (per day) maximising sum w F(rate, f) with sum w f = budget * sum w."""
    target = budget * sum(weights)
    by_rate = {}  # many pages share a rate: solve once per distinct rate
    for r, w in zip(rates, weights):
        by_rate[r] = by_rate.get(r, 0.0) + w

    def spend(mu):
        return sum(w * optimal_frequency(r, mu) for r, w in by_rate.items())

    if spend(1e-12) <= target:  # more budget than the changing pages can use
        mu_lo = mu_hi = 1e-12
    else:
        mu_lo, mu_hi = 1e-12, 1.0
        while spend(mu_hi) > target:
            mu_hi *= 4.0
        for _ in range(80):
            mid = math.sqrt(mu_lo * mu_hi)
            if spend(mid) > target:
                mu_lo = mid
            else:
                mu_hi = mid
    return [optimal_frequency(r, mu_hi) for r in rates], mu_hi


def parse_budget(text):
    if "/" in text:
        num, den = text.split("/", 1)
        return float(num) / float(den)
    return float(text)


def past_rates(pages, lives, start, split):
    """Each page's rate (per day) as an estimator that saw [start, split)
    would have it: (changes + 0.5) / live days there; a page not live
    then gets the mean of the others."""
    learned = {}
    for x in lives:
        past = Life(pages[x.url], start, split)
        if past.lifetime > 0:
            learned[x.url] = (len(past.changes) + 0.5) / (past.lifetime / DAY)
    mean = statistics.fmean(learned.values()) if learned else 0.0
    return [learned.get(x.url, mean) for x in lives]


def baselines(lives, start, budgets, estimated_rates=None, phase_shifts=(0.0,)):
    """Freshness of uniform, the optimum for the true rates and, given
    estimated_rates, the optimum for those (each evaluated on the real
    change times of `lives`), averaged over the phase shifts; `*_spread`
    is the range over the shifts of the policy's freshness minus
    uniform's."""
    n = len(lives)
    weights = [x.weight * x.lifetime for x in lives]
    total = sum(weights)
    rates = [len(x.changes) / (x.lifetime / DAY) for x in lives]  # per day
    rows = []
    for label in budgets:
        budget = parse_budget(label)
        optimal, mu = optimal_allocation(rates, weights, budget)
        result = {"budget": label, "per_day": budget, "mu": mu}
        policies = [("uniform", [budget] * n), ("optimal", optimal)]
        if estimated_rates is not None:
            policies.append(("past", optimal_allocation(estimated_rates, weights, budget)[0]))
        by_shift = {}
        for shift in phase_shifts:
            phases = [((i + 0.5) / n + shift) % 1.0 for i in range(n)]
            for name, freqs in policies:
                stale = sum(
                    x.weight * stale_time(x, start, f / DAY, p)
                    for x, f, p in zip(lives, freqs, phases)
                )
                by_shift.setdefault(name, []).append(1.0 - stale / total)
        for name, freqs in policies:
            result[name] = statistics.fmean(by_shift[name])
            if name != "uniform":
                gains = [a - b for a, b in zip(by_shift[name], by_shift["uniform"])]
                result[name + "_spread"] = [min(gains), max(gains)]
            result[name + "_model"] = (
                sum(w * poisson_freshness(r, f) for w, r, f in zip(weights, rates, freqs)) / total
            )
        result["optimal_unrefreshed_changing_pages"] = sum(
            1 for r, f in zip(rates, optimal) if r > 0 and f == 0
        )
        rows.append(result)
    return rows


def site_statistics(pages, lives, start, end):
    gaps_under_day = 0
    gaps = 0
    cvs = []
    per_page = []
    for x in lives:
        ts = x.changes
        per_page.append(len(ts))
        g = [b - a for a, b in zip(ts, ts[1:])]
        gaps += len(g)
        gaps_under_day += sum(1 for d in g if d < DAY)
        if len(g) >= 2 and statistics.fmean(g) > 0:
            cvs.append(statistics.pstdev(g) / statistics.fmean(g))
    at_time = {}
    kinds = {"change": 0, "create": 0, "delete": 0}
    for p in pages.values():
        for t, k in p.events:
            if start <= t < end:
                at_time[t] = at_time.get(t, 0) + 1
                kinds[k] += 1
    sizes = sorted(at_time.values(), reverse=True)
    events = sum(sizes)
    top = max(1, len(sizes) // 100)
    half = start + (end - start) / 2
    changing = [x for x in lives if x.changes]
    per_page.sort()
    # Persistence: does a page that changed in the first half change in the
    # second? Hot-then-frozen: how much of a created page's activity falls
    # in its first 90 days?
    first = [x for x in lives if any(c < half for c in x.changes)]
    quiet = [x for x in lives if x.intervals[0][0] < half and not any(c < half for c in x.changes)]
    created = [x for x in lives if x.intervals[0][0] > start]
    early = sum(sum(1 for c in x.changes if c < x.intervals[0][0] + 90 * DAY) for x in created)
    late_possible = [x for x in created if x.intervals[0][0] + 90 * DAY < end]
    return {
        "pages": len(pages),
        "pages_live": len(lives),
        "changes": kinds["change"],
        "creates": kinds["create"],
        "deletes": kinds["delete"],
        "span_days": (end - start) / DAY,
        "event_times": len(sizes),
        "share_successive_changes_under_1_day": gaps_under_day / gaps if gaps else None,
        "median_cv_of_gaps": statistics.median(cvs) if cvs else None,
        "pages_with_cv": len(cvs),
        "largest_pages_at_one_time": sizes[0] if sizes else 0,
        "share_of_events_in_top_1pct_times": sum(sizes[:top]) / events if events else None,
        "pages_never_changing": sum(1 for x in lives if not x.changes),
        "changing_pages_last_change_in_first_half": sum(1 for x in changing if x.changes[-1] < half),
        "content_events_per_page_median": statistics.median(per_page) if per_page else 0,
        "content_events_per_page_p90": per_page[int(0.9 * (len(per_page) - 1))] if per_page else 0,
        "content_events_per_page_max": per_page[-1] if per_page else 0,
        "p_change_2nd_half_if_changed_1st": (
            sum(1 for x in first if x.changes[-1] >= half) / len(first) if first else None
        ),
        "p_change_2nd_half_if_quiet_1st": (
            sum(1 for x in quiet if any(c >= half for c in x.changes)) / len(quiet)
            if quiet else None
        ),
        "created_pages_share_of_events_in_first_90_days": (
            early / sum(len(x.changes) for x in created) if created else None
        ),
        "created_pages_quiet_after_90_days": (
            sum(1 for x in late_possible
                if not any(c >= x.intervals[0][0] + 90 * DAY for c in x.changes))
            / len(late_possible) if late_possible else None
        ),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("trace", help="trace CSV (.gz read as gzip)")
    parser.add_argument("--start", help="window start (Unix seconds or RFC 3339)")
    parser.add_argument("--end", help="window end, exclusive")
    parser.add_argument(
        "--budgets", default=",".join(DEFAULT_BUDGETS), help="comma-separated R/n per day"
    )
    parser.add_argument(
        "--learn-until",
        help="also the optimum for rates estimated on [start, LEARN_UNTIL)"
        " ((changes + 0.5) / live days), all policies then scored on"
        " [LEARN_UNTIL, end) only",
    )
    parser.add_argument(
        "--phases",
        type=int,
        default=4,
        help="average over this many phase shifts k/PHASES of every page's"
        " phase (default 4): at low budgets a figure owes much to where the"
        " refreshes fall relative to the mass commits",
    )
    parser.add_argument(
        "--drop-mass",
        type=float,
        metavar="FRACTION",
        help="first remove the changes made at times when more than FRACTION"
        " of the pages have an event (mass commits)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    try:
        pages = read_trace(args.trace)
        if args.drop_mass is not None:
            dropped = drop_mass_events(pages, args.drop_mass)
            print(f"mass times dropped: {dropped}", file=sys.stderr)
        start = parse_time(args.start, "--start") if args.start else None
        end = parse_time(args.end, "--end") if args.end else None
        lives, start, end = build_lives(pages, start, end)
        stats = site_statistics(pages, lives, start, end)
        estimated = None
        if args.learn_until:
            split = parse_time(args.learn_until, "--learn-until")
            lives_after, _, _ = build_lives(pages, split, end)
            estimated = past_rates(pages, lives_after, start, split)
            lives, start = lives_after, split
        shifts = [k / args.phases for k in range(max(1, args.phases))]
        rows = baselines(lives, start, args.budgets.split(","), estimated, shifts)
    except (TraceError, OSError, ValueError) as error:
        print(f"trace_baselines: {error}", file=sys.stderr)
        return 2
    if args.json:
        json.dump({"statistics": stats, "baselines": rows}, sys.stdout, indent=1)
        print()
        return 0
    for key, value in stats.items():
        print(f"{key}: {round(value, 4) if isinstance(value, float) else value}")
    past = estimated is not None
    def gain(r, name):
        low, high = r[name + "_spread"]
        return f" {r[name] - r['uniform']:+.4f} [{low:+.4f}, {high:+.4f}] |"

    print(
        "| R/n per day | uniform | optimal | optimal - uniform [range] | uniform (model) |"
        " optimal (model) |" + (" past-rate optimum | past - uniform [range] |" if past else "")
    )
    print("|---" * (8 if past else 6) + "|")
    for r in rows:
        print(
            f"| {r['budget']} | {r['uniform']:.4f} | {r['optimal']:.4f} |"
            + gain(r, "optimal")
            + f" {r['uniform_model']:.4f} | {r['optimal_model']:.4f} |"
            + (f" {r['past']:.4f} |" + gain(r, "past") if past else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
