"""freshd_results: the program behind docs/RESULTS.md (scripts/results.py).

Modules: study (runner, webs, Markdown), plan (every run, submitted up
front), item_* (one per claim of the papers), stats (pure helpers),
report (arguments, header, summary).
"""
