#!/usr/bin/env python3
"""Whether a run still shows every problem an earlier run of the same backend showed: a
smaller default tier must lose none (docs/coverage.md). A problem is kept when the later run
has one of the same backend, outcome, stage, signature (the failed check or error, numbers and
generated names taken out) and place it raised (harness/report/problems.py); the rest are
listed, each with whether its tests ran at all. Problems only the later run shows are listed too.

    python scripts/problems_compare.py BEFORE AFTER     (report dirs, results.json or .json.gz)

Exit 0 when none is lost, 1 when some are, 2 with one line on a file it cannot read.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.report import problems  # noqa: E402
from harness.report.results import ResultsError, RunResults, from_json  # noqa: E402


def read(path: Path) -> RunResults:
    if path.is_dir():
        path = next((candidate for candidate in (path / "results.json", path / "results.json.gz")
                     if candidate.exists()), path / "results.json")
    try:
        text = gzip.open(path, "rt").read() if path.suffix == ".gz" else path.read_text()
        return from_json(json.loads(text), str(path))
    except (OSError, ValueError, ResultsError) as error:
        print(f"problems_compare.py: error: cannot read {path}: {error}", file=sys.stderr)
        sys.exit(2)


def key(problem: problems.Problem) -> str:
    """Its backend, outcome, stage, signature and where it raised, as problems.group keys it."""
    return problem.id


def main(before_path: str, after_path: str) -> int:
    before, after = read(Path(before_path)), read(Path(after_path))
    old, new = problems.group(before.tests), problems.group(after.tests)
    found = {key(problem) for problem in new}
    ran = {test.scenario for test in after.tests}
    lost = [problem for problem in old if key(problem) not in found]
    print(f"before: {len(before.tests)} tests, {len(before.unexpected)} unexpected in {len(old)} problems, "
          f"{before.run.get('duration_s', 0):.0f} s")
    print(f"after:  {len(after.tests)} tests, {len(after.unexpected)} unexpected in {len(new)} problems, "
          f"{after.run.get('duration_s', 0):.0f} s")
    print(f"problems of the earlier run the later one still shows: {len(old) - len(lost)} of {len(old)}")
    for problem in lost:
        tests_ran = sum(test.scenario in ran for test in problem.tests)
        print(f"  lost: {problem.outcome} {problem.signature[:100]!r} ({len(problem.tests)} tests, "
              f"{tests_ran} of them ran)")
    new_only = [problem for problem in new if key(problem) not in {key(each) for each in old}]
    if new_only:
        print(f"problems only the later run shows: {len(new_only)}")
        for problem in new_only:
            print(f"  new: {problem.outcome} {problem.signature[:100]!r} ({len(problem.tests)} tests)")
    return 1 if lost else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-3].strip())
    sys.exit(main(sys.argv[1], sys.argv[2]))
