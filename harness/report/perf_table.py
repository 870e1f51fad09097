"""The perf tier's figures as the reports show them: one row per perf scenario (a model or a
graph), and in it, per report column, eager and compiled time, the speed-up with its 95 %
interval, and the peak memory of each (results.json ``tests[].perf``, harness.testcase.perf).

The console, summary.md and report.html lay these rows out each their own way; the texts
of the figures are made here once, so the three reports always agree. A perf test that did
not measure (it failed, or skipped) shows its outcome instead of figures; tests outside the
perf tier are left out. Torch-free, like the rest of this package.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from harness.measure.speed import NOISY
from harness.report.results import RunResults, TestResult

PERF_PREFIX = "test_perf."  # scenario names of the perf tier's tests (test/dynamo/test_perf.py)
NOISY_MARK = "~"  # before a speed-up too noisy to judge
NOT_MEASURED = "n/a"  # a peak the device has no way to measure


def has_figures(results: RunResults) -> bool:
    """Whether the run holds any perf figures: the reports' perf sections show only then."""
    return any(test.perf for test in results.tests)


def is_perf_test(test: TestResult) -> bool:
    """A test of the perf tier, measured or not (a failed one has no figures, but a row)."""
    return bool(test.perf) or test.scenario.startswith(PERF_PREFIX)


def short_name(scenario: str) -> str:
    """``test_perf.PerfTests.test_resnet18_eval`` -> ``resnet18_eval``: the module and
    family are the same for every row, so they would only widen the table."""
    return scenario.rsplit(".", 1)[-1].removeprefix("test_")


def shortened(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the cut marked: a long name must not push a
    table past the terminal's width or a chart's label over the plot."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def number(value: float) -> str:
    """Three significant figures or so, never in exponent form: ``0.398``, ``3.28``, ``123``."""
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}" if value >= 0.1 else f"{value:.3f}"


def mib(peak_bytes: float | None) -> str:
    return NOT_MEASURED if peak_bytes is None else number(peak_bytes / 2 ** 20)


@dataclass(frozen=True)
class PerfCell:
    """One test's figures in the texts every report shows."""

    test: TestResult

    @property
    def figures(self) -> dict[str, Any] | None:
        return self.test.perf or None

    @property
    def measured(self) -> bool:
        return self.figures is not None

    @property
    def noisy(self) -> bool:
        return bool(self.figures and self.figures.get("noisy"))

    @property
    def eager_ms(self) -> str:
        return number(self.figures["eager_ms"]) if self.measured else ""

    @property
    def compiled_ms(self) -> str:
        return number(self.figures["compiled_ms"]) if self.measured else ""

    @property
    def speedup(self) -> str:
        """``1.62x [1.56-1.67]``, ``~1.18x [1.08-1.30]`` when noisy; the outcome when not measured."""
        if not self.measured:
            return self.test.outcome
        figures = self.figures
        mark = NOISY_MARK if self.noisy else ""
        return f"{mark}{figures['speedup']:.2f}x [{figures['low']:.2f}-{figures['high']:.2f}]"

    @property
    def eager_peak(self) -> str:
        return mib(self.figures.get("eager_peak_bytes")) if self.measured else ""

    @property
    def compiled_peak(self) -> str:
        return mib(self.figures.get("compiled_peak_bytes")) if self.measured else ""

    @property
    def memory_ratio(self) -> float | None:
        """Compiled peak over eager peak (below 1: the backend needs less memory)."""
        if not self.measured:
            return None
        eager, compiled = self.figures.get("eager_peak_bytes"), self.figures.get("compiled_peak_bytes")
        return compiled / eager if eager and compiled is not None else None

    @property
    def peak_ratio(self) -> str:
        ratio = self.memory_ratio
        return "" if not self.measured else NOT_MEASURED if ratio is None else f"{ratio:.2f}x"

    def texts(self) -> list[str]:
        """The cells of a table row, in the order of ``HEADINGS``."""
        return [self.eager_ms, self.compiled_ms, self.speedup, self.eager_peak, self.compiled_peak, self.peak_ratio]


HEADINGS = ["eager ms", "compiled ms", "speed-up [95% interval]", "eager MiB", "compiled MiB", "peak ratio"]


@dataclass
class PerfRow:
    scenario: str
    cells: dict[str, PerfCell] = field(default_factory=dict)  # report column -> its test

    @property
    def name(self) -> str:
        return short_name(self.scenario)


def perf_tests(results: RunResults) -> list[TestResult]:
    return [test for test in results.tests if is_perf_test(test)]


def columns(results: RunResults) -> list[str]:
    """The report columns that hold perf tests, in the run's order."""
    present = {test.column for test in perf_tests(results)}
    return [column for column in results.columns() if column in present]


def rows(results: RunResults) -> list[PerfRow]:
    """One row per perf scenario, by name (``graph_…`` before the models); its cells in the
    run's column order."""
    order = {column: index for index, column in enumerate(columns(results))}
    by_scenario: dict[str, PerfRow] = {}
    for test in sorted(perf_tests(results), key=lambda test: order[test.column]):
        by_scenario.setdefault(test.scenario, PerfRow(test.scenario)).cells[test.column] = PerfCell(test)
    return sorted(by_scenario.values(), key=lambda row: (row.name, row.scenario))


def geometric_mean_speedup(cells: list[PerfCell]) -> float | None:
    """The usual one-number summary of speed-ups: a 2x and a 0.5x cancel out, as they should."""
    speedups = [cell.figures["speedup"] for cell in cells if cell.measured and cell.figures["speedup"] > 0]
    return math.exp(sum(map(math.log, speedups)) / len(speedups)) if speedups else None


def column_line(results: RunResults, column: str) -> str:
    """``inductor: 6 measured, geometric mean speed-up 0.98x, 1 too noisy to judge``."""
    cells = [row.cells[column] for row in rows(results) if column in row.cells]
    measured = [cell for cell in cells if cell.measured]
    mean = geometric_mean_speedup(measured)
    parts = [f"{len(measured)} measured"]
    if len(measured) < len(cells):
        parts.append(f"{len(cells) - len(measured)} not measured")
    if mean is not None:
        parts.append(f"geometric mean speed-up {mean:.2f}x")
    noisy = sum(cell.noisy for cell in measured)
    if noisy:
        parts.append(f"{noisy} too noisy to judge")
    return f"{column}: " + ", ".join(parts)


def method_line(results: RunResults) -> str:
    """How the figures were taken, and how many of them are too noisy to judge."""
    setup = results.run.get("perf") or {}
    measured = [test for test in results.tests if test.perf]
    noisy = sum(bool(test.perf.get("noisy")) for test in measured)
    threads = setup.get("threads")
    where = ", ".join(part for part in (
        f"{threads} thread{'s' if threads != 1 else ''}" if threads is not None else "",
        f"{setup['budget_s']:g} s of timed rounds per test" if setup.get("budget_s") is not None else "",
        f"device {results.run.get('device') or 'cpu'}",
        str(setup.get("cpu") or ""),
    ) if part)
    return (f"Speed-up: eager time / compiled time per call, the median over interleaved rounds with its "
            f"95% interval; peaks are each step's peak memory, and the peak ratio compiled's over eager's. "
            f"Measured with {where}. "
            f"{noisy} of {len(measured)} speed-ups too noisy to judge (interval wider than "
            f"{NOISY:.0%} either way, marked {NOISY_MARK}).")
