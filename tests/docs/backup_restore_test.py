#!/usr/bin/env python3
"""docs/operations.md's backup and restore blocks (marked `<!-- backup -->`
and `<!-- restore -->`) run as they are and lose nothing:

  1. machine A: a daemon crawls `freshd testweb` on loopback until its
     frontier is covered (a web whose pages do not change during the test,
     so its state then stands still); its pages and change feed are read;
  2. the backup block runs against A (its `systemctl stop` / `start` stop and
     start A's daemon; /var/lib/freshd is A's directory);
  3. the restore block runs against B, a second directory with the same
     config but its own status port and store path (the copy taken on A);
     `freshd store check` in it must pass (set -e);
  4. B's daemon restored every page A had (recovered.pages, pages_known) and
     serves the same change feed (the same newest event, every event).

`systemctl` and `chown` are shell functions here (the test runs no systemd
and has no freshd user); everything else is the page's text, with
/var/lib/freshd replaced by the machine's directory.

Usage: backup_restore_test.py --freshd PATH/TO/freshd
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
import time
import unittest
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
PAGE = ROOT / "docs" / "operations.md"
FRESHD = None


def block(text, mark):
    m = re.search(r"<!-- " + mark + r" -->\n```sh\n(.*?)```", text, re.S)
    if not m:
        raise AssertionError(f"docs/operations.md has no <!-- {mark} --> block")
    return m.group(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
        return r.read().decode()


def status_when(port, ok, timeout_s):
    deadline, last = time.time() + timeout_s, None
    while time.time() < deadline:
        try:
            s = json.loads(get(port, "/status"))
            if s.get("state") == "running":
                last = s
                if ok(s):
                    return s
        except OSError:
            pass
        time.sleep(0.3)
    return last


def all_changes(port):
    events, since = [], 0
    while True:
        lines = [json.loads(l) for l in get(port, f"/changes?since={since}&limit=10000").splitlines()]
        events += [e for e in lines if "seq" in e]
        cursor = lines[-1]
        since = cursor["next_cursor"]
        if not cursor["more"]:
            return events, cursor


SHELL = r'''
set -eu
systemctl() {
  case "$1" in
    stop)
      if [ -f "$MACHINE/freshd.pid" ]; then
        pid=$(cat "$MACHINE/freshd.pid"); rm -f "$MACHINE/freshd.pid"
        kill "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
      fi ;;
    start)
      freshd run --config "$MACHINE/freshd.toml" </dev/null >>"$MACHINE/freshd.log" 2>&1 &
      echo $! > "$MACHINE/freshd.pid" ;;
  esac
}
chown() { :; }
'''


class BackupRestoreTest(unittest.TestCase):
    def setUp(self):
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="backup_restore_"))
        # A day of 10^6 s: no page changes while the test runs.
        self.web = subprocess.Popen(
            [FRESHD, "testweb", "--web", str(ROOT / "sim/webs/uniform-small.toml"),
             "--listen", "127.0.0.1:0", "--day-seconds", "1000000"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.web_port = json.loads(self.web.stdout.readline())["port"]
        (self.dir / "seeds.txt").write_text(
            "".join(f"http://h{i}.test:{self.web_port}/\n" for i in range(4)))
        self.machines = {}
        for name in ("a", "b"):
            m = self.dir / name
            m.mkdir()
            port = free_port()
            (m / "freshd.toml").write_text(
                f'[crawler]\nseeds = "{self.dir}/seeds.txt"\n'
                "[budget]\nrate = 40\nburst = 5\n"
                '[politeness]\nmin_delay = "20ms"\nmax_crawl_delay = "0s"\n'
                "[fetch]\nallow_private_networks = true\nresolve = { "
                + ", ".join(f'"h{i}.test" = "127.0.0.1"' for i in range(4)) + " }\n"
                f'[store]\npath = "{m}/db"\n'
                f'[status]\nlisten = "127.0.0.1:{port}"\n')
            self.machines[name] = (m, port)

    def tearDown(self):
        for m, _ in self.machines.values():
            pid = m / "freshd.pid"
            if pid.exists():
                try:
                    os.kill(int(pid.read_text()), 9)
                except (ProcessLookupError, ValueError):
                    pass
        self.web.terminate()
        self.web.wait(timeout=30)
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_block(self, name, text):
        m, _ = self.machines[name]
        text = text.replace("/var/lib/freshd", str(m))
        # The restore block names a dated copy: the one the backup made.
        text = re.sub(r"freshd-store-\d{4}-\d{2}-\d{2}\.tar\.gz",
                      str(self.dir / "a" / "freshd-store-*.tar.gz"), text)
        text = text.replace("freshd-store-$(date +%F).tar.gz",
                            str(m / "freshd-store-$(date +%F).tar.gz"))
        env = dict(os.environ, MACHINE=str(m),
                   PATH=f"{pathlib.Path(FRESHD).parent}:{os.environ['PATH']}")
        r = subprocess.run(["bash", "-c", SHELL + text], cwd=m, env=env,
                           capture_output=True, text=True, timeout=120)
        log = (m / "freshd.log").read_text()[-3000:] if (m / "freshd.log").exists() else ""
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr + log)
        return r.stdout

    def test_backup_then_restore_elsewhere_loses_nothing(self):
        text = PAGE.read_text()
        backup, restore = block(text, "backup"), block(text, "restore")
        a, a_port = self.machines["a"]
        b, b_port = self.machines["b"]

        # A crawls until its frontier is covered and stands still.
        self.run_block("a", "systemctl start freshd\n")
        covered = status_when(
            a_port, lambda s: s["queue"]["new"] == 0 and s["pages_known"] >= 200, 90)
        self.assertIsNotNone(covered, (a / "freshd.log").read_text()[-2000:])
        self.assertEqual(covered["queue"]["new"], 0, covered)
        time.sleep(2)  # the last fetches' records committed
        before = json.loads(get(a_port, "/status"))
        events_before, cursor_before = all_changes(a_port)
        self.assertGreaterEqual(len(events_before), 200)

        # Back up on A (A is running again afterwards), restore on B.
        self.run_block("a", backup)
        self.assertEqual(len(list(a.glob("freshd-store-*.tar.gz"))), 1)
        self.assertIsNotNone(status_when(a_port, lambda s: True, 60))
        out = self.run_block("b", restore)
        self.assertNotIn("problem:", out)  # store check: no damage

        after = status_when(b_port, lambda s: True, 60)
        self.assertIsNotNone(after, (b / "freshd.log").read_text())
        self.assertGreaterEqual(after["recovered"]["pages"], before["pages_known"])
        self.assertGreaterEqual(after["pages_known"], before["pages_known"])
        events_after, cursor_after = all_changes(b_port)
        # Events committed between the reading and the stop are in the copy too.
        self.assertGreaterEqual(cursor_after["newest"], cursor_before["newest"])
        self.assertEqual([e["seq"] for e in events_after[: len(events_before)]],
                         [e["seq"] for e in events_before])
        self.assertEqual([(e["url"], e["kind"], e["text_hash"])
                          for e in events_after[: len(events_before)]],
                         [(e["url"], e["kind"], e["text_hash"]) for e in events_before])


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--freshd", required=True)
    args, rest = ap.parse_known_args()
    FRESHD = os.path.abspath(args.freshd)
    unittest.main(argv=[sys.argv[0]] + rest)
