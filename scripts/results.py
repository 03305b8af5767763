#!/usr/bin/env python3
"""Regenerates docs/RESULTS.md from `freshd sim` runs (python3, standard
library only; runs from any directory).

Usage: scripts/results.py [-j N] [--seeds K] [--freshd PATH] [--out FILE]
                          [--quick] [--plots-from docs/RESULTS.md]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from freshd_results.report import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
