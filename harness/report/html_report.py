"""report.html: the scenario x backend matrix, coloured by outcome and filterable.

Everything shown comes from test output or exception text, which is untrusted: the
template is rendered with autoescaping on, and no data is placed inside the script.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import jinja2

from harness.report import eager_share, problems
from harness.report.console import repro_command, verdict
from harness.report.results import BACKEND_INDEPENDENT, OUTCOMES, RunResults, TestResult

_TEMPLATES = Path(__file__).with_name("templates")


# Terminal colour codes are noise on a page; other control characters are not HTML.
_TERMINAL_CODES = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _printable(value: Any) -> Any:
    if isinstance(value, str):
        return _CONTROL.sub("\N{REPLACEMENT CHARACTER}", _TERMINAL_CODES.sub("", value))
    return value


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES),
        autoescape=True,  # every {{ }} is escaped, whatever the template's file name
        finalize=_printable,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def metrics_text(metrics: dict[str, float]) -> str:
    return " · ".join(f"{name[:-2]} {value:.2f} s" if name.endswith("_s") else f"{name.replace('_', ' ')} {value}"
                      for name, value in metrics.items())


def _cell_title(test: TestResult) -> str:
    parts = [test.outcome, f"{test.duration_s:.2f} s"]
    if test.metrics:
        parts.append(metrics_text(test.metrics))
    if test.eager_share:
        parts.append(eager_share.text(test))
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


def render(results: RunResults, difference: Any = None, repro_files: dict[str, str] | None = None) -> str:
    """``repro_files``: problem id -> its standalone repro file, where one was written."""
    expectations = results.run.get("expectations")
    noteworthy = sorted(
        (test for test in results.tests if test.outcome != "PASS"),
        key=lambda test: (not test.unexpected, OUTCOMES.index(test.outcome), test.id),
    )
    template = _environment().get_template("report.html.j2")
    return template.render(
        run={"torch": "?", "python": "?", "platform": "", "started": "", "duration_s": 0,
             "shard": None, "merged_from": None, "backends": [], **results.run},
        summary=results.summary(),
        verdict=verdict(results),
        clauses=problems.by_clause(problems.group(results.tests)),
        left_broken=results.left_broken(),
        repro_files=repro_files or {},
        outcomes=OUTCOMES,
        backends=results.columns(),
        families=_families(results),
        noteworthy=noteworthy,
        difference=difference,
        backend_label=lambda name: "backend-independent" if name == BACKEND_INDEPENDENT else name,
        cell_title=_cell_title,
        metrics_text=metrics_text,
        eager_shares=eager_share.by_column(results),
        eager_share_text=eager_share.text,
        repro=lambda test: repro_command(test, expectations, results.run),
    )
