"""Tests for scripts/trace_from_git.py on a repository the test makes itself."""

import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import trace_from_git  # noqa: E402


@unittest.skipIf(shutil.which("git") is None, "git is not installed")
class TraceFromGitTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="trace_from_git_")
        self.addCleanup(shutil.rmtree, self.dir)
        self.git("init", "-q", "-b", "main")

    def git(self, *args, when=None):
        env = dict(os.environ)
        env.update(
            GIT_AUTHOR_NAME="t",
            GIT_AUTHOR_EMAIL="t@example.org",
            GIT_COMMITTER_NAME="t",
            GIT_COMMITTER_EMAIL="t@example.org",
            GIT_CONFIG_NOSYSTEM="1",
            HOME=self.dir,
        )
        if when is not None:
            # The author date is deliberately different: the trace must use
            # the committer date.
            env["GIT_COMMITTER_DATE"] = f"@{when} +0000"
            env["GIT_AUTHOR_DATE"] = f"@{when - 500} +0000"
        return subprocess.run(
            ["git", "-C", self.dir] + list(args),
            check=True,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ).stdout.decode()

    def write(self, path, text):
        full = os.path.join(self.dir, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "a") as f:
            f.write(text + "\n")

    def commit(self, when, message="c"):
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message, when=when)

    def make_history(self):
        # Before the window: four files, one outside docs/.
        for path in ["docs/a.md", "docs/b.md", "docs/static.md", "other/x.txt"]:
            self.write(path, "v1")
        self.commit(1000)
        # In the window [2000, 8000).
        self.write("docs/a.md", "v2")
        self.write("docs/c.md", "v1")
        self.commit(2000)
        # A side branch with two commits, merged with a merge commit.
        self.git("checkout", "-q", "-b", "side")
        self.write("docs/b.md", "side 1")
        self.commit(2500)
        self.write("docs/b.md", "side 2")
        self.write("docs/a.md", "side 2")
        self.commit(2600)
        self.git("checkout", "-q", "main")
        self.git("mv", "docs/c.md", "docs/d.md")
        self.commit(3000, "rename c to d")
        self.git("merge", "-q", "--no-ff", "-m", "merge side", "side", when=4000)
        self.git("rm", "-q", "docs/b.md")
        self.write("other/x.txt", "v2")
        self.commit(5000, "delete b")
        self.write("docs/_draft.md", "v1")
        self.commit(6000, "excluded file only")
        # After the window.
        self.write("docs/a.md", "v3")
        self.commit(9000)

    def trace(self, *args):
        out = io.StringIO()
        err = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = trace_from_git.main([self.dir] + list(args))
        return code, out.getvalue(), err.getvalue()

    def test_exact_trace_of_a_small_history(self):
        self.make_history()
        code, out, _ = self.trace(
            "--branch", "main",
            "--include", "docs/*.md",
            "--exclude", "docs/_*",
            "--since", "2000", "--until", "8000",
            "--strip-prefix", "docs/",
            "--url-template", "https://docs.example.org/{path_noext}.html",
        )
        self.assertEqual(code, 0)
        self.assertEqual(
            out,
            "url,time,event\n"
            "https://docs.example.org/a.html,2000,change\n"
            "https://docs.example.org/c.html,2000,create\n"
            # The rename is a delete and a create.
            "https://docs.example.org/c.html,3000,delete\n"
            "https://docs.example.org/d.html,3000,create\n"
            # The merge is one change per file at the merge's committer
            # date; the side branch's own commits (2500, 2600) are not seen.
            "https://docs.example.org/a.html,4000,change\n"
            "https://docs.example.org/b.html,4000,change\n"
            "https://docs.example.org/b.html,5000,delete\n"
            # Present at the window's start, never changed: empty time.
            "https://docs.example.org/static.html,,change\n",
        )

    def test_without_a_window_every_file_is_created(self):
        self.make_history()
        code, out, _ = self.trace("--include", "other/*")
        self.assertEqual(code, 0)
        self.assertEqual(out, "url,time,event\nother/x.txt,1000,create\nother/x.txt,5000,change\n")

    def test_a_move_that_keeps_the_url_is_a_change_only_if_content_changed(self):
        for n in (1, 2, 3):
            self.write(f"pep-000{n}.txt", "v1")
        self.commit(1000)
        # Moved and edited: one change of the page.
        self.git("mv", "pep-0001.txt", "pep-0001.rst")
        self.write("pep-0001.rst", "v2")
        self.commit(2000)
        # Moved without edits, all three: no change of any page.
        os.makedirs(os.path.join(self.dir, "peps"))
        self.git("mv", "pep-0001.rst", "peps/pep-0001.rst")
        for n in (2, 3):
            self.git("mv", f"pep-000{n}.txt", f"peps/pep-000{n}.txt")
        self.commit(3000)
        # A mode change alone: no change.
        self.git("update-index", "--chmod=+x", "peps/pep-0002.txt")
        self.git("commit", "-q", "-m", "chmod", when=4000)
        self.write("peps/pep-0002.txt", "v2")
        self.commit(5000)
        code, out, _ = self.trace(
            "--since", "1500", "--url-template", "https://peps.example.org/{stem}/"
        )
        self.assertEqual(code, 0)
        self.assertEqual(
            out,
            "url,time,event\n"
            "https://peps.example.org/pep-0001/,2000,change\n"
            "https://peps.example.org/pep-0002/,5000,change\n"
            # Only moved: a page that never changes.
            "https://peps.example.org/pep-0003/,,change\n",
        )

    def test_strip_suffix_maps_an_index_file_to_its_directory(self):
        self.write("docs/guide/index.md", "v1")
        self.write("docs/guide/intro.md", "v1")
        self.commit(1000)
        code, out, _ = self.trace(
            "--strip-prefix", "docs/",
            "--strip-suffix", "/index.md", "--strip-suffix", ".md",
            "--url-template", "https://x.example/{path}/",
        )
        self.assertEqual(code, 0)
        self.assertEqual(
            out,
            "url,time,event\n"
            "https://x.example/guide/,1000,create\n"
            "https://x.example/guide/intro/,1000,create\n",
        )

    def test_rfc3339_window_and_output_file(self):
        self.make_history()
        path = os.path.join(self.dir, "out.csv")
        code, _, err = self.trace(
            "--include", "docs/a.md",
            "--since", "1970-01-01T00:50:00Z",  # 3000
            "--until", "1970-01-01T01:40:00+00:00",  # 6000
            "-o", path,
        )
        self.assertEqual(code, 0)
        with open(path) as f:
            self.assertEqual(f.read(), "url,time,event\ndocs/a.md,4000,change\n")
        self.assertIn("1 rows", err)

    def test_a_missing_branch_is_exit_2(self):
        self.make_history()
        code, out, err = self.trace("--branch", "no-such-branch")
        self.assertEqual(code, 2)
        self.assertIn("git failed", err)

    def test_bad_template_is_a_usage_error(self):
        with self.assertRaises(SystemExit) as raised, contextlib.redirect_stderr(io.StringIO()):
            trace_from_git.main([self.dir, "--url-template", "{nope}"])
        self.assertEqual(raised.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
