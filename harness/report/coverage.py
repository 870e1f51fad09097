"""What a run covered: per report column, which features of the catalogue
(harness.features.catalogue) its tests' graphs and calls showed, in how many tests, per
operator family for the features of an operator call, and which features no test showed.

A backend that passes every test has shown nothing about the conditions none of them met;
this says which those are. Read from each test's ``covers`` (results.json).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.axes.registry import BACKEND_INDEPENDENT
from harness.features import catalogue, families

# The results (harness.report.results.RunResults) are read, not imported: results.json
# carries this module's table, so results.py imports this module.
RunResults = Any

SHOWN_MISSING = 12  # the console line names this many features none showed, then counts the rest


@dataclass
class Coverage:
    """One report column's coverage."""

    tests: int = 0  # tests that recorded what they covered
    conditions: dict[str, int] = field(default_factory=dict)  # feature -> tests that showed it
    by_family: dict[str, dict[str, int]] = field(default_factory=dict)  # family -> feature -> tests

    @property
    def not_exercised(self) -> list[str]:
        return [name for name in catalogue.CATALOGUE if name not in self.conditions]

    def to_json(self) -> dict[str, Any]:
        return {"tests": self.tests, "exercised": len(self.conditions), "of": len(catalogue.CATALOGUE),
                "conditions": self.conditions, "by_family": self.by_family, "not_exercised": self.not_exercised}


def per_column(results: RunResults) -> dict[str, Coverage]:
    """Per report column with a backend, in column order, its coverage (columns none of whose
    tests recorded anything are left out)."""
    found: dict[str, Coverage] = {}
    for test in results.tests:
        if test.covers is None or test.backend == BACKEND_INDEPENDENT:
            continue
        coverage = found.setdefault(test.column, Coverage())
        coverage.tests += 1
        for entry in test.covers:
            name, family = catalogue.split(entry)
            if name not in catalogue.CATALOGUE:
                continue  # a feature of a newer catalogue, read by an older report
            if family is None:
                coverage.conditions[name] = coverage.conditions.get(name, 0) + 1
            else:
                per_family = coverage.by_family.setdefault(family, {})
                per_family[name] = per_family.get(name, 0) + 1
    for coverage in found.values():
        coverage.conditions = {name: coverage.conditions[name] for name in catalogue.CATALOGUE if name in coverage.conditions}
        order = {family: index for index, family in enumerate(families.FAMILIES)}
        coverage.by_family = {family: {name: counts[name] for name in catalogue.CATALOGUE if name in counts}
                              for family, counts in sorted(coverage.by_family.items(),
                                                           key=lambda item: order.get(item[0], len(order)))}
    return {column: found[column] for column in results.columns() if column in found}


def none_exercised(columns: dict[str, Coverage]) -> list[str]:
    """The features no column's tests showed."""
    seen = {name for coverage in columns.values() for name in coverage.conditions}
    return [name for name in catalogue.CATALOGUE if name not in seen]


def to_json(results: RunResults) -> dict[str, Any]:
    columns = per_column(results)
    return {"catalogue": len(catalogue.CATALOGUE), "columns": {column: coverage.to_json() for column, coverage in columns.items()},
            "none_exercised": none_exercised(columns)}


def line(results: RunResults) -> str | None:
    """The console's one line: per column how many features its tests showed, and the
    features none showed."""
    columns = per_column(results)
    if not columns:
        return None
    counts = ", ".join(f"{column} {len(coverage.conditions)}" for column, coverage in columns.items())
    missing = none_exercised(columns)
    text = f"coverage: features of {len(catalogue.CATALOGUE)} shown on {counts}"
    if missing:
        named = ", ".join(missing[:SHOWN_MISSING]) + (f" and {len(missing) - SHOWN_MISSING} more"
                                                      if len(missing) > SHOWN_MISSING else "")
        text += f"; none shown: {named} (report.html, docs/coverage.md)"
    return text


def rows(results: RunResults) -> tuple[list[str], list[dict[str, Any]]]:
    """The columns, and a row per feature (catalogue order): its group, what it means, and
    per column the tests that showed it (0: none)."""
    columns = per_column(results)
    table = [{"name": name, "group": feature.group, "means": feature.means,
              "cells": [columns[column].conditions.get(name, 0) for column in columns]}
             for name, feature in catalogue.CATALOGUE.items()]
    return list(columns), table


def family_rows(coverage: Coverage) -> tuple[list[str], list[dict[str, Any]]]:
    """For one column: the families, and a row per operator-call feature with per family the
    tests that showed it there."""
    shown = list(coverage.by_family)
    table = [{"name": name, "cells": [coverage.by_family[family].get(name, 0) for family in shown]}
             for name, feature in catalogue.CATALOGUE.items() if feature.per_family]
    return shown, table


def table() -> str:
    """The catalogue as docs/coverage.md shows it (test/harness/test_features.py keeps the page
    current: ``python -c "from harness.report import coverage; print(coverage.table())"``)."""
    levels = {"site": "each operator call", "graph": "the graph", "call": "each call", "value": "a call's tensors",
              "index": "a call's indices", "backward": "each backward pass", "declared": "the scenario"}
    rows = ["| group | feature | what the backend meets | read from | per family |", "| --- | --- | --- | --- | --- |"]
    rows += [f"| {feature.group} | `{name}` | {feature.means} | {', '.join(levels[level] for level in feature.levels())}"
             f" | {'yes' if feature.per_family else ''} |" for name, feature in catalogue.CATALOGUE.items()]
    return "\n".join(rows)
