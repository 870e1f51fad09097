#!/usr/bin/env python3
"""Compare a run without a declared scope and the same run with one: the problems a person
reads in each, and whether every problem of the first is still there, or all its tests are
now out of scope (refused, or grouped under the refusal contract). docs/scope.md's figures.

    python scripts/scope_compare.py PLAIN_REPORT_DIR DECLARED_REPORT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.checks import clauses  # noqa: E402
from harness.report import problems  # noqa: E402
from harness.report.results import load  # noqa: E402


def main(plain_path: str, declared_path: str) -> int:
    plain, declared = load(plain_path), load(declared_path)
    by_id = {test.id: test for test in declared.tests}
    before, after = problems.group(plain.tests), problems.group(declared.tests)
    print(f"plain: {len(plain.unexpected)} unexpected in {len(before)} problems under "
          f"{len(problems.by_clause(before))} clauses")
    print(f"declared {declared.run.get('unsupported')}: {len(declared.unexpected)} unexpected in {len(after)} problems "
          f"under {len(problems.by_clause(after))} clauses; {declared.summary()['REFUSED']} REFUSED")
    refusal = [problem for problem in after if problem.clause == clauses.REFUSAL]
    print(f"  under the refusal contract: {len(refusal)} problems, {sum(len(p.tests) for p in refusal)} tests")
    print(f"  in scope: {len(after) - len(refusal)} problems, "
          f"{sum(len(p.tests) for p in after if p.clause != clauses.REFUSAL)} tests")
    lost = 0
    for problem in before:
        now = [by_id[test.id] for test in problem.tests if test.id in by_id]
        still = [test for test in now if test.unexpected and not test.out_of_scope]
        out = [test for test in now if test.out_of_scope]
        lost += not still and not out
        print(f"  - {problem.signature[:90]!r} ({len(problem.tests)} tests): {len(still)} still in scope, "
              f"{len(out)} out of scope")
    print(f"problems of the plain run neither still there nor out of scope: {lost}")
    return 1 if lost else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    sys.exit(main(sys.argv[1], sys.argv[2]))
