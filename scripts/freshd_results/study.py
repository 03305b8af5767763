"""A study: the simulator runs behind RESULTS.md and the Markdown they make.

`Runner` runs `freshd sim` command lines on a thread pool (each line once)
and, for development, caches their JSON by the binary's digest and the
arguments. `Study` knows the webs, their simulated days and warm-up, the
seeds, and collects the report's Markdown lines.
"""

import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import threading

from .stats import fmt

# Simulated days and warm-up per web (the RESULTS.md "Setup" table).
WEB_FILES = {
    "uniform": "sim/webs/uniform.toml",
    "noisy": "sim/webs/noisy.toml",
    "noisy-nofp": "sim/webs/noisy-nofp.toml",
    "noisy-lowfp": "sim/webs/noisy-lowfp.toml",
    "noise-only": "sim/webs/noise-only.toml",
    "noisy-lm": "sim/webs/noisy-lm.toml",
    "noisy-delay": "sim/webs/noisy-delay.toml",
    "noisy-delay-lastmod": "sim/webs/noisy-delay-lastmod.toml",
    "noisy-lm-delay": "sim/webs/noisy-lm-delay.toml",
    "hosts-apart": "sim/webs/hosts-apart.toml",
    "scroll": "sim/webs/scroll.toml",
    "paper": "sim/webs/scroll-paper.toml",
    "heavy-tail": "sim/webs/heavy-tail.toml",
    "signal-quality": "sim/webs/signal-quality.toml",
    "feed-mix": "sim/webs/feed-mix.toml",
}
DAYS = {
    "uniform": 120,
    "noisy": 120,
    "scroll": 60,
    "paper": 60,
    "heavy-tail": 120,
    "signal-quality": 120,
    "feed-mix": 60,
}
WARM = {
    "uniform": 30,
    "noisy": 30,
    "scroll": 20,
    "paper": 20,
    "heavy-tail": 30,
    "signal-quality": 30,
    "feed-mix": 20,
}
# Variants of noisy.toml run as long as it.
NOISY_VARIANTS = (
    "noisy-nofp",
    "noisy-lowfp",
    "noise-only",
    "noisy-lm",
    "noisy-delay",
    "noisy-delay-lastmod",
    "noisy-lm-delay",
    "hosts-apart",
)


def file_digest(path):
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Runner:
    """Runs `freshd sim` commands on a pool; each command line once."""

    def __init__(self, freshd, jobs, cache_dir=None):
        self.freshd = freshd
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs)
        self.futures = {}
        self.count = 0
        self.cached = 0  # runs read from the cache
        self.cpu = 0.0  # Σ cpu_seconds reported by the runs
        self.cache_dir = cache_dir
        if cache_dir:
            os.makedirs(cache_dir, exist_ok=True)  # (a first run made none)
        # A cached result is only valid for the binary that produced it.
        self.binary = file_digest(freshd) if cache_dir else None
        self.lock = threading.Lock()

    def submit(self, args):
        key = tuple(args)
        if key not in self.futures:
            self.futures[key] = self.pool.submit(self._run, args)
        return self.futures[key]

    def get(self, args):
        return self.submit(args).result()

    def shutdown(self, cancel=False):
        self.pool.shutdown(wait=not cancel, cancel_futures=cancel)

    def _cache_path(self, args):
        key = hashlib.sha1((self.binary + " " + " ".join(args)).encode())
        return os.path.join(self.cache_dir, key.hexdigest() + ".json")

    def _run(self, args):
        with self.lock:
            self.count += 1
            print(
                "+ freshd " + " ".join(shlex.quote(a) for a in args),
                flush=True,
            )
        cache = self._cache_path(args) if self.cache_dir else None
        if cache and os.path.exists(cache):
            with open(cache) as f:
                j = json.load(f)
            with self.lock:
                self.cached += 1
        else:
            cmd = [self.freshd] + args
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError(
                    "failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr)
                )
            if cache:
                with open(cache, "w") as f:
                    f.write(p.stdout)
            j = json.loads(p.stdout)
        with self.lock:
            self.cpu += j.get("cpu_seconds", 0)
        return j


class Study:
    """The webs, seeds and runner of one report, and its Markdown lines."""

    def __init__(self, runner, seeds, quick):
        self.runner = runner
        self.seeds = seeds
        self.seed_list = list(range(1, seeds + 1))
        self.quick = quick
        self.webs = dict(WEB_FILES)
        self.days, self.warm = dict(DAYS), dict(WARM)
        if quick:
            self.days = {k: v // 4 for k, v in self.days.items()}
            self.warm = {k: v // 4 for k, v in self.warm.items()}
        for web in NOISY_VARIANTS:
            self.days[web], self.warm[web] = (
                self.days["noisy"],
                self.warm["noisy"],
            )
        self.md = []

    def sim_args(
        self,
        web,
        policy,
        rate,
        seed,
        oracle=False,
        extra=(),
        days=None,
        warm=None,
    ):
        a = [
            "sim",
            "--web",
            self.webs[web],
            "--policy",
            policy,
            "--rate",
            fmt(rate),
            "--days",
            str(days or self.days[web]),
            "--warmup-days",
            str(self.warm[web] if warm is None else warm),
            "--seed",
            str(seed),
        ]
        if oracle:
            a.append("--oracle")
        return a + list(extra)

    def run(
        self,
        web,
        policy,
        rate,
        oracle=False,
        extra=(),
        days=None,
        warm=None,
        seeds=None,
    ):
        """Submits one configuration for every seed (the first `seeds` of
        them if given); returns the futures."""
        return [
            self.runner.submit(
                self.sim_args(web, policy, rate, s, oracle, extra, days, warm)
            )
            for s in self.seed_list[:seeds]
        ]

    def cmd_line(
        self,
        web,
        policy,
        rate,
        oracle=False,
        extra=(),
        seed="S",
        days=None,
        warm=None,
    ):
        a = self.sim_args(web, policy, rate, 0, oracle, extra, days, warm)
        a[a.index("--seed") + 1] = str(seed)
        return "freshd " + " ".join(a)

    def out(self, s=""):
        self.md.append(s)

    def table(self, header, rows):
        self.out("| " + " | ".join(header) + " |")
        self.out("|" + "---|" * len(header))
        for r in rows:
            self.out("| " + " | ".join(str(c) for c in r) + " |")
        self.out()
