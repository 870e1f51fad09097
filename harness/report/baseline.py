"""What changed since an earlier run: the nightly's question.

Tests are matched by id and judged by what they did, not by what was expected of them:
an expected failure (XFAIL) counts as failing. A test is *newly failing* when it fails
unexpectedly now and did not fail before (it passed, was skipped, or did not exist), so a
torch version whose expectations do not list a known failure shows no regression for it;
*newly passing* when it failed before and passes now; its *reason changed* when it fails
unexpectedly in both runs with a different outcome or message.
Messages are compared after removing what differs between any two runs (addresses, line
numbers, timings, worker names). Tests that passed in both runs are also compared by what
Dynamo did (frames, graphs, graph breaks, recompiles, compile time; the rules are in
harness.report.metric_changes), and perf tests by their speed-up and peak memory (the
same module).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from harness import outcomes
from harness.report import metric_changes, problems
from harness.report.metric_changes import PerfComparison
from harness.report.results import RunResults, TestResult

_VOLATILE = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x…"),
    (re.compile(r"(\.py):\d+"), r"\1:…"),
    (re.compile(r"\bline \d+"), "line …"),
    (re.compile(r"\d+(\.\d+)? ?s\b"), "… s"),
    (re.compile(r"\bgw\d+\b"), "gw…"),
]


def stable_reason(reason: str) -> str:
    for pattern, replacement in _VOLATILE:
        reason = pattern.sub(replacement, reason)
    return reason.strip()


@dataclass
class Difference:
    new_failures: list[tuple[TestResult | None, TestResult]] = field(default_factory=list)
    new_passes: list[tuple[TestResult, TestResult]] = field(default_factory=list)
    # Passed before, fail now as an expectation says they do (a known regression of this torch).
    expected_new_failures: list[tuple[TestResult, TestResult]] = field(default_factory=list)
    changed: list[tuple[TestResult, TestResult]] = field(default_factory=list)
    added: list[TestResult] = field(default_factory=list)  # new tests that went as expected
    removed: list[TestResult] = field(default_factory=list)  # in the baseline, not run now
    # Problems (harness.report.problems) present now and not before, and the other way round.
    new_problems: list[problems.Problem] = field(default_factory=list)
    fixed_problems: list[problems.Problem] = field(default_factory=list)
    # Tests that passed in both runs whose Dynamo metrics changed (harness.report.metric_changes).
    metric_changes: list[metric_changes.MetricChange] = field(default_factory=list)
    # Perf tests' speed-up and peak memory (harness.report.metric_changes).
    perf: PerfComparison = field(default_factory=PerfComparison)

    @property
    def metric_regressions(self) -> list:
        """Dynamo's metrics and the perf figures that got worse: what --fail-on metrics fails on."""
        return [change for change in self.metric_changes if change.regression] + self.perf.regressions

    def sections(self) -> list[tuple[str, list[str]]]:
        return [
            ("new problems", [_problem_line(problem) for problem in self.new_problems]),
            ("fixed problems", [_problem_line(problem) for problem in self.fixed_problems]),
            ("newly failing", [f"{new.id}: {old.outcome if old else 'not in baseline'} -> {new.outcome}: {new.reason}"
                               for old, new in self.new_failures]),
            ("newly failing as expected", [f"{new.id}: {old.outcome} -> {new.outcome}: {new.reason}"
                                           for old, new in self.expected_new_failures]),
            ("newly passing", [f"{new.id}: {old.outcome} -> {new.outcome}" for old, new in self.new_passes]),
            ("failing with a changed reason", [
                f"{new.id}: {old.outcome} '{old.reason}' -> {new.outcome} '{new.reason}'" for old, new in self.changed]),
            ("metric regressions", [change.line() for change in self.metric_changes if change.regression]),
            ("metric improvements", [change.line() for change in self.metric_changes if not change.regression]),
            *self.perf_sections(),
            ("new tests", [f"{test.id}: {test.outcome}" for test in self.added]),
            ("not run this time", [test.id for test in self.removed]),
        ]

    def perf_sections(self) -> list[tuple[str, list[str]]]:
        """Only for runs with perf figures: other runs would show four empty sections."""
        if not self.perf.compared:
            return []
        return [
            *([("perf baseline from another machine", [self.perf.other_machine])] if self.perf.other_machine else []),
            ("perf regressions", [change.line() for change in self.perf.regressions]),
            ("perf improvements", [change.line() for change in self.perf.improvements]),
            ("perf figures too noisy to judge", list(self.perf.too_noisy)),
        ]

    def to_json(self, baseline_name: str | None) -> dict:
        """What results.json records of the comparison, for tools that read it."""
        return {
            "file": baseline_name,
            "new_failures": [new.id for _, new in self.new_failures],
            "new_passes": [new.id for _, new in self.new_passes],
            "metric_changes": [dict(vars(change), regression=change.regression) for change in self.metric_changes],
            "perf_changes": [dict(vars(change), regression=change.regression) for change in self.perf.changes],
            "perf_too_noisy": list(self.perf.too_noisy),
            "perf_other_machine": self.perf.other_machine,
        }

    def render(self, baseline_name: str) -> str:
        lines = [f"compared with baseline {baseline_name}:"]
        for title, entries in self.sections():
            if title in ("new tests", "not run this time"):
                if entries:
                    lines.append(f"  {title}: {len(entries)}")
                continue
            lines.append(f"  {title}: {len(entries)}")
            lines.extend(f"    {entry}" for entry in entries)
        if not self.new_failures:
            lines.append("  no new failures")
        return "\n".join(lines)


def _problem_line(problem: problems.Problem) -> str:
    count = len(problem.tests)
    return (f"{problem.backend}: {problem.outcome} {problem.representative.reason} ({count} test{'s' if count != 1 else ''}, "
            f"e.g. {problem.representative.id})")


def _failing(test: TestResult) -> bool:
    return outcomes.ended(test.outcome, outcomes.FAILED)


def _passing(test: TestResult) -> bool:
    return outcomes.ended(test.outcome, outcomes.PASSED)


def difference_between(old: RunResults, new: RunResults) -> Difference:
    before = {test.id: test for test in old.tests}
    difference = Difference()
    for test in new.tests:
        previous = before.pop(test.id, None)
        fails_unexpectedly = test.unexpected and _failing(test)
        if fails_unexpectedly and (previous is None or not _failing(previous)):
            difference.new_failures.append((previous, test))
        elif previous is None:
            difference.added.append(test)
        elif _failing(previous) and _passing(test):
            difference.new_passes.append((previous, test))
        elif _passing(previous) and test.outcome == outcomes.XFAIL:
            difference.expected_new_failures.append((previous, test))
        elif fails_unexpectedly and previous.unexpected and (
                previous.outcome != test.outcome or stable_reason(previous.reason) != stable_reason(test.reason)):
            difference.changed.append((previous, test))
    difference.removed = sorted(before.values(), key=lambda test: test.id)
    # A baseline recorded before failures had stages: compared without them.
    by_stage = any(test.stage for test in old.tests if test.unexpected) or not any(test.unexpected for test in old.tests)
    old_problems = {problem.id: problem for problem in problems.group(old.tests, by_stage)}
    new_problems = {problem.id: problem for problem in problems.group(new.tests, by_stage)}
    difference.new_problems = [problem for key, problem in new_problems.items() if key not in old_problems]
    difference.fixed_problems = [problem for key, problem in old_problems.items() if key not in new_problems]
    difference.metric_changes = metric_changes.changes_between(old, new)
    difference.perf = metric_changes.compare_perf(old, new)
    return difference
