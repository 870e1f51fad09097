"""Running ``run_tests.py`` as a user would, for the runner's tests.

``run_cli`` calls the command's ``main`` in this process, as pytest's own suite runs pytest
(``pytester.runpytest_inprocess``): the command still collects in a child process and runs
its tests in worker processes, so crashes and hangs stay contained, but no interpreter is
started for the command itself, and collections with the same settings, in the same
directory and environment, are made once per self-test process (``collections``). ``spawn_cli`` starts
``run_tests.py`` as a process, for the tests where that boundary is what is checked (another
interpreter, signals).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any, Iterator
from unittest import mock

REPO_ROOT = Path(__file__).resolve().parents[2]
# What a user's shell may hold that would change a self-test's run; each test names its own.
_CLEARED = ("DYNAMO_SUITE_BACKENDS", "DYNAMO_SUITE_EXPECTATIONS", "DYNAMO_SUITE_VARIANTS", "DYNAMO_SUITE_DEVICE",
            "DYNAMO_SUITE_SCENARIOS", "DYNAMO_SUITE_MODELS")


# Inductor's compile threads, the same in every run: a run sets them by its -j (engine.py) and
# inductor reads them on import, so runs with -j 1 and -j 2 would otherwise need collecting
# children forked from two servers (preforked.py). On 2 cores -j 2 gives each worker 1 anyway.
_FIXED = {"TORCHINDUCTOR_COMPILE_THREADS": "1"}


def _environment(env: dict[str, str] | None) -> dict[str, str]:
    environment = {**os.environ, "CI": "true", **_FIXED, **(env or {})}
    for name in _CLEARED:
        if name not in (env or {}):
            environment.pop(name, None)
    return environment


def spawn_cli(*args: str, python: list[str] | None = None, env: dict[str, str] | None = None,
              timeout: float = 1500, cwd: str | Path = REPO_ROOT) -> subprocess.CompletedProcess:
    """``run_tests.py`` in a process of its own."""
    # The self-test's largest run (every fault against its scenarios) takes 7-9 minutes on 2
    # cores, and the machine's speed varies by a fifth between runs: 600 s was too tight.
    command = [*(python or [sys.executable]), str(REPO_ROOT / "run_tests.py"), *args]
    return subprocess.run(command, cwd=cwd, env=_environment(env), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)


def run_cli(*args: str, python: list[str] | None = None, env: dict[str, str] | None = None,
            timeout: float = 1500, cwd: str | Path = REPO_ROOT) -> subprocess.CompletedProcess:
    """``run_tests.py ARGS`` run in this process, with its output, exit code, environment and
    working directory as a process of its own would have them; another interpreter
    (``python``) needs a process."""
    if python is not None:
        return spawn_cli(*args, python=python, env=env, timeout=timeout, cwd=cwd)
    from harness.run import cli

    out, err = io.StringIO(), io.StringIO()
    with _as_a_process(_environment(env), cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(args), out=out)
        except SystemExit as stop:  # --help
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        except BaseException:  # what a process would print before dying with exit code 1
            traceback.print_exc(file=err)
            code = 1
    return subprocess.CompletedProcess(["run_tests.py", *args], code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _as_a_process(environment: dict[str, str], cwd: str | Path) -> Iterator[None]:
    """The environment and working directory given, and the signal handler ``main`` sets,
    for the call only; the process-wide state it changes is put back."""
    saved_environment, saved_cwd = dict(os.environ), os.getcwd()
    saved_handler = signal.getsignal(signal.SIGTERM)
    os.environ.clear()
    os.environ.update(environment)
    os.chdir(cwd)
    try:
        with collections():
            yield
    finally:
        signal.signal(signal.SIGTERM, saved_handler)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_environment)


# (settings, working directory, environment) -> what collection found, most recent last. A
# collection starts torch and imports every scenario module: 5 to 10 s, paid once per
# combination; the process that collected stays as the fork server of later runs with the
# same combination (harness.worker.forkserver), whose workers then start in a fraction of a second.
_COLLECTED: dict[tuple, Any] = {}
_SERVERS_KEPT = 2  # each holds torch and the scenario modules: about half a gigabyte


@atexit.register
def _stop_servers() -> None:
    for collected in _COLLECTED.values():
        collected.close()


class _Lent:
    """A kept fork server, lent to one run: the run's ``close`` leaves it serving."""

    def __init__(self, server: Any) -> None:
        self.path = server.path

    def close(self) -> None:
        pass


@contextlib.contextmanager
def collections() -> Iterator[None]:
    """Collect once per combination of settings, directory and environment in this process;
    a collection that fails (a usage error) is not kept."""
    from harness.run import collection
    from test.harness import preforked

    original = collection.collect

    def remembered(run_settings=None, serve=False):
        from harness import settings

        run_settings = settings.current() if run_settings is None else run_settings
        key = (json.dumps(dict(run_settings.values), sort_keys=True), os.getcwd(), tuple(sorted(os.environ.items())))
        collected = _COLLECTED.pop(key, None) or original(run_settings, serve=True,
                                                          interpreter=preforked.interpreter())
        _COLLECTED[key] = collected
        serving = [kept for kept in _COLLECTED.values() if kept.fork_server is not None]
        for oldest in serving[:-_SERVERS_KEPT]:
            oldest.close()
        server = _Lent(collected.fork_server) if serve and collected.fork_server is not None else None
        return dataclasses.replace(collected, fork_server=server)

    with mock.patch.object(collection, "collect", remembered):
        yield


def read_results(report_dir: str | Path) -> dict[str, Any]:
    return json.loads((Path(report_dir) / "results.json").read_text())


def outcomes(report_dir: str | Path) -> dict[str, str]:
    """test id -> outcome, from a report directory."""
    return {test["id"]: test["outcome"] for test in read_results(report_dir)["tests"]}
