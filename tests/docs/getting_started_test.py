#!/usr/bin/env python3
"""docs/getting-started.md cannot drift: its blocks marked
`<!-- walkthrough -->` run, in order, in one bash in a scratch directory,
against `freshd testweb` on loopback standing in for the reader's site, and
what they print is checked against what the page says they print.

The page's site, https://www.example.org/, becomes the test web's first host
(http://h0.test:PORT/, resolved to 127.0.0.1 by a [fetch] section the test
adds, with allow_private_networks: freshd refuses loopback otherwise), and
the status port 8931 a free one. Nothing else of the commands changes.

Usage: getting_started_test.py --freshd PATH/TO/freshd
Standard library only; 127.0.0.1 only.
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
PAGE = ROOT / "docs" / "getting-started.md"
FRESHD = None


def walkthrough_blocks(text):
    return re.findall(r"<!-- walkthrough -->\n```sh\n(.*?)```", text, re.S)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class GettingStartedTest(unittest.TestCase):
    def setUp(self):
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="getting_started_"))
        self.web = subprocess.Popen(
            [FRESHD, "testweb", "--web", str(ROOT / "sim/webs/uniform-small.toml"),
             "--listen", "127.0.0.1:0", "--day-seconds", "20"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.web_port = json.loads(self.web.stdout.readline())["port"]

    def tearDown(self):
        pid = self.dir / "freshd-walk" / "freshd.pid"
        if pid.exists():
            try:
                os.kill(int(pid.read_text()), 9)
            except (ProcessLookupError, ValueError):
                pass
        self.web.terminate()
        self.web.wait(timeout=30)
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_walkthrough_runs_and_prints_what_the_page_says(self):
        text = PAGE.read_text()
        blocks = walkthrough_blocks(text)
        self.assertEqual(len(blocks), 6, "the page's marked blocks changed: update this test")
        status_port = free_port()
        site = f"h0.test:{self.web_port}"
        script = ["set -eu"]
        for i, block in enumerate(blocks):
            b = block.replace("https://www.example.org/", f"http://{site}/")
            b = b.replace(r"^https://www\\.example\\.org/$", f"^http://h0\\\\.test:{self.web_port}/$")
            b = b.replace("127.0.0.1:8931", f"127.0.0.1:{status_port}")
            b = b.replace("\n[budget]\n", "\n[fetch]\nallow_private_networks = true\n"
                          'resolve = { "h0.test" = "127.0.0.1" }\n\n[budget]\n')
            script.append(f"echo '@@block {i}'")
            script.append(b)
        env = dict(os.environ, PATH=f"{pathlib.Path(FRESHD).parent}:{os.environ['PATH']}")
        r = subprocess.run(["bash", "-c", "\n".join(script)], cwd=self.dir, env=env,
                           capture_output=True, text=True, timeout=120)
        log = self.dir / "freshd-walk" / "freshd.log"
        detail = r.stdout + r.stderr + (log.read_text()[-3000:] if log.exists() else "")
        self.assertEqual(r.returncode, 0, detail)
        out = {}
        for part in r.stdout.split("@@block ")[1:]:
            n, _, body = part.partition("\n")
            out[int(n)] = body
        # 2: check-config says ok.
        self.assertEqual(out[0].strip(), "ok", detail)
        # 3: /status of a running daemon that crawled the site.
        status = json.loads(out[1])
        self.assertEqual(status["state"], "running", detail)
        self.assertGreater(status["pages_fetched_total"], 0, detail)
        self.assertGreater(status["pages_known"], status["pages_fetched_total"] - 1, detail)
        self.assertIn(status["limited_by"],
                      {"budget", "politeness", "idle", "network", "none"}, detail)
        self.assertEqual(set(status["queue"]), {"due", "failed", "new"}, detail)
        # 4: the status page.
        self.assertEqual(out[2].strip(), "<title>freshd</title>", detail)
        # 5: the change feed: the seed is the first new page.
        first = json.loads(out[3].splitlines()[0])
        self.assertEqual(first["seq"], 1, detail)
        self.assertEqual(first["kind"], "new", detail)
        self.assertTrue(first["url"].startswith(f"http://{site}/"), detail)
        # 6: the rule is in force after the reload and applies to the home page.
        self.assertEqual(json.loads(out[4]), [{"name": "home", "pages": 1}], detail)
        # 7: the daemon stopped.
        self.assertEqual(out[5].strip(), "", detail)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--freshd", required=True)
    args, rest = ap.parse_known_args()
    FRESHD = os.path.abspath(args.freshd)
    unittest.main(argv=[sys.argv[0]] + rest)
