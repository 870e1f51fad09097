"""The eager share in the reports: per backend column, per test, and per operator of the
sweep (harness/measure/eager_share.py measures it; results.json keeps it per test)."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from harness.report.results import OP_SWEEP_PREFIX, RunResults, TestResult

MOSTLY_EAGER = 0.5  # a call that ran more than half its graph eagerly "ran eagerly"


@dataclass
class ColumnShare:
    column: str
    shares: list[float]  # per measured test, over all its compiled calls and their backwards
    backward_shares: list[float] = field(default_factory=list)  # per test whose backward was measured
    eager_ops: Counter = field(default_factory=Counter)
    # The operator sweep: ops whose compiled call the backend ran, and those that ran eagerly.
    sweep_by_backend: list[str] = field(default_factory=list)
    sweep_eagerly: list[str] = field(default_factory=list)

    @property
    def mostly_eager(self) -> int:
        return sum(share > MOSTLY_EAGER for share in self.shares)

    def quantile(self, fraction: float) -> float:
        ordered = sorted(self.shares)
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]

    def line(self) -> str:
        top = ", ".join(f"{name} x{count}" for name, count in self.eager_ops.most_common(4)) or "none"
        text = (f"eager share on {self.column}: {len(self.shares)} tests measured, median "
                f"{statistics.median(self.shares):.0%}, 90th percentile {self.quantile(0.9):.0%}, "
                f"{self.mostly_eager} ran mostly eagerly; most run eagerly: {top}")
        if self.backward_shares:
            text += (f"; backward: {len(self.backward_shares)} tests measured, median "
                     f"{statistics.median(self.backward_shares):.0%}, "
                     f"{sum(share > MOSTLY_EAGER for share in self.backward_shares)} ran mostly eagerly")
        if self.sweep_by_backend or self.sweep_eagerly:
            text += (f"; op sweep: {len(self.sweep_by_backend)} ops executed by the backend, "
                     f"{len(self.sweep_eagerly)} ran eagerly")
        return text


def op_name(test: TestResult) -> str:
    return test.scenario.rsplit(".", 1)[-1].removeprefix("test_op_")


def by_column(results: RunResults) -> list[ColumnShare]:
    columns = []
    for column in results.columns():
        measured = [test for test in results.tests if test.column == column and test.eager_share]
        if not measured:
            continue
        entry = ColumnShare(column, [test.eager_share["share"] for test in measured],
                            [test.eager_share["backward"]["share"] for test in measured if "backward" in test.eager_share])
        for test in measured:
            entry.eager_ops.update(test.eager_share.get("eager_op_counts", {}))
            if test.scenario.startswith(OP_SWEEP_PREFIX) and test.outcome == "PASS":
                eagerly = test.eager_share["max_call_share"] > MOSTLY_EAGER
                (entry.sweep_eagerly if eagerly else entry.sweep_by_backend).append(op_name(test))
        columns.append(entry)
    return columns


def median_text(tests: list[TestResult], none: str = ".") -> str:
    """The median eager share of the measured ``tests`` (a table cell), or ``none``."""
    shares = [test.eager_share["share"] for test in tests if test.eager_share]
    return f"{statistics.median(shares):.0%}" if shares else none


def lines(results: RunResults) -> list[str]:
    return [entry.line() for entry in by_column(results)]


def text(test: TestResult) -> str:
    """``eager share 33% (1 of 3 ops: aten.mul x1)`` for a measured test (``…, backward 50%``
    when its backward was measured), else ""."""
    share = test.eager_share
    if not share:
        return ""
    ops = ", ".join(f"{name} x{count}" for name, count in list(share.get("eager_op_counts", {}).items())[:4])
    backward = share.get("backward")
    return (f"eager share {share['share']:.0%} ({share['eager_ops']} of {share['graph_ops']} ops"
            + (f": {ops}" if ops else "") + ")" + (f", backward {backward['share']:.0%}" if backward else ""))
