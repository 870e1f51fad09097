"""The eager share in the reports: per backend column, per test, and per operator of the
sweep (harness/measure/eager_share.py measures it; results.json keeps it per test)."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from harness.axes.registry import BACKEND_INDEPENDENT
from harness.report.results import OP_SWEEP_PREFIX, RunResults, TestResult

MOSTLY_EAGER = 0.5  # a call that ran more than half its graph eagerly "ran eagerly"
# A call that ran this much of its graph eagerly ran wholly on PyTorch's kernels: a silent
# fallback to eager (harness.measure.eager_share.WHOLLY, read here without torch).
WHOLLY = 0.999
SHOWN = 3  # the tests a fallback line names


@dataclass
class ColumnShare:
    column: str
    shares: list[float]  # per measured test, over all its compiled calls and their backwards
    backward_shares: list[float] = field(default_factory=list)  # per test whose backward was measured
    eager_ops: Counter = field(default_factory=Counter)
    # The operator sweep: ops whose compiled call the backend ran, and those that ran eagerly.
    sweep_by_backend: list[str] = field(default_factory=list)
    sweep_eagerly: list[str] = field(default_factory=list)
    # Tests one of whose compiled calls (or backwards) ran wholly on PyTorch's kernels: the
    # test's scenario and the ops of its worst call.
    wholly: list[tuple[str, dict]] = field(default_factory=list)

    @property
    def eager_throughout(self) -> bool:
        """Whether the backend runs PyTorch's kernels for most of every graph (its median
        test did): eager by design (eager, aot_eager) or compiling nothing, where a fallback
        cannot be told from its ordinary work."""
        return statistics.median(self.shares) > MOSTLY_EAGER

    def fallback_line(self) -> str:
        head = f"silent fallback to eager on {self.column}: "
        whole = f"{len(self.wholly)} of {len(self.shares)} tests' graphs ran wholly on PyTorch's kernels"
        if self.eager_throughout:
            return (head + f"not told apart: {whole}, and its median test ran {statistics.median(self.shares):.0%} "
                    "eagerly: it runs most graphs on PyTorch's kernels, as eager and aot_eager do by design (a "
                    "compiling backend here would be falling back nearly everywhere)")
        if not self.wholly:
            return head + f"none of {len(self.shares)} tests' graphs ran wholly on PyTorch's kernels"
        named = "; ".join(f"{scenario} ({', '.join(f'{op} x{count}' for op, count in list(ops.items())[:3])})"
                          for scenario, ops in self.wholly[:SHOWN])
        return (head + whole + f" in a compiled call: {named}" + (f" and {len(self.wholly) - SHOWN} more"
                                                                   if len(self.wholly) > SHOWN else "")
                + " (--eager-fallback fail fails them, for a backend that compiles everything)")

    def fallback_json(self) -> dict:
        return {"tests_measured": len(self.shares), "wholly_eager": len(self.wholly),
                "eager_throughout": self.eager_throughout,
                "tests": [{"scenario": scenario, "ops": ops} for scenario, ops in self.wholly]}

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
            if test.eager_share["max_call_share"] >= WHOLLY:
                entry.wholly.append((test.scenario, test.eager_share.get("worst_call_ops", {})))
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


def fallback_lines(results: RunResults) -> list[str]:
    """Per backend column, the tests whose graphs ran wholly on PyTorch's kernels: every run
    says it, first after the table (docs/eager-share.md)."""
    measured = by_column(results)
    found = [entry.fallback_line() for entry in measured]
    unmeasured = [column for column in results.columns() if column not in {entry.column for entry in measured}
                  and any(test.column == column and test.backend != BACKEND_INDEPENDENT and test.outcome == "PASS"
                          for test in results.tests)]
    if unmeasured:
        found.append(f"silent fallback to eager on {', '.join(unmeasured)}: not measured (no eager share recorded)")
    return found


def fallback_json(results: RunResults) -> dict:
    """results.json's run.silent_fallback: per measured backend column, the tests whose
    graphs ran wholly on PyTorch's kernels."""
    return {entry.column: entry.fallback_json() for entry in by_column(results)}


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
