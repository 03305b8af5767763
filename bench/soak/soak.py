#!/usr/bin/env python3
"""freshd chaos soak (issue #26 item 8): a real `freshd run` for --minutes
against the test web in compressed time plus hostile and flaky hosts, with
random SIGKILL, SIGHUP (good and bad configs) and SIGSTOP/SIGCONT of the
daemon. Python 3 standard library only. See bench/soak/README.md.

Every request the daemon makes goes through one logging front server on
127.0.0.1 (`[fetch] resolve` maps every host name to it): the test web's
hosts h<N>.test are forwarded to `freshd testweb`, the other hosts are
served here. From that log and the daemon's endpoint it asserts:
  * politeness: per host, request starts at least min_delay apart and at
    most max_in_flight_per_host requests open at once;
  * robots: no request for a path the host's robots.txt disallows;
  * durability: every `POST /signal` answered 200 (an acknowledged write)
    is known to `/page?url=` after every SIGKILL restart, and each restart
    logs "N pages expected, M restored, 0 lost";
  * memory: the daemon's RSS (/proc, sampled) in the last quarter of the
    run against the first.
Exit 0 when every assertion holds, 1 otherwise, 2 on a harness failure.
"""

import argparse
import gzip
import http.client
import http.server
import json
import os
import random
import re
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

# ---------------------------------------------------------------------------
# Hosts served by the front server besides the test web's h<N>.test.

BOMB, DRIP, ENDLESS, LINKS, ROBOTS, SITEMAP, FLAKY, ACK = (
    "bomb.soak.test", "drip.soak.test", "endless.soak.test",
    "links.soak.test", "robots.soak.test", "sitemap.soak.test",
    "flaky.soak.test", "ack.soak.test")
HOSTILE = (BOMB, DRIP, ENDLESS, LINKS, ROBOTS, SITEMAP, FLAKY, ACK)

# The test web's hosts get this robots.txt (the test web's own allows all):
# /p/7, /p/70.., /p/700.. are disallowed, and the index and the sitemap
# link them, so a robots violation would show.
TESTWEB_DISALLOW = "/p/7"
# Every other host disallows /forbidden/ and links into it.
FORBIDDEN = "/forbidden/"
# robots.soak.test's robots.txt: 10 MB of "Disallow: /x<i>/" lines; only the
# first 500 KiB are obeyed (RFC 9309 2.5, parse/robots.h), i.e. i < HUGE_OBEYED.
HUGE_ROBOTS_LINES = 600_000
ROBOTS_CAP = 500 * 1024
RESET = -2  # the status logged for a connection reset before any response
GAVE_UP = -3  # the client closed while the server stalled


class Content:
    """Pregenerated bodies of the hostile hosts."""

    def __init__(self, port):
        t0 = time.monotonic()
        self.port = port
        # A gzip bomb: 256 MiB of zeros (~256 KB on the wire).
        zeros = bytes(1 << 20)
        import io
        buf = io.BytesIO()
        with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as g:
            for _ in range(256):
                g.write(zeros)
        self.bomb = buf.getvalue()
        # Pages of 100,000 distinct links (half of them into /forbidden/).
        self.link_pages = []
        for n in range(2):
            parts = ["<!DOCTYPE html><html><head><title>links</title></head>"
                     "<body>"]
            for i in range(100_000):
                path = (f"{FORBIDDEN}{n}_{i}" if i % 2 else f"/l/{n}_{i}")
                parts.append(f'<a href="{path}">{i}</a>\n')
            parts.append("</body></html>")
            self.link_pages.append("".join(parts).encode())
        # A 10 MB robots.txt; the first line disallows /forbidden/.
        lines = ["User-agent: *", f"Disallow: {FORBIDDEN}"]
        lines += [f"Disallow: /x{i}/" for i in range(HUGE_ROBOTS_LINES)]
        self.huge_robots = ("\n".join(lines) + "\n").encode()
        obeyed = self.huge_robots[:ROBOTS_CAP].decode().split("\n")
        self.huge_obeyed = sum(1 for l in obeyed[:-1]
                               if l.startswith("Disallow: /x"))
        # Four sitemaps of 50,000 URLs each (one in ten under /forbidden/).
        self.sitemaps = []
        for n in range(4):
            parts = ['<?xml version="1.0" encoding="UTF-8"?>\n'
                     '<urlset xmlns="http://www.sitemaps.org/schemas/'
                     'sitemap/0.9">\n']
            for i in range(50_000):
                path = f"{FORBIDDEN}s{n}_{i}" if i % 10 == 0 else f"/s/{n}_{i}"
                parts.append(f"<url><loc>http://{SITEMAP}:{port}{path}</loc>"
                             f"<lastmod>2026-01-01T00:00:00Z</lastmod></url>\n")
            parts.append("</urlset>\n")
            self.sitemaps.append("".join(parts).encode())
        self.seconds = time.monotonic() - t0


def page(title, links=()):
    body = "".join(f'<a href="{l}">{l}</a>\n' for l in links)
    return (f"<!DOCTYPE html><html><head><title>{title}</title></head>"
            f"<body><p>{title}</p>{body}</body></html>").encode()


def is_disallowed(host, path, huge_obeyed):
    """Whether `path` on `host` is disallowed by the robots.txt served."""
    if path == "/robots.txt":
        return False
    if host.startswith("h") and host.endswith(".test") and \
            not host.endswith(".soak.test"):
        return path.startswith(TESTWEB_DISALLOW)
    if path.startswith(FORBIDDEN):
        return True
    if host == ROBOTS:
        m = re.match(r"/x(\d+)/", path)
        return bool(m) and int(m.group(1)) < huge_obeyed
    return False


class Front(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def __init__(self, testweb_port):
        super().__init__(("127.0.0.1", 0), Handler)
        self.testweb_port = testweb_port
        self.content = None  # set once the port is known
        self.log = []  # (start, end, host, path, status)
        self.stalls = []  # (from, to) when this process did not run
        self.lock = threading.Lock()
        self.t0 = time.time()

    def handle_error(self, request, client_address):
        pass  # resets, drips cut off by the client: expected

    def heartbeat(self, stop):
        """Records when this process was not scheduled for over 20 ms (a
        loaded machine): its timestamps are unreliable around then."""
        while not stop.is_set():
            t0 = time.time()
            time.sleep(0.01)
            late = time.time() - t0 - 0.01
            if late > 0.02:
                with self.lock:
                    self.stalls.append((t0, time.time()))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        start = time.time()
        host = (self.headers.get("Host") or "").split(":")[0].lower()
        path = urllib.parse.urlsplit(self.path).path
        status = 0
        try:
            status = self.serve(host, path)
        except (OSError, http.client.HTTPException):
            status = status or -1
            self.close_connection = True
        finally:
            with self.server.lock:
                self.server.log.append((start, time.time(), host, path,
                                        status))

    def send(self, status, body, ctype="text/html", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        return status

    def robots(self, host):
        c = self.server.content
        port = c.port
        if host == ROBOTS:
            return self.send(200, c.huge_robots, "text/plain")
        lines = ["User-agent: *", f"Disallow: {FORBIDDEN}"]
        if host == SITEMAP:
            lines += [f"Sitemap: http://{SITEMAP}:{port}/sm/{n}.xml"
                      for n in range(4)]
        return self.send(200, ("\n".join(lines) + "\n").encode(),
                         "text/plain")

    def serve(self, host, path):
        c = self.server.content
        if host.endswith(".test") and not host.endswith(".soak.test"):
            return self.testweb(host, path)
        if path == "/robots.txt":
            return self.robots(host)
        forbid = [f"{FORBIDDEN}{host.split('.')[0]}"]
        if host == BOMB:
            if path.startswith("/bomb/"):
                return self.send(200, c.bomb, "text/html",
                                 [("Content-Encoding", "gzip")])
            return self.send(200, page("bombs", [f"/bomb/{i}" for i in
                                                 range(8)] + forbid))
        if host == DRIP:
            if path.startswith("/drip/"):
                return self.drip()
            return self.send(200, page("drips", [f"/drip/{i}" for i in
                                                 range(4)] + forbid))
        if host == ENDLESS:
            if path.startswith("/endless/"):
                return self.endless()
            return self.send(200, page("endless", [f"/endless/{i}" for i in
                                                   range(4)] + forbid))
        if host == LINKS:
            if path.startswith("/big/"):
                return self.send(200, c.link_pages[int(path[5:] or 0) % 2])
            if path == "/":
                return self.send(200, page("links", ["/big/0", "/big/1"]))
            return self.send(200, page("leaf " + path))
        if host == ROBOTS:
            if path == "/":
                links = [f"/x{i}/a" for i in range(0, 40_000, 1000)]
                links += [f"/x{c.huge_obeyed + 10 + i}/b" for i in range(5)]
                links += [f"/ok/{i}" for i in range(20)] + forbid
                return self.send(200, page("huge robots", links))
            return self.send(200, page("robots leaf " + path))
        if host == SITEMAP:
            m = re.fullmatch(r"/sm/(\d)\.xml", path)
            if m:
                return self.send(200, c.sitemaps[int(m.group(1))],
                                 "application/xml")
            return self.send(200, page("sitemap leaf " + path))
        if host == FLAKY:
            return self.flaky(path, forbid)
        if host == ACK:
            return self.send(200, page("ack " + path))
        return self.send(404, b"no such host")

    def testweb(self, host, path):
        if path == "/robots.txt":
            port = self.server.content.port
            body = (f"User-agent: *\nDisallow: {TESTWEB_DISALLOW}\n"
                    f"Sitemap: http://{host}:{port}/sitemap.xml\n").encode()
            return self.send(200, body, "text/plain")
        conn = http.client.HTTPConnection("127.0.0.1", self.server.testweb_port,
                                          timeout=30)
        try:
            headers = {"Host": self.headers.get("Host", host)}
            inm = self.headers.get("If-None-Match")
            if inm:
                headers["If-None-Match"] = inm
            conn.request("GET", self.path, headers=headers)
            r = conn.getresponse()
            body = r.read()
            keep = [(k, v) for k, v in r.getheaders()
                    if k.lower() in ("etag", "last-modified")]
            ctype = r.getheader("Content-Type", "text/html")
            if r.status == 304:
                self.send_response(304)
                for k, v in keep:
                    self.send_header(k, v)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return 304
            return self.send(r.status, body, ctype, keep)
        finally:
            conn.close()

    def drip(self):
        # Announces 1 MB, then one byte every 0.2 s for at most 60 s.
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", "1000000")
        self.end_headers()
        self.wfile.flush()
        for _ in range(300):
            self.wfile.write(b" ")
            self.wfile.flush()
            time.sleep(0.2)
        self.close_connection = True
        return 200

    def endless(self):
        # Chunked, never ending (until the client goes or 2 GB were sent).
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"<p>" + b"x" * 65530 + b"</p>"
        frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
        for _ in range(2 ** 31 // len(chunk)):
            self.wfile.write(frame)
        self.close_connection = True
        return 200

    def flaky(self, path, forbid):
        # A 60 s cycle: 20 s fine, 10 s of 503, 10 s of resets, 10 s of
        # stalls (15 s before answering), 10 s of 500.
        phase = (time.time() - self.server.t0) % 60
        links = [f"/f/{i}" for i in range(40)] + forbid
        if phase < 20:
            return self.send(200, page("flaky " + path, links))
        if phase < 30:
            return self.send(503, b"busy")
        if phase < 40:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.close_connection = True
            self.connection.close()
            return RESET
        if phase < 50:
            # 15 s before answering; a client that gives up first is seen
            # going (its end is when it closed, for the in-flight count).
            for _ in range(150):
                r, _, _ = select.select([self.connection], [], [], 0.1)
                if r and not self.connection.recv(1, socket.MSG_PEEK):
                    self.close_connection = True
                    return GAVE_UP
            return self.send(200, page("flaky slow " + path, links))
        return self.send(500, b"oops")


# ---------------------------------------------------------------------------
# The daemon.

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def page_status(port, url, tries=5):
    """The HTTP status of `/page?url=URL`; a request that times out (a
    daemon starved of CPU, still recovering) is asked again, `tries` times
    in all, before the timeout is raised."""
    q = "/page?url=" + urllib.parse.quote(url, safe="")
    for attempt in range(tries):
        try:
            return http_json(port, "GET", q)[0]
        except TimeoutError:
            if attempt == tries - 1:
                raise


def http_json(port, method, target, body=None, timeout=5.0):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {}
        if body is not None:
            headers["Content-Type"] = "application/json"
        conn.request(method, target, body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        try:
            return r.status, json.loads(data)
        except ValueError:
            return r.status, None
    finally:
        conn.close()


class Daemon:
    def __init__(self, args, work, front_port, testweb_hosts):
        self.args = args
        self.work = work
        self.status_port = free_port()
        self.front_port = front_port
        self.conf = os.path.join(work, "freshd.toml")
        self.seeds = os.path.join(work, "seeds.txt")
        hosts = testweb_hosts + list(HOSTILE)
        with open(self.seeds, "w") as f:
            for h in hosts:
                f.write(f"http://{h}:{front_port}/\n")
        self.resolve = ", ".join(f'"{h}" = "127.0.0.1"' for h in hosts)
        self.rate = args.rate
        self.write_config()
        self.proc = None
        self.log_path = os.path.join(work, "freshd.log")
        self.log = open(self.log_path, "ab")
        self.starts = []  # wall time of each start

    def config_text(self):
        ds = self.args.day_seconds
        scale = ds / 86400
        return f"""[crawler]
seeds = "{self.seeds}"
scope = "seed-hosts"
max_urls_per_host = {self.args.max_urls_per_host}
[budget]
rate = {self.rate}
burst = 10
[politeness]
min_delay = "{self.args.min_delay}s"
max_in_flight_per_host = {self.args.max_in_flight}
per_ip = false
backoff_initial = "2s"
backoff_max = "20s"
robots_cache = "{ds}s"
[fetch]
timeout = "10s"
connect_timeout = "2s"
max_body_bytes = "8MiB"
max_decompressed_bytes = "16MiB"
max_connections = 64
allow_private_networks = true
resolve = {{ {self.resolve} }}
[sched]
min_interval = "{60 * scale:.6f}s"
max_interval = "{90 * ds}s"
prior_change_interval = "{ds}s"
[store]
path = "{self.work}/db"
sync_interval = "1s"
warc_dir = "{self.work}/warc"
warc_rotate = "64MiB"
[status]
listen = "127.0.0.1:{self.status_port}"
[log]
level = "info"
"""

    def write_config(self, text=None):
        tmp = self.conf + ".tmp"
        with open(tmp, "w") as f:
            f.write(text if text is not None else self.config_text())
        os.replace(tmp, self.conf)

    def start(self):
        self.proc = subprocess.Popen(
            [self.args.freshd, "run", "--config", self.conf],
            stdout=self.log, stderr=self.log)
        self.starts.append(time.time())
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"freshd exited {self.proc.returncode} "
                                   f"at start; see {self.log_path}")
            try:
                st, j = http_json(self.status_port, "GET", "/status", timeout=2)
                # While it restores the store, /status answers 200 with
                # state "recovering" and every other route 503: the daemon
                # has started once the state is something else.
                if st == 200 and j.get("state") != "recovering":
                    return j
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("freshd's status endpoint did not come up")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def rss_kb(self):
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            return None
        return None

    def kill(self, sig):
        self.proc.send_signal(sig)


RESTORE_RE = re.compile(
    r"(\d+) pages expected, (\d+) pages restored \((\d+) reset to never "
    r"fetched\), (\d+) lost; (\d+) corrupt records skipped")


def restore_lines(log_path):
    with open(log_path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    return [tuple(int(x) for x in m.groups()) for m in RESTORE_RE.finditer(text)]


# ---------------------------------------------------------------------------
# Analysis.

def politeness(log, kills, stalls, min_delay, max_in_flight, tol):
    """Per host: starts spaced >= min_delay (within one daemon life and
    across restarts, reported apart), and open requests <= max_in_flight
    (a request open at a SIGKILL is taken to end there: its handler may
    go on writing to a dead socket). Timestamps are the front server's, so
    `tol` covers its thread scheduling; a close pair of starts within
    min_delay of a stall of the front server's process (see heartbeat) is
    counted apart: the server read both requests late, their spacing on
    the wire is not known."""
    def near_stall(a, b):
        return any(s0 < b and s1 > a - min_delay for s0, s1 in stalls)

    by_host = {}
    for start, end, host, path, status in log:
        by_host.setdefault(host, []).append((start, end, path, status))
    kills = sorted(kills)

    def life(t):  # index of the daemon life a request started in
        lo = 0
        for k in kills:
            if t >= k:
                lo += 1
        return lo

    spacing_violations, cross_restart_close, inflight_violations = [], [], []
    transport_retries, during_stall = [], []
    min_gap = {}
    max_open = {}
    for host, reqs in by_host.items():
        reqs.sort()
        gaps = []
        for (a, _, pa, sa), (b, _, pb, _) in zip(reqs, reqs[1:]):
            gap = b - a
            if gap < min_delay - tol and sa == RESET and pa == pb:
                # The connection was reset before any response: libcurl
                # sends the request again on a fresh connection at once
                # (its retry of a dead reused connection), one fetch.
                transport_retries.append((host, pa, gap))
            elif life(a) == life(b):
                gaps.append(gap)
                if gap < min_delay - tol:
                    if near_stall(a, b):
                        during_stall.append((host, pa, pb, gap))
                    else:
                        spacing_violations.append((host, pa, pb, gap))
            elif gap < min_delay - tol:
                cross_restart_close.append((host, gap))
        min_gap[host] = min(gaps) if gaps else None
        events = []
        for a, e, _, _ in reqs:
            k = next((k for k in kills if k >= a), None)
            if k is not None and e > k:
                e = k
            e = max(a, e - tol)
            events.append((a, 1))
            events.append((e, -1))
        events.sort(key=lambda x: (x[0], x[1]))  # ends before starts at ties
        open_now, top = 0, 0
        for t, d in events:
            open_now += d
            if open_now > top:
                top = open_now
            if open_now > max_in_flight:
                inflight_violations.append((host, t, open_now))
        max_open[host] = top
    return {"spacing_violations": spacing_violations,
            "cross_restart_close": cross_restart_close,
            "inflight_violations": inflight_violations,
            "transport_retries": transport_retries,
            "during_stall": during_stall,
            "min_gap_s": min_gap, "max_open": max_open}


def quantile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else None


# ---------------------------------------------------------------------------

def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--minutes", type=float, default=30)
    p.add_argument("--freshd", default="build/freshd")
    p.add_argument("--web", default="sim/webs/noisy.toml")
    p.add_argument("--day-seconds", type=float, default=15,
                   help="wall seconds per virtual day (30 min = 120 days)")
    p.add_argument("--rate", type=float, default=20, help="pages/s budget")
    p.add_argument("--min-delay", type=float, default=0.25)
    p.add_argument("--max-in-flight", type=int, default=2)
    p.add_argument("--max-urls-per-host", type=int, default=20000)
    p.add_argument("--chaos-every", type=float, default=30,
                   help="mean seconds between chaos events")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--tolerance", type=float, default=0.02,
                   help="timing slack of the front server's timestamps (s)")
    p.add_argument("--tmpfs", default="/dev/shm")
    p.add_argument("--keep", action="store_true", help="keep the work dir")
    p.add_argument("--json", help="write the figures here too")
    args = p.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="freshd-soak-", dir=args.tmpfs)
    print(f"soak: {args.minutes} min, work dir {work}, load "
          f"{os.getloadavg()[0]:.2f}", flush=True)

    tw = subprocess.Popen(
        [args.freshd, "testweb", "--web", args.web, "--listen",
         "127.0.0.1:0", "--day-seconds", str(args.day_seconds),
         "--threads", "2", "--seed", str(args.seed)],
        stdout=subprocess.PIPE, stderr=open(os.path.join(work, "testweb.log"),
                                            "wb"))
    info = json.loads(tw.stdout.readline())
    tw_hosts = [f"h{i}.test" for i in range(info["hosts"])]
    front = Front(info["port"])
    front.content = Content(front.server_address[1])
    print(f"soak: test web {args.web} ({info['pages']} pages, "
          f"{info['hosts']} hosts, {args.day_seconds} s a day) and "
          f"{len(HOSTILE)} hostile hosts (content made in "
          f"{front.content.seconds:.1f} s; huge robots.txt obeyed up to "
          f"/x{front.content.huge_obeyed}/)", flush=True)
    threading.Thread(target=front.serve_forever, daemon=True).start()
    hb_stop = threading.Event()
    threading.Thread(target=front.heartbeat, args=(hb_stop,),
                     daemon=True).start()
    d = Daemon(args, work, front.server_address[1], tw_hosts)

    events = []  # (time, kind, detail)
    kills = []  # wall times of SIGKILLs
    acked = []  # URLs whose POST /signal got 200
    signal_errors = 0
    ack_checks = []  # (time, acked so far, missing)
    restores = []  # (pages_known before the kill, restore line)
    rss = []  # (wall time, seconds since start of this life, kB)
    status_fail = 0
    failures = []
    t_begin = time.time()
    t_end = t_begin + 60 * args.minutes
    try:
        d.start()
        next_chaos = time.time() + rng.expovariate(1 / args.chaos_every)
        last_status = None
        n = 0
        while time.time() < t_end:
            now = time.time()
            # A write the daemon must not lose: a new URL announced by
            # POST /signal (answered once committed), and a hint on a page.
            n += 1
            url = f"http://{ACK}:{d.front_port}/a/{n}"
            body = json.dumps({"urls": [url]})
            try:
                st, j = http_json(d.status_port, "POST", "/signal", body)
                if st == 200:
                    acked.append(url)
                else:
                    signal_errors += 1
            except OSError:
                pass  # not acknowledged: nothing promised
            try:
                st, j = http_json(d.status_port, "GET", "/status")
                if st == 200:
                    last_status = j
            except OSError:
                status_fail += 1
            r = d.rss_kb()
            if r is not None:
                rss.append((now, now - d.starts[-1], r))
            if now >= next_chaos:
                roll = rng.random()
                if roll < 0.4:
                    known = last_status["pages_known"] if last_status else None
                    d.kill(signal.SIGKILL)
                    d.proc.wait()
                    kills.append(time.time())
                    before = len(restore_lines(d.log_path))
                    d.start()
                    lines = restore_lines(d.log_path)
                    rl = lines[before] if len(lines) > before else None
                    restores.append((known, rl))
                    # Every acknowledged write is there.
                    missing = 0
                    for u in acked:
                        if page_status(d.status_port, u) != 200:
                            missing += 1
                    ack_checks.append((time.time(), len(acked), missing))
                    events.append((now, "SIGKILL",
                                   f"known {known}; restore {rl}; "
                                   f"{len(acked)} acked, {missing} missing"))
                elif roll < 0.7:
                    pause = rng.uniform(2, 15)
                    d.kill(signal.SIGSTOP)
                    time.sleep(pause)
                    d.kill(signal.SIGCONT)
                    events.append((now, "SIGSTOP", f"{pause:.1f} s"))
                else:
                    bad = rng.random() < 0.4
                    if bad:
                        d.write_config("[a]\nb = " + "[" * 10000 +
                                       "]" * 10000 + "\n")
                    else:
                        d.rate = args.rate * rng.choice([0.5, 1, 1.5])
                        d.write_config()
                    d.kill(signal.SIGHUP)
                    time.sleep(1.5)
                    if bad:
                        d.write_config()
                    if not d.alive():
                        failures.append(f"daemon died after SIGHUP "
                                        f"({'bad' if bad else 'good'} config)")
                        d.start()
                    events.append((now, "SIGHUP", "bad config" if bad
                                   else f"rate {d.rate}"))
                print(f"soak: +{now - t_begin:6.0f} s {events[-1][1]} "
                      f"{events[-1][2]}", flush=True)
                next_chaos = time.time() + rng.expovariate(1 / args.chaos_every)
            if not d.alive():
                failures.append(f"daemon exited {d.proc.returncode} unasked")
                d.start()
            time.sleep(max(0.0, 1.0 - (time.time() - now)))
        # A last check of every acknowledged write, then a clean stop.
        missing = 0
        for u in acked:
            missing += page_status(d.status_port, u) != 200
        ack_checks.append((time.time(), len(acked), missing))
        try:
            st, final_status = http_json(d.status_port, "GET", "/status")
        except OSError:
            final_status = None
        d.kill(signal.SIGTERM)
        rc = d.proc.wait(timeout=60)
        if rc != 0:
            failures.append(f"SIGTERM: exit {rc}")
    finally:
        if d.proc is not None and d.proc.poll() is None:
            d.proc.kill()
        tw.send_signal(signal.SIGTERM)
        tw.wait(timeout=30)
        front.shutdown()
        hb_stop.set()
    wall = time.time() - t_begin
    time.sleep(1)  # let handlers writing to closed sockets finish
    with front.lock:
        log = list(front.log)
        stalls = list(front.stalls)

    # --- the figures -------------------------------------------------------
    pol = politeness(log, kills, stalls, args.min_delay, args.max_in_flight,
                     args.tolerance)
    robots_viol = [(h, pth) for _, _, h, pth, _ in log
                   if is_disallowed(h, pth, front.content.huge_obeyed)]
    by_host = {}
    for _, _, h, pth, stt in log:
        by_host[h] = by_host.get(h, 0) + 1
    q = (t_end - t_begin) / 4
    first = [k for t, _, k in rss if t < t_begin + q]
    last = [k for t, _, k in rss if t >= t_end - q]
    # Memory after a restart is lower; compare lives' settled samples too.
    first_s = [k for t, age, k in rss if t < t_begin + q and age > 60]
    last_s = [k for t, age, k in rss if t >= t_end - q and age > 60]
    lost_acks = max((m for _, _, m in ack_checks), default=0)
    restore_lost = sum(rl[3] for _, rl in restores if rl)
    restore_missing = sum(1 for _, rl in restores if rl is None)
    restore_short = [(k, rl) for k, rl in restores
                     if rl and k is not None and rl[1] < rl[0]]
    kinds = {}
    for _, k, detail in events:
        key = k + (" (bad config)" if detail == "bad config" else "")
        kinds[key] = kinds.get(key, 0) + 1

    def med(xs):
        return statistics.median(xs) / 1024 if xs else float("nan")

    fig = {
        "minutes": wall / 60,
        "virtual_days": wall / args.day_seconds,
        "requests": len(log),
        "requests_by_host": by_host,
        "pages_fetched_total_last_life": final_status.get(
            "pages_fetched_total") if final_status else None,
        "pages_known_end": final_status.get("pages_known")
        if final_status else None,
        "events": kinds,
        "acked_signals": len(acked),
        "signal_errors": signal_errors,
        "lost_acknowledged_writes": lost_acks,
        "restores": [{"known_before_kill": k, "expected": rl and rl[0],
                      "restored": rl and rl[1], "lost": rl and rl[3],
                      "corrupt": rl and rl[4]} for k, rl in restores],
        "restore_pages_lost": restore_lost,
        "spacing_violations": len(pol["spacing_violations"]),
        "inflight_violations": len(pol["inflight_violations"]),
        "cross_restart_spacing_below_min_delay": len(
            pol["cross_restart_close"]),
        "transport_retries_after_reset": len(pol["transport_retries"]),
        "close_starts_during_harness_stalls": len(pol["during_stall"]),
        "harness_stalls": {"count": len(stalls), "max_s": max(
            (b - a for a, b in stalls), default=0)},
        "resets_sent": sum(1 for r in log if r[4] == RESET),
        "min_start_gap_s": {h: g for h, g in pol["min_gap_s"].items()},
        "max_open_per_host": max(pol["max_open"].values(), default=0),
        "robots_violations": len(robots_viol),
        "rss_mb_first_quarter": {"median": med(first),
                                 "max": max(first, default=0) / 1024},
        "rss_mb_last_quarter": {"median": med(last),
                                "max": max(last, default=0) / 1024},
        "rss_mb_settled_first_quarter": med(first_s),
        "rss_mb_settled_last_quarter": med(last_s),
        "status_poll_failures": status_fail,
        "failures": failures,
    }
    if lost_acks:
        failures.append(f"{lost_acks} acknowledged writes lost")
    if restore_lost:
        failures.append(f"{restore_lost} pages lost over the restarts")
    if restore_missing:
        failures.append(f"{restore_missing} restarts without a restore line")
    if restore_short:
        failures.append(f"restores short of expected: {restore_short}")
    if pol["spacing_violations"]:
        failures.append(f"spacing violations: "
                        f"{pol['spacing_violations'][:5]}")
    if pol["inflight_violations"]:
        failures.append(f"in-flight violations: "
                        f"{pol['inflight_violations'][:5]}")
    if robots_viol:
        failures.append(f"robots violations: {robots_viol[:5]}")
    if last and first and max(last) > 1.5 * max(first) + 64 * 1024:
        failures.append(f"RSS grew: max {max(first)} kB in the first "
                        f"quarter, {max(last)} kB in the last")
    fig["failures"] = failures
    print(json.dumps(fig, indent=1, default=str))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(fig, f, indent=1, default=str)
    if args.keep:
        with open(os.path.join(work, "requests.tsv"), "w") as f:
            for r in sorted(log):
                f.write("\t".join(str(x) for x in r) + "\n")
        print(f"soak: kept {work} (requests.tsv: start, end, host, path, "
              f"status)")
    else:
        shutil.rmtree(work, ignore_errors=True)
    print("soak: " + ("PASS" if not failures else "FAIL: " +
                      "; ".join(failures)))
    return 0 if not failures else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print(f"soak: {e}", file=sys.stderr)
        sys.exit(2)
