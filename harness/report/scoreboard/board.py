"""Runs of several backends side by side: what ``--scoreboard RUN...`` reads and computes.

Each run is a report directory (or its results.json) made anywhere: another machine, another
virtual environment, another torch. A run may hold several backends; each report column
(``openvino``, ``inductor/dynamic``) of each run is a row of the board. A directory with
``install-failed.json`` instead is a row saying why it did not run: the scoreboard workflow
writes one when a backend's package does not install or its backend does not load; one may
be written by hand for a backend that installs but could not be run (its reason says why).

Tests are matched across runs by what they are, without the backend: the scenario and its
axis values (``test_aot_autograd.LSTMTests.test_lstm`` under ``dynamic``/``bfloat16``). A test
*passes* when its outcome is PASS; it *fails* otherwise, expected failures and refusals
included (the board compares what backends do, not what their projects expect of them);
skipped and collateral results are neither (each outcome's ``scoreboard`` in harness.outcomes).
The interop view is over the tests every row ran.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import outcomes
from harness.checks import clauses
from harness.report import problems, upstream_bugs
from harness.report.results import RunResults, TestResult, load

SCHEMA = "dynamo-aot-suite/scoreboard"
SCHEMA_VERSION = 1
INSTALL_FAILED = "install-failed.json"  # {"backend": ..., "package": ..., "reason": ...}
PERF_FAMILY = "test_perf."  # the perf tier's scenarios (test/dynamo/test_perf.py)
UPSTREAM, LISTING = "upstream", "issues.json"  # --upstream-reports' folder in a run, and its list as data


class ScoreboardError(ValueError):
    """Runs that cannot make a board; the message is one line."""


def key(test: TestResult) -> str:
    """A test without its backend: ``scenario`` and each axis value other than the default."""
    return test.scenario + "".join(f"[{name}={value}]" for name, value in sorted(test.axes.items()))


def clause_of(test: TestResult) -> str:
    """The row of the clause matrix a test counts in: the clause its scenario was written for
    (harness/checks/clauses.py), whatever the backend, so every backend's row has the same tests."""
    return clauses.of_scenario(test.scenario) or clauses.NO_CLAUSE


def family_of(test: TestResult) -> str:
    return test.scenario.rsplit(".", 1)[0]


@dataclass
class Row:
    """One backend column of one run."""

    label: str  # unique on the board
    column: str
    sources: list[str]  # the runs' directories: one, or a tier in each (the default tier, the perf tier)
    run: dict[str, Any]
    package: str = ""  # "openvino 2026.4.1"
    tests: list[TestResult] = field(default_factory=list)
    install_failed: str = ""  # why it did not run: its package did not install, its backend did not load...

    def joins(self, other: "Row") -> bool:
        """Whether ``other`` is more of this row: the same backend on the same torch, other tests
        (its perf tier run beside its default tier)."""
        return (not self.install_failed and not other.install_failed and self.column == other.column
                and self.run.get("torch") == other.run.get("torch") and not set(self.outcomes) & set(other.outcomes))

    def found_file(self, name: str) -> Path | None:
        """``name`` (``repros/<id>.py``) in the first of the row's runs that has it."""
        return next((Path(source) / name for source in self.sources if (Path(source) / name).exists()), None)

    def issues(self) -> list[dict[str, Any]]:
        """The issues ``--upstream-reports`` wrote for the row's runs (harness.report.formats.upstream)."""
        found = []
        for source in self.sources:
            try:
                found += json.loads((Path(source) / UPSTREAM / LISTING).read_text())
            except (OSError, ValueError):
                pass
        return found

    @property
    def outcomes(self) -> dict[str, str]:
        return {key(test): test.outcome for test in self.tests}

    def counts(self) -> dict[str, int]:
        counted = {outcome: sum(test.outcome == outcome for test in self.tests) for outcome in outcomes.reported()}
        return {"tests": len(self.tests), **counted, "unexpected": sum(test.unexpected for test in self.tests),
                "problems": len(problems.group(self.tests))}

    def eager_share(self) -> float | None:
        shares = [test.eager_share["share"] for test in self.tests if test.eager_share]
        return round(statistics.median(shares), 4) if shares else None

    def speedup(self) -> float | None:
        """The geometric mean of the perf tier's speed-ups, where it ran."""
        ups = [test.perf["speedup"] for test in self.tests if test.perf and test.perf.get("speedup")]
        return round(math.exp(sum(map(math.log, ups)) / len(ups)), 3) if ups else None

    def perf_tests(self) -> tuple[int, int]:
        """The perf tier's tests of the row, and how many of them measured a speed-up."""
        ran = [test for test in self.tests if test.scenario.startswith(PERF_FAMILY)]
        return len(ran), sum(bool(test.perf and test.perf.get("speedup")) for test in ran)

    def versions(self) -> dict[str, str]:
        if self.install_failed:
            return {"torch": str(self.run.get("torch", "")), "package": self.package, "suite": ""}
        return {"torch": str(self.run.get("torch", "")), "package": self.package,
                "suite": str(self.run.get("suite", "")) or "before 0.5.0"}


def read(sources: list[str]) -> list[Row]:
    """Each source's rows, in order; a source that cannot be read stops it, in one line."""
    rows: list[Row] = []
    for source in sources:
        path = Path(source)
        marker = (path if path.is_dir() else path.parent) / INSTALL_FAILED
        if path.is_dir() and not (path / "results.json").exists() and marker.exists():
            try:
                failed = json.loads(marker.read_text())
            except (OSError, json.JSONDecodeError) as error:
                raise ScoreboardError(f"{marker}: unreadable ({error})") from None
            name = _name_of(str(failed.get("backend") or path.name))
            rows.append(Row(name, name, [str(path)], {}, str(failed.get("package", "")),
                            install_failed=str(failed.get("reason", "it did not install"))))
            continue
        results: RunResults = load(path)  # a ResultsError (schema, JSON) is its one line
        packages = {backend.get("name"): backend.get("package", "") for backend in results.run.get("backends", [])}
        directory = str(path if path.is_dir() else path.parent)
        for column in results.columns():
            tests = [test for test in results.tests if test.column == column]
            if not tests or tests[0].backend == "-":
                continue
            row = Row(column, column, [directory], results.run, packages.get(tests[0].backend, ""), tests)
            same = next((kept for kept in rows if kept.joins(row)), None)
            if same is None:
                rows.append(row)
            else:
                same.tests += tests
                same.sources.append(directory)
    torches: dict[str, set[str]] = {}
    for row in rows:  # the same backend from two runs: told apart by its torch, else by number
        torches.setdefault(row.label, set()).add(str(row.run.get("torch", "")))
    for row in rows:
        if len(torches[row.label]) > 1:
            row.label = f"{row.label} (torch {row.run.get('torch', '?')})"
    labels: dict[str, int] = {}
    for row in rows:
        labels[row.label] = labels.get(row.label, 0) + 1
        if labels[row.label] > 1:
            row.label = f"{row.label} #{labels[row.label]}"
    ran = [row for row in rows if not row.install_failed]
    if not ran:
        raise ScoreboardError("no run with results among " + ", ".join(sources))
    common = set.intersection(*(set(row.outcomes) for row in ran))
    if len(ran) > 1 and not common:
        raise ScoreboardError("the runs share no test: " + ", ".join(f"{row.label} ({', '.join(row.sources)})" for row in ran)
                              + "; run the same tier and selection for each")
    return rows


def _name_of(spec: str) -> str:
    """The name test ids would give the backend of ``spec`` (harness.axes.backends)."""
    name = spec.rsplit(":", 1)[-1].removesuffix("()").split(".")[-1]
    return re.sub(r"\W", "_", name).strip("_") or "backend"


def _judged(outcome: str | None) -> bool:
    return outcome is not None and outcomes.named(outcome).scoreboard is not None


def _passes(outcome: str) -> bool:
    return outcomes.named(outcome).scoreboard == "pass"


def clause_matrix(rows: list[Row]) -> dict[str, dict[str, tuple[int, int]]]:
    """Clause -> row label -> (passed, judged), clauses in the contract's order."""
    order = {name: index for index, name in enumerate((*clauses.CLAUSES, clauses.TORCH_ITSELF, clauses.NO_CLAUSE))}
    matrix: dict[str, dict[str, list[int]]] = {}
    for row in rows:
        for test in row.tests:
            if _judged(test.outcome):
                cell = matrix.setdefault(clause_of(test), {}).setdefault(row.label, [0, 0])
                cell[0] += _passes(test.outcome)
                cell[1] += 1
    return {name: {label: tuple(cell) for label, cell in matrix[name].items()}
            for name in sorted(matrix, key=lambda name: order.get(name, len(order)))}


@dataclass
class Interop:
    """Over the tests every row ran and judged."""

    common: int
    all_pass: list[str]
    all_fail: list[str]  # likely torch, or the suite
    only_one_fails: dict[str, list[str]]  # row label -> the tests only it fails
    some_fail: int  # neither all nor one

    def to_json(self) -> dict[str, Any]:
        return {"common": self.common, "all_pass": len(self.all_pass), "all_fail": self.all_fail,
                "only_one_fails": self.only_one_fails, "some_fail": self.some_fail}


def interop(rows: list[Row]) -> Interop:
    ran = [row for row in rows if not row.install_failed]
    by_row = [row.outcomes for row in ran]
    common = sorted(set.intersection(*(set(key for key, outcome in each.items() if _judged(outcome))
                                       for each in by_row))) if by_row else []
    all_pass, all_fail, some = [], [], 0
    only: dict[str, list[str]] = {row.label: [] for row in ran}
    for test in common:
        failing = [row.label for row, each in zip(ran, by_row) if not _passes(each[test])]
        if not failing:
            all_pass.append(test)
        elif len(failing) == len(ran) and len(ran) > 1:
            all_fail.append(test)
        elif len(failing) == 1 and len(ran) > 1:
            only[failing[0]].append(test)
        else:
            some += 1
    return Interop(len(common), all_pass, all_fail, only, some)


@dataclass
class FamilyCell:
    passed: int
    judged: int
    # (problem id, its repro file and its issue for the tracker relative to the board, where the runs wrote them)
    problems: list[tuple[str, str | None, str | None]]


def families(rows: list[Row], out_dir: Path) -> dict[str, dict[str, FamilyCell]]:
    """Scenario family -> row label -> its cell, families in name order."""
    table: dict[str, dict[str, FamilyCell]] = {}
    for row in rows:
        by_family: dict[str, list[TestResult]] = {}
        for test in row.tests:
            by_family.setdefault(family_of(test), []).append(test)
        for family, tests in by_family.items():
            found = []
            ready = {entry["id"]: entry.get("path", f"{entry['id']}.md") for entry in row.issues() if entry.get("ready")}
            for problem in problems.group(tests):
                repro = row.found_file(f"repros/{problem.id}.py")
                issue = row.found_file(f"{UPSTREAM}/{ready[problem.id]}") if problem.id in ready else None
                found.append((problem.id, *(os.path.relpath(path, out_dir) if path else None for path in (repro, issue))))
            judged = [test for test in tests if _judged(test.outcome)]
            table.setdefault(family, {})[row.label] = FamilyCell(sum(_passes(test.outcome) for test in judged),
                                                                 len(judged), found)
    return dict(sorted(table.items()))


def changes(rows: list[Row], previous: dict[str, Any]) -> dict[str, dict[str, list[str]]]:
    """Per row present in both boards: the tests newly failing and newly passing since
    ``previous`` (a scoreboard.json), and the rows new or gone."""
    before = previous.get("outcomes", {})
    found: dict[str, dict[str, list[str]]] = {}
    for row in rows:
        if row.label not in before:
            continue
        old, new = before[row.label], row.outcomes
        both = [test for test in new if test in old and _judged(new[test]) and _judged(old[test])]
        found[row.label] = {
            "newly_failing": sorted(test for test in both if _passes(old[test]) and not _passes(new[test])),
            "newly_passing": sorted(test for test in both if not _passes(old[test]) and _passes(new[test])),
        }
    return found


def read_previous(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise ScoreboardError(f"{path}: not a readable scoreboard.json ({error})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ScoreboardError(f"{path}: not a scoreboard.json (no \"schema\": \"{SCHEMA}\")")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise ScoreboardError(f"{path}: scoreboard schema version {data.get('schema_version')}, this suite reads "
                              f"{SCHEMA_VERSION}")
    return data


def _issues(row: Row, out_dir: Path | None) -> dict[str, Any] | None:
    """How many issues ``--upstream-reports`` wrote for the row, how many its repros showed
    (ready to file), and where their list is, relative to the board."""
    issues = row.issues()
    if not issues:
        return None
    listing = row.found_file(f"{UPSTREAM}/README.md")
    return {"written": len(issues), "ready": sum(bool(issue.get("ready")) for issue in issues),
            "index": os.path.relpath(listing, out_dir) if listing and out_dir else None}


def to_json(rows: list[Row], built: str, previous: dict[str, Any] | None = None,
            out_dir: Path | None = None) -> dict[str, Any]:
    shared = interop(rows)
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "built": built,
        "backends": [{"label": row.label, "column": row.column, "sources": row.sources, "versions": row.versions(),
                      "install_failed": row.install_failed or None,
                      **({} if row.install_failed else
                         {"counts": row.counts(), "eager_share": row.eager_share(), "speedup": row.speedup(),
                          "perf_tests": dict(zip(("ran", "measured"), row.perf_tests())),
                          "issues": _issues(row, out_dir),
                          "upstream_bugs": [bug.number for bug in upstream_bugs.shown(row) if not bug.fixed],
                          "duration_s": round(sum(test.duration_s for test in row.tests), 1)})}
                     for row in rows],
        "clauses": {name: {label: list(cell) for label, cell in cells.items()}
                    for name, cells in clause_matrix(rows).items()},
        "interop": shared.to_json(),
        **({"changes": changes(rows, previous)} if previous is not None else {}),
        # What the next night's board is compared against.
        "outcomes": {row.label: row.outcomes for row in rows if not row.install_failed},
    }
