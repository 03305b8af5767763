#!/usr/bin/python3
"""freshd crawling a real site on loopback, beside wget2 (issue #25 items 6, 7).

nginx (run as the current user, its own prefix and config in a temp dir, on a
free loopback port, stopped at the end) serves a Debian HTML documentation
package; every request is logged with $msec so the rates come from the
server's side. Three shapes, each a subcommand:

  throughput  freshd (`freshd run`, generated config: rate 100000, burst 1000,
              min_delay 0s, 16 in flight per host, 64 connections) crawls the
              corpus once from its index, WARC off and on, beside wget2
              (--mirror, 16 threads, onto tmpfs), the tools alternated for
              --rounds rounds. freshd is "done" when every URL it knows has
              been fetched once (/status: pages_fetched_total + errors >=
              pages_known, held for 1 s); it is then stopped with SIGTERM.
              Per run: pages/s over the span of the access log, CPU-ms per
              page and max RSS (wait4 rusage of the crawler, nginx not
              counted), freshd's loop_lag_ms.max (polled). Medians and
              ratios against wget2.
  polite      the same corpus under --hosts host names ([fetch] resolve maps
              them to 127.0.0.1; nginx's catch-all server answers them all),
              one request in flight and min_delay 0.25s per host, for
              --seconds; pages/s in the steady middle against the politeness
              bound hosts / min_delay.
  hostile     --good host names serving the corpus, with and without one
              hostile host (pregenerated files in a static root: gzip bombs,
              pages of 100k links, a 10 MB robots.txt naming 50k-URL
              sitemaps), alternated for --rounds rounds of --seconds each:
              freshd's loop_lag_ms.max, /status response times (p50, p99,
              max) polled every 0.1 s, and the good hosts' pages/s.

Run from the repository root after building build/freshd; see
bench/crawl/README.md. Needs nginx-light, wget2 and libboost1.74-doc
(scripts/install-deps.sh --bench). Every child process is stopped on exit.
"""

import argparse
import collections
import gzip
import json
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

DEFAULT_CORPUS = "/usr/share/doc/libboost1.74-doc/doc/html"
HTML_TYPES = ("text/html", "application/xhtml+xml")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


def quantile(xs, q):
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * (len(s) - 1)))]


class Nginx:
    """A private nginx: own prefix, config, access log with $msec."""

    def __init__(self, tmp, root, log, hostile_root=None, hostile_host=None,
                 port=None):
        self.port = port or free_port()
        self.tmp = tmp
        self.log = log
        conf = os.path.join(tmp, "nginx.conf")
        user = ""
        if os.geteuid() == 0:  # keep workers as the current user
            user = "user root root;\n"
        hostile = ""
        if hostile_root:
            # The hostile host: its own root; /bomb/ holds gzip data sent as
            # Content-Encoding: gzip HTML.
            hostile = f"""
  server {{
    listen 127.0.0.1:{self.port};
    server_name {hostile_host};
    root {hostile_root};
    location /bomb/ {{
      types {{ }}
      default_type text/html;
      add_header Content-Encoding gzip;
    }}
  }}"""
        with open(conf, "w") as f:
            f.write(f"""{user}worker_processes 1;
daemon off;
error_log {tmp}/error.log warn;
pid {tmp}/nginx.pid;
events {{ worker_connections 4096; }}
http {{
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  log_format bench '$msec $status $body_bytes_sent $host "$sent_http_content_type" "$request"';
  access_log {log} bench;
  client_body_temp_path {tmp}/body;
  proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fastcgi;
  uwsgi_temp_path {tmp}/uwsgi;
  scgi_temp_path {tmp}/scgi;
  sendfile on;
  keepalive_requests 1000000;
  server {{
    listen 127.0.0.1:{self.port} default_server;
    server_name _;
    root {root};
    index index.html;
  }}{hostile}
}}
""")
        self.proc = subprocess.Popen(
            ["nginx", "-p", tmp, "-c", conf],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)  # graceful: flushes logs
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def read_log(path):
    """[(msec, status, bytes, host, content_type)] from the bench format."""
    rows = []
    with open(path) as f:
        for line in f:
            parts = line.split(" ", 4)
            if len(parts) < 5:
                continue
            ctype = parts[4].split('"')[1] if '"' in parts[4] else ""
            rows.append((float(parts[0]), int(parts[1]), int(parts[2]),
                         parts[3], ctype))
    return rows


def log_rate(rows):
    """requests, html 200s, span s, requests/s over the log's span."""
    if len(rows) < 2:
        return len(rows), 0, 0.0, float("nan")
    t = [r[0] for r in rows]
    span = max(t) - min(t)
    html = sum(1 for r in rows if r[1] == 200 and r[4].startswith(HTML_TYPES))
    return len(rows), html, span, (len(rows) / span if span > 0 else
                                   float("nan"))


def wait_rusage(proc, timeout):
    """Waits for proc; returns (cpu_s, maxrss_kib) of it alone."""
    end = time.monotonic() + timeout
    while True:
        pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(st)
            return ru.ru_utime + ru.ru_stime, ru.ru_maxrss
        if time.monotonic() > end:
            proc.kill()
            end = float("inf")
        time.sleep(0.02)


def get_status(port, timeout=2.0):
    """(/status JSON or None, seconds the request took)."""
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/status",
                                    timeout=timeout) as r:
            body = r.read()
        return json.loads(body), time.monotonic() - t0
    except (OSError, ValueError):
        return None, time.monotonic() - t0


def freshd_config(d, status_port, seeds, warc, *, min_delay="0s",
                  in_flight=16, connections=64, resolve=None):
    conf = os.path.join(d, "freshd.toml")
    if warc:
        os.makedirs(os.path.join(d, "warc"))
    res = ""
    if resolve:
        res = ", ".join(f'"{h}" = "127.0.0.1"' for h in resolve)
    with open(conf, "w") as f:
        f.write(f"""[crawler]
seeds = "{seeds}"
scope = "seed-hosts"
max_urls_per_host = 100000
[budget]
rate = 100000
burst = 1000
[politeness]
min_delay = "{min_delay}"
max_in_flight_per_host = {in_flight}
per_ip = false
[fetch]
max_connections = {connections}
allow_private_networks = true
resolve = {{ {res} }}
[store]
path = "{d}/db"
warc_dir = "{d + '/warc' if warc else ''}"
[status]
listen = "127.0.0.1:{status_port}"
[log]
level = "warn"
""")
    return conf


class Freshd:
    """`freshd run` on a generated config, its /status polled."""

    def __init__(self, binary, workdir, seed_urls, warc, **conf):
        self.dir = workdir
        seeds = os.path.join(workdir, "seeds.txt")
        with open(seeds, "w") as f:
            f.write("\n".join(seed_urls) + "\n")
        self.port = free_port()
        conf_path = freshd_config(workdir, self.port, seeds, warc, **conf)
        self.err = open(os.path.join(workdir, "freshd.log"), "w")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen([binary, "run", "--config", conf_path],
                                     stdout=self.err, stderr=self.err)
        self.lag_max = 0.0
        self.status_s = []  # /status response times, failures included
        self.status_failed = 0  # polls that timed out or failed
        self.last = None
        self.limited = collections.Counter()  # /status limited_by per poll
        # /status in_flight.per_host_cap / hosts_active / hosts_low_yield
        # per poll (the fair share of the connections, issue #43 item 3)
        self.caps = collections.Counter()

    def poll(self):
        s, dt = get_status(self.port)
        if s is None:
            if self.status_s:  # after the endpoint came up: a failure
                self.status_s.append(dt)
                self.status_failed += 1
            if self.proc.poll() is not None:
                self.err.flush()
                with open(self.err.name) as f:
                    tail = f.read()[-2000:]
                raise RuntimeError(
                    f"freshd exited {self.proc.returncode}: {tail}")
            return None
        self.status_s.append(dt)
        if s.get("state") == "recovering":
            # The store is being restored: /status has only its progress.
            return None
        self.lag_max = max(self.lag_max, s["loop_lag_ms"]["max"])
        self.last = s
        self.limited[s.get("limited_by", "?")] += 1
        fl = s.get("in_flight", {})
        if "per_host_cap" in fl:
            self.caps[f"{fl['per_host_cap']}/{fl.get('hosts_active')}/"
                      f"{fl.get('hosts_low_yield')}"] += 1
        return s

    def stop(self, timeout=30):
        if self.proc.returncode is None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        cpu, rss = wait_rusage(self.proc, timeout)
        self.err.close()
        return cpu, rss


def done_count(s):
    return s["pages_fetched_total"] + sum(s["errors"].values())


def run_freshd_once(args, root, warc):
    """One crawl of the corpus to completion; returns a result dict."""
    tmp = tempfile.mkdtemp(prefix="freshd-crawl-", dir=args.tmpfs)
    try:
        log = os.path.join(tmp, "access.log")
        ng = Nginx(tmp, root, log)
        try:
            fd = Freshd(args.freshd, tmp,
                        [f"http://127.0.0.1:{ng.port}/{args.index}"], warc)
            held_since, timed_out = None, False
            while True:
                time.sleep(0.2)
                s = fd.poll()
                if s is None:
                    continue
                if s["pages_known"] > 1 and done_count(s) >= s["pages_known"]:
                    held_since = held_since or time.monotonic()
                    if time.monotonic() - held_since >= 1.0:
                        break
                else:
                    held_since = None
                if time.monotonic() - fd.t0 > args.timeout:
                    timed_out = True
                    break
            cpu, rss = fd.stop()
        finally:
            ng.stop()
        n, html, span, rate = log_rate(read_log(log))
        warc_bytes = 0
        if warc:
            for dp, _, fs in os.walk(os.path.join(tmp, "warc")):
                warc_bytes += sum(os.path.getsize(os.path.join(dp, x))
                                  for x in fs)
        s = fd.last or {}
        return {"requests": n, "html": html, "span_s": span, "rate": rate,
                "cpu_ms_per_page": 1e3 * cpu / max(n, 1), "rss_mib":
                rss / 1024, "lag_max_ms": fd.lag_max, "timed_out": timed_out,
                "known": s.get("pages_known"), "fetched": s.get(
                    "pages_fetched_total"), "errors": s.get("errors"),
                "new": s.get("queue", {}).get("new"), "warc_mib":
                warc_bytes / 2**20}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_wget2_once(args, root):
    tmp = tempfile.mkdtemp(prefix="wget2-crawl-", dir=args.tmpfs)
    try:
        log = os.path.join(tmp, "access.log")
        ng = Nginx(tmp, root, log)
        try:
            out = open(os.path.join(tmp, "wget2.log"), "w")
            # Anchors only, as freshd follows: page requisites are rejected
            # by suffix (wget2 then never requests them).
            p = subprocess.Popen(
                ["wget2", "--mirror", "--max-threads=16", "--no-verbose",
                 "--no-host-directories", "-P", os.path.join(tmp, "out"),
                 "--reject=*.png,*.gif,*.jpg,*.jpeg,*.svg,*.css,*.js,*.ico",
                 f"http://127.0.0.1:{ng.port}/{args.index}"],
                stdout=out, stderr=out)
            cpu, rss = wait_rusage(p, args.timeout)
            out.close()
        finally:
            ng.stop()
        n, html, span, rate = log_rate(read_log(log))
        return {"requests": n, "html": html, "span_s": span, "rate": rate,
                "cpu_ms_per_page": 1e3 * cpu / max(n, 1),
                "rss_mib": rss / 1024, "lag_max_ms": None,
                "timed_out": p.returncode is None}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cmd_throughput(args):
    root = os.path.abspath(args.corpus)
    tools = ["wget2", "freshd", "freshd+warc"]
    results = {t: [] for t in tools}
    print(f"corpus {root} (index {args.index}), {args.rounds} rounds, "
          f"tools alternated; load average {os.getloadavg()[0]:.1f}\n")
    print("| round | tool | requests | html 200 | span s | pages/s | "
          "CPU-ms/page | max RSS MiB | loop lag max ms | notes |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for rnd in range(1, args.rounds + 1):
        order = tools if rnd % 2 else list(reversed(tools))
        for t in order:
            if t == "wget2":
                r = run_wget2_once(args, root)
                note = ""
            else:
                r = run_freshd_once(args, root, warc=t.endswith("warc"))
                note = (f"known {r['known']}, fetched {r['fetched']}, "
                        f"new {r['new']}, errors {json.dumps(r['errors'])}")
                if r["warc_mib"]:
                    note += f", WARC {r['warc_mib']:.1f} MiB"
            if r["timed_out"]:
                note += " TIMED OUT"
            results[t].append(r)
            lag = ("-" if r["lag_max_ms"] is None else
                   f"{r['lag_max_ms']:.1f}")
            print(f"| {rnd} | {t} | {r['requests']} | {r['html']} | "
                  f"{r['span_s']:.2f} | {r['rate']:.0f} | "
                  f"{r['cpu_ms_per_page']:.3f} | {r['rss_mib']:.1f} | {lag} "
                  f"| {note} |", flush=True)
    print("\nmedians (ratio to wget2):\n")
    print("| tool | pages/s | CPU-ms/page | max RSS MiB | loop lag max ms |")
    print("|---|---|---|---|---|")
    base = {k: median([r[k] for r in results["wget2"]])
            for k in ("rate", "cpu_ms_per_page", "rss_mib")}
    for t in tools:
        m = {k: median([r[k] for r in results[t]])
             for k in ("rate", "cpu_ms_per_page", "rss_mib", "lag_max_ms")}
        lag = "-" if m["lag_max_ms"] != m["lag_max_ms"] else (
            f"{m['lag_max_ms']:.1f}")
        print(f"| {t} | {m['rate']:.0f} ({m['rate'] / base['rate']:.2f}x) | "
              f"{m['cpu_ms_per_page']:.3f} "
              f"({m['cpu_ms_per_page'] / base['cpu_ms_per_page']:.2f}x) | "
              f"{m['rss_mib']:.1f} ({m['rss_mib'] / base['rss_mib']:.2f}x) | "
              f"{lag} |")


def timed_crawl(args, tmp, ng, seeds, seconds, period, **conf):
    """freshd crawls `seeds` for `seconds`, /status polled every `period`;
    stops freshd, then nginx. Returns (Freshd, cpu_s, maxrss_kib, log
    rows)."""
    try:
        fd = Freshd(args.freshd, tmp, seeds, False, **conf)
        while time.monotonic() - fd.t0 < seconds:
            time.sleep(period)
            fd.poll()
        cpu, rss = fd.stop()
    finally:
        ng.stop()
    return fd, cpu, rss, read_log(ng.log)


def host_names(prefix, n):
    return [f"{prefix}{i:02d}.bench.test" for i in range(n)]


def steady_rate(rows, t_start, t_end, host_filter=None):
    """Requests/s between t_start and t_end (absolute msec times)."""
    n = sum(1 for r in rows if t_start <= r[0] < t_end and
            (host_filter is None or host_filter(r[3])))
    return n / (t_end - t_start) if t_end > t_start else float("nan")


def cmd_polite(args):
    root = os.path.abspath(args.corpus)
    hosts = host_names("h", args.hosts)
    bound = args.hosts / args.min_delay
    print(f"corpus {root} under {args.hosts} host names, 1 in flight and "
          f"min_delay {args.min_delay}s per host, {args.seconds:.0f} s a "
          f"round; bound {bound:.0f} pages/s; load average "
          f"{os.getloadavg()[0]:.1f}\n")
    print("| round | requests | steady-middle pages/s | of bound | "
          "hosts served | per-host gap p10 / p50 / p90 / p99 / max s | "
          "CPU-ms/page | max RSS MiB | loop lag max ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    rates, fracs = [], []
    for rnd in range(1, args.rounds + 1):
        tmp = tempfile.mkdtemp(prefix="freshd-polite-", dir=args.tmpfs)
        try:
            log = os.path.join(tmp, "access.log")
            ng = Nginx(tmp, root, log)
            fd, cpu, rss, rows = timed_crawl(
                args, tmp, ng,
                [f"http://{h}:{ng.port}/{args.index}" for h in hosts],
                args.seconds, 0.25, min_delay=f"{args.min_delay}s",
                in_flight=1, resolve=hosts)
            t0 = min(r[0] for r in rows)
            t1 = max(r[0] for r in rows)
            # The steady middle: drop the first and last quarter.
            a, b = t0 + (t1 - t0) / 4, t1 - (t1 - t0) / 4
            rate = steady_rate(rows, a, b)
            rates.append(rate)
            fracs.append(rate / bound)
            # Gaps between one host's successive requests in the middle:
            # min_delay plus what the engine adds.
            last, gaps = {}, []
            for r in sorted(rows):
                if a <= r[0] < b:
                    if r[3] in last:
                        gaps.append(r[0] - last[r[3]])
                    last[r[3]] = r[0]
            print(f"| {rnd} | {len(rows)} | {rate:.1f} | {rate / bound:.3f} "
                  f"| {len(last)} | {quantile(gaps, 0.1):.3f} / "
                  f"{quantile(gaps, 0.5):.3f} / {quantile(gaps, 0.9):.3f} / "
                  f"{quantile(gaps, 0.99):.3f} / {max(gaps or [0]):.3f} "
                  f"| {1e3 * cpu / max(len(rows), 1):.3f} | {rss / 1024:.1f} "
                  f"| {fd.lag_max:.1f} |", flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"\nmedian steady pages/s {median(rates):.1f} of the bound "
          f"{bound:.0f} ({median(fracs):.3f})")


HOSTILE_KINDS = ("bombs", "links", "robots", "sitemaps")


def make_hostile_root(d, host, port, kinds):
    """Pregenerates the hostile host's files (those of `kinds`: the index
    links to bombs and link pages only if chosen; robots.txt is 10 MB only
    with "robots" and names the sitemaps only with "sitemaps"); returns the
    files' sizes."""
    os.makedirs(os.path.join(d, "bomb"))
    os.makedirs(os.path.join(d, "links"))
    links = []
    # Gzip bombs: 1 GiB of zeros compressed (~1 MiB on the wire), sent as
    # Content-Encoding: gzip text/html.
    zeros = b"\0" * (1 << 20)
    bomb = os.path.join(d, "bomb", "0.html")
    with gzip.open(bomb, "wb", compresslevel=9) as g:
        for _ in range(1024):
            g.write(zeros)
    for i in range(1, 8):
        shutil.copyfile(bomb, os.path.join(d, "bomb", f"{i}.html"))
    if "bombs" in kinds:
        links += [f"/bomb/{i}.html" for i in range(8)]
    # Pages of 100k links each (distinct URLs per page; they 404).
    for p in range(4):
        name = f"/links/{p}.html"
        if "links" in kinds:
            links.append(name)
        with open(d + name, "w") as f:
            f.write("<!DOCTYPE html><html><head><title>links</title></head>"
                    "<body>\n")
            for i in range(100000):
                f.write(f'<a href="/p/{p}/{i}.html">{i}</a>\n')
            f.write("</body></html>\n")
    # Sitemaps of 50k URLs, named by a 10 MB robots.txt.
    sitemaps = []
    for s in range(4):
        name = f"/sitemap{s}.xml"
        sitemaps.append(name)
        with open(d + name, "w") as f:
            f.write('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns='
                    '"http://www.sitemaps.org/schemas/sitemap/0.9">\n')
            for i in range(50000):
                f.write(f"<url><loc>http://{host}:{port}/s/{s}/{i}.html</loc>"
                        f"<lastmod>2026-11-2{s}T00:00:00Z</lastmod></url>\n")
            f.write("</urlset>\n")
    with open(os.path.join(d, "robots.txt"), "w") as f:
        f.write("User-agent: *\n")
        for sm in sitemaps if "sitemaps" in kinds else []:
            f.write(f"Sitemap: http://{host}:{port}{sm}\n")
        i, size = 0, 0
        while "robots" in kinds and size < 10_000_000 - 64:
            line = f"Disallow: /private/{i:08d}/\n"
            f.write(line)
            size += len(line)
            i += 1
    with open(os.path.join(d, "index.html"), "w") as f:
        f.write("<!DOCTYPE html><html><head><title>hostile</title></head>"
                "<body>\n")
        for ln in links:
            f.write(f'<a href="{ln}">{ln}</a>\n')
        f.write("</body></html>\n")
    sizes = {}
    for dp, _, fs in os.walk(d):
        for x in fs:
            p = os.path.join(dp, x)
            sizes[os.path.relpath(p, d)] = os.path.getsize(p)
    return sizes


def run_hostile_once(args, root, hostile_dir, hostile_port, with_hostile):
    tmp = tempfile.mkdtemp(prefix="freshd-hostile-", dir=args.tmpfs)
    try:
        log = os.path.join(tmp, "access.log")
        good = host_names("good", args.good)
        # The hostile sitemaps name host:port, so the port is fixed.
        ng = Nginx(tmp, root, log, hostile_root=hostile_dir,
                   hostile_host=args.hostile_host, port=hostile_port)
        seeds = [f"http://{h}:{ng.port}/{args.index}" for h in good]
        if with_hostile:
            seeds.append(f"http://{args.hostile_host}:{ng.port}/index.html")
        fd, cpu, rss, rows = timed_crawl(args, tmp, ng, seeds, args.seconds,
                                         0.1,
                                         resolve=good + [args.hostile_host])
        t0 = min(r[0] for r in rows)
        t1 = max(r[0] for r in rows)
        good_set = set(good)
        # The good hosts' rate while they still had pages: up to the
        # request that made 90% of theirs. The good site (~40k pages) can
        # be crawled whole within --seconds; over the whole span a run in
        # which the hostile host's requests go on after the good hosts ran
        # out would read as slower by that idle tail.
        good_times = sorted(r[0] for r in rows
                            if r[3].split(":")[0] in good_set)
        good_rate = float("nan")
        if len(good_times) >= 10:
            n90 = int(0.9 * len(good_times))
            t90 = good_times[n90 - 1]
            good_rate = steady_rate(rows, t0, t90 + 1e-3,
                                    lambda h: h.split(":")[0] in good_set)
        hostile_reqs = sum(1 for r in rows
                           if r[3].split(":")[0] == args.hostile_host)
        st = [1e3 * x for x in fd.status_s]
        return {"good_rate": good_rate, "hostile_reqs": hostile_reqs,
                "lag_max_ms": fd.lag_max, "status_p50": quantile(st, 0.5),
                "status_p99": quantile(st, 0.99), "status_max": max(st or
                                                                    [0]),
                "polls": len(st), "failed": fd.status_failed, "cpu_s": cpu, "rss_mib": rss / 1024,
                "known": (fd.last or {}).get("pages_known"),
                "limited": ",".join(f"{k} {v}" for k, v in
                                    fd.limited.most_common(3)),
                "caps": ",".join(f"{k} {v}" for k, v in
                                 fd.caps.most_common(3))}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cmd_hostile(args):
    root = os.path.abspath(args.corpus)
    hdir = tempfile.mkdtemp(prefix="freshd-hostile-root-", dir=args.tmpfs)
    os.chmod(hdir, 0o755)
    try:
        # The sitemaps name host:port, so the port is fixed for the run.
        port = free_port()
        kinds = args.kinds.split(",")
        for k in kinds:
            if k not in HOSTILE_KINDS:
                sys.exit(f"--kinds: {k} is none of {','.join(HOSTILE_KINDS)}")
        sizes = make_hostile_root(hdir, args.hostile_host, port, kinds)
        print(f"corpus {root} under {args.good} good host names; hostile "
              f"host {args.hostile_host} ({args.kinds}): {len(sizes)} files, "
              f"{sum(sizes.values()) / 2**20:.1f} MiB (robots.txt "
              f"{sizes['robots.txt'] / 1e6:.1f} MB, bomb "
              f"{sizes['bomb/0.html'] / 2**20:.2f} MiB gzip of 1 GiB, 4 "
              f"pages of 100k links, 4 sitemaps of 50k URLs); "
              f"{args.seconds:.0f} s a run; load average "
              f"{os.getloadavg()[0]:.1f}\n")
        print("| round | hostile | good pages/s (to 90%) | hostile requests | "
              "loop lag max ms | /status p50 ms | p99 ms | max ms | polls | "
              "failed | CPU s | max RSS MiB | known | limited_by (polls) | "
              "cap/hosts/low-yield (polls) |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        res = {False: [], True: []}
        for rnd in range(1, args.rounds + 1):
            order = [False, True] if rnd % 2 else [True, False]
            for h in order:
                r = run_hostile_once(args, root, hdir, port, h)
                res[h].append(r)
                print(f"| {rnd} | {'yes' if h else 'no'} | "
                      f"{r['good_rate']:.0f} | {r['hostile_reqs']} | "
                      f"{r['lag_max_ms']:.1f} | {r['status_p50']:.1f} | "
                      f"{r['status_p99']:.1f} | {r['status_max']:.1f} | "
                      f"{r['polls']} | {r['failed']} | {r['cpu_s']:.1f} | "
                      f"{r['rss_mib']:.0f} | {r['known']} | "
                      f"{r['limited']} | {r['caps']} |", flush=True)
        print("\nmedians:\n")
        print("| hostile | good pages/s | loop lag max ms | /status p50 ms | "
              "p99 ms | max ms |")
        print("|---|---|---|---|---|---|")
        for h in (False, True):
            m = {k: median([r[k] for r in res[h]]) for k in
                 ("good_rate", "lag_max_ms", "status_p50", "status_p99",
                  "status_max")}
            print(f"| {'yes' if h else 'no'} | {m['good_rate']:.0f} | "
                  f"{m['lag_max_ms']:.1f} | {m['status_p50']:.1f} | "
                  f"{m['status_p99']:.1f} | {m['status_max']:.1f} |")
        g0 = median([r["good_rate"] for r in res[False]])
        g1 = median([r["good_rate"] for r in res[True]])
        print(f"\ngood hosts' rate with / without the hostile host: "
              f"{g1 / g0:.2f}")
    finally:
        shutil.rmtree(hdir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--freshd", default="build/freshd")
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--index", default="index.html",
                    help="the seed page, relative to the corpus root")
    ap.add_argument("--tmpfs", default="/dev/shm",
                    help="where stores, WARCs and wget2's mirror go")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=60,
                    help="seconds before a crawl is cut off (throughput)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("throughput")
    p = sub.add_parser("polite")
    p.add_argument("--hosts", type=int, default=64)
    p.add_argument("--min-delay", type=float, default=0.25)
    p.add_argument("--seconds", type=float, default=40)
    h = sub.add_parser("hostile")
    h.add_argument("--good", type=int, default=8)
    h.add_argument("--hostile-host", default="hostile.bench.test")
    h.add_argument("--seconds", type=float, default=30)
    h.add_argument("--kinds", default=",".join(HOSTILE_KINDS),
                   help="which hostile files the host serves")
    args = ap.parse_args()
    for tool in ("nginx", "wget2"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found: scripts/install-deps.sh --bench")
    if not os.path.isfile(os.path.join(args.corpus, args.index)):
        sys.exit(f"no {args.index} under {args.corpus}: "
                 "scripts/install-deps.sh --bench")
    if not os.access(args.freshd, os.X_OK):
        sys.exit(f"{args.freshd} is not built")
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
    {"throughput": cmd_throughput, "polite": cmd_polite,
     "hostile": cmd_hostile}[args.cmd](args)


if __name__ == "__main__":
    main()
