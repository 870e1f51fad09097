"""A Dynamo patched to graph-break on an op it used to trace (test/harness/patched_dynamo.py)
shows as a metric regression against a baseline made without the patch, and only where the
patch changes something."""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path

from test.harness import shared_runs
from test.harness.cli import read_results, run_cli

# Its own seconds (test/harness/budgets.py, shared runs apart): 16 s measured 2026-11-29.
TIME_BUDGET_S = 40

PATTERNS = ("*MutationEdgeCaseTests_aot_eager.test_inplace_on_intermediate",
            "*MutationEdgeCaseTests_aot_eager.test_slice_assignment_into_intermediate",
            "*OutputContractTests_aot_eager.test_layouts_0_*",
            "*OutputContractTests_aot_eager.test_channels_last")  # no torch.sin: unchanged
PATCH = {"DYNAMO_SUITE_IMPORTS": "test.harness.patched_dynamo"}


# The baseline, without the patch, comes from the run the other proofs share.
BEFORE = shared_runs.DEFAULT.part(["aot_eager"], PATTERNS)


class PatchedDynamoTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        directory = tempfile.TemporaryDirectory()
        cls.addClassCleanup(directory.cleanup)
        cls.dir = Path(directory.name)
        baseline = cls.dir / "before.json"
        baseline.write_text(json.dumps({**read_results(BEFORE.report_dir), "tests": BEFORE.tests()}))
        selection = [arg for pattern in PATTERNS for arg in ("-k", pattern)]
        cls.metrics = run_cli("--backend", "aot_eager", *selection, "--baseline", str(baseline), "--fail-on", "metrics",
                              "--report-dir", str(cls.dir / "after"), env=PATCH)
        # The same results judged again: what --fail-on regressions makes of them.
        cls.regressions = run_cli("--merge", str(cls.dir / "after"), "--baseline", str(baseline),
                                  "--fail-on", "regressions", "--report-dir", str(cls.dir / "again"))

    def test_every_test_still_passes(self):
        self.assertEqual(len(BEFORE.tests()), len(PATTERNS), BEFORE.describe())
        self.assertEqual({test["outcome"] for test in BEFORE.tests()}, {"PASS"})
        self.assertEqual({test["outcome"] for test in read_results(self.dir / "after")["tests"]}, {"PASS"})

    def test_the_new_graph_break_is_a_metric_regression_in_the_summary(self):
        summary = (self.dir / "after" / "summary.md").read_text()
        self.assertIn("**metric regressions: 6**", summary)
        for test in ("test\\_inplace\\_on\\_intermediate", "test\\_slice\\_assignment\\_into\\_intermediate",
                     "test\\_layouts\\_0\\_contiguous"):
            self.assertIn(f"{test}: graph breaks 0 -\\> 1", summary)
            self.assertIn(f"{test}: frames 1 -\\> 2", summary)
        self.assertNotIn("channels\\_last", summary.split("**metric regressions")[1].split("**metric improvements")[0])
        self.assertIn("metric regressions: 6", (self.dir / "after" / "report.html").read_text())

    def test_fail_on_metrics_exits_1_and_fail_on_regressions_does_not(self):
        self.assertEqual(self.metrics.returncode, 1, self.metrics.stdout[-2000:])
        self.assertIn("graph breaks 0 -> 1", self.metrics.stdout)
        self.assertEqual(self.regressions.returncode, 0, self.regressions.stdout[-2000:])


if __name__ == "__main__":
    unittest.main()
