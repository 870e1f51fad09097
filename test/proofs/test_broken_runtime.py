"""A backend whose runtime breaks for the rest of its worker after one bad input
(``breaks_after_float64``) gets its collateral found, and nothing else rerun.

One run of three families of the backend contract: the tests with a float64 input fail on their
own; every test that failed only because it ran after one of them in a broken worker is
COLLATERAL and names the test that broke it; every other unexpected result is the test's
own (a failure the worker's canary showed it survived costs no rerun).
"""

from __future__ import annotations

import tempfile
import unittest

from test.harness.cli import read_results, run_cli

# Its own seconds (test/harness/budgets.py): 45 s measured 2026-11-29.
TIME_BUDGET_S = 95

BACKEND = "test.harness.faulty_backends:breaks_after_float64"
BROKEN = "semaphore already signaled"  # what its runtime raises once broken
REFUSED = "float64 buffers are not supported"  # what breaks it


class BrokenRuntimeTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        directory = tempfile.TemporaryDirectory()
        cls.addClassCleanup(directory.cleanup)
        families = ("ChangingInputsTests", "GlobalStateContractTests", "OutputContractTests")  # with float64 inputs, and without
        cls.completed = run_cli("--backend", BACKEND, *(arg for family in families for arg in ("-k", family)),
                                "--report-dir", directory.name)
        cls.results = read_results(directory.name)["tests"] if cls.completed.returncode in (0, 1) else []

    def describe(self) -> str:
        return f"\n{self.completed.stdout[-3000:]}\n{self.completed.stderr[-2000:]}"

    def test_the_tests_that_break_it_fail_on_their_own(self):
        breakers = [test for test in self.results if REFUSED in test["reason"]]
        self.assertTrue(breakers, self.describe())
        for test in breakers:
            # Also one that ran after the worker broke: rerun alone, it fails the same way.
            self.assertIn(test["outcome"], ("FAIL", "ERROR"), test["id"])

    def test_no_result_is_the_broken_runtime_counted_as_the_tests_own(self):
        own_breakage = {test["id"]: test["outcome"] for test in self.results
                        if BROKEN in test["reason"] and test["outcome"] != "COLLATERAL"}
        self.assertEqual(own_breakage, {}, self.describe())

    def test_collateral_names_a_test_that_broke_its_worker(self):
        collateral = [test for test in self.results if test["outcome"] == "COLLATERAL"]
        breakers = {test["id"] for test in self.results if REFUSED in test["reason"]}
        self.assertTrue(collateral, "no test ran after the runtime broke: this run proves nothing" + self.describe())
        for test in collateral:
            self.assertIn(test["after"], breakers, test["id"])

    def test_only_followers_of_a_broken_worker_are_rerun(self):
        rerun = [test for test in self.results if test.get("rerun")]
        self.assertTrue(all(BROKEN in test["reason"] or test["outcome"] == "COLLATERAL" or test.get("after")
                            for test in rerun), self.describe())
        self.assertNotIn("not rerun", {test.get("rerun") for test in self.results})


if __name__ == "__main__":
    unittest.main()
