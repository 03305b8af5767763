#!/usr/bin/env python3
"""Build a change trace (CSV) from the history of a git repository.

Each file of the repository that the path globs select is one page; each
commit on the first-parent history of the published branch that touches the
file is one change of that page, at the commit's committer date. A file
added inside the window is a `create`, a file removed is a `delete`, and a
rename is a `delete` of the old page plus a `create` of the new one (rename
detection is off). A merge commit on the published branch counts as one
change of every file it changes relative to its first parent: the side
branch's own commits are not published one by one. Files present at the
start of the window that no commit in the window touches get one row with an
empty time: a page that exists throughout and never changes.

The output is the trace format `freshd sim --trace` reads: a header
`url,time,event`, then one row per event; time is Unix seconds (UTC),
event is change, create or delete. Rows stream out as `git log` produces
them (oldest first); only the set of live paths is held in memory.

Standard library and the `git` command only. Exit status: 0 on success,
2 on a usage error or a git failure.
"""

import argparse
import csv
import datetime
import fnmatch
import os
import posixpath
import re
import subprocess
import sys

URL_PLACEHOLDERS = """\
URL placeholders (--url-template), after --strip-prefix and --strip-suffix:
  {path}       the file's path, e.g. docs/guide/intro.md
  {path_noext} the path without its last extension: docs/guide/intro
  {dir}        the directory part: docs/guide (empty at the top level)
  {name}       the file name: intro.md
  {stem}       the file name without its last extension: intro
  {ext}        the last extension without the dot: md
--strip-prefix P removes a leading P from the path first (e.g. 'docs/');
--strip-suffix S (repeatable; the first that matches wins) removes a
trailing S from the path after that, e.g. --strip-suffix /index.md maps
docs/guide/index.md to docs/guide. Two files mapped to the same URL are
one page: the events one commit makes on one URL are one row (two files
of one page changed are one change; a file moved to a path with the same
URL is a change only if its content changed). A commit that changes only
a file's mode is no change.

Globs (--include, --exclude; repeatable) are matched with fnmatch against
the whole path from the repository root; '*' also matches '/'. A file is a
page when it matches some --include (default: every file) and no
--exclude.

Times: --since and --until take a date (YYYY-MM-DD, taken as 00:00 UTC),
an RFC 3339 time or Unix seconds. The window is [since, until). The files
present at the window's start are those of the last first-parent commit
dated before --since. A commit in the window dated before --since (a
committer clock out of order) is counted at --since.

Publication lag: a commit is published some time after it is made (a CI
build, a release train, a nightly deploy). The trace gives commit times,
not publication times; --lag-seconds adds a fixed lag to every time.
"""


def parse_time(text):
    """Unix seconds from a date, an RFC 3339 time or a number."""
    text = text.strip()
    if re.fullmatch(r"-?\d+(\.\d+)?", text):
        return int(float(text))
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        text += "T00:00:00+00:00"
    text = re.sub(r"[zZ]$", "+00:00", text)
    try:
        when = datetime.datetime.fromisoformat(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a time: {text!r}") from error
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return int(when.timestamp())


class UrlMapper:
    """Maps a repository path to a page URL."""

    def __init__(self, template, strip_prefix="", strip_suffixes=()):
        self.template = template
        self.strip_prefix = strip_prefix
        self.strip_suffixes = list(strip_suffixes)
        try:
            self.url("a/b.c")
        except (KeyError, IndexError, ValueError) as error:
            raise ValueError(f"bad --url-template {template!r}: {error}") from error

    def url(self, path):
        if self.strip_prefix and path.startswith(self.strip_prefix):
            path = path[len(self.strip_prefix):]
        for suffix in self.strip_suffixes:
            if suffix and path.endswith(suffix):
                path = path[: -len(suffix)]
                break
        directory, name = posixpath.split(path)
        stem, ext = posixpath.splitext(name)
        path_noext = posixpath.join(directory, stem) if directory else stem
        return self.template.format(
            path=path,
            path_noext=path_noext,
            dir=directory,
            name=name,
            stem=stem,
            ext=ext[1:],
        )


class PathFilter:
    def __init__(self, includes, excludes):
        self.includes = includes or ["*"]
        self.excludes = excludes or []

    def __call__(self, path):
        return any(fnmatch.fnmatchcase(path, g) for g in self.includes) and not any(
            fnmatch.fnmatchcase(path, g) for g in self.excludes
        )


def run_git(repo, args):
    return subprocess.run(
        ["git", "-C", repo] + args,
        check=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ).stdout


def nul_tokens(stream, chunk_size=1 << 16):
    """Yields the NUL-terminated tokens of a byte stream as they arrive."""
    pending = b""
    while True:
        chunk = stream.read(chunk_size)
        if not chunk:
            break
        pending += chunk
        parts = pending.split(b"\0")
        pending = parts.pop()
        for part in parts:
            yield part
    if pending:
        yield pending


HEADER = re.compile(rb"^\n?\x01([0-9a-f]{40,64}) (-?\d+)$")


def commits(repo, revision_range, all_commits=False):
    """Yields (commit, committer time, [(status, old blob, new blob, path)])
    oldest first along the first-parent history, merges diffed against their
    first parent. With all_commits, every commit of the range instead, each
    at its own committer date, merges without a diff."""
    history = (
        ["--date-order", "--diff-merges=off"]
        if all_commits
        else ["--first-parent", "--diff-merges=first-parent"]
    )
    command = [
        "git", "-C", repo, "-c", "core.quotepath=off", "log", "--reverse",
        *history, "--no-renames", "--no-ext-diff", "-z",
        "--no-abbrev", "--format=%x01%H %ct", "--raw", revision_range, "--",
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE)
    stopped_early = True
    try:
        current = None
        status = None
        for token in nul_tokens(process.stdout):
            if status is not None:
                current[2].append(status + (os.fsdecode(token),))
                status = None
                continue
            header = HEADER.match(token)
            if header:
                if current is not None:
                    yield current
                current = (header.group(1).decode(), int(header.group(2)), [])
                continue
            token = token.strip(b"\n")
            if not token:
                continue
            if current is None:
                raise RuntimeError(f"unexpected git log output: {token!r}")
            # ":oldmode newmode oldblob newblob status"
            fields = token.decode().split()
            if len(fields) != 5 or not fields[0].startswith(":"):
                raise RuntimeError(f"unexpected git log output: {token!r}")
            status = (fields[4][:1], fields[2], fields[3])
        if current is not None:
            yield current
        stopped_early = False
    finally:
        process.stdout.close()
        if stopped_early and process.poll() is None:
            process.kill()
        process.wait()
    if not stopped_early and process.returncode != 0:
        raise subprocess.CalledProcessError(process.returncode, command)


def files_at(repo, commit):
    """The file paths in a commit's tree."""
    output = run_git(
        repo, ["-c", "core.quotepath=off", "ls-tree", "-r", "-z", "--name-only", commit]
    )
    return [os.fsdecode(p) for p in output.split(b"\0") if p]


def merge_events(entries):
    """The one event (or None) of a URL that one commit's file entries
    [(event, old blob, new blob)] map to. A file moved to a path with the
    same URL is a change of that page if its content changed and nothing if
    it did not; a mode change alone is nothing."""
    kinds = {event for event, _, _ in entries}
    if kinds == {"create"}:
        return "create"
    if kinds == {"delete"}:
        return "delete"
    gone = sorted(old for event, old, _ in entries if event != "create")
    came = sorted(new for event, _, new in entries if event != "delete")
    return None if gone == came else "change"


def build_trace(repo, branch, keep, mapper, since, until, out, lag=0, all_commits=False):
    """Writes the trace to `out` (a text stream). Returns a summary dict."""
    run_git(repo, ["rev-parse", "--verify", "--quiet", branch + "^{commit}"])
    start_commit = None
    if since is not None:
        start_commit = (
            run_git(
                repo,
                ["rev-list", "--first-parent", "-1", f"--min-age={since - 1}", branch],
            )
            .decode()
            .strip()
            or None
        )
    live = set()
    if start_commit:
        live = {p for p in files_at(repo, start_commit) if keep(p)}
    initial = set(live)
    touched = set()  # URLs with a row
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["url", "time", "event"])
    summary = {"commits": 0, "rows": 0, "start_commit": start_commit, "last_commit": None}
    revision_range = f"{start_commit}..{branch}" if start_commit else branch
    for commit, when, changes in commits(repo, revision_range, all_commits):
        if until is not None and when >= until:
            if all_commits:
                continue  # dates are not monotone off the first-parent line
            break
        if since is not None and when < since:
            when = since
        summary["last_commit"] = commit
        events = {}  # url -> set of events in this commit, in first-seen order
        for status, old_blob, new_blob, path in changes:
            if not keep(path):
                continue
            if status == "A":
                event = "create"
                live.add(path)
            elif status == "D":
                event = "delete"
                live.discard(path)
            else:  # M, T (type change), U
                event = "change"
            events.setdefault(mapper.url(path), []).append((event, old_blob, new_blob))
        rows = 0
        for url, entries in events.items():
            event = merge_events(entries)
            if event:
                writer.writerow([url, when + lag, event])
                touched.add(url)
                rows += 1
        summary["rows"] += rows
        summary["commits"] += bool(rows)
    for url in sorted({mapper.url(path) for path in initial} - touched):
        writer.writerow([url, "", "change"])
        summary["rows"] += 1
    summary["pages_at_end"] = len(live)
    return summary


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] + " " + __doc__.split("\n\n")[1],
        epilog=URL_PLACEHOLDERS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("repo", help="path of the repository (work tree or bare git dir)")
    parser.add_argument("--branch", default="HEAD", help="the published branch (default HEAD)")
    parser.add_argument("--include", action="append", default=[], metavar="GLOB")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB")
    parser.add_argument("--since", type=parse_time, help="window start (inclusive)")
    parser.add_argument("--until", type=parse_time, help="window end (exclusive)")
    parser.add_argument(
        "--url-template", default="{path}", help="URL of a file's page (see below)"
    )
    parser.add_argument("--strip-prefix", default="", metavar="P")
    parser.add_argument("--strip-suffix", action="append", default=[], metavar="S")
    parser.add_argument(
        "--lag-seconds", type=int, default=0, help="publication lag added to each time"
    )
    parser.add_argument(
        "--all-commits",
        action="store_true",
        help="for comparison only: every commit of the history (side branches"
        " too) at its own committer date, not what the published branch shows",
    )
    parser.add_argument("-o", "--output", help="output file (default stdout)")
    args = parser.parse_args(argv)
    try:
        mapper = UrlMapper(args.url_template, args.strip_prefix, args.strip_suffix)
    except ValueError as error:
        parser.error(str(error))
    keep = PathFilter(args.include, args.exclude)
    out = open(args.output, "w", newline="") if args.output else sys.stdout
    try:
        summary = build_trace(
            args.repo, args.branch, keep, mapper, args.since, args.until, out,
            args.lag_seconds, args.all_commits,
        )
    except subprocess.CalledProcessError as error:
        stderr = (error.stderr or b"").decode(errors="replace").strip()
        print(f"trace_from_git: git failed: {stderr or error}", file=sys.stderr)
        return 2
    finally:
        if args.output:
            out.close()
    print(
        f"trace_from_git: {summary['rows']} rows from {summary['commits']} commits"
        f" (start {summary['start_commit']}, last {summary['last_commit']})",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
