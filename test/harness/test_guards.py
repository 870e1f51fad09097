"""Guard-failure capture and version-stable reason matching."""

from __future__ import annotations

import unittest
from unittest import mock

import torch

from harness.testcase import expectations
from harness.testcase.base import DynamoTestCase
from harness.measure.guards import GuardFailureRecorder, normalize_guard_reason

# Its own seconds (test/harness/budgets.py): 1 s measured 2026-11-29.
TIME_BUDGET_S = 10


def _add(x, y):
    return x + y


class NormalizeTests(unittest.TestCase):
    def test_comments_after_the_reason(self):
        self.assertEqual(
            normalize_guard_reason("0/0: a is b   # x.trunc_()  # file.py:9 in forward"), "a is b"
        )

    def test_local_spelled_with_L(self):
        self.assertEqual(
            normalize_guard_reason("0/0: tensor 'L['y']' requires_grad mismatch. expected requires_grad=1"),
            "tensor 'y' requires_grad mismatch. expected requires_grad=1",
        )

    def test_global_spelled_with_G_and_double_quotes(self):
        self.assertEqual(normalize_guard_reason('0/0: G["scale"] == 2'), "scale == 2")

    def test_appended_user_stack_trace(self):
        reason = (
            "0/0: tensor 'y' requires_grad mismatch. expected requires_grad=0\n"
            "User stack trace:\n"
            '  File "model.py", line 12, in forward\n'
            "    return x + y\n"
        )
        self.assertEqual(normalize_guard_reason(reason), "tensor 'y' requires_grad mismatch. expected requires_grad=0")

    def test_bracketed_compile_id(self):
        self.assertEqual(normalize_guard_reason("[0/1] a is b"), "a is b")

    def test_compile_id_with_restart_suffix(self):
        self.assertEqual(normalize_guard_reason("1/0_1: len(x) == 3"), "len(x) == 3")

    def test_every_line_of_a_multi_line_reason(self):
        self.assertEqual(
            normalize_guard_reason("0/0: x.size()[0] == 2  # f.py:3\n0/0: y is z"),
            "x.size()[0] == 2\ny is z",
        )

    def test_already_normal_reason_is_unchanged(self):
        reason = "tensor 'x' size mismatch at index 0. expected 2, actual 3"
        self.assertEqual(normalize_guard_reason(reason), reason)


class RecorderTests(unittest.TestCase):
    def setUp(self) -> None:
        torch._dynamo.reset()
        self.addCleanup(torch._dynamo.reset)

    def test_requires_grad_recompile(self):
        compiled = torch.compile(_add, backend="eager")
        x = torch.randn(3)
        with GuardFailureRecorder() as recorder:
            compiled(x, torch.randn(3))
            self.assertEqual(recorder.reasons, [])
            compiled(x, torch.randn(3, requires_grad=True))

        found = recorder.matching(r"tensor 'y' requires_grad mismatch")
        self.assertEqual(len(found), 1, recorder.raw_reasons)
        self.assertEqual(len(recorder.raw_reasons), len(recorder.reasons))

    def test_failures_before_start_are_not_recorded(self):
        compiled = torch.compile(_add, backend="eager")
        compiled(torch.randn(3), torch.randn(3))
        compiled(torch.randn(3), torch.randn(3, requires_grad=True))

        recorder = GuardFailureRecorder().start()
        compiled(torch.randn(3, dtype=torch.float64), torch.randn(3, dtype=torch.float64))
        recorder.stop()

        self.assertFalse(recorder.matching("requires_grad"), recorder.reasons)
        self.assertTrue(recorder.reasons)

    def test_failures_after_stop_are_not_recorded(self):
        compiled = torch.compile(_add, backend="eager")
        with GuardFailureRecorder() as recorder:
            compiled(torch.randn(3), torch.randn(3))
        compiled(torch.randn(3), torch.randn(3, requires_grad=True))
        self.assertEqual(recorder.reasons, [])

    def test_reasons_survive_a_dynamo_reset(self):
        compiled = torch.compile(_add, backend="eager")
        with GuardFailureRecorder() as recorder:
            compiled(torch.randn(3), torch.randn(3))
            compiled(torch.randn(3), torch.randn(3, requires_grad=True))
            recorder.collect()
            torch._dynamo.reset()
            compiled(torch.randn(3), torch.randn(3))
            compiled(torch.randn(3, requires_grad=True), torch.randn(3))
        self.assertEqual(len(recorder.matching(r"tensor 'y' requires_grad mismatch")), 1, recorder.reasons)
        self.assertEqual(len(recorder.matching(r"tensor 'x' requires_grad mismatch")), 1, recorder.reasons)

    def test_clear(self):
        compiled = torch.compile(_add, backend="eager")
        with GuardFailureRecorder() as recorder:
            compiled(torch.randn(3), torch.randn(3))
            compiled(torch.randn(3), torch.randn(3, requires_grad=True))
            recorder.clear()
            self.assertEqual(recorder.reasons, [])


class TestCaseAssertionTests(unittest.TestCase):
    """DynamoTestCase records guard failures around every test, across mid-test resets."""

    def setUp(self) -> None:
        patcher = mock.patch.object(expectations, "_LOADED", [])
        patcher.start()
        self.addCleanup(patcher.stop)

    def run_case(self, body) -> unittest.TestResult:
        class Case(DynamoTestCase):
            def test_body(self):
                body(self)

        result = unittest.TestResult()
        Case("test_body").run(result)
        return result

    def test_failures_on_both_sides_of_a_reset(self):
        def body(case):
            compiled = torch.compile(_add, backend="eager")
            compiled(torch.randn(3), torch.randn(3))
            compiled(torch.randn(3), torch.randn(3, requires_grad=True))
            case.reset_dynamo()
            compiled(torch.randn(3), torch.randn(3))
            compiled(torch.randn(3, requires_grad=True), torch.randn(3))
            case.assertGuardFailure(r"tensor 'y' requires_grad mismatch")
            case.assertGuardFailure(r"tensor 'x' requires_grad mismatch", count=2)

        result = self.run_case(body)
        self.assertTrue(result.wasSuccessful(), result.failures + result.errors)

    def test_missing_guard_failure_is_reported(self):
        def body(case):
            torch.compile(_add, backend="eager")(torch.randn(3), torch.randn(3))
            case.assertNoGuardFailure()
            case.assertGuardFailure(r"requires_grad mismatch")

        result = self.run_case(body)
        self.assertEqual(len(result.failures), 1, result.errors)
        self.assertIn("no guard failure matches 'requires_grad mismatch'; recorded: []", result.failures[0][1])


if __name__ == "__main__":
    unittest.main()
