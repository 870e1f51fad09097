"""The compile options axis (harness/axes/compile_options.py): its spelling, how a scenario's
own arguments meet the run's, and how the options reach a backend as torch would hand them."""

from __future__ import annotations

import ast
import os
import unittest
from unittest import mock

import torch
from packaging.version import Version

from harness import compat
from harness.axes import axis, backends, compile_options, registry
from harness.measure.counters import CompileCounterWithBackend
from harness.report.console import repro_command
from harness.repros.generic import render
from harness.report.results import TestResult
from harness.testcase import expectations
from harness.testcase.base import BackendTestCase

# Its own seconds (test/harness/budgets.py): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10


class SpellingTests(unittest.TestCase):
    def test_one_spelling_whatever_the_order_and_case(self):
        spelled = compile_options.canonical("options.freezing=TRUE; fullgraph=true")
        self.assertEqual(spelled, "fullgraph=true;options.freezing=true")
        self.assertEqual(compile_options.canonical(spelled), spelled)
        self.assertEqual(compile_options.canonical(""), compile_options.DEFAULT)
        self.assertEqual(compile_options.canonical('options={"a": [1, 2]};dynamic=none'), "options.a=[1,2]")

    def test_values_become_what_torch_compile_takes(self):
        self.assertEqual(compile_options.parse("mode=max-autotune;dynamic=false;fullgraph=true"),
                         {"mode": "max-autotune", "dynamic": False, "fullgraph": True})
        self.assertEqual(compile_options.parse("options.x=3;options.y=0.5;options.z=text"),
                         {"options": {"x": 3, "y": 0.5, "z": "text"}})

    def test_a_mistake_is_one_line_naming_it(self):
        for text, message in (("bad", "'bad' is not key=value"), ("colour=red", "unknown key 'colour'"),
                              ("fullgraph=3", "fullgraph is true or false"),
                              ("mode=max-autotune;options.x=1", "mode or options, not both"),
                              ("options.x=[1,", "not valid JSON")):
            with self.subTest(text=text), self.assertRaisesRegex(axis.AxisError, message) as caught:
                registry.COMPILE_OPTIONS.parse(text)
            self.assertNotIn("\n", str(caught.exception))

    def test_commas_inside_a_value_are_not_a_list(self):
        self.assertEqual(registry.COMPILE_OPTIONS.parse("options.sizes=[1,2,3]"), ("options.sizes=[1,2,3]",))

    def test_a_scenarios_own_arguments_win(self):
        run = {"mode": "max-autotune", "dynamic": True}
        self.assertEqual(compile_options.merged(run, {"dynamic": False}), {"mode": "max-autotune", "dynamic": False})
        # torch takes mode or options: the scenario's choice of the two stands.
        self.assertEqual(compile_options.merged(run, {"options": {"a": 1}}), {"dynamic": True, "options": {"a": 1}})
        self.assertEqual(compile_options.merged({"options": {"a": 1, "b": 1}}, {"options": {"b": 2}}),
                         {"options": {"a": 1, "b": 2}})
        self.assertEqual(compile_options.merged({"options": {"a": 1}}, {"mode": "x"}), {"mode": "x"})


class CarriedTests(unittest.TestCase):
    RUN = {"compile_options": "mode=max-autotune-no-cudagraphs", "command": "run_tests.py"}

    def test_expectations_select_by_it(self):
        entry, = expectations.parse('[[expect]]\ntest = "m.F.test_it"\ncompile_options = "*max-autotune*"\n'
                                    'status = "xfail"\nreason = "r"\n')
        self.assertTrue(entry.applies_to("m.F.test_it", Version("2.13.0"),
                                         {"backend": "eager", "compile_options": "mode=max-autotune"}))
        self.assertFalse(entry.applies_to("m.F.test_it", Version("2.13.0"),
                                          {"backend": "eager", "compile_options": "default"}))

    def test_reruns_and_repros_pass_them_on(self):
        test = TestResult(id="test.dynamo.test_m.F_eager.test_it", scenario="test_m.F.test_it", backend="eager",
                          backend_spec="eager", outcome="FAIL", reason="r")
        self.assertIn("--compile-options mode=max-autotune-no-cudagraphs", repro_command(test, run=self.RUN))
        problem = mock.Mock(id="P1", outcome="FAIL", backend="eager", tests=[test])
        text = render(problem, test, [], self.RUN)
        self.assertIn("COMPILE_OPTIONS = {'mode': 'max-autotune-no-cudagraphs'}", text)
        self.assertIn("fullgraph=True, **COMPILE_OPTIONS", text)

    def test_a_repro_stays_python_whatever_the_reason_says(self):
        reason = 'AssertionError: C:\\Users\\x and """ and \\N{oops}'
        test = TestResult(id="test.dynamo.test_m.F_eager.test_it", scenario="test_m.F.test_it", backend="eager",
                          backend_spec="eager", outcome="FAIL", reason=reason)
        text = render(mock.Mock(id="P1", outcome="FAIL", backend="eager", tests=[test]), test, [], self.RUN)
        self.assertIn(reason, ast.get_docstring(ast.parse(text)))


def _double(x):
    return x * 2


class HandedToTheBackendTests(unittest.TestCase):
    def test_a_callable_gets_mode_and_options_as_torch_hands_them(self):
        received = []

        def backend(gm, example_inputs, **kwargs):
            received.append(kwargs)
            return gm.forward

        for kwargs in ({"options": {"a": 1}}, {"mode": "max-autotune"}, {}):
            compat.reset_dynamo()
            counter = CompileCounterWithBackend(backend)
            torch.compile(_double, backend=counter, **kwargs)(torch.ones(2))
            self.assertEqual(counter.compile_kwargs, [kwargs])
            self.assertEqual(received[-1], kwargs)
        compat.reset_dynamo()

    def test_inductor_by_name_goes_through_torchs_option_wrapper(self):
        with self.assertRaisesRegex(RuntimeError, "Unexpected optimization option no_such_option"):
            compat.with_options("inductor", {"options": {"no_such_option": 1}})
        self.assertIs(compat.with_options("aot_eager", {}), compat.lookup_backend("aot_eager"))

    def test_every_compile_of_a_test_gets_the_runs_options(self):
        seen = []

        class Probe(BackendTestCase):
            backend = backends.resolve_backend("eager")

            def test_it(self):
                seen.append(self.compile_kwargs(dynamic=False, options={"b": 2}))

        with mock.patch.dict(os.environ, {registry.COMPILE_OPTIONS.env: "fullgraph=true;options.a=1"}):
            result = unittest.TestResult()
            Probe("test_it").run(result)
        self.assertTrue(result.wasSuccessful(), result.errors + result.failures)
        self.assertEqual(seen, [{"fullgraph": True, "dynamic": False, "options": {"a": 1, "b": 2}}])

if __name__ == "__main__":
    unittest.main()
