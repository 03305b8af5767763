"""Pure helpers over `freshd sim` JSON results: formatting, mean ± standard
error, paired differences, oracle gaps, interpolation. No I/O, no state."""

import math


def fmt(x):
    return x if isinstance(x, str) else "%.6g" % x


def results(futs):
    return [f.result() for f in futs]


def mean_se(xs):
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    n = len(xs)
    if n == 0:
        return float("nan"), float("nan")
    m = sum(xs) / n
    if n < 2:
        return m, float("nan")
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    return m, math.sqrt(var / n)


def pm(xs, digits=4, scale=1.0):
    m, se = mean_se([x * scale for x in xs])
    return "%.*f ± %.*f" % (digits, m, digits, se)


def verdict(ok):
    return "**PASS**" if ok else "**FAIL**"


def forced(js):
    """Share of all crawls chosen because a page's deadline had passed
    (max_interval floor, learning phase, risk bound) rather than by value."""
    # A quick run's window may hold no crawl at all.
    shares = [j["overdue_crawls"] / j["crawls_total"] for j in js if j["crawls_total"]]
    return pm(shares, 1, 100) + "%"


def paired(js1, js2, key="freshness"):
    return [a[key] - b[key] for a, b in zip(js1, js2)]


def least_host(js):
    return pm([j["least_host_crawl_share"] for j in js], 2)


def oracle_gap(oracle, other, key="freshness", lower_better=False):
    """Per seed, how far `other` falls short of `oracle` relative to it
    (positive: worse; lower_better for age and fragment staleness)."""
    sign = -1 if lower_better else 1
    return [sign * (a[key] - b[key]) / a[key] for a, b in zip(oracle, other)]


def interp_rate(points, target):
    """log-linear interpolation of R where staleness(R) = target."""
    pts = sorted(points)
    for (r1, s1), (r2, s2) in zip(pts, pts[1:]):
        if (s1 - target) * (s2 - target) <= 0 and s1 != s2:
            x = math.log(r1) + (math.log(r2) - math.log(r1)) * (s1 - target) / (s1 - s2)
            return math.exp(x)
    return None


def spread_range(runs):
    """τ̂² and the host weight over runs, as 'τ̂² lo–hi, weight lo–hi'."""
    tau = [x["host_rate_spread"] for x in runs]
    w = [x["host_rate_weight"] for x in runs]
    return "τ̂² %.3g to %.3g, weight %.3g to %.3g" % (
        min(tau),
        max(tau),
        min(w),
        max(w),
    )
