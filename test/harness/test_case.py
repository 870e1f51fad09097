"""Per-backend class generation, the received-a-graph check and applied expectations."""

from __future__ import annotations

import itertools
import os
import sys
import types
import unittest
from unittest import mock

import torch

from harness.axes import backends
from harness.testcase import expectations
from harness.testcase.base import BackendTestCase, DynamoTestCase, for_each_backend
from harness.testcase.expectations import Expectation

# Its own seconds (test/harness/budgets.py): 1 s measured 2026-11-29.
TIME_BUDGET_S = 10

_module_numbers = itertools.count()


def _only_python(x):
    torch._dynamo.graph_break()
    return x


def _problems(result: unittest.TestResult) -> str:
    return "\n".join(text for _, text in result.failures + result.errors)


class _GenerationTestBase(unittest.TestCase):
    """Families are defined inside tests and generated into a throwaway module, so the
    generated classes neither land in this module nor outlive the test."""

    def setUp(self) -> None:
        self.module = types.ModuleType(f"dynamo_suite_selftest_{next(_module_numbers)}")
        sys.modules[self.module.__name__] = self.module
        self.addCleanup(sys.modules.pop, self.module.__name__, None)
        self.entries: list[Expectation] = []
        patcher = mock.patch.object(expectations, "_LOADED", self.entries)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.addCleanup(torch._dynamo.reset)

    def expect(self, method: str, status: str = "xfail", **fields) -> Expectation:
        key_module = self.module.__name__.rsplit(".", 1)[-1]
        entry = Expectation.of(test=f"{key_module}.Family.{method}", status=status,
                            reason=fields.pop("reason", "known"), source="selftest.toml:1", **fields)
        self.entries.append(entry)
        return entry

    def generate(self, family: type, specs: str = "eager") -> type:
        with mock.patch.dict(os.environ, {backends.BACKENDS_ENV: specs}):
            return for_each_backend(family)

    def run_tests(self, class_name: str, *methods: str) -> unittest.TestResult:
        generated = getattr(self.module, class_name)
        names = methods or unittest.TestLoader().getTestCaseNames(generated)
        result = unittest.TestResult()
        unittest.TestSuite(generated(name) for name in names).run(result)
        return result


class GenerationTests(_GenerationTestBase):
    def test_one_class_per_backend(self):
        class Family(BackendTestCase):
            __module__ = self.module.__name__

            def test_a(self):
                pass

        returned = self.generate(Family, "eager,test.harness.faulty_backends:wrong_values")

        self.assertIs(returned, Family)
        self.assertEqual(unittest.TestLoader().getTestCaseNames(Family), [], "the family itself must not run")
        for name, spec in (("eager", "eager"), ("wrong_values", "test.harness.faulty_backends:wrong_values")):
            generated = getattr(self.module, f"Family_{name}")
            self.assertTrue(issubclass(generated, Family))
            self.assertEqual(generated.__qualname__, f"Family_{name}")
            self.assertEqual(generated.backend.spec, spec)
            self.assertEqual(generated.family, "Family")
            (test,) = unittest.TestLoader().loadTestsFromTestCase(generated)
            self.assertEqual(test.id(), f"{self.module.__name__}.Family_{name}.test_a")

    def test_expectation_key_names_the_family(self):
        class Family(BackendTestCase):
            __module__ = self.module.__name__

            def test_a(self):
                pass

        self.generate(Family)
        key = self.module.Family_eager.expectation_key("test_a")
        self.assertEqual(key, f"{self.module.__name__}.Family.test_a")

    def test_family_must_be_a_backend_test_case(self):
        class NotAFamily(DynamoTestCase):
            def test_a(self):
                pass

        with self.assertRaisesRegex(TypeError, "NotAFamily must subclass BackendTestCase"):
            for_each_backend(NotAFamily)


class ReceivedGraphTests(_GenerationTestBase):
    def make_family(self) -> type:
        class Family(BackendTestCase):
            __module__ = self.module.__name__

            def test_compiles(self):
                x = torch.randn(3)
                torch.testing.assert_close(self.compile(torch.sin)(x), torch.sin(x))

            def test_never_compiles(self):
                torch.sin(torch.randn(3))

            def test_dynamo_finds_nothing_to_compile(self):
                self.compile(_only_python)(torch.randn(3))

            def test_rnn_is_skipped_by_default(self):
                self.compile(torch.nn.LSTM(2, 3))(torch.randn(4, 1, 2))

            def test_declared_no_graph(self):
                self.expect_no_graph("Dynamo has nothing to trace here")
                self.compile(_only_python)(torch.randn(3))

            def test_declared_no_graph_but_compiled(self):
                self.expect_no_graph("wrongly declared")
                self.compile(torch.sin)(torch.randn(3))

            def test_second_counter_counts(self):
                self.compile(torch.sin, counter=self.new_counter())(torch.randn(3))
                self.assertEqual(self.counter.frame_count, 0)
                self.assertEqual(self.graphs_received, 1)

        return self.generate(Family, "eager")

    def test_received_graph_passes(self):
        self.make_family()
        result = self.run_tests("Family_eager", "test_compiles", "test_second_counter_counts")
        self.assertTrue(result.wasSuccessful(), _problems(result))

    def test_no_graph_fails(self):
        self.make_family()
        methods = ("test_never_compiles", "test_dynamo_finds_nothing_to_compile", "test_rnn_is_skipped_by_default")
        result = self.run_tests("Family_eager", *methods)
        self.assertEqual(result.errors, [])
        self.assertEqual(sorted(test._testMethodName for test, _ in result.failures), sorted(methods))
        for _, text in result.failures:
            self.assertIn("backend 'eager' received no graph", text)

    def test_declared_no_graph(self):
        self.make_family()
        result = self.run_tests("Family_eager", "test_declared_no_graph")
        self.assertTrue(result.wasSuccessful(), _problems(result))

    def test_declared_no_graph_but_one_arrived(self):
        self.make_family()
        result = self.run_tests("Family_eager", "test_declared_no_graph_but_compiled")
        self.assertEqual(len(result.failures), 1, _problems(result))
        self.assertIn("expected no graph (wrongly declared), but the backend received one", result.failures[0][1])


class ExpectationTests(_GenerationTestBase):
    def make_family(self, specs: str = "eager") -> type:
        class Family(BackendTestCase):
            __module__ = self.module.__name__

            def test_fails(self):
                self.compile(torch.sin)(torch.randn(3))
                self.fail("known bug")

            def test_passes(self):
                self.compile(torch.sin)(torch.randn(3))

        return self.generate(Family, specs)

    def test_xfail_turns_a_failure_into_an_expected_failure(self):
        self.expect("test_fails")
        self.make_family()
        result = self.run_tests("Family_eager", "test_fails")
        self.assertEqual(len(result.expectedFailures), 1, _problems(result))
        self.assertTrue(result.wasSuccessful())

    def test_xfail_that_passes_is_an_unexpected_success(self):
        self.expect("test_passes")
        self.make_family()
        result = self.run_tests("Family_eager", "test_passes")
        self.assertEqual(len(result.unexpectedSuccesses), 1)
        self.assertFalse(result.wasSuccessful())

    def test_skip_names_reason_and_source(self):
        self.expect("test_fails", status="skip", reason="too slow here")
        self.make_family()
        result = self.run_tests("Family_eager", "test_fails")
        self.assertEqual(len(result.skipped), 1, _problems(result))
        self.assertEqual(result.skipped[0][1], "too slow here [selftest.toml:1]")

    def test_backend_glob_limits_the_entry(self):
        self.expect("test_fails", backend="aot_*")
        self.make_family("eager,aot_eager")
        on_eager = self.run_tests("Family_eager", "test_fails")
        on_aot = self.run_tests("Family_aot_eager", "test_fails")
        self.assertEqual(len(on_eager.failures), 1, _problems(on_eager))
        self.assertEqual(len(on_aot.expectedFailures), 1, _problems(on_aot))

    def test_aot_autograd_condition_is_probed(self):
        self.expect("test_fails", aot_autograd=True)
        self.make_family("eager,aot_eager")
        on_eager = self.run_tests("Family_eager", "test_fails")
        on_aot = self.run_tests("Family_aot_eager", "test_fails")
        self.assertEqual(len(on_eager.failures), 1, _problems(on_eager))
        self.assertEqual(len(on_aot.expectedFailures), 1, _problems(on_aot))

    def test_torch_range_that_excludes_this_torch(self):
        self.expect("test_fails", torch="<2.0")
        self.make_family()
        result = self.run_tests("Family_eager", "test_fails")
        self.assertEqual(len(result.failures), 1, _problems(result))

    def test_first_matching_entry_decides(self):
        self.expect("test_*", status="skip", reason="first")
        self.expect("test_fails")
        self.make_family()
        result = self.run_tests("Family_eager", "test_fails")
        self.assertEqual([reason for _, reason in result.skipped], ["first [selftest.toml:1]"])


if __name__ == "__main__":
    unittest.main()
