"""The value-semantics tests of the operator sweep (harness/checks/value_semantics.py) catch a
kernel that breaks one semantics eager defines at an edge no value domain holds: each kernel
mutant of those semantics (test/harness/mutation/faults.py), run as a backend, fails the
default run's tests that reach its edge (both, where both carry it; the padding row's
gradient only in the test with gradients), in the words of its domain; aot_eager passes them."""

from __future__ import annotations

import unittest

from harness.axes import registry
from test.harness import shared_runs
from test.harness.mutation import mutants

# Its own seconds (test/harness/budgets.py, shared runs apart): 0 s.
TIME_BUDGET_S = 10

WITH_GRADIENTS = "test_value_semantics"
OTHER_DTYPES = "test_value_semantics_in_other_dtypes"
BOTH = (WITH_GRADIENTS, OTHER_DTYPES)
# Each mutant: the tests it must fail, and the domain its differences are reported under.
CATCHES = {
    "round_half_away__exact_halves__s0": (BOTH, "exact halves"),
    "clamp_max_first__float32__s0": ((WITH_GRADIENTS,), "crossed bounds"),
    "clamp_max_first__scalar_operand__s0": (BOTH, "crossed bounds"),
    "masked_row_zeros__fully_masked_row__s0": (BOTH, "fully masked rows"),
    "attention_masked_row_nan__fully_masked_row__s0": (BOTH, "fully masked rows"),
    "float8_unsaturated__float8__s0": (BOTH, "float8 range"),
    "bytes_saturated__uint8__s0": (BOTH, "bytes from floats"),
    "unsigned_as_signed__wide_unsigned__s0": (BOTH, "unsigned integers"),
    "padding_row_gradient__padding_index__s0": ((WITH_GRADIENTS,), "embedding options"),
    "max_norm_skipped__max_norm__s0": (BOTH, "embedding options"),
}
CONTROL = "aot_eager"


def _id(backend: str, test: str) -> str:
    return registry.test_id(f"test_op_sweep.OpSweepTests.{test}", backend=backend)


# The nightly run: test_value_semantics_in_other_dtypes is a nightly test.
RUN = shared_runs.NIGHTLY.part(
    [*(mutants.spec(name) for name in CATCHES), CONTROL],
    [*(_id(name, test) for name in CATCHES for test in BOTH), *(_id(CONTROL, test) for test in BOTH)])


class ValueSemanticsFaultsTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tests = RUN.tests()

    def outcomes(self, backend: str) -> dict[str, dict]:
        found = {test["id"].rsplit(".", 1)[1]: test for test in self.tests if test["backend"] == backend}
        self.assertTrue(found, RUN.describe())
        return found

    def test_each_mutant_fails_the_tests_of_its_semantics(self):
        for name, (caught, domain) in CATCHES.items():
            with self.subTest(mutant=name):
                outcomes = self.outcomes(name)
                self.assertEqual({test for test, result in outcomes.items() if result["outcome"] != "PASS"},
                                 set(caught), RUN.describe())
                for test in caught:
                    self.assertEqual(outcomes[test]["outcome"], "FAIL", outcomes[test]["reason"])
                    self.assertIn(f"on {domain} values: ", outcomes[test]["reason"])

    def test_aot_eager_passes_them(self):
        outcomes = self.outcomes(CONTROL)
        self.assertEqual(set(outcomes), set(BOTH))
        self.assertEqual({test: result["reason"] for test, result in outcomes.items() if result["outcome"] != "PASS"}, {})


if __name__ == "__main__":
    unittest.main()
