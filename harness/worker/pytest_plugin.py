"""The pytest side of ``run_tests.py``: loaded into every pytest-xdist worker with
``-p harness.worker.pytest_plugin``.

In a worker it

* keeps only the tests the runner selected, in the runner's order (longest first), each
  with its own time limit,
* registers the worker's log of everything the process writes, with the crash and hang
  watchdogs (``harness.worker.worker_log``), and, when asked, its timings per test,
* registers the canary's check that the worker is still healthy after a failure
  (``harness.worker.health``),
* classifies each finished test where the exception object is still at hand
  (``harness.worker.classify``) and attaches it to the report that xdist sends to the
  controller.

The controller side (``harness.run.engine.ResultCollector``) turns those reports, and xdist's
reports of crashed workers (``harness.worker.crash_reports``), into results.
"""

from __future__ import annotations

import atexit
import json
from pathlib import Path

import pytest

from harness import settings
from harness.worker.classify import classify
from harness.worker.health import HealthCheck
from harness.worker.protocol import PROPERTY, exit_at_once, unittest_id
from harness.worker.worker_log import TIMINGS_ENV, TimingLog, WorkerLog


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dynamo-aot-suite", "dynamo-aot-suite runner (set by run_tests.py)")
    group.addoption("--suite-selection", help="file mapping the unittest ids to run, in order, to their "
                                                "time limits (0: --timeout)")
    group.addoption("--suite-workdir", help="directory for the per-worker logs")
    group.addoption(settings.FILE_OPTION, dest="suite_settings",
                    help="the run's settings (harness.settings), installed in each worker before the tests load")
    group.addoption("--suite-watchdog", type=float, default=0.0,
                    help="seconds after which a stuck worker dumps its stack and exits (0: never)")
    group.addoption("--suite-defer-after-failure", action="store_true",
                    help="once a test fails in a worker, hand back unrun (DEFERRED) every later test "
                         "the worker cannot show it is healthy for, for a fresh worker to run")


def pytest_configure(config: pytest.Config) -> None:
    workerinput = getattr(config, "workerinput", None)
    workdir = config.getoption("suite_workdir")
    if workerinput is not None and workdir:
        config.pluginmanager.register(WorkerLog(config, workdir, workerinput["workerid"]), "dynamo_suite_worker_log")
    if workerinput is not None:
        # Once the worker is done (after pytest and xdist, at interpreter exit), it leaves
        # without tearing torch down: seconds per worker, for nothing.
        atexit.register(exit_at_once, 0)
        config.pluginmanager.register(HealthCheck(defer=config.getoption("suite_defer_after_failure"),
                                                  watchdog=config.getoption("suite_watchdog")),
                                      "dynamo_suite_health_check")
    if workerinput is not None and config.getoption("suite_settings"):
        settings.use(settings.Settings.read(config.getoption("suite_settings")))
    if workerinput is not None and settings.current().given(TIMINGS_ENV):
        config.pluginmanager.register(TimingLog(settings.current().get(TIMINGS_ENV), workerinput["workerid"]),
                                      "dynamo_suite_timing_log")


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    selection = config.getoption("suite_selection")
    if not selection:
        return
    limits = json.loads(Path(selection).read_text())
    order = {test_id: index for index, test_id in enumerate(limits)}
    keep = [item for item in items if unittest_id(item) in order]
    dropped = [item for item in items if unittest_id(item) not in order]
    keep.sort(key=lambda item: order[unittest_id(item)])
    for item in keep:
        if limits[unittest_id(item)]:
            item.add_marker(pytest.mark.timeout(limits[unittest_id(item)]))
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    if outcome.exception is not None:
        # pytest could not describe the failure: on CPython 3.11, after a backend's deep
        # recursion, ast.parse (which pytest's tracebacks use) raised SystemError "AST
        # constructor recursion depth mismatch" (MAX, 2026-12-03). Unhandled, the worker dies
        # of an internal error and takes the run with it; described plainly, it is a result.
        outcome.force_result(_plainly_reported(item, call))
    report: pytest.TestReport = outcome.get_result()
    if report.when == "call" or not report.passed:
        report.user_properties.append((PROPERTY, classify(item, call, report)))


def _plainly_reported(item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport:
    """The test's report with Python's own traceback (no source parsing), and why."""
    option = item.config.option
    style, option.tbstyle = option.tbstyle, "native"
    try:
        return pytest.TestReport.from_item_and_call(item, call)
    finally:
        option.tbstyle = style
