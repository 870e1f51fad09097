"""Per-test isolation: leaked global state fails the leaking test and is put back; RNGs
are seeded the same way for every test."""

from __future__ import annotations

import random
import unittest
from typing import Callable
from unittest import mock

import torch
import torch._dynamo.config

from harness import state
from harness.testcase import expectations
from harness.testcase.base import DynamoTestCase
from test.harness import faulty_backends

# Its own seconds (test/harness/budgets.py): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10


def _run(case_class: type, *names: str) -> unittest.TestResult:
    result = unittest.TestResult()
    unittest.TestSuite(case_class(name) for name in names).run(result)
    return result


def _problems(result: unittest.TestResult) -> str:
    return "\n".join(text for _, text in result.failures + result.errors)


class _StateTestBase(unittest.TestCase):
    def setUp(self) -> None:
        # The cases run here must not depend on the expectations data being edited elsewhere.
        patcher = mock.patch.object(expectations, "_LOADED", [])
        patcher.start()
        self.addCleanup(patcher.stop)
        # If the harness failed to restore, the damage stops at this test.
        before = state.snapshot()
        self.addCleanup(state.restore, before)


class LeakTests(_StateTestBase):
    def run_leaking(self, leak: Callable[[], None]) -> unittest.TestResult:
        class Leaky(DynamoTestCase):
            def test_leaks(self):
                leak()

        return _run(Leaky, "test_leaks")

    def assertLeakReported(self, result: unittest.TestResult, item: str) -> None:
        self.assertEqual(len(result.failures), 1, _problems(result))
        self.assertEqual(result.errors, [])
        message = result.failures[0][1]
        self.assertIn("test leaked global state (now restored)", message)
        self.assertIn(item, message)

    def test_grad_mode_off(self):
        result = self.run_leaking(lambda: torch.set_grad_enabled(False))
        self.assertLeakReported(result, "torch.is_grad_enabled(): True -> False")
        self.assertTrue(torch.is_grad_enabled())

    def test_dynamo_config(self):
        self.assertFalse(torch._dynamo.config.allow_rnn)

        def enable_rnn():
            torch._dynamo.config.allow_rnn = True

        result = self.run_leaking(enable_rnn)
        self.assertLeakReported(result, "torch._dynamo.config.allow_rnn: False -> True")
        self.assertFalse(torch._dynamo.config.allow_rnn)

    def test_default_dtype(self):
        result = self.run_leaking(lambda: torch.set_default_dtype(torch.float64))
        self.assertLeakReported(result, "torch.get_default_dtype(): torch.float32 -> torch.float64")
        self.assertIs(torch.get_default_dtype(), torch.float32)

    def test_a_backend_that_leaves_subnormals_flushed(self):
        def compile_and_call():
            compiled = torch.compile(lambda x: x * 2, backend=faulty_backends.leaves_subnormals_flushed)
            compiled(torch.ones(3))

        result = self.run_leaking(compile_and_call)
        self.assertLeakReported(result, "eager's floating-point environment (rounding, subnormal results, subnormal "
                                        "inputs): ('to nearest', 'kept', 'read') -> ('to nearest', 'flushed to zero', "
                                        "'read as zero')")
        self.assertNotEqual((torch.tensor(1e-38) * 1e-3).item(), 0.0)  # put back

    def test_a_functorch_transform_left_open(self):
        # What a backend raising inside torch.func.grad's level can leave: every later op traced
        # by it, and Dynamo running every later scenario eagerly (ThunderCompiler, 2026-12-07).
        result = self.run_leaking(torch._C._functorch._grad_increment_nesting)
        self.assertLeakReported(result, "functorch transforms open: () -> ('Grad',)")
        self.assertEqual(torch._C._functorch.get_interpreter_stack(), None)
        self.assertEqual((torch.ones(2) + 1).tolist(), [2.0, 2.0])

    def test_every_leak_is_named(self):
        def leak_two():
            torch.set_grad_enabled(False)
            torch.set_default_dtype(torch.float64)

        result = self.run_leaking(leak_two)
        self.assertLeakReported(result, "torch.is_grad_enabled()")
        self.assertLeakReported(result, "torch.get_default_dtype()")
        self.assertTrue(torch.is_grad_enabled())
        self.assertIs(torch.get_default_dtype(), torch.float32)

    def test_leak_does_not_reach_the_next_test(self):
        seen = []

        class Sequence(DynamoTestCase):
            def test_1_leaks(self):
                torch.set_grad_enabled(False)

            def test_2_looks(self):
                seen.append(torch.is_grad_enabled())

        result = _run(Sequence, "test_1_leaks", "test_2_looks")
        self.assertEqual(len(result.failures), 1, _problems(result))
        self.assertIn("test_1_leaks", result.failures[0][0].id())
        self.assertEqual(seen, [True])

    def test_state_changed_and_put_back_passes(self):
        class Tidy(DynamoTestCase):
            def test_tidy(self):
                with torch.no_grad(), torch._dynamo.config.patch(allow_rnn=True):
                    torch.set_default_dtype(torch.float64)
                    torch.set_default_dtype(torch.float32)

        result = _run(Tidy, "test_tidy")
        self.assertTrue(result.wasSuccessful(), _problems(result))
        self.assertEqual(result.testsRun, 1)


class SnapshotTests(unittest.TestCase):
    def test_leaked_lists_only_changes(self):
        before = {"a": 1, "b": torch.float32}
        after = {"a": 1, "b": torch.float64, "new": 3}
        self.assertEqual(state.leaked(before, after), ["b: torch.float32 -> torch.float64"])

    def test_snapshot_covers_loaded_configs(self):
        snap = state.snapshot()
        self.assertIn("torch.is_grad_enabled()", snap)
        self.assertIn("torch._dynamo.config.allow_rnn", snap)


class SeedTests(_StateTestBase):
    def test_every_test_starts_from_the_same_seed(self):
        draws = []

        class Draws(DynamoTestCase):
            def test_a(self):
                draws.append((torch.randn(4), random.random()))

            def test_b(self):
                draws.append((torch.randn(4), random.random()))

        torch.manual_seed(1234)
        random.seed(1234)
        result = _run(Draws, "test_a")
        # Moving the global generators on between tests must not matter.
        torch.randn(100)
        random.random()
        result2 = _run(Draws, "test_b")

        self.assertTrue(result.wasSuccessful() and result2.wasSuccessful(), _problems(result) + _problems(result2))
        (tensor_a, float_a), (tensor_b, float_b) = draws
        self.assertTrue(torch.equal(tensor_a, tensor_b))
        self.assertEqual(float_a, float_b)


class BetweenTestsTests(unittest.TestCase):
    """What the harness runs after a test and before the next leaves global state alone."""

    def test_trying_a_failing_tests_graph_for_its_repro_leaves_grad_mode_on(self):
        # Found 2026-11-28: the repro capture ran GradModeMutationTests' graph, which turns
        # grad mode off, after the test; every later test in that worker then compared two
        # runs without gradients and passed against a backend that detaches its outputs.
        from harness import compat
        from harness.measure import repro

        captured = []

        def backend(gm, example_inputs):
            captured.append((gm, example_inputs))
            return gm.forward

        def square_then_disable_grad(x):
            y = x * x
            torch._C._set_grad_enabled(False)
            return y + 1

        compat.reset_dynamo()
        self.addCleanup(compat.reset_dynamo)
        try:
            torch.compile(square_then_disable_grad, backend=backend, fullgraph=True)(torch.ones(3, requires_grad=True))
        finally:
            torch.set_grad_enabled(True)
        (gm, example_inputs), = captured
        self.assertIn("_set_grad_enabled(False)", gm.code)
        self.assertEqual(repro.why_not_replayable(gm, example_inputs), "")
        self.assertTrue(torch.is_grad_enabled())


if __name__ == "__main__":
    unittest.main()
