"""The engine's classification of pytest's reports, on one sample test per outcome."""

from __future__ import annotations

import os
import tempfile
import unittest
from pathlib import Path

from harness.report.results import BACKEND_INDEPENDENT
from harness.run import engine
from harness.run.collection import TestInfo

# Its own seconds (test/harness/budgets.py): 6 s measured 2026-11-29.
TIME_BUDGET_S = 20

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLES = "test/harness/outcome_samples.py"


def _sample(name: str) -> TestInfo:
    return TestInfo(
        id=f"test.harness.outcome_samples.OutcomeSamples.{name}",
        nodeid=f"{SAMPLES}::OutcomeSamples::{name}",
        scenario=f"outcome_samples.OutcomeSamples.{name}",
        backend=BACKEND_INDEPENDENT,
        backend_spec="",
    )


class EngineOutcomeTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        names = ["test_pass", "test_fail", "test_error", "test_skip", "test_expected_failure",
                 "test_unexpected_success", "test_hostile_message", "test_failing_subtest", "test_abort",
                 "test_backend_compile_failure", "test_plain_assert", "test_assert_inside_torch"]
        directory = tempfile.TemporaryDirectory()
        cls.addClassCleanup(directory.cleanup)
        old_path = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = str(REPO_ROOT)  # the workers import harness.worker.pytest_plugin
        cls.addClassCleanup(lambda: os.environ.__setitem__("PYTHONPATH", old_path) if old_path is not None
                            else os.environ.pop("PYTHONPATH", None))
        cls.seen = []
        options = engine.EngineOptions(jobs=2, timeout=60, root=REPO_ROOT, workdir=Path(directory.name))
        results = engine.run([_sample(name) for name in names], options, cls.seen.append)
        cls.results = {test_id.rsplit(".", 1)[1]: result for test_id, result in results.items()}

    def outcome(self, name: str) -> str:
        return self.results[name].outcome

    def test_every_outcome(self):
        self.assertEqual(
            {name: result.outcome for name, result in self.results.items()},
            {"test_pass": "PASS", "test_fail": "FAIL", "test_error": "ERROR", "test_skip": "SKIP",
             "test_expected_failure": "XFAIL", "test_unexpected_success": "XPASS",
             "test_hostile_message": "ERROR", "test_failing_subtest": "FAIL", "test_abort": "CRASH",
             "test_backend_compile_failure": "ERROR", "test_plain_assert": "FAIL",
             # An AssertionError raised inside a library is an internal error, not a failed check.
             "test_assert_inside_torch": "ERROR"},
        )

    def test_progress_callback_sees_each_result_once(self):
        self.assertEqual(sorted(result.id for result in self.seen), sorted(result.id for result in self.results.values()))

    def test_one_line_reasons(self):
        self.assertEqual(self.results["test_fail"].reason, "AssertionError: 1 != 2")
        self.assertEqual(self.results["test_error"].reason, "KeyError: 'missing'")
        self.assertEqual(self.results["test_skip"].reason, "not on this machine")
        self.assertRegex(self.results["test_unexpected_success"].reason, "passed, but expected to fail")
        self.assertRegex(self.results["test_abort"].reason, r"SIGABRT \(Aborted\) in test_abort \(.*outcome_samples\.py:\d+\)")
        # Dynamo's BackendCompilerFailed names only the backend; the reason names its error.
        self.assertEqual(self.results["test_backend_compile_failure"].reason,
                         "the backend's compiler raised NotImplementedError: aten::bitwise_xor.Tensor is not supported")

    def test_an_internal_assert_says_where_it_was_raised(self):
        self.assertEqual(self.results["test_assert_inside_torch"].reason,
                         "AssertionError: sources must not be empty for symbol s57")
        self.assertRegex(self.results["test_assert_inside_torch"].where, r"symbolic_shapes\.py:1\)$")
        self.assertEqual(self.results["test_plain_assert"].where, "")

    def test_failures_keep_their_traceback(self):
        self.assertIn("self.assertEqual(1, 2)", self.results["test_fail"].details)
        self.assertGreater(self.results["test_pass"].duration_s, 0)
        self.assertTrue(self.results["test_pass"].worker.startswith("gw"))


class DispatchOrderTests(unittest.TestCase):
    def test_first_round_pairs_long_with_short(self):
        tests = list("abcdefgh")  # longest first
        self.assertEqual(engine.dispatch_order(tests, 2), list("adbcefgh"))
        self.assertEqual(engine.dispatch_order(tests, 3), list("afbecdgh"))
        self.assertEqual(engine.dispatch_order(tests, 1), tests)
        self.assertEqual(engine.dispatch_order(list("abc"), 2), list("abc"))


if __name__ == "__main__":
    unittest.main()
