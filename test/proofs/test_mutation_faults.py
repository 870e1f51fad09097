"""The mutation score's kills stay kills: one mutant per mutation operator (seed 0,
test/harness/faulty_backends/mutants.py) fails the default-run test that killed it when the
score was measured (scripts/mutation_score.py, CONTRIBUTING.md#mutation-score), and the
unmutated control passes the same tests. A change to a scenario, a check or the mutants
that lets one of them through shows here, without the hour the whole score takes."""

from __future__ import annotations

import unittest

from harness.axes import registry
from test.harness import shared_runs

# Its own seconds (test/harness/budgets.py, shared runs apart): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10

MUTANTS = "test.harness.faulty_backends.mutants"
CONTROL = "unmutated"
# Each seed-0 mutant and a test that killed it in the measured score (2026-11-29, seeds 0-1).
KILLED_BY = {
    "perturb_s0": "test_backend_contract.OutputContractTests.test_zero_dim",
    "flush_tiny_s0": "test_op_sweep.OpSweepTests.test_subnormals_float32",
    "drop_sign_s0": "test_backend_contract.AutomaticDynamicTests.test_a_new_size_recompiles_once_with_symbolic_sizes_2_input_mutation",
    "lower_precision_s0": "test_backend_contract.SideEffectContractTests.test_mutation_of_non_contiguous_input",
    "truncate_int_s0": "test_backend_contract.OutputContractTests.test_integers_stay_exact",
    "swap_args_s0": "test_op_sweep.OpSweepTests.test_subnormals_float32",
    "off_by_one_s0": "test_backend_contract.GradientContractTests.test_first_order_1_softmax",
    "stale_input_s0": "test_backend_contract.GradientContractTests.test_first_order_6_cumsum_slice",
}


def _id(backend: str, test: str) -> str:
    return registry.test_id(test, backend=backend)


RUN = shared_runs.DEFAULT.part(
    [*(f"{MUTANTS}:{mutant}" for mutant in KILLED_BY), f"{MUTANTS}:{CONTROL}"],
    [*(_id(mutant, test) for mutant, test in KILLED_BY.items()),
     *(_id(CONTROL, test) for test in sorted(set(KILLED_BY.values())))])


class MutantsKilledTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tests = RUN.tests()

    def test_each_operator_s_mutant_is_killed_by_its_test(self):
        outcomes = {test["backend"]: test["outcome"] for test in self.tests if test["backend"] != CONTROL}
        for mutant in KILLED_BY:
            with self.subTest(mutant=mutant):
                self.assertIn(outcomes.get(mutant), {"FAIL", "ERROR"}, RUN.describe())

    def test_the_unmutated_control_passes_them(self):
        control = [test for test in self.tests if test["backend"] == CONTROL]
        self.assertEqual(len(control), len(set(KILLED_BY.values())), RUN.describe())
        self.assertEqual({test["outcome"] for test in control}, {"PASS"}, RUN.describe())


if __name__ == "__main__":
    unittest.main()
