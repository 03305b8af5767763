#!/usr/bin/env python3
"""Writes a synthetic change history in freshd's trace format (sim/README.md,
"Traces") for benchmarks: PAGES pages on HOSTS hosts over DAYS days, each a
Poisson process whose rate is log-uniform in [MIN, MAX] changes a day;
deterministic from --seed. Standard library only.

  scripts/synthetic_trace.py --pages 10000 --days 1095 > trace.csv
"""
import argparse
import math
import random
import sys

T0 = 1_600_000_000  # 2020-09-13, any Unix time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=10_000)
    ap.add_argument("--hosts", type=int, default=10)
    ap.add_argument("--days", type=float, default=1095)
    ap.add_argument("--min-rate", type=float, default=1 / 365)
    ap.add_argument("--max-rate", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    out = sys.stdout
    out.write("url,time\n")
    span = a.days * 86400
    lo, hi = math.log(a.min_rate), math.log(a.max_rate)
    for p in range(a.pages):
        url = f"http://h{p % a.hosts}.example/p{p}"
        rate = math.exp(rng.uniform(lo, hi)) / 86400
        out.write(f"{url},{T0}\n")  # exists from t0
        t = rng.expovariate(rate)
        while t < span:
            out.write(f"{url},{T0 + t:.0f}\n")
            t += rng.expovariate(rate)
    return 0


if __name__ == "__main__":
    sys.exit(main())
