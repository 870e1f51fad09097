"""The value-domain tests of the operator sweep (harness/checks/value_domains.py) catch
backends that are right on ordinary float32 samples and wrong on one kind of value or dtype
(test/harness/faulty_backends/real_data.py), and its options group one that runs every
kernel's default variant (contract.py's ignores_kernel_options): each fails the tests of its
kind, says so in words of its clause, and passes a test of a kind it cannot touch; aot_eager
passes them all."""

from __future__ import annotations

import unittest

from harness.axes import registry
from harness.checks import clauses
from test.harness import shared_runs

# Its own seconds (test/harness/budgets.py, shared runs apart): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10

FAULTY_MODULE = "test.harness.faulty_backends"
CONTROL = "aot_eager"
# Each fault: the value-domain tests it must fail, the words its failures must have, and
# the clause they are reported under.
CATCHES = {
    "flushes_subnormals": ({"test_subnormals_float32"}, r"subnormal values flushed to zero", clauses.SUBNORMALS),
    "loses_negative_zero": ({"test_values_float32", "test_values_float64"}, r"the sign of zero differs",
                            clauses.VALUE_DOMAINS),
    "integers_through_float32": ({"test_values_int64", "test_values_int32"}, r"on large values: outputs differ",
                                 clauses.VALUE_DOMAINS),
    "saturates_8_bit": ({"test_values_int8", "test_values_uint8"}, r"on small values: outputs differ",
                        clauses.VALUE_DOMAINS),
    "drops_imaginary_parts": ({"test_values_complex64"}, r"^OpCheckFailure: complex64: .* values: outputs differ",
                              clauses.VALUE_DOMAINS),
    # faulty_backends/contract.py: every kernel runs the variant its defaults choose, of its
    # bool and str flags. The options tests it fails on torch 2.13.0 (a loss's reduction,
    # leaky_relu's slope and a norm's order are numbers, which it leaves alone);
    # test_reference_options_shape_and_views has no call in the quick sweep.
    "ignores_kernel_options": ({f"test_reference_options_{group}" for group in (
        "indexing", "linear_algebra", "neural_network", "pooling_and_padding", "other", "scatters", "sorting",
        "reductions", "statistics")}, r"on reference options values: ", clauses.REFERENCE_INPUTS),
}
UNTOUCHED = "test_values_bool"  # no fault above changes a boolean


def _glob(backend: str, test: str) -> str:
    return registry.test_id(f"test_op_sweep.OpSweepTests.{test}", backend=backend)


RUN = shared_runs.DEFAULT.part(
    [*(f"{FAULTY_MODULE}:{fault}" for fault in CATCHES), CONTROL],
    [_glob(CONTROL, "test_values_*"), _glob(CONTROL, "test_subnormals_*"),
     *(_glob(CONTROL, test) for test in CATCHES["ignores_kernel_options"][0]),
     *(_glob(fault, test) for fault, (tests, _, _) in CATCHES.items() for test in (*tests, UNTOUCHED))])


class ValueDomainFaultsTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tests = RUN.tests()

    def outcomes(self, backend: str) -> dict[str, dict]:
        found = {test["id"].rsplit(".", 1)[1]: test for test in self.tests if test["backend"] == backend}
        self.assertTrue(found, RUN.describe())
        return found

    def test_each_fault_fails_the_tests_of_its_kind_in_its_words(self):
        for fault, (caught, words, clause) in CATCHES.items():
            with self.subTest(fault=fault):
                outcomes = self.outcomes(fault)
                self.assertEqual({name for name, test in outcomes.items() if test["outcome"] != "PASS"}, caught)
                for name in caught:
                    self.assertEqual(outcomes[name]["outcome"], "FAIL", outcomes[name]["reason"])
                    self.assertRegex(outcomes[name]["reason"], words)
                    self.assertEqual(outcomes[name]["clause"], clause)

    def test_aot_eager_passes_every_value_domain_test(self):
        outcomes = self.outcomes(CONTROL)
        self.assertGreaterEqual(len(outcomes), 11)
        self.assertEqual({name: test["reason"] for name, test in outcomes.items() if test["outcome"] != "PASS"}, {})


if __name__ == "__main__":
    unittest.main()
