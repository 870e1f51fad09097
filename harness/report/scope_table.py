"""The run's scope, first in every report: what the project declared its backend does not do,
how the tests needing it ended (refused, eager's answer, or the refusal contract broken),
and, per backend, what the tests needed of it and how those tests ended: a spec sheet
(harness.features.scope, docs/scope.md)."""

from __future__ import annotations

from harness.report.results import RunResults

# A capability every test of which failed, with at least this many tests, is suggested for
# the declaration: one cause the backend's team probably knows.
SUGGEST_FROM = 3


def _count(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def declared_lines(results: RunResults) -> list[str]:
    """What the run declared, and per backend column how the tests needing it ended."""
    declared = results.unsupported
    if not declared:
        return []
    lines = [f"declared unsupported: {', '.join(declared)} (docs/scope.md): a test needing one passes when the "
             "backend refuses it with an error naming it (REFUSED) or gives eager's answer"]
    for column, needed in results.scope()["needed"].items():
        tests = [test for test in results.tests if test.column == column and test.out_of_scope]
        if not tests:
            continue
        refused = sum(test.outcome == "REFUSED" for test in tests)
        passed = sum(test.outcome == "PASS" for test in tests)
        broke = sum(test.unexpected for test in tests)
        parts = [f"{refused} refused", f"{passed} gave eager's answer"]
        if broke:
            parts.append(f"{broke} broke the refusal contract")
        others = len(tests) - refused - passed - broke
        if others:
            parts.append(f"{others} expected failures or skipped")
        names = ", ".join(name for name in declared if name in needed)
        lines.append(f"  on {column}: {_count(len(tests), 'test')} need {names}: {', '.join(parts)}")
    return lines


def _stands_out(results: RunResults, column: str, name: str) -> bool:
    """Whether the tests not needing ``name`` mostly pass on ``column``: only then is a
    capability whose every test failed a cause of its own (torch's TorchScript backend,
    2026-12-03: one compile error failed 140 of 143 tests, every test of nine capabilities
    among them, and declaring those would have hidden it)."""
    others = [test for test in results.tests if test.column == column and name not in (test.needs or ())
              and test.outcome not in ("SKIP", "COLLATERAL")]
    return bool(others) and sum(test.outcome in ("PASS", "XFAIL", "REFUSED") for test in others) >= len(others) / 2


def suggestion_lines(results: RunResults) -> list[str]:
    """Capabilities not declared whose every test failed unexpectedly on a backend, for a
    cause of their own."""
    lines = []
    for column, needed in results.scope()["needed"].items():
        for name, counts in needed.items():
            if name in results.unsupported or counts["tests"] < SUGGEST_FROM:
                continue
            if counts["unexpected"] == counts["tests"] and _stands_out(results, column, name):
                lines.append(f"every test needing {name} failed on {column} ({counts['tests']}): if it does not do "
                             f"{name}, declare it (--unsupported {name}, or unsupported = [\"{name}\"] in "
                             "pyproject.toml) and those tests check that it refuses cleanly")
    return lines


def lines(results: RunResults) -> list[str]:
    """The console's and summary.md's first lines."""
    return declared_lines(results) + suggestion_lines(results)


HEADINGS = ("capability", "tests", "passed", "refused", "expected failures", "unexpected")


def rows(results: RunResults) -> dict[str, list[list[str]]]:
    """Per report column, a row per capability its tests needed: the spec sheet."""
    table: dict[str, list[list[str]]] = {}
    for column, needed in results.scope()["needed"].items():
        table[column] = [[name + (" (declared unsupported)" if name in results.unsupported else ""),
                          *(str(counts[key]) for key in ("tests", "passed", "refused", "expected_failures",
                                                         "unexpected"))]
                         for name, counts in needed.items()]
    return table
