#!/usr/bin/env python3
"""Run dynamo-aot-suite's scenarios against the backends under test.

    python run_tests.py                          # eager, aot_eager, inductor
    python run_tests.py --backend my_pkg.mod:my_backend
    python run_tests.py -k LSTMTests             # only tests matching a pattern

Exit code: 0 when every test went as expected, 1 otherwise, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.abspath(__file__))


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", help="comma-separated backend specs: a registered name, "
                        "package.module:attr or path/to/file.py:attr (default: $DYNAMO_SUITE_BACKENDS "
                        "or eager,aot_eager,inductor)")
    parser.add_argument("-k", dest="patterns", action="append", default=[],
                        help="only run tests whose id contains this substring or glob (repeatable)")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per test")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.backend:
        os.environ["DYNAMO_SUITE_BACKENDS"] = args.backend
    sys.path.insert(0, ROOT)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("run_tests.py: torch is not installed; pip install -r requirements.txt -e .", file=sys.stderr)
        return 2
    from harness import BackendSpecError, ExpectationError, selected_backends

    try:
        selected_backends()
    except (BackendSpecError, ExpectationError) as error:
        print(f"run_tests.py: {error}", file=sys.stderr)
        return 2

    loader = unittest.TestLoader()
    loader.testNamePatterns = [p if "*" in p else f"*{p}*" for p in args.patterns] or None
    suite = loader.discover(os.path.join(ROOT, "test", "dynamo"), top_level_dir=ROOT)
    if suite.countTestCases() == 0:
        print("run_tests.py: no test matched", file=sys.stderr)
        return 2
    result = unittest.TextTestRunner(verbosity=2 if args.verbose else 1).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
