"""Running the selected tests with pytest + pytest-xdist + pytest-timeout, and turning
pytest's reports into results -- including the reports of workers that died.

Always at least one xdist worker process, never the runner's own process, so a segfault or
``os._exit`` takes down a worker that xdist replaces, and the run goes on.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from harness import outcomes, settings
from harness.measure import stages
from harness.report.results import TestResult
from harness.run.collection import TestInfo
from harness.worker import crash_reports, forkserver
from harness.worker.protocol import PROPERTY, watchdog, worker_log_path

PYTEST_INI = Path(__file__).resolve().with_name("pytest.ini")


@dataclass(frozen=True)
class EngineOptions:
    jobs: int
    timeout: float  # seconds per test; 0 = none
    root: Path  # test node ids are relative to it (harness.run.collection.Collected.root)
    workdir: Path
    # A rerun: after a failure, a worker hands back unrun (outcome DEFERRED) the later tests
    # it cannot show it is healthy for (harness.worker.health).
    defer_after_failure: bool = False
    settings_file: Path | None = None  # the run's harness.settings, for the workers (None: their environment)
    fork_server: Path | None = None  # where the workers are forked (harness.worker.forkserver; None: interpreters)

    @property
    def watchdog(self) -> float:
        return watchdog(self.timeout)

    def limit(self, test: TestInfo) -> float:
        return test.timeout or self.timeout


class EngineError(RuntimeError):
    """pytest itself failed (internal or usage error); the message says where to look."""


class ResultCollector:
    """A controller-side pytest plugin: one TestResult per selected test."""

    def __init__(self, tests: list[TestInfo], options: EngineOptions,
                 on_result: Callable[[TestResult], None]) -> None:
        self.by_nodeid = {test.nodeid: test for test in tests}
        self.options = options
        self.on_result = on_result
        self.results: dict[str, TestResult] = {}
        self._started: dict[str, float] = {}
        self._phases: dict[str, list[tuple[pytest.TestReport, dict | None]]] = defaultdict(list)
        self._pid: dict[str, int | None] = {}  # worker id -> the process it runs now
        # (worker id, pid) -> the latest test that failed in that process
        self._last_failure: dict[tuple[str, int | None], str] = {}
        # Tests whose worker showed it was healthy after its latest failure (harness.worker.health).
        self._trusted: set[str] = set()

    def pytest_runtest_logstart(self, nodeid: str, location: tuple) -> None:
        self._started[nodeid] = time.monotonic()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        info = self.by_nodeid.get(report.nodeid)
        if info is None or info.id in self.results:
            return
        worker = _worker_id(report)
        if report.when not in ("setup", "call", "teardown"):  # xdist's report of a dead worker
            self._finish(self._dead_worker_result(info, report), self._pid.pop(worker, None))
            return
        data = dict(report.user_properties).get(PROPERTY)
        if data and data.get("pid"):
            self._pid[worker] = data["pid"]
        self._phases[report.nodeid].append((report, data))
        if report.when == "teardown":
            self._finish(self._combine(info, self._phases.pop(report.nodeid)), self._pid.get(worker))

    def _finish(self, result: TestResult, pid: int | None = None) -> None:
        process = (result.worker, pid)
        if result.unexpected and process in self._last_failure and result.id not in self._trusted:
            result.after = self._last_failure[process]
        if outcomes.ended(result.outcome, outcomes.FAILED):
            self._last_failure[process] = result.id
        self.results[result.id] = result
        self.on_result(result)

    def _combine(self, info: TestInfo, phases: list[tuple[pytest.TestReport, dict | None]]) -> TestResult:
        duration = sum(report.duration for report, _ in phases)
        worker = _worker_id(phases[0][0])
        # The test's own call report comes after those of its subtests (made before its
        # cleanups recorded the metrics), so the last one.
        call = next((data for report, data in reversed(phases) if report.when == "call" and data), None)
        if any(data and data.get("trusted") for _, data in phases):
            self._trusted.add(info.id)
        decisive = call
        for report, data in phases:
            if data and data["outcome"] != "PASS" and (decisive is None or decisive["outcome"] == "PASS"):
                # A failing or skipped setup/teardown decides; in teardown that is an ERROR.
                decisive = dict(data, outcome="ERROR") if report.when == "teardown" and not report.skipped else data
        decisive = decisive or {"outcome": "PASS", "reason": ""}
        outcome, reason = decisive["outcome"], decisive.get("reason", "")
        limit = self.options.limit(info)
        if outcome in ("FAIL", "ERROR", "XFAIL") and limit > 0 and duration >= limit:
            # pytest-timeout's exception can be swallowed (an expected failure, a wrapper
            # that re-raises something else); the clock cannot.
            outcome, reason = "TIMEOUT", f"exceeded the {limit:g} s time limit ({reason})"
        return info.result(
            outcome, reason,
            duration_s=round(duration, 3),
            metrics=(call or decisive).get("metrics"),
            eager_share=(call or decisive).get("eager_share"),
            perf=(call or decisive).get("perf"),
            expectation=(call or decisive).get("expectation"),
            details=decisive.get("details", ""),
            worker=worker,
            where=decisive.get("where", ""),
            stage=decisive.get("stage") if outcome != "PASS" else None,
            covers=(call or decisive).get("covers"),
            needs=(call or decisive).get("needs"),
            out_of_scope=(call or decisive).get("out_of_scope") or [],
        )

    def _dead_worker_result(self, info: TestInfo, report: pytest.TestReport) -> TestResult:
        worker = _worker_id(report)
        output = crash_reports.last_output(worker_log_path(self.options.workdir, worker), info.nodeid)
        exit_code = _exit_code(report)
        innermost = crash_reports.innermost_frame(output)
        where = f" in {innermost}" if innermost else ""
        if crash_reports.stopped_by_watchdog(output):
            outcome = "TIMEOUT"
            limit = self.options.limit(info)
            compiling = " while the backend was compiling" if crash_reports.while_compiling(output) else ""
            reason = (f"still running {watchdog(limit):g} s after the test started, out of reach "
                      f"of the {limit:g} s time limit's SIGALRM{compiling}{where}; worker killed")
        else:
            outcome = "CRASH"
            reason = f"worker {worker} died: {crash_reports.death_cause(output, exit_code)}{where}"
        duration = time.monotonic() - self._started.get(info.nodeid, time.monotonic())
        stage = stages.BACKEND_COMPILE if crash_reports.while_compiling(output) else stages.BACKEND_RUN
        return info.result(outcome, reason, duration_s=round(duration, 3),
                           details=crash_reports.crash_details(output), worker=worker, where=innermost, stage=stage)


def _worker_id(report: pytest.TestReport) -> str:
    node = getattr(report, "node", None)
    return getattr(getattr(node, "gateway", None), "id", "") or getattr(report, "worker_id", "") or ""


def _exit_code(report: pytest.TestReport) -> int | None:
    # execnet keeps the worker's subprocess.Popen privately; without it the cause is
    # still read from the log.
    popen = getattr(getattr(getattr(getattr(report, "node", None), "gateway", None), "_io", None), "popen", None)
    if popen is None:
        return None
    try:
        return popen.wait(timeout=5)
    except Exception:
        return None


def share_compile_threads(jobs: int) -> None:
    """Each worker's inductor compiles with its share of the cores: N workers each starting a
    pool as wide as the machine would run N times more compilers than cores. (Intra-op
    threads are left alone: splitting them measured no faster on the suite's small tensors.)
    Set before the tests are collected: inductor reads it on import, and a forked worker
    imported it there."""
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", str(max(1, (os.cpu_count() or 1) // jobs)))


def _workers(jobs: int, fork_server: Path | None) -> list[str]:
    """xdist's options for ``jobs`` workers: interpreters of their own, or forks (each
    started by a client that stands in for its interpreter)."""
    if fork_server is None:
        return ["-n", str(jobs)]
    client = forkserver.client_command(fork_server, subprocess._args_from_interpreter_flags())
    return ["--tx", f"{jobs}*popen//python={client}", "--dist", "load"]


def dispatch_order(tests: list, jobs: int) -> list:
    """The order to hand ``tests`` (sorted longest first) to xdist so that they start longest
    first on every worker.

    xdist gives each worker two tests to begin with (a worker runs a test only once it knows
    the next), the first worker the first two. In plain longest-first order the two longest
    tests would share a worker; pairing the i-th longest with the (2*jobs-1-i)-th evens out
    the first round. After it, each worker gets the next test as it finishes one.
    """
    head, tail = tests[: 2 * jobs], tests[2 * jobs:]
    if jobs < 2 or len(head) < 2 * jobs:
        return list(tests)
    paired = [test for index in range(jobs) for test in (head[index], head[2 * jobs - 1 - index])]
    return paired + tail


def run(tests: list[TestInfo], options: EngineOptions, on_result: Callable[[TestResult], None]) -> dict[str, TestResult]:
    """Run ``tests`` (sorted longest first); a result for every one of them."""
    options.workdir.mkdir(parents=True, exist_ok=True)
    jobs = max(1, min(options.jobs, len(tests)))
    selection = options.workdir / "selection.json"
    # In order, with each test's own time limit where it has one.
    selection.write_text(json.dumps({test.id: test.timeout for test in dispatch_order(tests, jobs)}))
    files = sorted({str(options.root / test.nodeid.split("::", 1)[0]) for test in tests})
    args = [
        "-p", "harness.worker.pytest_plugin",
        "-p", "no:cacheprovider",  # no .pytest_cache in the user's tree
        "-p", "no:faulthandler",  # the plugin arms faulthandler on the worker log instead
        "-c", str(PYTEST_INI), "--rootdir", str(options.root),
        "--noconftest",  # a conftest.py of the user's project is not the suite's
        "-q", "--no-header",
        "--capture", "tee-sys",  # keep output in reports and in the worker log alike
        *_workers(jobs, options.fork_server),
        # Hand out tests one or two at a time, so longest-first order is kept.
        "--maxschedchunk", "1",
        "--max-worker-restart", str(len(tests) + jobs),
        "--timeout", f"{options.timeout:g}", "--timeout-method", "signal",
        "--suite-selection", str(selection),
        "--suite-workdir", str(options.workdir),
        "--suite-watchdog", f"{options.watchdog:g}",
        *(["--suite-defer-after-failure"] if options.defer_after_failure else []),
        *([settings.FILE_OPTION, str(options.settings_file)] if options.settings_file else []),
        *files,
    ]
    collector = ResultCollector(tests, options, on_result)
    pytest_log = options.workdir / "pytest.log"
    with open(pytest_log, "w", encoding="utf-8") as log, contextlib.redirect_stdout(log):
        code = pytest.main(args, plugins=[collector])
    if code == pytest.ExitCode.INTERRUPTED:
        raise KeyboardInterrupt
    if code in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR):
        tail = pytest_log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:]
        raise EngineError(f"pytest failed ({code.name}): {tail[0] if tail else 'no output'}; "
                          f"full log: {pytest_log}")
    for test in tests:
        if test.id not in collector.results:
            # Collection in the worker differed, or xdist gave up on restarting workers.
            collector._finish(test.result("ERROR", "did not run: the worker never reported it"))
    return collector.results

