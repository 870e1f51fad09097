"""harness.opcheck.op_check: passes correct backends, names what a faulty one got wrong."""

from __future__ import annotations

import unittest

import torch

from harness import compat
from harness.opcheck import NoGraphCaptured, OpCheckFailure, op_check
from test.harness.faulty_backends import memoizes_on_shapes, wrong_gradients, wrong_values


class OpCheckTests(unittest.TestCase):
    def setUp(self):
        compat.reset_dynamo()
        self.addCleanup(compat.reset_dynamo)
        self.x = torch.randn(3, 4, requires_grad=True)

    def test_correct_backends_pass_with_pytree_args(self):
        for backend in ("eager", "aot_eager"):
            with self.subTest(backend=backend):
                graphs = op_check(torch.sum, (self.x,), {"dim": [1], "keepdim": True}, backend)
                self.assertEqual(graphs, 1)
                op_check(torch.cat, ([self.x, self.x.detach()],), {"dim": 0}, backend, check_data_specialization=True)

    def test_wrong_outputs_are_named(self):
        with self.assertRaisesRegex(OpCheckFailure, r"^outputs differ between eager and the compiled call: "
                                                    r"the operator would give wrong outputs under torch.compile"):
            op_check(torch.sin, (self.x,), {}, wrong_values)

    def test_wrong_gradients_are_named(self):
        with self.assertRaisesRegex(OpCheckFailure, r"^gradients differ"):
            op_check(torch.sin, (self.x,), {}, wrong_gradients, check_gradients=True)
        op_check(torch.sin, (self.x,), {}, wrong_gradients, check_gradients=False)

    def test_no_gradient_in_eager_must_be_no_gradient_compiled(self):
        # argmax has no gradient: eager autograd refuses, and so must the compiled call.
        op_check(torch.argmax, (self.x,), {"dim": 1}, "aot_eager", check_gradients=True)

    def test_data_specialization_is_caught(self):
        op_check(torch.exp, (self.x,), {}, memoizes_on_shapes)  # one call: nothing to see
        compat.reset_dynamo()
        with self.assertRaisesRegex(OpCheckFailure, r"specialized on the example's values"):
            op_check(torch.exp, (self.x,), {}, memoizes_on_shapes, check_data_specialization=True)

    def test_eager_fallback_is_not_a_pass(self):
        with self.assertRaisesRegex(NoGraphCaptured, "captured no graph"):
            op_check(torch._dynamo.disable(torch.cos), (self.x,), {}, "aot_eager")


if __name__ == "__main__":
    unittest.main()
