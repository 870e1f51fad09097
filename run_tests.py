#!/usr/bin/env python3
"""Run dynamo-aot-suite: ``python run_tests.py --help`` says how."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness.run.cli import main  # noqa: E402  (needs the path above)

if __name__ == "__main__":
    sys.exit(main())
