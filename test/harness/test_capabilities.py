"""Declared scope (harness/features/scope.py): what a graph needs, read from the graph
as Dynamo hands it over; the declaration checked; and the refusal contract applied to a
test: a refusal naming the capability is REFUSED, eager's answer passes, anything else
fails, and the reports put the scope first and group the breaches."""

from __future__ import annotations

import os
import re
import unittest
from pathlib import Path
from unittest import mock

import torch

from harness import settings
from harness.checks import clauses
from harness.features import scope as capabilities
from harness.features.scope import (
    AUTOCAST, BFLOAT16, COMPLEX, CONTROL_FLOW, CUSTOM_OPS, DOUBLE_BACKWARD, DISTRIBUTED, DYNAMIC_SHAPES, FLOAT16,
    FLOAT64, INPUT_MUTATION, RANDOM, TENSOR_SUBCLASSES, TRAINING)
from harness.measure.counters import CompileCounter
from harness.report import console, problems, scope_table
from harness.report.formats import junit
from harness.report.formats.format import RunReport
from harness.report.results import RunResults, TestResult
from harness.testcase.base import BackendTestCase
from test.harness.test_case import _GenerationTestBase

# Its own seconds (test/harness/budgets.py): 6 s measured 2026-11-30.
TIME_BUDGET_S = 25

DOCS = Path(__file__).resolve().parents[2] / "docs" / "scope.md"


@torch.library.custom_op("dynamo_suite_scope::twice", mutates_args=())
def _twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@_twice.register_fake
def _(x):
    return torch.empty_like(x)


def _needs(fn, *args, **compile_kwargs) -> set[str]:
    torch._dynamo.reset()
    counter = CompileCounter()
    torch.compile(fn, backend=counter, **compile_kwargs)(*args)
    assert counter.frame_count, "no graph"
    return capabilities.needed(counter.features.seen)


class ReadFromTheGraphTests(unittest.TestCase):
    def setUp(self) -> None:
        self.addCleanup(torch._dynamo.reset)

    def test_a_plain_inference_graph_needs_nothing(self):
        self.assertEqual(_needs(lambda x: (x.sin() * 2).sum(), torch.randn(4)), set())

    def test_training_is_a_computed_value_that_requires_grad(self):
        self.assertEqual(_needs(lambda x: x.sin(), torch.randn(4, requires_grad=True)), {TRAINING})

        def under_no_grad(x):
            with torch.no_grad():
                return x.sin()

        self.assertEqual(_needs(under_no_grad, torch.randn(4, requires_grad=True)), set())

    def test_dtypes(self):
        for dtype, name in ((torch.float64, FLOAT64), (torch.float16, FLOAT16), (torch.bfloat16, BFLOAT16),
                            (torch.complex64, COMPLEX)):
            with self.subTest(dtype=dtype):
                self.assertEqual(_needs(lambda x: x * 2, torch.ones(4, dtype=dtype)), {name})
        # Computed, not handed in.
        self.assertEqual(_needs(lambda x: x.double().sum(), torch.ones(4)), {FLOAT64})

    def test_dynamic_shapes(self):
        self.assertEqual(_needs(lambda x: x * 2, torch.ones(4), dynamic=True), {DYNAMIC_SHAPES})

    def test_input_mutation_is_a_write_into_an_input_storage(self):
        def add_(x):
            x.add_(1)
            return x * 2

        def through_a_view(x):
            x[0].mul_(3)
            return x.sum()

        def item_assignment(x):
            x[1] = 0.0
            return x.sum()

        def into_an_intermediate(x):
            y = x * 2
            y.add_(1)
            return y

        for fn in (add_, through_a_view, item_assignment):
            with self.subTest(fn=fn.__name__):
                self.assertEqual(_needs(fn, torch.ones(4)), {INPUT_MUTATION})
        self.assertEqual(_needs(into_an_intermediate, torch.ones(4)), set())

    def test_batch_norm_writes_its_running_statistics_in_training_only(self):
        norm = torch.nn.BatchNorm1d(3).requires_grad_(False)
        self.assertEqual(_needs(norm, torch.randn(4, 3)), {INPUT_MUTATION})
        self.assertEqual(_needs(norm.eval(), torch.randn(4, 3)), set())

    def test_random_and_dropout_in_training_only(self):
        self.assertEqual(_needs(lambda x: x + torch.rand_like(x), torch.ones(4)), {RANDOM})
        self.assertEqual(_needs(lambda x: torch.nn.functional.dropout(x, 0.5, training=True), torch.ones(4)), {RANDOM})
        self.assertEqual(_needs(lambda x: torch.nn.functional.dropout(x, 0.5, training=False) * 2, torch.ones(4)),
                         set())

    def test_control_flow_autocast_custom_ops(self):
        def branches(x):
            return torch.cond(x.sum() > 0, lambda y: y + 1, lambda y: y - 1, (x,))

        def autocast(x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return (x @ x).float()

        self.assertEqual(_needs(branches, torch.ones(4)), {CONTROL_FLOW})
        self.assertEqual(_needs(autocast, torch.ones(4, 4)), {AUTOCAST, BFLOAT16})
        self.assertEqual(_needs(lambda x: _twice(x) + 1, torch.ones(4)), {CUSTOM_OPS})

    def test_tensor_subclasses(self):
        from torch.testing._internal.two_tensor import TwoTensor

        self.assertIn(TENSOR_SUBCLASSES, _needs(lambda x: x * 2, TwoTensor(torch.ones(4), torch.ones(4))))

    def test_what_a_graph_cannot_show_is_declared_on_the_scenario(self):
        from test.dynamo import test_aot_autograd, test_distributed

        family = test_aot_autograd.DoubleBackwardTests_eager
        names = [name for name in dir(family) if name.startswith("test_double_backward_inside_compiled_fn_")]
        self.assertTrue(names)
        for name in names:
            self.assertEqual(capabilities.declared_by(family, getattr(family, name)), {DOUBLE_BACKWARD})
        self.assertEqual(capabilities.declared_by(family, family.test_single_backward_without_create_graph_0_seeded),
                         set())
        self.assertEqual(capabilities.declared_by(test_distributed.DistributedTrainingTests), {DISTRIBUTED})


class DeclarationTests(unittest.TestCase):
    def test_names_are_checked_and_canonical(self):
        self.assertEqual(capabilities.declared("Float64, dynamic_shapes,training"), (DYNAMIC_SHAPES, FLOAT64, TRAINING))
        self.assertEqual(capabilities.declared(["none"]), ())
        self.assertEqual(capabilities.declared(""), ())
        with self.assertRaisesRegex(capabilities.ScopeError, r"^unknown capability 'trainin': choose from dynamic-shapes, float64, "):
            capabilities.declared("trainin")
        with self.assertRaises(capabilities.ScopeError):
            capabilities.needs("flying")

    def test_read_from_the_run_settings(self):
        with settings.using(settings.Settings({settings.UNSUPPORTED: "float64"})):
            self.assertEqual(capabilities.declared(), (FLOAT64,))

    def test_an_error_names_a_capability_by_its_words(self):
        self.assertEqual(capabilities.refused("NotImplementedError: training is not supported", [TRAINING]), TRAINING)
        self.assertEqual(capabilities.refused("UnsupportedDtype: mycc has no float64 kernels", [TRAINING, FLOAT64]),
                         FLOAT64)
        self.assertEqual(capabilities.refused("Unsupported element type f64", [FLOAT64]), FLOAT64)
        self.assertIsNone(capabilities.refused("RuntimeError: compilation failed (code 3)", [TRAINING, FLOAT64]))
        # Only the declared ones count.
        self.assertIsNone(capabilities.refused("no float64 kernels", [TRAINING]))
        # Real backends' refusals (docs/scoreboard/2026-12-03).
        self.assertEqual(capabilities.refused("NotImplementedError: Higher-order operation 'cond' not implemented in "
                                              "the FxImporter", [CONTROL_FLOW]), CONTROL_FLOW)
        self.assertEqual(capabilities.refused("RuntimeError: Python builtin <built-in function _set_grad_enabled> is "
                                              "currently not supported in Torchscript:", [TRAINING]), TRAINING)
        self.assertEqual(capabilities.refused("TypeError: Unsupported argument type <class 'complex'>", [COMPLEX]),
                         COMPLEX)

    def test_a_refusal_is_a_sentence_saying_the_capability_is_not_supported(self):
        # The capability's words inside other words, or beside no negation, or in another sentence.
        for message, name in [
                ("RuntimeError: Constraints violated in the lowering: upgrade the compiler, the kernel degraded and "
                 "cannot run", TRAINING),
                ("RuntimeError: the code generator cannot emit a loop for node 3", RANDOM),
                ("RuntimeError: unsupported operator aten::mm in the lowering table", CUSTOM_OPS),
                ("RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn", TRAINING),
                ("KeyError: 'autograd_function_apply'", TRAINING),
                ("RuntimeError: no compute program found for seed 1", RANDOM),
                ("RuntimeError: training failed. Shapes are not supported", TRAINING)]:
            with self.subTest(message=message):
                self.assertIsNone(capabilities.refused(message, [name]))
        for message, name in [("RuntimeError: random operators are not supported by this backend", RANDOM),
                              ("RuntimeError: this backend does not support custom operators", CUSTOM_OPS),
                              ("ValueError: cannot compile a backward graph", TRAINING),
                              ("RuntimeError: dtype torch.float64 unsupported", FLOAT64)]:
            with self.subTest(message=message):
                self.assertEqual(capabilities.refused(message, [name]), name)

    def test_the_docs_show_the_catalogue(self):
        self.assertIn(capabilities.table(), DOCS.read_text(),
                      "docs/scope.md's table is out of date: paste python -c \"from harness.features import "
                      "scope; print(scope.table())\"")


def _refuses_training(gm, example_inputs):
    raise NotImplementedError("training is not supported by this backend")


def _refuses_vaguely(gm, example_inputs):
    raise RuntimeError("compilation failed (code 3)")


def _detaches(gm, example_inputs):
    return lambda *args: [value.detach() for value in gm(*args)]


class RefusalContractTests(_GenerationTestBase):
    """A family whose one test trains, run as unittest runs it, with training declared
    unsupported (or not)."""

    def outcome(self, backend, declared: str = TRAINING, name: str = "backend") -> tuple[str, str]:
        class Family(BackendTestCase):
            __module__ = self.module.__name__

            def test_train(self):
                x = torch.randn(3, requires_grad=True)
                out = self.compile(lambda t: t.sin())(x)
                self.assertTrue(out.requires_grad, "output: requires_grad differs from eager")

        setattr(self.module, name, backend)
        with mock.patch.dict(os.environ, {settings.UNSUPPORTED: declared}):
            self.generate(Family, f"{self.module.__name__}:{name}")
            result = self.run_tests(f"Family_{name}")
        if result.skipped:
            return "skip", result.skipped[0][1]
        if result.failures:
            return "fail", result.failures[0][1]
        if result.errors:
            return "error", result.errors[0][1]
        return "pass", ""

    def test_a_refusal_naming_the_capability_is_refused(self):
        outcome, reason = self.outcome(_refuses_training)
        self.assertEqual(outcome, "skip")
        self.assertRegex(reason, r"^REFUSED: training declared unsupported, and the backend said so: "
                                 r"NotImplementedError: training is not supported")

    def test_without_the_declaration_it_is_an_error(self):
        self.assertEqual(self.outcome(_refuses_training, declared="")[0], "error")
        self.assertEqual(self.outcome(_refuses_training, declared=FLOAT64)[0], "error")

    def test_an_error_that_does_not_name_it_is_not_a_refusal(self):
        self.assertEqual(self.outcome(_refuses_vaguely)[0], "error")

    def test_another_answer_than_eagers_fails(self):
        self.assertEqual(self.outcome(_detaches)[0], "fail")

    def test_eagers_answer_passes(self):
        self.assertEqual(self.outcome(lambda gm, example_inputs: gm.forward)[0], "pass")


def _result(test_id: str, outcome: str, **fields) -> TestResult:
    module, family, method = test_id.split(".")
    backend = family.rsplit("_", 1)[1]
    return TestResult(id=f"test.dynamo.{test_id}", scenario=f"{module}.{family.rsplit('_', 1)[0]}.{method}",
                      backend=backend, backend_spec=backend, outcome=outcome, **fields)


class ReportTests(unittest.TestCase):
    def results(self) -> RunResults:
        training = {"needs": [TRAINING], "out_of_scope": [TRAINING]}
        tests = [
            _result("m.A_ov.test_a", "REFUSED", stage="backend compile", reason="training declared unsupported",
                    **training),
            _result("m.A_ov.test_b", "PASS", **training),
            _result("m.A_ov.test_c", "FAIL", stage="check", reason="AssertionError: output: requires_grad differs",
                    **training),
            _result("m.A_ov.test_d", "FAIL", stage="check", reason="AssertionError: grad: values differ", **training),
            _result("m.A_ov.test_e", "ERROR", stage="backend compile", reason="RuntimeError: boom", where="f (x.py:3)",
                    **training),
            # Dynamo's capture failed: no refusal the backend could make.
            _result("m.A_ov.test_f", "ERROR", stage="capture", reason="Unsupported: call_function", **training),
            _result("m.A_ov.test_g", "FAIL", stage="check", reason="AssertionError: values differ", needs=[FLOAT64]),
        ]
        return RunResults(run={"unsupported": [TRAINING], "backends": [{"name": "ov", "spec": "ov"}]}, tests=tests)

    def test_breaches_are_one_problem_per_capability_and_way(self):
        results = self.results()
        found = {problem.signature: len(problem.tests) for problem in problems.group(results.tests)}
        self.assertEqual(found, {
            "declared unsupported training, yet an answer other than eager's instead of a refusal": 2,
            "declared unsupported training, yet an error in backend compile that does not name it instead of a "
            "refusal": 1,
            "Unsupported: call_function": 1,
            "AssertionError: values differ": 1,
        })
        grouped = problems.by_clause(problems.group(results.tests))
        self.assertEqual(grouped[0].name, clauses.REFUSAL)
        self.assertEqual(grouped[0].tests, 3)

    def test_the_scope_comes_first(self):
        results = self.results()
        text = console.summary(results)
        self.assertTrue(text.startswith("declared unsupported: training"), text[:200])
        self.assertIn("on ov: 6 tests need training: 1 refused, 1 gave eager's answer, 4 broke the refusal contract",
                      text)
        self.assertRegex(text.splitlines()[3], r"^backend +PASS +XFAIL +SKIP +REFUSED ")
        data = results.to_json()
        self.assertEqual(list(data)[:3], ["schema", "schema_version", "scope"])
        self.assertEqual(data["scope"]["needed"]["ov"][TRAINING],
                         {"tests": 6, "passed": 1, "refused": 1, "expected_failures": 0, "unexpected": 4})
        self.assertEqual(results.summary()["unexpected"], 5)
        xml = junit.render(RunReport(results))
        self.assertRegex(xml, r'<skipped message="REFUSED: [^"]*" type="REFUSED"')
        self.assertIn('<property name="out_of_scope" value="training"', xml)

    def test_no_refused_column_without_a_declaration(self):
        results = RunResults(run={}, tests=[_result("m.A_ov.test_a", "PASS", needs=[TRAINING])])
        self.assertNotIn("REFUSED", console.summary(results))

    def test_a_capability_all_of_whose_tests_failed_is_suggested(self):
        tests = [_result(f"m.A_ov.test_{index}", "FAIL", stage="check", reason="x", needs=[TRAINING])
                 for index in range(scope_table.SUGGEST_FROM)]
        others = [_result("m.A_ov.test_p", "PASS"), _result("m.A_ov.test_q", "FAIL", stage="check", reason="y")]
        lines = scope_table.lines(RunResults(run={}, tests=tests + others))
        self.assertEqual(len(lines), 1)
        self.assertRegex(lines[0], re.escape(f"every test needing training failed on ov ({scope_table.SUGGEST_FROM})"))
        self.assertEqual(scope_table.lines(RunResults(run={}, tests=tests[:-1] + others)), [])

    def test_no_suggestion_where_the_other_tests_fail_too(self):
        # A backend that fails nearly everything (ts on torch 2.13: 140 of 143, one compile
        # error) has no capability to declare: its first problem is the thing to fix.
        tests = [_result(f"m.A_ov.test_{index}", "ERROR", stage="backend compile", reason="x", needs=[TRAINING])
                 for index in range(scope_table.SUGGEST_FROM)]
        others = [_result("m.A_ov.test_p", "PASS"), *(_result(f"m.A_ov.test_o{index}", "ERROR", reason="x")
                                                      for index in range(2))]
        self.assertEqual(scope_table.lines(RunResults(run={}, tests=tests + others)), [])


if __name__ == "__main__":
    unittest.main()
