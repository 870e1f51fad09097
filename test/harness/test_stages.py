"""The stage a failure came from (harness/measure/stages.py), decided from which callable
was running: each stage reached by a backend that fails there, through the counter every
scenario compiles with; and an expectation that names a stage expects only that one."""

from __future__ import annotations

import functools
import unittest

import torch
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

from harness import compat
from harness.measure import stages
from harness.measure.counters import CompileCounterWithBackend
from harness.testcase.base import BackendTestCase
from test.harness.test_case import _GenerationTestBase

# Its own seconds (test/harness/budgets.py): 3 s measured 2026-11-29.
TIME_BUDGET_S = 15


def _refuses(gm, example_inputs):
    raise NotImplementedError("op foo is not supported")


def _fails_when_run(gm, example_inputs):
    def run(*args):
        raise RuntimeError("device lost")
    return run


def _forward_as_traced(gm, example_inputs):
    return make_boxed_func(gm.forward)


def _refuses_backward(gm, example_inputs):
    raise NotImplementedError("no backward kernels")


def _backward_fails_when_run(gm, example_inputs):
    def run(args):
        raise RuntimeError("backward kernel failed")
    run._boxed_call = True
    return run


def _loss(x):
    return (x.sin() * 2).sum()


class StageOfTests(unittest.TestCase):
    def setUp(self) -> None:
        torch._dynamo.reset()
        self.addCleanup(torch._dynamo.reset)

    def stage(self, backend, fn=_loss, **compile_kwargs) -> str:
        # Not assertRaises: it keeps the exception without its traceback, which the stage is read from.
        x = torch.randn(3, requires_grad=True)
        try:
            torch.compile(fn, backend=CompileCounterWithBackend(backend), **compile_kwargs)(x).backward()
        except Exception as error:
            return stages.of(error, failed_check=False)
        self.fail("nothing raised")

    def test_the_backends_compiler_raising(self):
        self.assertEqual(self.stage(_refuses), stages.BACKEND_COMPILE)
        self.assertEqual(self.stage(aot_autograd(fw_compiler=_refuses)), stages.BACKEND_COMPILE)

    def test_the_backward_compiler_raising_on_the_first_backward(self):
        backend = aot_autograd(fw_compiler=_forward_as_traced, bw_compiler=_refuses_backward)
        self.assertEqual(self.stage(backend), stages.BACKEND_COMPILE)

    def test_compiled_code_raising_forward_and_backward(self):
        self.assertEqual(self.stage(_fails_when_run), stages.BACKEND_RUN)
        backend = aot_autograd(fw_compiler=_forward_as_traced, bw_compiler=_backward_fails_when_run)
        self.assertEqual(self.stage(backend), stages.BACKEND_RUN)

    def test_aot_autograd_raising_while_it_partitions(self):
        # torch's own partitioner called with an option it does not take: the call fails
        # inside AOTAutograd, with none of the backend's code running there.
        partition = functools.partial(compat.default_partition(), no_such_option=True)
        backend = aot_autograd(fw_compiler=_forward_as_traced, partition_fn=partition)
        self.assertEqual(self.stage(backend), stages.AOT_AUTOGRAD)

    def test_dynamo_refusing_to_capture(self):
        def breaks(x):
            torch._dynamo.graph_break()
            return (x + 1).sum()
        self.assertEqual(self.stage("eager", breaks, fullgraph=True), stages.CAPTURE)

    def test_an_error_after_the_compiled_call_returned(self):
        try:
            torch.zeros(2).sum().backward()  # no grad_fn: what a check meets after a detaching backend
        except RuntimeError as error:
            self.assertEqual(stages.of(error, failed_check=False), stages.CHECK)
        self.assertEqual(stages.of(AssertionError("values differ"), failed_check=True), stages.CHECK)


class ExpectedStageTests(_GenerationTestBase):
    """An xfail entry with a stage expects a failure from that stage only."""

    def make_family(self) -> type:
        class Family(BackendTestCase):
            def test_refused(self):
                torch.compile(lambda x: x + 1, backend=CompileCounterWithBackend(_refuses))(torch.ones(2))

        self.module.Family = Family
        Family.__module__ = self.module.__name__
        return self.generate(Family)

    def test_the_named_stage_is_an_expected_failure(self):
        self.make_family()
        self.expect("test_refused", stage=stages.BACKEND_COMPILE)
        result = self.run_tests("Family_eager", "test_refused")
        self.assertEqual((len(result.expectedFailures), result.errors, result.failures), (1, [], []))

    def test_another_stage_is_unexpected(self):
        self.make_family()
        self.expect("test_refused", stage=stages.BACKEND_RUN)
        result = self.run_tests("Family_eager", "test_refused")
        self.assertEqual(result.expectedFailures, [])
        self.assertEqual(len(result.errors), 1, result.errors)



class StageKeyTests(unittest.TestCase):
    def test_an_unknown_stage_or_a_stage_on_a_skip_is_refused_with_its_line(self):
        from harness.testcase.expectations import ExpectationError, parse

        good = parse('[[expect]]\ntest = "*"\nstatus = "xfail"\nstage = "backend run"\nreason = "r"\n', "x.toml")
        self.assertEqual(good[0].stage, stages.BACKEND_RUN)
        for text, message in (('status = "xfail"\nstage = "linking"', "stage 'linking' is not one of"),
                              ('status = "skip"\nstage = "check"', "stage is for an xfail entry")):
            with self.subTest(text=text), self.assertRaisesRegex(ExpectationError, f"^x.toml:[0-9]+: .*{message}"):
                parse(f'[[expect]]\ntest = "*"\n{text}\nreason = "r"\n', "x.toml")


if __name__ == "__main__":
    unittest.main()
