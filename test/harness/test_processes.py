"""A scenario's processes (harness/testcase/processes.py): how each ended heads the failure, so a
reason cut short still names every process, and none outlives the call."""

from __future__ import annotations

import os
import tempfile
import textwrap
import time
import unittest
from pathlib import Path

from harness.testcase import processes

# Its own seconds (test/harness/budgets.py): 5 s measured 2026-12-03.
TIME_BUDGET_S = 10

# Rank 0 prints a long traceback-like tail and aborts; rank 1 never returns (as a stuck peer).
_TOY_RANK = textwrap.dedent("""
    import os, signal, sys, time
    if sys.argv[1] == "0":
        for line in range(200):
            print("a long line of what the rank printed before it died", line, flush=True)
        os.kill(os.getpid(), signal.SIGABRT)
    print(os.getpid(), flush=True)
    while True:
        time.sleep(1)
""")


class ProcessesTests(unittest.TestCase):
    def test_every_process_is_named_before_any_output(self):
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "toy_rank.py").write_text(_TOY_RANK)
            started = time.monotonic()
            with self.assertRaises(processes.ProcessesFailed) as caught:
                processes.run_all("toy_rank", [["0"], ["1"]], Path(directory), timeout_s=30)
            self.assertLess(time.monotonic() - started, 20, "the stuck peer was not given up on after the first died")
            message = str(caught.exception)
            head = message[:message.index("last output")]
            self.assertRegex(head, r"^process 0 was killed by signal SIGABRT; process 1 did not finish before the deadline")
            self.assertIn("a long line of what the rank printed before it died 199", message)
            stuck = int(Path(directory, "process-1.log").read_text().split()[0])
        with self.assertRaises(ProcessLookupError):
            os.kill(stuck, 0)


if __name__ == "__main__":
    unittest.main()
