"""harness/run/warmup.py: inductor's CPU probe runs beside collection, only for runs that
include inductor, and never outlives the body it wraps."""

from __future__ import annotations

import subprocess
import sys
import unittest
from unittest import mock

from harness.run import warmup

# Its own seconds (test/harness/budgets.py): 5 s measured 2026-11-29.
TIME_BUDGET_S = 20


class _FakeProcess:
    def __init__(self, finishes: bool = True) -> None:
        self.finishes, self.killed, self.waited = finishes, False, False

    def poll(self):
        return 0 if self.finishes or self.killed else None

    def wait(self, timeout=None):
        if not self.finishes and not self.killed:
            raise subprocess.TimeoutExpired("warm-up", timeout)
        self.waited = True
        return 0

    def kill(self):
        self.killed = True


class WarmupTests(unittest.TestCase):
    def _run(self, backends: str, enabled: bool = True, fails: bool = False, finishes: bool = True):
        process = _FakeProcess(finishes)
        with mock.patch.object(warmup.subprocess, "Popen", return_value=process) as popen:
            try:
                with warmup.inductor_toolchain(backends, enabled=enabled):
                    if fails:
                        raise KeyboardInterrupt
            except KeyboardInterrupt:
                pass
        return popen, process

    def test_only_for_runs_that_include_inductor(self):
        for backends, started in (("eager,aot_eager,inductor", True), ("inductor", True), (" eager , inductor", True),
                                  ("eager,aot_eager", False), ("my_pkg.inductor_like:backend", False)):
            with self.subTest(backends=backends):
                popen, _ = self._run(backends)
                self.assertEqual(popen.called, started)

    def test_not_for_listing(self):
        popen, _ = self._run("inductor", enabled=False)
        self.assertFalse(popen.called)

    def test_waited_for_at_the_end_of_the_body(self):
        popen, process = self._run("inductor")
        self.assertEqual(popen.call_args.args[0][0], sys.executable)
        self.assertTrue(process.waited)
        self.assertFalse(process.killed)

    def test_stopped_when_the_body_fails_or_it_hangs(self):
        _, process = self._run("inductor", fails=True, finishes=False)
        self.assertTrue(process.killed)
        with mock.patch.object(warmup, "_WAIT_S", 0.01):
            _, process = self._run("inductor", finishes=False)
        self.assertTrue(process.killed)

    def test_the_probe_runs(self):
        # The real program, in a process of its own, as the runner starts it.
        done = subprocess.run([sys.executable, "-c", warmup._PROGRAM], capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr[-2000:])


if __name__ == "__main__":
    unittest.main()
