"""bench.py end to end: about a minute of runs, so with the proofs rather than the
self-tests (test/harness/test_bench.py tests its parts)."""

from __future__ import annotations

import json
import subprocess
import sys
import unittest

from test.harness.cli import REPO_ROOT
from test.harness.test_bench import BENCH
from test.harness.test_runner import TempDirTestCase

# Its own seconds (test/harness/budgets.py): 27 s measured 2026-11-29.
TIME_BUDGET_S = 60


class BenchEndToEndTests(TempDirTestCase):
    """Two runs of bench.py (warm, and serial) over a small selection."""

    def test_small_selection_warm_and_serial(self):
        out = self.tmp / "bench.json"
        completed = subprocess.run(
            [sys.executable, str(BENCH / "bench.py"), "--skip", "cold,unmeasured", "--json", str(out), "--",
             "--backend", "eager", "-k", "DataPtrTests"],
            cwd=REPO_ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
        self.assertIn(completed.returncode, (0, 1), completed.stdout + completed.stderr)
        record = json.loads(out.read_text())
        runs = {run["name"]: run for run in record["runs"]}
        self.assertEqual(set(runs), {"warm", "serial"})
        self.assertEqual((runs["warm"]["jobs"], runs["serial"]["jobs"]), (2, 1))
        for run in runs.values():
            self.assertGreater(run["tests"], 0)
            self.assertEqual(run["outcomes"], {"PASS": run["tests"]})
            self.assertGreater(run["peak_rss_gb"], 0.1, "a worker holds torch")
            self.assertGreater(run["cpu_s"], 1.0)
            self.assertGreater(run["body_s"], 0.0)
            self.assertGreater(run["overhead_per_test_ms"], 0.0)
            self.assertGreater(run["startup_s"], 1.0, "start-up includes importing torch")
        self.assertIn("harness overhead per test (warm)", completed.stdout)
        self.assertRegex(completed.stdout, r"(?m)^serial\s+1\s+\d+\s")


if __name__ == "__main__":
    unittest.main()
