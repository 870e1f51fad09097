#!/usr/bin/env python3
"""Where do the self-tests spend their time? Runs ``unittest discover`` like the README's test
command and prints the slowest test files, classes (setUpClass included) and tests.

    python bench/selftest_times.py                       # all of test/harness
    python bench/selftest_times.py -s test/proofs        # the proofs
    python bench/selftest_times.py -p 'test_faulty*.py'  # a subset, by file pattern
    python bench/selftest_times.py --json times.json     # also write every timing

Exit code: that of the tests (0 when they pass, 1 when one does not).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import time
import unittest
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class _TimedResult(unittest.TextTestResult):
    """Records each test's own time, and charges the gaps between tests (setUpClass,
    tearDownClass, module fixtures) to the class that starts or ends there."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.times: dict[str, float] = {}
        self.fixtures: dict[str, float] = defaultdict(float)
        self._last_stop = time.perf_counter()
        self._started = 0.0

    def startTest(self, test):
        now = time.perf_counter()
        self.fixtures[_class_of(test)] += now - self._last_stop
        self._started = now
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        self._last_stop = time.perf_counter()
        self.times[test.id()] = self._last_stop - self._started


def _class_of(test) -> str:
    return test.id().rsplit(".", 1)[0] if "." in test.id() else test.id()


def _without(suite: unittest.TestSuite, patterns: list[str]):
    """The tests of ``suite`` whose file name matches none of ``patterns``."""
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _without(item, patterns)
        elif not any(fnmatch.fnmatch(item.id().split(".")[2] + ".py", pattern) for pattern in patterns):
            yield item


def _print_top(title: str, totals: dict[str, float], top: int) -> None:
    print(f"\n{title}")
    for name, seconds in sorted(totals.items(), key=lambda item: -item[1])[:top]:
        print(f"  {seconds:8.1f} s  {name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-s", "--start", default="test/harness",
                        help="the directory to discover in (default test/harness; the proofs: test/proofs)")
    parser.add_argument("-p", "--pattern", default="test*.py", help="test file pattern (default test*.py)")
    parser.add_argument("-x", "--exclude", action="append", default=[],
                        help="leave out test files matching this pattern (repeatable)")
    parser.add_argument("--top", type=int, default=15, help="lines per table (default 15)")
    parser.add_argument("--json", type=Path, help="write {test id: seconds} and the fixtures' times here")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    suite = unittest.defaultTestLoader.discover(str(ROOT / args.start), pattern=args.pattern,
                                                top_level_dir=str(ROOT))
    if args.exclude:
        suite = unittest.TestSuite(_without(suite, args.exclude))
    # Warnings shown as ``python -m unittest`` shows them (what CI runs): a ResourceWarning
    # printed on a usage error's one line of stderr fails a test there, and must here too.
    runner = unittest.TextTestRunner(resultclass=_TimedResult, verbosity=1,
                                     warnings=None if sys.warnoptions else "default")
    started = time.perf_counter()
    result = runner.run(suite)
    wall = time.perf_counter() - started

    per_class: dict[str, float] = defaultdict(float)
    for test_id, seconds in result.times.items():
        per_class[test_id.rsplit(".", 1)[0]] += seconds
    for name, seconds in result.fixtures.items():
        per_class[name] += seconds
    per_file: dict[str, float] = defaultdict(float)
    for name, seconds in per_class.items():
        per_file[name.rsplit(".", 1)[0]] += seconds
    _print_top("slowest files (tests + fixtures)", per_file, args.top)
    _print_top("slowest classes (tests + setUpClass)", per_class, args.top)
    _print_top("slowest tests", result.times, args.top)
    print(f"\n{result.testsRun} tests in {wall:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({"wall_s": wall, "tests": result.times, "fixtures": result.fixtures},
                                        indent=1, sort_keys=True))
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
