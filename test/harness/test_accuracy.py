"""harness.checks.accuracy (the float64-relative judgement) and harness.checks.models' skip reason."""

from __future__ import annotations

import unittest

import torch

from harness.checks.accuracy import assert_accurate, beyond_reference, mismatch
from harness.checks.compare import assert_close
from harness.checks.models import ModelSpec, missing_library

# Its own seconds (test/harness/budgets.py): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10


def _three_ways(fn, *shape):
    """fn in float32, fn in float64, and the float64 input."""
    torch.manual_seed(0)
    x = torch.randn(*shape, dtype=torch.float64)
    return fn(x.float()), fn(x), x


def _deep_sum(x):
    return x.cumsum(-1) * 1e3


class CompareTests(unittest.TestCase):
    def test_reordered_arithmetic_passes(self):
        # Row sums of 4000 terms, and the same sums taken in 40 blocks of 100 (as a compiler
        # splitting a reduction would).
        eager, fp64, x = _three_ways(lambda x: x.exp().sum(-1), 64, 4000)
        compiled = x.float().exp().view(64, 40, 100).sum(-1).sum(-1)
        self.assertFalse(torch.equal(eager, compiled))  # really different
        self.assertIsNone(mismatch("out", eager, compiled, fp64, tol=1e-6))

    def test_a_kernel_off_by_three_parts_in_ten_thousand_fails(self):
        eager, fp64, _ = _three_ways(_deep_sum, 4, 4000)
        compiled = eager * (1 + 3e-4)
        found = mismatch("out", eager, compiled, fp64, tol=1e-4)
        self.assertRegex(str(found), r"out: RMSE vs float64 .*, eager torch.float32's own .* \(allowed 2x")

    def test_small_tensors_get_a_larger_multiplier(self):
        eager, fp64, _ = _three_ways(_deep_sum, 10)
        self.assertIn("allowed 3x", str(mismatch("out", eager, eager + 1, fp64, tol=1e-6)))

    def test_bfloat16_arithmetic_fails(self):
        eager, fp64, _ = _three_ways(lambda x: x.sin(), 64, 64)
        compiled = eager.bfloat16().float()
        self.assertIsNotNone(mismatch("out", eager, compiled, fp64, tol=1e-4))

    def test_dtype_shape_integers_and_nan(self):
        eager = torch.arange(6.0)
        self.assertIn("dtype torch.float64", str(mismatch("o", eager, eager.double(), None, 1e-3)))
        self.assertIn("shape (2, 3)", str(mismatch("o", eager, eager.view(2, 3), None, 1e-3)))
        counts = torch.arange(3)
        self.assertIn("1 of 3 values differ", str(mismatch("o", counts, counts + (counts == 2), None, 1e-3)))
        with_nan = eager.clone()
        with_nan[0] = float("nan")
        self.assertIn("NaN where", str(mismatch("o", eager, with_nan, eager.double(), 1e-3)))

    def test_report_names_the_worst_first_and_counts_the_rest(self):
        eager = {f"t{index}": torch.zeros(3) for index in range(8)}
        compiled = {name: value + (index + 1) for index, (name, value) in enumerate(eager.items())}
        compiled["t3"] = torch.zeros(3)
        with self.assertRaisesRegex(AssertionError, r"^7 of 8 tensors off \(and 2 more\): t7: .*; t6: "):
            assert_accurate(eager, compiled, None, 1e-3)
        assert_accurate(eager, dict(eager), None, 1e-3)

    def test_a_tensor_missing_on_one_side_fails(self):
        with self.assertRaisesRegex(AssertionError, r"buffer b: present in only one"):
            assert_accurate({"a": torch.ones(1), "buffer b": torch.ones(1)}, {"a": torch.ones(1)}, None, 1e-3)


class MissingLibraryTests(unittest.TestCase):
    def test_names_the_library_and_how_to_install_it(self):
        spec = ModelSpec("m", torch.nn.Identity, lambda: ((), None), lambda out, target: out,
                         requires=("no_such_library_for_the_suite",))
        reason = missing_library(spec)
        self.assertRegex(reason, r"^needs no_such_library_for_the_suite \(No module named .*\); "
                                 r"`pip install -r requirements.txt`")
        self.assertNotIn("\n", reason)
        self.assertIsNone(missing_library(ModelSpec("m", torch.nn.Identity, lambda: ((), None), lambda o, t: o)))


class HalfPrecisionTests(unittest.TestCase):
    """compare.assert_close with a float64 reference: how the operator checker, the
    second-size replay and the served block judge values that miss their tolerance, each
    leaf by its own rule (accuracy.beyond_reference)."""

    def setUp(self):
        torch.manual_seed(0)
        self.x = torch.randn(64, 64, dtype=torch.float64)
        self.truth = (self.x @ self.x).cumsum(-1)
        half = self.x.half()
        self.eager = (half @ half).cumsum(-1)  # rounded after every step
        self.rounded_once = self.truth.half()  # what a compiler keeping float32 inside gives

    def judge(self, eager, compiled, truth):
        assert_close(unittest.TestCase(), eager, compiled, reference=lambda: truth)

    def test_rounding_once_is_right(self):
        self.assertFalse(torch.allclose(self.eager, self.rounded_once, rtol=1e-2, atol=1e-2))
        self.judge([self.eager], [self.rounded_once], [self.truth])
        self.assertIsNone(beyond_reference(self.eager, self.rounded_once, self.truth, 1e-3))

    def test_wrong_values_and_wrong_dtypes_are_not_excused(self):
        with self.assertRaisesRegex(AssertionError, r"against the float64 reference: RMSE"):
            self.judge([self.eager], [self.rounded_once * 1.05], [self.truth])
        with self.assertRaisesRegex(AssertionError, r"dtype differs"):
            self.judge([self.eager], [self.truth.float()], [self.truth])

    def test_a_bfloat16_result_12_percent_off_fails(self):
        eager = self.x.bfloat16().sin()
        with self.assertRaisesRegex(AssertionError, r"values differ from eager(.|\n)*against the float64 reference"):
            self.judge(eager, eager * 1.12, self.x.sin())

    def test_a_leaf_that_passes_excuses_no_other(self):
        # bfloat16 values right (rounded once), then beside them: indices one place on, a
        # float32 leaf 4 too large, the half values detached.
        values, indices = self.eager.topk(3)
        truth_values = self.truth.topk(3).values
        with self.assertRaisesRegex(AssertionError, r"output\[1\]: values differ"):
            self.judge((values, indices), (truth_values.half(), (indices + 1) % 64), (truth_values, indices))
        wide = self.x.float()
        with self.assertRaisesRegex(AssertionError, r"output\[1\]: values differ"):
            self.judge((self.eager, wide), (self.rounded_once, wide + 4), (self.truth, self.x))
        grad = self.eager.clone().requires_grad_()
        with self.assertRaisesRegex(AssertionError, r"requires_grad differs"):
            self.judge([grad], [self.rounded_once], [self.truth])

    def test_float32_too_is_judged_against_float64(self):
        # Running sums of 4000 terms that cancel, rounded once (a compiler accumulating in a
        # wider type): beyond the fixed tolerance of eager's, nearer float64 than eager is.
        eager, fp64, _ = _three_ways(lambda x: (x.exp() - 1.6).cumsum(-1), 64, 4000)
        compiled = fp64.float()
        self.assertFalse(torch.allclose(eager, compiled, rtol=1.3e-5, atol=1e-5))
        self.judge(eager, compiled, fp64)
        with self.assertRaisesRegex(AssertionError, r"against the float64 reference"):
            self.judge(eager, compiled + 1e-3, fp64)

    def test_without_a_reference_the_tolerance_decides(self):
        with self.assertRaisesRegex(AssertionError, r"values differ"):
            assert_close(unittest.TestCase(), self.eager, self.rounded_once)
        self.assertEqual(beyond_reference(self.eager, self.rounded_once, None, 1e-3), "no float64 reference to judge it by")


if __name__ == "__main__":
    unittest.main()
