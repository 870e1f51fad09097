"""A finished test's outcome, one-line reason, where it raised and its details, decided in
the worker while the exception object is still at hand: PASS, FAIL (a check failed), ERROR
(anything else raised, the backend's own error named where Dynamo wrapped it), XFAIL, XPASS,
SKIP, TIMEOUT, and whatever outcome a skip stands for (``harness.outcomes.Skipped``: REFUSED,
DEFERRED). ``harness.worker.pytest_plugin`` attaches it, with the test's Dynamo metrics, to the
report that xdist sends to the controller."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from harness import outcomes, settings
from harness.errors import innermost
from harness.measure import stages
from harness.worker.frames import in_compile, in_stdlib, short_path
from harness.worker.protocol import unittest_id

# A directory: when set, a worker writes there the graphs each unexpectedly failing test
# handed its backend (harness.measure.repro), for the run's standalone repro files.
CAPTURE_ENV = settings.CAPTURE_DIR
_REASON_LIMIT = 400
_DETAILS_LIMIT = 8000


# pytest-timeout's message when its SIGALRM fires inside a test.
_TIMEOUT_MESSAGE = re.compile(r"^Timeout \(?>")


class SkipAs(pytest.skip.Exception):
    """A skip the worker raises itself for another outcome than SKIP (harness.worker.health's
    DEFERRED): pytest keeps the exception, so it carries the outcome to ``classify``."""

    def __init__(self, skipped: outcomes.Skipped) -> None:
        super().__init__(skipped.message)
        self.skipped = skipped


def skipped_as(testcase: Any, call: pytest.CallInfo) -> outcomes.Skipped | None:
    """The outcome a skip stands for, if not SKIP: carried by the skip where the worker raised
    it (``SkipAs``), stated on the test case where unittest caught it and kept only its message
    (a refusal: harness.testcase.base)."""
    raised = call.excinfo.value if call.excinfo is not None else None
    return getattr(raised, "skipped", None) or getattr(testcase, "skipped_as", None)


def classify(item: pytest.Item, call: pytest.CallInfo, report: pytest.TestReport) -> dict[str, Any]:
    """Outcome, one-line reason and details of one phase of a test, as plain JSON data."""
    testcase = getattr(item, "instance", None)
    expectation = getattr(testcase, "expectation", None)
    entry: dict[str, Any] = {
        "when": report.when,
        "pid": os.getpid(),  # which process: a failure may break the process for later tests
        "metrics": getattr(testcase, "dynamo_metrics", None),
        "eager_share": getattr(testcase, "eager_share", None),
        "perf": getattr(testcase, "perf", None),  # test/dynamo/test_perf.py: harness.testcase.perf.figures
        "expectation": expectation.source if expectation is not None else None,
        "covers": getattr(testcase, "covers", None),  # harness.features: what its graphs and calls showed
        "needs": getattr(testcase, "needs", None),  # harness.features.scope
        "out_of_scope": getattr(testcase, "needs_unsupported", []),
    }
    if report.passed:
        return {**entry, "outcome": "PASS", "reason": ""}
    if report.skipped:
        stated = skipped_as(testcase, call)
        if stated is not None:
            return {**entry, "outcome": stated.outcome, "stage": getattr(testcase, "failure_stage", None),
                    "reason": stated.reason}
        if hasattr(report, "wasxfail"):
            reason = f"expected failure: {expectation.reason}" if expectation is not None else "expected failure"
            return {**entry, "outcome": "XFAIL", "reason": reason, "stage": getattr(testcase, "failure_stage", None)}
        return {**entry, "outcome": "SKIP", "reason": _skip_reason(report)}
    error = call.excinfo.value if call.excinfo is not None else None
    message = str(error) if error is not None else ""
    details = report.longreprtext[-_DETAILS_LIMIT:]
    if isinstance(error, pytest.fail.Exception) and message.startswith("Unexpected success"):
        reason = "passed, but expected to fail"
        if expectation is not None:
            reason += f" ({expectation.reason}) [{expectation.source}]"
        return {**entry, "outcome": "XPASS", "reason": reason, "details": ""}
    if isinstance(error, pytest.fail.Exception) and _TIMEOUT_MESSAGE.match(message):
        where = _innermost_frame(call.excinfo)
        limit = re.search(r">\s*([\d.]+)\s*s", message)
        reason = f"stopped by the {float(limit.group(1)):g} s time limit" if limit else message.splitlines()[0]
        compiling = in_compile("\n".join(f"in {entry.name}" for entry in call.excinfo.traceback))
        if compiling:
            reason += " while the backend was compiling"
        reason += f" in {where}" if where else ""
        return {**entry, "outcome": "TIMEOUT", "reason": reason, "where": where, "details": details,
                "stage": stages.BACKEND_COMPILE if compiling else stages.BACKEND_RUN}
    failed_assertion = isinstance(error, AssertionError) and report.when == "call" and raised_by_a_check(error, item)
    if report.when == "call" and settings.current().given(CAPTURE_ENV) and expectation_allows_capture(testcase):
        _capture_graphs(item, testcase)
    stage = getattr(testcase, "failure_stage", None) or stages.of(error, failed_assertion)
    reason = _reason(error) if error is not None else (report.longreprtext.strip().splitlines() or [""])[-1]
    if expectation is not None and expectation.stage and expectation.stage != stage:
        reason = f"failed in {stage}, not in {expectation.stage} as expected [{expectation.source}]: {reason}"
    return {
        **entry,
        "outcome": "FAIL" if failed_assertion else "ERROR",
        "reason": reason,
        "where": "" if failed_assertion or error is None else _raised_at(innermost(error)),
        "details": details,
        "stage": stage,
    }


def expectation_allows_capture(testcase: Any) -> bool:
    expectation = getattr(testcase, "expectation", None)
    return testcase is not None and (expectation is None or expectation.status != "xfail")


def _capture_graphs(item: pytest.Item, testcase: Any) -> None:
    try:
        from harness.measure import repro

        repro.save(testcase, str(Path(settings.current().get(CAPTURE_ENV)) / f"{unittest_id(item)}.graphs"))
    except Exception as error:  # a repro is a convenience: never let it change the result
        print(f"dynamo-aot-suite: could not save the graphs of {item.nodeid} for a repro: {error!r}")


def raised_by_a_check(error: AssertionError, item: pytest.Item) -> bool:
    """Whether a check of the test failed, rather than an ``assert`` inside torch or the
    backend (harness.measure.stages.is_check_failure)."""
    return stages.is_check_failure(error, str(item.path))


def _innermost_frame(excinfo: pytest.ExceptionInfo | None) -> str:
    """``function (file:line)`` of the newest frame outside the standard library and pytest."""
    if excinfo is None:
        return ""
    for entry in reversed(excinfo.traceback):
        path = str(entry.path)
        if not in_stdlib(path) and "_pytest" not in path and "pytest_timeout" not in path:
            return f"{entry.name} ({short_path(path)}:{entry.lineno + 1})"
    return ""


def one_line(error: BaseException, prefix: str = "") -> str:
    """``Type: first line of the message``, short enough for a table cell. unittest writes
    a check's own message after its diff (``Lists differ: [..] != [..]`` and lines of diff,
    then `` : <the check's message>``): that message, which says what was compared, is kept."""
    raw = [line for line in str(error).splitlines() if line.strip()]
    lines = [line.strip() for line in raw]
    if isinstance(error, AssertionError) and len(lines) > 1 and " : " in raw[-1]:
        check = raw[-1].rsplit(" : ", 1)[1].strip()
        if check and check not in lines[0]:
            lines[0] += " : " + check
    text = prefix + (f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__)
    return text if len(text) <= _REASON_LIMIT else text[: _REASON_LIMIT - 1] + "…"


def _reason(error: BaseException) -> str:
    """The one-line reason, naming the backend's own error where Dynamo wrapped it: the
    wrapper's first line only names the backend, and "op X is not supported" is what the
    author needs to read."""
    inner = innermost(error)
    return one_line(error) if inner is error else one_line(inner, prefix="the backend's compiler raised ")


def _raised_at(error: BaseException) -> str:
    """``function (file:line)`` of the newest frame of ``error``'s traceback outside the
    standard library and pytest: the code that raised it."""
    import traceback

    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        if not in_stdlib(frame.filename) and "_pytest" not in frame.filename and "pytest_timeout" not in frame.filename:
            return f"{frame.name} ({short_path(frame.filename)}:{frame.lineno})"
    return ""


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr or "")
