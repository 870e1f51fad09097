"""report.html: the scenario x backend matrix, coloured by outcome and filterable, and for
the perf tier a chart and a table of speed and peak memory.

Everything shown comes from test output or exception text, which is untrusted: the page is
built by ``pages`` (the template rendered with autoescaping on), and no data is placed
inside the script.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from harness.report import coverage, eager_share_table, perf_table, problems, scope_table
from harness.report.console import repro_command, verdict
from harness import outcomes
from harness.report.formats import pages
from harness.report.formats.format import RunReport
from harness.report.results import BACKEND_INDEPENDENT, RunResults, TestResult


def metrics_text(metrics: dict[str, float]) -> str:
    return " · ".join(f"{name[:-2]} {value:.2f} s" if name.endswith("_s") else f"{name.replace('_', ' ')} {value}"
                      for name, value in metrics.items())


def _cell_title(test: TestResult) -> str:
    parts = [test.outcome, f"{test.duration_s:.2f} s"]
    if test.metrics:
        parts.append(metrics_text(test.metrics))
    if test.eager_share:
        parts.append(eager_share_table.text(test))
    if test.perf:
        parts.append(f"speed-up {perf_table.PerfCell(test).speedup}")
    if test.reason:
        parts.append(test.reason)
    return " | ".join(parts)


def _families(results: RunResults) -> list[tuple[str, list[dict[str, Any]]]]:
    rows: dict[str, dict[str, Any]] = {}
    for test in sorted(results.tests, key=lambda test: test.id):
        row = rows.setdefault(test.scenario, {"name": test.scenario, "cells": {}})
        row["cells"][test.column] = test
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for scenario, row in rows.items():
        family, _, name = scenario.rpartition(".")
        cells = row["cells"].values()
        row.update(test=name, outcomes=sorted({cell.outcome for cell in cells}),
                   unexpected=any(cell.unexpected for cell in cells))
        grouped[family].append(row)
    return sorted(grouped.items())


# The perf chart (drawn in the template from these numbers; every text in it is escaped
# there). One line per measured test: its scenario and backend, the speed-up's dot and
# interval on the left, bars of eager and compiled peak memory on the right.
_PALETTE = ("#1f6feb", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#0e7490", "#9a6700", "#bf3989")
_LABEL_WIDTH = 270  # the scenario's name, then its backend's, right-aligned against the plot
_NAME_CHARACTERS = 25  # what fits beside the longest backend label (12 px monospace)
_COLUMN_CHARACTERS = 14
_SPEED_PANEL = (290.0, 620.0)
_MEMORY_LEFT = 670.0
_MEMORY_BAR = 170.0  # a line's larger peak; its figures are written after it
_CHART_WIDTH = 980
_TOP = 34  # the panels' titles above the first line
_LINE = 16  # one test
_GROUP_GAP = 8  # between scenarios
_BOTTOM = 34  # the axes' tick labels
_MIN_TICK_GAP = 34  # pixels between tick labels, so they do not overlap
# Log scale for the speed-up: it is a ratio, so 2x faster and 2x slower lie the same
# distance from 1.0x, and a 0.3x figure does not squash the 1.6x ones against the line.
_SPEED_TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 10.0, 20.0, 50.0, 100.0)
_SPEED_SPAN = (0.5, 2.0)  # at least: a run whose figures all lie near 1.0x does not magnify their noise


@dataclass
class SpeedAxis:
    """The speed-up panel's log scale: ``x(value)`` in pixels, and the ticks to label."""

    left: float
    right: float
    low: float
    high: float
    ticks: list[tuple[float, str]] = field(default_factory=list)

    def x(self, value: float) -> float:
        fraction = math.log(max(value, self.low) / self.low) / math.log(self.high / self.low)
        return round(self.left + min(1.0, fraction) * (self.right - self.left), 1)


@dataclass
class ChartLine:
    """One test's line of the chart, in pixels."""

    y: float
    scenario: str  # on a scenario's first line only
    column: str
    colour: str
    cell: perf_table.PerfCell
    title: str  # the figures in words, for the tooltip
    speed: tuple[float, float, float] | None = None  # x of the interval's low end, the speed-up, the high end
    # Bar lengths, each line scaled to its own larger peak: peaks run from kilobytes (a tiny
    # transformer) to hundreds of MiB (a ResNet's training step), and on one shared scale most
    # bars would vanish; the figures beside the bars give the sizes. None: not measured.
    eager_bar: float | None = None
    compiled_bar: float | None = None
    peaks: str = ""  # "9.09 -> 9.08 MiB"


@dataclass
class PerfChart:
    width: int
    height: int
    plot_top: float
    plot_bottom: float
    speed: SpeedAxis
    lines: list[ChartLine]
    legend: list[tuple[str, str]]  # column, colour
    label_right: int = _LABEL_WIDTH
    memory_left: float = _MEMORY_LEFT
    peaks_x: float = _MEMORY_LEFT + _MEMORY_BAR + 8  # the figures beside the bars

    @property
    def memory_measured(self) -> bool:
        return any(line.eager_bar is not None or line.compiled_bar is not None for line in self.lines)


def _speed_axis(cells: list[perf_table.PerfCell]) -> SpeedAxis:
    low = max(min([_SPEED_SPAN[0], *(cell.figures["low"] for cell in cells)]) / 1.1, _SPEED_TICKS[0])
    high = max([_SPEED_SPAN[1], *(cell.figures["high"] for cell in cells)]) * 1.1
    axis = SpeedAxis(*_SPEED_PANEL, low, high)
    # 1.0x always, then outwards from it each candidate that leaves room for its label.
    kept = [1.0]
    for side in ([tick for tick in reversed(_SPEED_TICKS) if tick < 1], [tick for tick in _SPEED_TICKS if tick > 1]):
        last = 1.0
        for tick in side:
            if low <= tick <= high and abs(axis.x(tick) - axis.x(last)) >= _MIN_TICK_GAP:
                kept.append(tick)
                last = tick
    axis.ticks = [(axis.x(tick), f"{tick:g}x") for tick in sorted(kept)]
    return axis


def _bars(figures: dict[str, Any]) -> tuple[float | None, float | None]:
    """The eager and compiled peaks' bar lengths, the larger one full length."""
    eager, compiled = figures.get("eager_peak_bytes"), figures.get("compiled_peak_bytes")
    larger = max([peak for peak in (eager, compiled) if peak is not None], default=0)
    if not larger:
        return None, None
    return tuple(None if peak is None else round(peak / larger * _MEMORY_BAR, 1) for peak in (eager, compiled))


def _title(name: str, column: str, cell: perf_table.PerfCell) -> str:
    if not cell.measured:
        return f"{name} on {column}: {cell.test.outcome} {cell.test.reason}".rstrip()
    return (f"{name} on {column}: speed-up {cell.speedup}{' (too noisy to judge)' if cell.noisy else ''}; "
            f"{cell.eager_ms} ms eager, {cell.compiled_ms} ms compiled; peak {cell.eager_peak} MiB eager, "
            f"{cell.compiled_peak} MiB compiled")


def _chart_line(y: float, first: bool, name: str, column: str, colour: str, cell: perf_table.PerfCell,
                speed: SpeedAxis) -> ChartLine:
    line = ChartLine(y, perf_table.shortened(name, _NAME_CHARACTERS) if first else "",
                     perf_table.shortened(column, _COLUMN_CHARACTERS), colour, cell,
                     _title(name, column, cell))
    if cell.measured:
        figures = cell.figures
        line.speed = (speed.x(figures["low"]), speed.x(figures["speedup"]), speed.x(figures["high"]))
        line.eager_bar, line.compiled_bar = _bars(figures)
        if line.eager_bar is not None or line.compiled_bar is not None:
            line.peaks = f"{cell.eager_peak} \N{RIGHTWARDS ARROW} {cell.compiled_peak} MiB"
    return line


def _perf_chart(results: RunResults) -> PerfChart | None:
    if not perf_table.has_figures(results):
        return None
    colours = {column: _PALETTE[index % len(_PALETTE)] for index, column in enumerate(perf_table.columns(results))}
    table = perf_table.rows(results)
    measured = [cell for row in table for cell in row.cells.values() if cell.measured]
    speed = _speed_axis(measured)
    lines, y = [], float(_TOP)
    for row in table:
        for index, (column, cell) in enumerate(row.cells.items()):
            y += _LINE
            lines.append(_chart_line(y, index == 0, row.name, column, colours[column], cell, speed))
        y += _GROUP_GAP
    return PerfChart(_CHART_WIDTH, int(y + _BOTTOM), _TOP + _LINE / 2, y, speed, lines, list(colours.items()))


def render(report: RunReport) -> str:
    results = report.results
    expectations = results.run.get("expectations")
    order = outcomes.reported()
    noteworthy = sorted(
        (test for test in results.tests if test.outcome != "PASS"),
        key=lambda test: (not test.unexpected, order.index(test.outcome), test.id),
    )
    covered = coverage.per_column(results)
    coverage_columns, coverage_rows = coverage.rows(results)
    return pages.render(
        "report.html.j2",
        coverage_columns=coverage_columns,
        coverage_rows=coverage_rows,
        coverage_missing=coverage.none_exercised(covered),
        coverage_families={column: coverage.family_rows(entry) for column, entry in covered.items()},
        run={"torch": "?", "python": "?", "platform": "", "started": "", "duration_s": 0,
             "shard": None, "merged_from": None, "backends": [], **results.run},
        summary=results.summary(),
        verdict=verdict(results),
        clauses=problems.by_clause(problems.group(results.tests)),
        left_broken=results.left_broken(),
        repro_files=report.repro_files,
        outcomes=results.outcomes_shown(),
        outcome_colours={name: outcomes.named(name).html for name in outcomes.reported()},
        scope_lines=scope_table.lines(results),
        scope_rows=scope_table.rows(results),
        scope_headings=scope_table.HEADINGS,
        backends=results.columns(),
        families=_families(results),
        noteworthy=noteworthy,
        difference=report.difference,
        backend_label=lambda name: "backend-independent" if name == BACKEND_INDEPENDENT else name,
        cell_title=_cell_title,
        metrics_text=metrics_text,
        eager_shares=eager_share_table.by_column(results),
        eager_share_text=eager_share_table.text,
        repro=lambda test: repro_command(test, expectations, results.run),
        perf_chart=_perf_chart(results),
        perf_rows=perf_table.rows(results),
        perf_columns=perf_table.columns(results),
        perf_headings=perf_table.HEADINGS,
        perf_method=perf_table.method_line(results),
        perf_column_line=lambda column: perf_table.column_line(results, column),
    )
