"""The distributed family catches a backend that loses a DDP bucket's gradients, and contains
ranks that die or hang: no process of a distributed run outlives its test, its worker or a
killed run (test/dynamo/test_distributed.py, harness/testcase/processes.py).

Ranks are found by their command line (``-m harness.testcase.distributed``); no other proof
starts any, so none may be left when a check ends.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import unittest
from pathlib import Path

from test.harness import shared_runs
from test.harness.cli import REPO_ROOT

# Its own seconds (test/harness/budgets.py, shared runs apart): 5 s measured 2026-11-29.
TIME_BUDGET_S = 15

FAULTY_MODULE = "test.harness.faulty_backends"
FAMILY = "test.dynamo.test_distributed.DistributedTrainingTests"
RANK_MODULE = "harness.testcase.distributed"
FAULTS = ("drops_one_ddp_bucket", "crashes_one_rank", "hangs_one_rank")


def ranks_alive() -> list[int]:
    """The processes running a rank now."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if RANK_MODULE.encode() in command and b"-m" in command:
                found.append(int(entry.name))
    return found


def wait_until(condition, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


# Every pattern on aot_eager and the lost bucket; one each for the dead and the hung rank (a
# hang costs the group's timeout), in the nightly run the proofs share.
RUN = shared_runs.NIGHTLY.part(
    [f"{FAULTY_MODULE}:{fault}" for fault in FAULTS] + ["aot_eager"],
    [f"{FAMILY}_aot_eager.*", f"{FAMILY}_drops_one_ddp_bucket.*",
     f"{FAMILY}_crashes_one_rank.test_training_0_*", f"{FAMILY}_hangs_one_rank.test_training_0_*"])


@unittest.skipUnless(sys.platform.startswith("linux"), "reads /proc")
class DistributedFaultsTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.results = RUN.tests()
        cls.left = ranks_alive()

    def outcomes(self, backend: str) -> dict[str, dict]:
        found = {test["scenario"].rsplit(".", 1)[1]: test for test in self.results if test["backend"] == backend}
        self.assertTrue(found, RUN.describe())
        return found

    def test_aot_eager_passes_every_pattern(self):
        failed = {name: test["reason"] for name, test in self.outcomes("aot_eager").items() if test["outcome"] != "PASS"}
        self.assertEqual(failed, {})
        self.assertEqual(len(self.outcomes("aot_eager")), 4)

    def test_a_lost_bucket_fails_every_pattern_on_its_gradients(self):
        for name, test in self.outcomes("drops_one_ddp_bucket").items():
            with self.subTest(test=name):
                self.assertEqual(test["outcome"], "FAIL")
                self.assertRegex(test["reason"], r"gradient of fc2\.\w+ after the first step: values differ")

    def test_a_dead_or_hung_rank_fails_its_test_and_says_how(self):
        crashed, = self.outcomes("crashes_one_rank").values()
        self.assertEqual(crashed["outcome"], "FAIL")
        self.assertRegex(crashed["reason"], r"process 1 was killed by signal SIGKILL")
        hung, = self.outcomes("hangs_one_rank").values()
        self.assertEqual(hung["outcome"], "FAIL")
        self.assertRegex(hung["reason"], r"process 1 did not finish before the deadline")

    def test_no_rank_outlives_the_run(self):
        self.assertEqual(self.left, [])

    def test_no_rank_outlives_a_killed_worker(self):
        # The test's own process stands for the runner's worker, killed by a time limit or a crash.
        environment = {**os.environ, "DYNAMO_SUITE_TIER": "nightly",
                       "DYNAMO_SUITE_BACKENDS": f"{FAULTY_MODULE}:hangs_one_rank"}
        worker = subprocess.Popen([sys.executable, "-m", "unittest",
                                   "test.dynamo.test_distributed.DistributedTrainingTests_hangs_one_rank"
                                   ".test_training_0_compile_ddp"], cwd=REPO_ROOT, env=environment,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            self.assertTrue(wait_until(lambda: len(ranks_alive()) == 2, 120), "the ranks never started")
        finally:
            worker.send_signal(signal.SIGKILL)
            worker.wait()
        self.assertTrue(wait_until(lambda: not ranks_alive(), 10), f"ranks left behind: {ranks_alive()}")


if __name__ == "__main__":
    unittest.main()
