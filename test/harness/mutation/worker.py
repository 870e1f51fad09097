"""One worker process of scripts/mutation_score.py: it runs the suite's tests (or the probes)
once as the control and once per mutant the parent names, each in this process, one after
the other, with the test case's own isolation between them (a reset Dynamo, seeded RNGs,
global state checked): no collection, worker start or canary per mutant.

Started as ``python -m test.harness.mutation.worker`` with DYNAMO_SUITE_BACKENDS naming the
switch (test.harness.mutation.mutants:switch) and the run's tier. It talks JSON lines on
the standard streams it was started with; whatever the tests print goes to the log file
named by DYNAMO_SUITE_MUTATION_WORKER_LOG (or nowhere).

The parent sends one request at a time and reads the answers:

* ``{"test": id}``: the control run, answered ``{"control": outcome, "reached": [...],
  "covers": [...], "graphs": n, "seconds": s}``; then the parent sends ``{"mutants": [...]}`` and each
  is answered ``{"mutant": name, "outcome": outcome, "fired": bool, "seconds": s,
  "reason": text}``, then ``{"done": true}``;
* ``{"probe": name}``: the probe's control, answered ``{"reached": [...], "seconds": s}``;
* ``{"equivalence": mutant, "probes": [...]}``: those probes in order until one differs from
  its control, answered ``{"mutant": name, "differs": "probe: how" or null, "seconds": s}``;
* ``{"quit": true}``.

Outcomes: pass, fail, error, xfail, xpass, skip, timeout. A run is stopped after
``limit`` seconds (the request's ``limit``, else 300), as a timeout.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import unittest
from typing import Any

LOG_ENV = "DYNAMO_SUITE_MUTATION_WORKER_LOG"
DEFAULT_LIMIT_S = 300.0


class _Stopped(BaseException):
    """Raised by the alarm in a run past its limit (not an Exception: nothing swallows it)."""


def _alarm(signum: int, frame: Any) -> None:
    raise _Stopped()


def _protocol() -> Any:
    """The stream answers go to; this process's stdout and stderr then go to the log."""
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    log = os.environ.get(LOG_ENV)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if log else os.open(os.devnull, os.O_WRONLY)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    return answers


def _outcome(result: unittest.TestResult) -> tuple[str, str]:
    if result.errors:
        error = result.errors[0][1]
        return ("timeout" if "_Stopped" in error else "error"), error.strip().splitlines()[-1][:300]
    if result.failures:
        return "fail", result.failures[0][1].strip().splitlines()[-1][:300]
    if result.unexpectedSuccesses:
        return "xpass", ""
    if result.expectedFailures:
        return "xfail", ""
    if result.skipped:
        return "skip", result.skipped[0][1][:300]
    return "pass", ""


def run_test(test_id: str, limit: float) -> tuple[str, str, list[str] | None, int, float]:
    """(outcome, reason, what its graphs and calls covered, graphs its backend received,
    seconds) of one run of a test."""
    suite = unittest.defaultTestLoader.loadTestsFromName(test_id)
    cases = [case for case in _flatten(suite)]
    result = unittest.TestResult()
    started = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        suite.run(result)
    except _Stopped:
        result.errors.append((None, "_Stopped: past its limit"))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    outcome, reason = _outcome(result)
    covers = getattr(cases[0], "covers", None) if cases else None
    try:
        graphs = cases[0].graphs_received if cases else 0
    except Exception:  # a test that never set up has no counters
        graphs = 0
    return outcome, reason, covers, graphs, time.perf_counter() - started


def _flatten(suite: Any) -> list[unittest.TestCase]:
    if isinstance(suite, unittest.TestCase):
        return [suite]
    return [case for item in suite for case in _flatten(item)]


def main() -> int:
    answers = _protocol()
    signal.signal(signal.SIGALRM, _alarm)
    from test.harness.mutation import mutants, probes

    switch = mutants.mutant(mutants.SWITCH)
    controls: dict[str, probes.Outcome] = {}
    by_name = {probe.name: probe for probe in probes.PROBES}

    def send(message: dict[str, Any]) -> None:
        answers.write(json.dumps(message) + "\n")

    def receive() -> dict[str, Any]:
        line = sys.stdin.readline()
        return json.loads(line) if line else {"quit": True}

    def probe_control(name: str) -> probes.Outcome:
        if name not in controls:
            mutants.start_test()
            mutants.use(None)
            controls[name] = probes.run(by_name[name], switch)
        return controls[name]

    send({"ready": True})
    while True:
        request = receive()
        limit = float(request.get("limit", DEFAULT_LIMIT_S))
        if request.get("quit"):
            return 0
        if "test" in request:
            mutants.start_test()
            mutants.use(None)
            outcome, reason, covers, graphs, seconds = run_test(request["test"], limit)
            send({"control": outcome, "reason": reason, "reached": sorted(mutants.reached_mutants()),
                  "kernels": sorted(mutants.kernels_met()), "covers": covers, "graphs": graphs, "seconds": round(seconds, 3)})
            for name in receive().get("mutants", []):
                mutants.start_test()
                mutants.use(name)
                outcome, reason, _, _, seconds = run_test(request["test"], limit)
                send({"mutant": name, "outcome": outcome, "reason": reason, "fired": name in mutants.fired(),
                      "seconds": round(seconds, 3)})
            mutants.use(None)
            send({"done": True})
        elif "probe" in request:
            started = time.perf_counter()
            mutants.start_test()
            mutants.use(None)
            controls.pop(request["probe"], None)
            probe_control(request["probe"])
            send({"reached": sorted(mutants.reached_mutants()), "seconds": round(time.perf_counter() - started, 3)})
        elif "equivalence" in request:
            started = time.perf_counter()
            name, differs = request["equivalence"], None
            for probe in request["probes"]:
                control = probe_control(probe)
                mutants.start_test()
                mutants.use(name)
                signal.setitimer(signal.ITIMER_REAL, limit)
                try:
                    found = probes.difference(control, probes.run(by_name[probe], switch))
                except _Stopped:
                    found = "stopped past its time limit"
                except Exception as error:  # noqa: BLE001 -- a mutant that breaks the compile differs
                    found = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:200]
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    mutants.use(None)
                if found:
                    differs = f"{probe}: {found}"
                    break
            send({"mutant": name, "differs": differs, "seconds": round(time.perf_counter() - started, 3)})


if __name__ == "__main__":
    sys.exit(main())
