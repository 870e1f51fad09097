"""The run's summary on the console: a table per backend, the operator sweep's counts, and
every unexpected result with its reason and a command that reruns just that test."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from harness.expectations import DEFAULT_FILE
from harness.report.results import BACKEND_INDEPENDENT, OUTCOMES, RunResults, TestResult

_DEFAULT_EXPECTATIONS = DEFAULT_FILE.resolve()
OP_SWEEP_PREFIX = "test_op_sweep."


def repro_command(test: TestResult, expectations: str | None = None, run: dict | None = None) -> str:
    """Reruns only this test, on only this backend, in one worker (in the run's tier, and
    with its operator sweep when the test is an operator's)."""
    parts = ["python", "run_tests.py"]
    if test.backend_spec:
        parts += ["--backend", test.backend_spec]
    if expectations and Path(expectations).resolve() != _DEFAULT_EXPECTATIONS:
        parts += ["--expectations", expectations]
    run = run or {}
    if run.get("tier", "default") != "default":
        parts += ["--tier", run["tier"]]
    if test.id.startswith(f"test.dynamo.{OP_SWEEP_PREFIX}") and run.get("op_sweep", "quick") != "quick":
        parts += ["--op-sweep", run["op_sweep"]]
    parts += ["-k", test.id, "-j", "1"]
    imports = os.environ.get("DYNAMO_SUITE_IMPORTS")
    prefix = f"DYNAMO_SUITE_IMPORTS={shlex.quote(imports)} " if imports else ""
    return prefix + " ".join(shlex.quote(part) for part in parts)


def op_sweep_lines(results: RunResults) -> list[str]:
    """Per backend: ops tested, passed, expected failures, unexpected."""
    lines = []
    for backend in results.backends():
        ops = [test for test in results.tests if test.backend == backend and test.scenario.startswith(OP_SWEEP_PREFIX)]
        if ops:
            count = lambda *outcomes: sum(test.outcome in outcomes for test in ops)  # noqa: E731
            lines.append(f"op sweep ({results.run.get('op_sweep', 'quick')}) on {backend}: {len(ops)} ops tested, "
                         f"{count('PASS')} passed, {count('XFAIL')} expected failures, "
                         f"{sum(test.unexpected for test in ops)} unexpected, {count('SKIP')} skipped")
    return lines


def summary(results: RunResults, expectations: str | None = None) -> str:
    lines = [_table(results), *op_sweep_lines(results), ""]
    unexpected = results.unexpected
    if unexpected:
        lines.append(f"{len(unexpected)} unexpected result{'s' if len(unexpected) != 1 else ''}:")
        for test in unexpected:
            lines.append(f"  {test.outcome:<7} {test.id}")
            lines.append(f"          {test.reason}")
            lines.append(f"          rerun: {repro_command(test, expectations, results.run)}")
        lines.append("")
    counts = results.summary()
    verdict = "as expected" if not unexpected else f"{len(unexpected)} unexpected"
    lines.append(f"{counts['total']} tests, {verdict}, in {results.run.get('duration_s', 0):.0f} s")
    return "\n".join(lines)


def _table(results: RunResults) -> str:
    columns = ["backend", *OUTCOMES, "time"]
    rows = []
    for backend in results.backends():
        tests = [test for test in results.tests if test.backend == backend]
        label = "(backend-independent)" if backend == BACKEND_INDEPENDENT else backend
        counts = [sum(test.outcome == outcome for test in tests) for outcome in OUTCOMES]
        seconds = sum(test.duration_s for test in tests)
        rows.append([label, *[str(count) if count else "." for count in counts], f"{seconds:.0f}s"])
    widths = [max(len(row[index]) for row in [columns, *rows]) for index in range(len(columns))]
    render = lambda row: "  ".join(cell.ljust(width) if index == 0 else cell.rjust(width)  # noqa: E731
                                   for index, (cell, width) in enumerate(zip(row, widths)))
    return "\n".join([render(columns), render(["-" * width for width in widths]), *map(render, rows)])
