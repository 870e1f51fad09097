"""What a worker writes down: everything the process prints, in a log the controller reads
when the worker dies (``WorkerLog``, with the crash and hang watchdogs that dump the stack
there), and, when asked, one line of timings per test (``TimingLog``)."""

from __future__ import annotations

import faulthandler
import json
import os
import sys
import time
from pathlib import Path

import pytest

from harness import settings
from harness.testcase import deadline as deadline_module
from harness.worker.protocol import START_MARK, unittest_id, watchdog, worker_log_path

# A directory: when set, every worker appends one JSON line per test with its timings there
# (bench/bench.py reads them to tell the harness's overhead from the scenarios' time).
TIMINGS_ENV = settings.TIMINGS


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
