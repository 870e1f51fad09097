"""What mycc's users rely on beyond the suite's scenarios, written as the suite's scenarios
are: one class per backend under test, compiled against eager."""

from __future__ import annotations

import torch

from harness import BackendTestCase, assert_same_outputs_and_grads, for_each_backend


@for_each_backend
class MyccContractTests(BackendTestCase):
    """A fused-looking chain and an in-place update through a view, with gradients."""

    def test_linear_gelu_chain(self):
        def fn(x, weight, bias):
            return torch.nn.functional.gelu(x @ weight + bias).sum(dim=-1)

        args = [torch.randn(4, 8, requires_grad=True), torch.randn(8, 8, requires_grad=True),
                torch.randn(8, requires_grad=True)]
        assert_same_outputs_and_grads(self, fn, self.compile(fn), args)

    def test_update_through_a_view(self):
        def fn(x, y):
            x[:, 0].mul_(2)
            return x.sum() + y.cos().sum()

        args = [torch.randn(3, 4), torch.randn(5, requires_grad=True)]
        assert_same_outputs_and_grads(self, fn, self.compile(fn), args)
