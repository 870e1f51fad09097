"""The real-data family's self-test: each faulty backend of
test/harness/faulty_backends/real_data.py is wrong only on one kind of value real data has,
so it must fail the scenarios with that kind and pass every ordinary twin, and aot_eager
must pass them all (test/dynamo/test_real_data.py). The operator sweep's tests on NaN and
infinities catch the reductions that skip NaN too, where the ops' own tests pass."""

from __future__ import annotations

import unittest

from harness.axes import registry
from test.harness import shared_runs

# Its own seconds (test/harness/budgets.py, shared runs apart): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10

FAULTY_MODULE = "test.harness.faulty_backends"
CONTROL = "aot_eager"
# Each fault, and the special scenarios it must fail (by test name, without _0_special).
CATCHES = {
    "skips_nan_in_reductions": {"test_nan_and_inf_through_reductions"},
    "loses_duplicate_writes": {"test_tied_values_and_repeated_indices", "test_repeated_token_ids_in_an_embedding"},
    "breaks_ties_last": {"test_tied_values_and_repeated_indices"},
    "wrong_past_2_to_the_16": {"test_tensors_past_2_to_the_16_elements"},
}
REDUCTIONS = ("sum", "amax", "amin")


BACKENDS = (*CATCHES, CONTROL)
RUN = shared_runs.DEFAULT.part(
    [*(f"{FAULTY_MODULE}:{fault}" for fault in CATCHES), CONTROL],
    [registry.test_id(scenario, backend=backend) for backend in BACKENDS
     for scenario in ("test_real_data.RealDataTests.*",
                      *(f"test_op_sweep.OpSweepTests.test_op_{op}*" for op in REDUCTIONS))])


class RealDataFaultsTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tests = RUN.tests()

    def outcomes(self, backend: str) -> dict[tuple[str, str], str]:
        """(scenario, special or ordinary) -> outcome."""
        found = {}
        for test in self.tests:
            if test["backend"] == backend and ".RealDataTests_" in test["id"]:
                name, _index, kind = test["id"].rsplit(".", 1)[1].rsplit("_", 2)
                found[name, kind] = test["outcome"]
        self.assertTrue(found, RUN.describe())
        return found

    def test_each_fault_fails_its_special_values_and_nothing_else(self):
        for fault, caught in CATCHES.items():
            with self.subTest(fault=fault):
                failed = {name for (name, kind), outcome in self.outcomes(fault).items() if outcome != "PASS"}
                self.assertEqual(failed, caught)
                for (name, kind), outcome in self.outcomes(fault).items():
                    self.assertEqual(outcome, "FAIL" if (name in caught and kind == "special") else "PASS",
                                     f"{name} ({kind})")

    def test_the_control_passes_everything(self):
        self.assertEqual(set(self.outcomes(CONTROL).values()), {"PASS"})

    def test_the_sweeps_nan_tests_catch_reductions_that_skip_nan(self):
        sweep = {(test["backend"], test["id"].rsplit(".test_op_", 1)[1]): test["outcome"]
                 for test in self.tests if ".OpSweepTests_" in test["id"]}
        for backend in BACKENDS:
            for op in REDUCTIONS:
                with self.subTest(backend=backend, op=op):
                    caught = backend == "skips_nan_in_reductions"
                    self.assertEqual(sweep[backend, f"{op}_nan_and_inf"], "FAIL" if caught else "PASS")
                    self.assertEqual(sweep[backend, op], "PASS")


if __name__ == "__main__":
    unittest.main()
