#!/bin/sh
# Rebuilds the real change histories of tests/data/traces/ from clones of
# their public repositories (issue #42). Usage:
#   scripts/real_traces.sh MIRRORS OUT
# where MIRRORS holds one git directory (bare or not) per site, named
#   python+peps php+doc-en rust-lang+rfcs rust-lang+rustc-dev-guide tldr-pages+tldr
# (e.g. `git clone --bare https://github.com/python/peps MIRRORS/python+peps`),
# and OUT receives <site>.csv.gz. Each trace is pinned to the commit named
# below; the window is 2023-01-01 to 2026-01-01 UTC (three years) for all.
# TRACE_ARGS (optional) is passed to every trace_from_git.py call, e.g.
# TRACE_ARGS=--all-commits for the comparison in docs/real-histories.md.
set -eu
MIRRORS=$1
OUT=$2
HERE=$(dirname "$0")
SINCE=2023-01-01
UNTIL=2026-01-01
mkdir -p "$OUT"

run() {
  site=$1
  shift
  python3 "$HERE/trace_from_git.py" --since $SINCE --until $UNTIL ${TRACE_ARGS:-} "$@" -o "$OUT/$site.csv"
  gzip -n -9 -f "$OUT/$site.csv"
}

# PEPs, https://peps.python.org/pep-NNNN/ (public domain / CC0-1.0). The
# files moved from the top level to peps/ in 2023 and from .txt to .rst:
# the URL is the stem, so a move is a change only if the text changed.
run peps "$MIRRORS/python+peps" --branch ba4deeb7969588d937da609008d05bb83a47b1ab \
  --include 'pep-[0-9]*.rst' --include 'pep-[0-9]*.txt' \
  --include 'peps/pep-[0-9]*.rst' --include 'peps/pep-[0-9]*.txt' \
  --url-template 'https://peps.python.org/{stem}/'

# The PHP manual, English (CC-BY-3.0). One page per DocBook file; the
# URL is a stand-in made from the path (php.net names a page by its xml:id).
run php-doc-en "$MIRRORS/php+doc-en" --branch 17ddeefd6592d09dd9abcf185f56b5befc7b2d6d \
  --include '*/*.xml' --exclude '.*' \
  --url-template 'https://www.php.net/manual/en/{path_noext}.php'

# Rust RFCs, https://rust-lang.github.io/rfcs/NNNN-name.html (MIT/Apache-2.0).
run rust-rfcs "$MIRRORS/rust-lang+rfcs" --branch 354518a8c9025f40be6f730452c1bfe71a12dc22 \
  --include 'text/*.md' --strip-prefix text/ \
  --url-template 'https://rust-lang.github.io/rfcs/{path_noext}.html'

# The rustc dev guide, https://rustc-dev-guide.rust-lang.org/ (MIT/Apache-2.0).
run rustc-dev-guide "$MIRRORS/rust-lang+rustc-dev-guide" \
  --branch 2cbf04342b4611800be07d4942db42be824cd899 \
  --include 'src/*.md' --exclude 'src/SUMMARY.md' --strip-prefix src/ \
  --url-template 'https://rustc-dev-guide.rust-lang.org/{path_noext}.html'

# tldr pages, English (CC-BY-4.0), as its web client serves them.
run tldr "$MIRRORS/tldr-pages+tldr" --branch 08e345f42639f67d99282813247ac670dc6e87cb \
  --include 'pages/*.md' --strip-prefix pages/ \
  --url-template 'https://tldr.inbrowser.app/pages/{path_noext}'
