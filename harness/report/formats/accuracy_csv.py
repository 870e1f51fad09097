"""The model tests as PyTorch's benchmarks/dynamo accuracy CSVs, for dashboards that read them.

One file per report column and mode, ``<column>_models_training.csv`` and
``<column>_models_inference.csv``, with the columns ``name,accuracy,graph_breaks`` of
benchmarks/dynamo/ci_expected_accuracy: ``name`` the model, ``accuracy`` ``pass``,
``fail_accuracy`` (it ran; a check disagreed with eager) or ``fail_to_run`` (an error, a
crash, a hang, a refusal), ``graph_breaks`` Dynamo's count. An expected failure is written
as what it is (``fail_accuracy`` or ``fail_to_run``, from its stage); skipped models are not
written, as benchmarks/dynamo leaves out the models it skips.
"""

from __future__ import annotations

import csv
import io
import re

from harness import outcomes
from harness.report.formats.format import RunReport
from harness.report.results import TestResult

MODELS_PREFIX = "test_models.ModelTests."
HEADER = ("name", "accuracy", "graph_breaks")
_NAME = re.compile(r"^test_(?P<name>.+)_(?P<mode>train|eval)$")
MODES = {"train": "training", "eval": "inference"}


def accuracy(test: TestResult) -> str | None:
    """benchmarks/dynamo's accuracy status of a model test (None: not written)."""
    ended = outcomes.named(test.outcome).ended
    if ended == outcomes.PASSED:
        return "pass"
    if ended is None:  # not run, or not its own result
        return None
    return "fail_accuracy" if test.stage == "check" else "fail_to_run"


def render(report: RunReport) -> dict[str, str]:
    """File name -> CSV text, for each column and mode with model tests."""
    results = report.results
    rows: dict[str, list[tuple[str, str, int]]] = {}
    for test in results.tests:
        method = test.scenario.removeprefix(MODELS_PREFIX)
        match = _NAME.match(method) if test.scenario.startswith(MODELS_PREFIX) else None
        status = accuracy(test) if match else None
        if status is None:
            continue
        column = re.sub(r"[^A-Za-z0-9_.-]+", "_", test.column)
        name = f"{column}_models_{MODES[match.group('mode')]}.csv"
        breaks = int((test.metrics or {}).get("graph_breaks", 0))
        rows.setdefault(name, []).append((match.group("name"), status, breaks))
    written = {}
    for name, entries in sorted(rows.items()):
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(HEADER)
        writer.writerows(sorted(entries))
        written[name] = buffer.getvalue()
    return written
