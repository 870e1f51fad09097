"""The pytest side of ``run_tests.py``: loaded into every pytest-xdist worker with
``-p harness.run.pytest_plugin``.

In a worker it

* keeps only the tests the runner selected, in the runner's order (longest first),
* sends every output of the process (Python and C level) to a per-worker log file, so that
  when the worker dies the runner can still show the tail of what the test printed,
* arms ``faulthandler`` on that log: a fatal signal leaves its name and the Python stack
  there, and a test stuck where pytest-timeout's SIGALRM cannot reach it (a C loop, an
  ignored signal) is ended by a watchdog a little after the timeout, its stack dumped,
* classifies each finished test (PASS, FAIL, ERROR, XFAIL, XPASS, SKIP, TIMEOUT) where the
  exception object is still at hand, and attaches it with the test's Dynamo metrics to the
  report that xdist sends to the controller.

The controller side (``harness.run.engine.ResultCollector``) turns those reports, and xdist's
reports of crashed workers, into results.
"""

from __future__ import annotations

import atexit
import faulthandler
import json
import os
import re
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import pytest

from harness import settings
from harness.axes import device
from harness.errors import innermost
from harness.report.results import FAILED_OUTCOMES
from harness.run.collection import exit_at_once
from harness.run.health import Health
from harness.testcase import deadline as deadline_module

PROPERTY = "dynamo_suite"  # the user_properties key that carries a test's classification
START_MARK = "\n===== dynamo-aot-suite: start "  # written to the worker log before each test
# A directory: when set, every worker appends one JSON line per test with its timings there
# (bench/bench.py reads them to tell the harness's overhead from the scenarios' time).
TIMINGS_ENV = settings.TIMINGS
# A directory: when set, a worker writes there the graphs each unexpectedly failing test
# handed its backend (harness.measure.repro), for the run's standalone repro files.
CAPTURE_ENV = settings.CAPTURE_DIR
_REASON_LIMIT = 400
_DETAILS_LIMIT = 8000


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


def worker_log_path(workdir: str | os.PathLike, worker_id: str) -> Path:
    return Path(workdir) / f"{worker_id}.log"


def unittest_id(item: pytest.Item) -> str:
    """The id ``python -m unittest`` gives the same test."""
    cls = getattr(item, "cls", None)
    if cls is None:
        return item.nodeid
    return f"{cls.__module__}.{cls.__qualname__}.{item.name}"


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


class WorkerLog:
    """Per-worker log of everything the process writes, plus the crash and hang watchdogs."""

    def __init__(self, config: pytest.Config, workdir: str, worker_id: str) -> None:
        self.watchdog = config.getoption("suite_watchdog")
        self.path = worker_log_path(workdir, worker_id)
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        # execnet talks to the controller over duplicates of the original stdin/stdout, so
        # fds 1 and 2 are free to point at the log.
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(self.fd, 1)
        os.dup2(self.fd, 2)
        self.file = os.fdopen(os.dup(self.fd), "w", buffering=1, encoding="utf-8", errors="replace")
        faulthandler.enable(file=self.file, all_threads=True)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):
        self.file.write(f"{START_MARK}{item.nodeid} =====\n")
        self.file.flush()
        marker = item.get_closest_marker("timeout")
        deadline = self.watchdog
        if deadline > 0 and marker is not None and marker.args:
            deadline = watchdog(float(marker.args[0]))  # the test's own limit, plus the slack
        if deadline > 0:
            faulthandler.dump_traceback_later(deadline, exit=True, file=self.file)
        if marker is not None and marker.args and float(marker.args[0]) > 0:
            # A test that can use spare time (shrinking a generated program) stops in time.
            deadline_module.set_deadline(time.time() + float(marker.args[0]))
        try:
            yield
        finally:
            deadline_module.clear()
            if deadline > 0:
                faulthandler.cancel_dump_traceback_later()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        faulthandler.disable()
        self.file.close()


# The outcome a deferred test reports: the runner hands it to the next fresh worker.
DEFERRED = "DEFERRED"


def watchdog(timeout: float) -> float:
    """When a worker that ignored pytest-timeout's SIGALRM for ``timeout`` s is ended."""
    return timeout + max(10.0, 0.1 * timeout) if timeout > 0 else 0.0


_TRUSTED = pytest.StashKey[bool]()


class HealthCheck:
    """After a failure, a test's result is its own only once the worker has shown it still
    works for that test's backend (harness.run.health): each report says whether it did.
    In a rerun, a test it cannot be shown for is handed back unrun (DEFERRED), for a fresh
    worker to run."""

    def __init__(self, defer: bool, watchdog: float) -> None:
        self.health = Health()
        self.defer = defer
        self.watchdog = watchdog

    @pytest.hookimpl(trylast=True)  # after the selection
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        backends = {backend.spec: backend for item in items
                    if (backend := getattr(getattr(item, "cls", None), "backend", None)) is not None}
        self.health.backends = list(backends.values())

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtestloop(self, session: pytest.Session):
        # Before the first test, outside every test's time limit; a canary stuck for good
        # ends the worker as a stuck test would, its stack in the worker log.
        if self.watchdog > 0:
            faulthandler.dump_traceback_later(self.watchdog, exit=True, file=sys.__stderr__)
        try:
            self.health.take_baselines(device.selected_name())
        finally:
            if self.watchdog > 0:
                faulthandler.cancel_dump_traceback_later()
        yield

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        trusted = self.health.trusted(getattr(getattr(item, "cls", None), "backend", None), device.selected_name())
        item.stash[_TRUSTED] = trusted
        if self.defer and not trusted:
            pytest.skip(f"{DEFERRED}: {self.health.failure} failed earlier in this worker")

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)  # outermost: after the classification
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        outcome = yield
        data = dict(outcome.get_result().user_properties).get(PROPERTY)
        if data:
            data["trusted"] = item.stash.get(_TRUSTED, False)
            if data["outcome"] in FAILED_OUTCOMES:
                self.health.failed(item.nodeid)


_TIMING = pytest.StashKey[dict]()


class TimingLog:
    """One line per test: when pytest started and finished it (wall clock, comparable across
    workers) and how long the TestCase spent in all (``run_s``) and in the scenario (``body_s``)."""

    def __init__(self, directory: str, worker_id: str) -> None:
        Path(directory).mkdir(parents=True, exist_ok=True)
        self.file = open(Path(directory) / f"{worker_id}.jsonl", "a", encoding="utf-8")
        self.worker_id = worker_id

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):
        started = time.time()
        yield
        line = {"id": unittest_id(item), "worker": self.worker_id, "start": started, "end": time.time(),
                "rss": _resident_bytes(), **item.stash.get(_TIMING, {})}
        self.file.write(json.dumps(line) + "\n")
        self.file.flush()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        yield
        timing = getattr(getattr(item, "instance", None), "timing", None)
        if call.when == "call" and timing:
            item.stash[_TIMING] = dict(timing)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.file.close()


def _resident_bytes() -> int | None:
    """This process's resident memory now (Linux), to see which tests make a worker grow."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if report.when == "call" or not report.passed:
        report.user_properties.append((PROPERTY, classify(item, call, report)))


# pytest-timeout's message when its SIGALRM fires inside a test.
_TIMEOUT_MESSAGE = re.compile(r"^Timeout \(?>")


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
    }
    if report.passed:
        return {**entry, "outcome": "PASS", "reason": ""}
    if report.skipped:
        if _skip_reason(report).startswith(f"{DEFERRED}: "):
            return {**entry, "outcome": DEFERRED, "reason": _skip_reason(report)}
        if hasattr(report, "wasxfail"):
            reason = f"expected failure: {expectation.reason}" if expectation is not None else "expected failure"
            return {**entry, "outcome": "XFAIL", "reason": reason}
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
        if in_compile("\n".join(f"in {entry.name}" for entry in call.excinfo.traceback)):
            reason += " while the backend was compiling"
        reason += f" in {where}" if where else ""
        return {**entry, "outcome": "TIMEOUT", "reason": reason, "where": where, "details": details}
    failed_assertion = isinstance(error, AssertionError) and report.when == "call" and raised_by_a_check(error, item)
    if report.when == "call" and settings.current().given(CAPTURE_ENV) and expectation_allows_capture(testcase):
        _capture_graphs(item, testcase)
    return {
        **entry,
        "outcome": "FAIL" if failed_assertion else "ERROR",
        "reason": _reason(error) if error is not None else (report.longreprtext.strip().splitlines() or [""])[-1],
        "where": "" if failed_assertion or error is None else _raised_at(innermost(error)),
        "details": details,
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


_STDLIB = sysconfig.get_paths()["stdlib"]
_HARNESS = str(Path(__file__).resolve().parents[1])
_CHECK_LIBRARIES = (os.path.join(_STDLIB, "unittest", ""), f"{os.sep}torch{os.sep}testing{os.sep}")


def raised_by_a_check(error: AssertionError, item: pytest.Item) -> bool:
    """Whether a check failed (unittest's or torch.testing's asserts, or an ``assert`` of
    the test's module or of the harness), rather than an ``assert`` inside torch or the
    backend, which is an internal error (Dynamo's "sources must not be empty for symbol"):
    the compile failed, and the result is an ERROR with the code that raised it."""
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return True
    path = str(Path(frames[-1].filename).resolve())
    return (any(library in path for library in _CHECK_LIBRARIES) or path.startswith(_HARNESS)
            or path == str(Path(str(item.path)).resolve()))


def in_compile(stack: str) -> bool:
    """Whether a stack (lines ending ``in <function>``, as faulthandler writes them) is
    inside a backend's compile."""
    from harness.compat import COMPILE_FRAMES  # imports torch: only once a test timed out

    return bool(re.search(r"\bin (" + "|".join(map(re.escape, COMPILE_FRAMES)) + r")$", stack, re.MULTILINE))


def in_stdlib(path: str) -> bool:
    return path.startswith(_STDLIB) and "site-packages" not in path


def short_path(path: str) -> str:
    """A path as a reader would look it up: relative to site-packages or the project."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path


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
