"""The counting backends every scenario compiles through."""

from __future__ import annotations

import unittest

import torch

from harness.axes.backends import resolve_backend
from harness.measure.counters import CompileCounter, CompileCounterWithBackend, count_ops

# Its own seconds (test/harness/budgets.py): 1 s measured 2026-11-29.
TIME_BUDGET_S = 10


def _two_frames(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y.cos() + 1


def _differentiable(x):
    return (x * 3).sum()


class CountOpsTests(unittest.TestCase):
    def test_counts_calls_not_placeholders_or_outputs(self):
        class Model(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.linear = torch.nn.Linear(2, 2)

            def forward(self, x):
                return torch.relu(self.linear(x)).sum()

        # call_module (linear), call_function (relu), call_method (sum).
        self.assertEqual(count_ops(torch.fx.symbolic_trace(Model())), 3)


class CompileCounterTests(unittest.TestCase):
    def setUp(self) -> None:
        torch._dynamo.reset()
        self.addCleanup(torch._dynamo.reset)

    def test_counts_frames_ops_and_keeps_graphs(self):
        counter = CompileCounter()
        x = torch.randn(4)
        out = torch.compile(_two_frames, backend=counter)(x)

        torch.testing.assert_close(out, x.sin().cos() + 1)
        self.assertEqual(counter.frame_count, 2)
        self.assertEqual(counter.op_count, 3)  # sin | cos, add
        self.assertEqual(len(counter.graphs), 2)
        self.assertEqual([len(inputs) for inputs in counter.example_inputs], [1, 1])
        self.assertIn("frames=2", repr(counter))

    def test_cached_frames_are_not_recounted(self):
        counter = CompileCounter()
        compiled = torch.compile(_differentiable, backend=counter)
        compiled(torch.randn(4))
        compiled(torch.randn(4))
        self.assertEqual(counter.frame_count, 1)

    def test_clear(self):
        counter = CompileCounter()
        torch.compile(_differentiable, backend=counter)(torch.randn(4))
        counter.clear()
        self.assertEqual((counter.frame_count, counter.op_count, counter.graphs), (0, 0, []))


class CompileCounterWithBackendTests(unittest.TestCase):
    def setUp(self) -> None:
        torch._dynamo.reset()
        self.addCleanup(torch._dynamo.reset)

    def run_differentiable(self, backend) -> tuple[CompileCounterWithBackend, torch.Tensor]:
        counter = CompileCounterWithBackend(backend)
        x = torch.randn(4, requires_grad=True)
        out = torch.compile(_differentiable, backend=counter)(x)
        torch.testing.assert_close(out, _differentiable(x))
        return counter, out

    def test_delegates_to_callable(self):
        received = []

        def backend(gm, example_inputs):
            received.append(gm)
            return gm.forward

        counter, _ = self.run_differentiable(backend)
        self.assertEqual(counter.frame_count, 1)
        self.assertEqual(counter.op_count, 2)
        self.assertEqual(received, counter.graphs)

    def test_delegates_to_registered_name(self):
        # AOTAutograd's own autograd node on the output proves aot_eager compiled the graph.
        counter, out = self.run_differentiable("aot_eager")
        self.assertEqual(counter.frame_count, 1)
        self.assertIn("CompiledFunction", type(out.grad_fn).__name__)
        self.assertIn("'aot_eager'", repr(counter))

    def test_delegates_to_harness_backend(self):
        counter, out = self.run_differentiable(resolve_backend("aot_eager"))
        self.assertEqual(counter.frame_count, 1)
        self.assertIn("CompiledFunction", type(out.grad_fn).__name__)
        self.assertIn("'aot_eager'", repr(counter))

    def test_eager_name_runs_the_graph_uncompiled(self):
        counter, out = self.run_differentiable("eager")
        self.assertEqual(counter.frame_count, 1)
        self.assertNotIn("CompiledFunction", type(out.grad_fn).__name__)


if __name__ == "__main__":
    unittest.main()
