"""Comparing compiled results with eager: what must match exactly and what within tolerance."""

from __future__ import annotations

import unittest

import torch

from harness.checks.compare import (
    assert_close, assert_same_outputs_and_grads, clone_input, rand_strided, tolerance, weighted_loss)

# Its own seconds (test/harness/budgets.py): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10


class AssertCloseTests(unittest.TestCase):
    def assertMismatch(self, expected, actual, pattern: str, **kwargs) -> None:
        with self.assertRaisesRegex(AssertionError, pattern):
            assert_close(self, expected, actual, **kwargs)

    def test_equal_within_tolerance(self):
        x = torch.randn(4)
        assert_close(self, (x, 3), (x + 1e-7, 3))

    def test_values(self):
        x = torch.randn(4)
        self.assertMismatch(x, x + 1e-3, r"output: values differ from eager")

    def test_scale_widens_the_tolerance(self):
        x = torch.ones(4)
        assert_close(self, x, x + 1e-4, scale=100)
        self.assertMismatch(x, x + 1e-4, "values differ")

    def test_dtype(self):
        self.assertMismatch(torch.ones(2), torch.ones(2, dtype=torch.float64), r"dtype differs from eager")

    def test_shape(self):
        self.assertMismatch(torch.ones(2, 3), torch.ones(3, 2), r"shape differs from eager")

    def test_requires_grad(self):
        x = torch.ones(2)
        self.assertMismatch(x, x.clone().requires_grad_(), r"requires_grad differs from eager")
        assert_close(self, x, x.clone().requires_grad_(), check_requires_grad=False)

    def test_structure(self):
        x = torch.ones(2)
        self.assertMismatch((x, x), [x, x], r"structure differs from eager")
        self.assertMismatch((x,), (x, x), r"structure differs from eager")

    def test_tensor_where_eager_gave_one(self):
        self.assertMismatch([torch.ones(())], [1.0], r"eager gave a tensor")

    def test_python_values(self):
        self.assertMismatch({"n": 2}, {"n": 3}, r"output: differs from eager")

    def test_position_is_named(self):
        x = torch.zeros(2)
        self.assertMismatch((x, x), (x, x + 1), r"output\[1\]: values differ")

    def test_nan_equals_nan(self):
        x = torch.tensor([float("nan"), 1.0])
        assert_close(self, x, x.clone())

    def test_integers_compare_exactly(self):
        self.assertEqual(tolerance(torch.int64), (0.0, 0.0))
        self.assertMismatch(torch.tensor([10**9]), torch.tensor([10**9 + 1]), "values differ")


def _sin_of_product(x, y):
    return (x * y).sin()


def _bump(x):
    return x.add_(1)


class SameOutputsAndGradsTests(unittest.TestCase):
    def test_matching_functions(self):
        x, y = torch.randn(3, requires_grad=True), torch.randn(3)
        expected, actual = assert_same_outputs_and_grads(self, _sin_of_product, _sin_of_product, [x, y])
        torch.testing.assert_close(expected, actual)
        # Gradients go to the harness's copies, never to the caller's tensors.
        self.assertIsNone(x.grad)

    def test_arguments_are_not_touched(self):
        x = torch.zeros(3)
        assert_same_outputs_and_grads(self, _bump, _bump, [x])
        self.assertEqual(x.tolist(), [0.0] * 3)

    def test_missing_input_mutation(self):
        with self.assertRaisesRegex(AssertionError, r"inputs after the call: values differ"):
            assert_same_outputs_and_grads(
                self, lambda x: x.add_(1).sum(), lambda x: (x + 1).sum(), [torch.zeros(3)]
            )

    def test_wrong_gradient(self):
        with self.assertRaisesRegex(AssertionError, r"grad of input 0: values differ"):
            assert_same_outputs_and_grads(
                self, lambda x: x * x, lambda x: x * x.detach(), [torch.randn(3, requires_grad=True)]
            )

    def test_output_that_lost_its_grad_fn(self):
        with self.assertRaisesRegex(AssertionError, r"requires_grad differs"):
            assert_same_outputs_and_grads(
                self, lambda x: x * 2, lambda x: (x * 2).detach(), [torch.randn(3, requires_grad=True)]
            )


class _SoftmaxWithoutOut(torch.autograd.Function):
    """softmax whose backward forgets its ``* out`` factor: right only where the upstream
    gradient is constant along the dimension, as a plain sum of the outputs makes it."""

    @staticmethod
    def forward(ctx, x):
        out = x.softmax(-1)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad - (grad * out).sum(-1, keepdim=True)


class WeightedLossTests(unittest.TestCase):
    def test_signed_weights_the_same_on_every_call(self):
        x = torch.ones(1000, requires_grad=True)
        weights, = torch.autograd.grad(weighted_loss([x]), x)
        self.assertTrue(bool((weights < -0.5).any()) and bool((weights > 0.5).any()))
        self.assertTrue(torch.equal(weights, torch.autograd.grad(weighted_loss([x]), x)[0]))

    def test_a_gradient_through_a_normalizing_op_is_seen(self):
        # Through softmax a plain sum of the outputs is constant (1 per row): both gradients 0.
        with self.assertRaisesRegex(AssertionError, r"grad of input 0: values differ"):
            assert_same_outputs_and_grads(self, lambda x: x.softmax(-1), _SoftmaxWithoutOut.apply,
                                          [torch.randn(3, 5, requires_grad=True)])


class RandStridedTests(unittest.TestCase):
    def test_size_and_stride(self):
        for size, stride in [((2, 3), (1, 2)), ((4, 2, 3), (6, 1, 2)), ((2, 3), (0, 1)), ((3,), (2,))]:
            with self.subTest(size=size, stride=stride):
                t = rand_strided(size, stride)
                self.assertEqual((t.shape, t.stride()), (torch.Size(size), stride))

    def test_minimal_storage(self):
        t = rand_strided((2, 3), (1, 2))
        self.assertEqual(t.untyped_storage().nbytes(), 6 * t.element_size())
        self.assertEqual(rand_strided((3,), (2,)).untyped_storage().nbytes(), 5 * 4)

    def test_empty(self):
        self.assertEqual(rand_strided((0, 3), (3, 1)).numel(), 0)

    def test_dtypes(self):
        for dtype in (torch.float64, torch.bfloat16, torch.int32, torch.bool, torch.complex64):
            with self.subTest(dtype=dtype):
                self.assertIs(rand_strided((2, 2), (1, 2), dtype=dtype).dtype, dtype)

    def test_rank_mismatch(self):
        with self.assertRaisesRegex(ValueError, "differ in length"):
            rand_strided((2, 3), (1,))


class CloneInputTests(unittest.TestCase):
    def test_keeps_strides_and_requires_grad(self):
        x = rand_strided((3, 4), (1, 3)).requires_grad_()
        copy = clone_input(x)
        self.assertEqual(copy.stride(), x.stride())
        self.assertTrue(copy.requires_grad and copy.is_leaf)
        self.assertNotEqual(copy.data_ptr(), x.data_ptr())
        self.assertTrue(torch.equal(copy, x))

    def test_parameter_stays_a_parameter(self):
        copy = clone_input(torch.nn.Parameter(torch.ones(2), requires_grad=False))
        self.assertIsInstance(copy, torch.nn.Parameter)
        self.assertFalse(copy.requires_grad)

    def test_non_tensor_is_returned_as_is(self):
        marker = object()
        self.assertIs(clone_input(marker), marker)


if __name__ == "__main__":
    unittest.main()
