"""No test fails because of another: followers of a failure are rerun in fresh workers."""

from __future__ import annotations

import io
import os
import tempfile
import unittest
from pathlib import Path

from harness.report.results import BACKEND_INDEPENDENT, TestResult
from harness.run import engine, isolation

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLES = "test/harness/isolation_samples.py"
NAMES = ["test_0_breaks_the_process", "test_1_a_passes_alone", "test_1_b_passes_alone", "test_1_c_fails_anyway",
         "test_1_d_passes_alone"]


def _sample(name: str) -> engine.TestInfo:
    return engine.TestInfo(id=f"test.harness.isolation_samples.IsolationSamples.{name}",
                           nodeid=f"{SAMPLES}::IsolationSamples::{name}",
                           scenario=f"isolation_samples.IsolationSamples.{name}",
                           backend=BACKEND_INDEPENDENT, backend_spec="")


def _run(limits: isolation.RerunLimits) -> tuple[dict[str, TestResult], str]:
    with tempfile.TemporaryDirectory() as directory:
        old_path = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = str(REPO_ROOT)
        try:
            options = engine.EngineOptions(jobs=1, timeout=60, root=REPO_ROOT, workdir=Path(directory))
            out = io.StringIO()
            results = isolation.run([_sample(name) for name in NAMES], options, lambda count: lambda result: None,
                                    limits, out)
        finally:
            if old_path is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = old_path
    return {test_id.rsplit(".", 1)[1]: result for test_id, result in results.items()}, out.getvalue()


class RerunTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.results, cls.out = _run(isolation.RerunLimits())

    def test_the_breaking_test_fails_and_the_rest_are_settled_alone(self):
        self.assertEqual({name: result.outcome for name, result in self.results.items()}, {
            "test_0_breaks_the_process": "ERROR", "test_1_a_passes_alone": "COLLATERAL",
            "test_1_b_passes_alone": "COLLATERAL", "test_1_c_fails_anyway": "FAIL",
            "test_1_d_passes_alone": "COLLATERAL"})
        self.assertIn("rerun done in 2 pass(es): 3 of 4 pass alone", self.out)

    def test_collateral_names_the_test_that_broke_the_process(self):
        culprit = _sample("test_0_breaks_the_process").id
        collateral = self.results["test_1_d_passes_alone"]
        # Its first run followed test_1_c (which failed) in the broken process; traced back
        # through the collateral failures, the cause is the test that broke it.
        self.assertEqual(collateral.after, culprit)
        self.assertEqual(collateral.rerun, "alone")
        self.assertRegex(collateral.reason, rf"^ERROR only after {culprit} failed earlier in its worker "
                                            r"\(RuntimeError: runtime error: semaphore already signaled\); passes alone$")
        own = self.results["test_1_c_fails_anyway"]
        self.assertEqual((own.reason, own.rerun), ("AssertionError: 1 != 2", "alone"))

    def test_a_limit_of_zero_turns_reruns_off(self):
        results, _ = _run(isolation.RerunLimits(tests=0))
        self.assertEqual([results[name].outcome for name in NAMES], ["ERROR"] * 4 + ["ERROR"])
        self.assertEqual(results["test_1_a_passes_alone"].after, _sample("test_0_breaks_the_process").id)

    def test_tests_over_the_limit_keep_their_first_result(self):
        results, _ = _run(isolation.RerunLimits(tests=1))
        self.assertEqual(results["test_1_a_passes_alone"].outcome, "COLLATERAL")
        self.assertEqual([results[name].rerun for name in NAMES[2:]], ["not rerun"] * 3)
        self.assertEqual([results[name].outcome for name in NAMES[2:]], ["ERROR"] * 3)


class FollowersTests(unittest.TestCase):
    def test_only_failures_not_seen_without_an_earlier_failure_are_rerun(self):
        def result(name, outcome, reason, after=None):
            return _sample(name).result(outcome, reason, after=after)

        results = {r.id: r for r in [
            result("a", "FAIL", "AssertionError: output: values differ from eager"),  # first in its process
            result("b", "FAIL", "AssertionError: output[1]: values differ from eager", after="a"),  # same problem
            result("c", "ERROR", "RuntimeError: semaphore already signaled", after="a"),  # only after failures
            result("d", "TIMEOUT", "stopped by the 30 s time limit", after="a"),  # a rerun costs a whole limit
        ]}
        order = [_sample(name).id for name in "abcd"]
        self.assertEqual(isolation.followers(results, order), [_sample("c").id])


if __name__ == "__main__":
    unittest.main()
