"""harness/axes/variants.py: the variant axis beside the backend axis (harness/axes/registry.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest
from unittest import mock

from harness.axes import registry, variants
from harness.axes.axis import AxisError
from test.harness import shared_runs

# Its own seconds (test/harness/budgets.py): 11 s measured 2026-11-29.
TIME_BUDGET_S = 30

VARIANTS_ENV = registry.VARIANT.env


class SelectionTests(unittest.TestCase):
    def test_static_by_default(self):
        with mock.patch.dict(os.environ, {VARIANTS_ENV: ""}):
            self.assertEqual(registry.selected(registry.VARIANT), ("static",))

    def test_a_list_in_order_without_repeats(self):
        with mock.patch.dict(os.environ, {VARIANTS_ENV: "dynamic, static,dynamic"}):
            self.assertEqual(registry.selected(registry.VARIANT), ("dynamic", "static"))

    def test_an_unknown_name_says_which_exist(self):
        with mock.patch.dict(os.environ, {VARIANTS_ENV: "static,dynamc"}):
            with self.assertRaisesRegex(AxisError, r"unknown variant dynamc; choose from static, dynamic"):
                registry.selected(registry.VARIANT)

    def test_only_static_keeps_the_plain_class_name(self):
        self.assertEqual(registry.class_suffix({"backend": "eager", "variant": "static"}), "_eager")
        self.assertEqual(registry.class_suffix({"backend": "eager", "variant": "dynamic"}), "_eager_dynamic")


# A family whose test reports the Dynamo setting the variant patches.
_PROBE = """
import os, sys, unittest, torch
from harness import BackendTestCase, for_each_backend

class ProbeTests(BackendTestCase):
    def test_setting(self):
        print(self.id(), torch._dynamo.config.assume_static_by_default, file=sys.stderr)
        self.compile(lambda x: x + 1)(torch.ones(2))

for_each_backend(ProbeTests)
unittest.main(argv=["probe"], exit=True)
"""


class GenerationTests(unittest.TestCase):
    def test_one_class_per_backend_and_variant_with_the_variant_patched_only_inside(self):
        env = {**os.environ, "DYNAMO_SUITE_BACKENDS": "eager", VARIANTS_ENV: "static,dynamic"}
        done = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        self.assertIn("ProbeTests_eager.test_setting True", done.stderr)
        self.assertIn("ProbeTests_eager_dynamic.test_setting False", done.stderr)
        self.assertIn("Ran 2 tests", done.stderr)


VARIANT_RUN = shared_runs.AXES.part(["eager"], [
    registry.test_id("test_backend_contract.OutputContractTests.test_layouts_0_contiguous", backend="eager", variant=variant)
    for variant in ("static", "dynamic")])


class RunnerTests(unittest.TestCase):
    """--variants on the command line: validated before anything runs, carried by ids and reports."""

    def test_an_unknown_variant_is_a_usage_error(self):
        from test.harness.cli import run_cli

        done = run_cli("--variants", "static,dynamc", "--list")
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertRegex(done.stderr.strip(), r"^run_tests.py: error: --variants .*unknown variant dynamc; choose from")

    def test_list_shows_each_variant_and_reports_have_a_column_for_it(self):
        from test.harness.cli import run_cli

        listed = run_cli("--backend", "eager", "--variants", "static,dynamic", "--list", "-k", "OutputContractTests")
        ids = listed.stdout.split()
        self.assertIn("test.dynamo.test_backend_contract.OutputContractTests_eager.test_zero_dim", ids)
        self.assertIn("test.dynamo.test_backend_contract.OutputContractTests_eager_dynamic.test_zero_dim", ids)
        tests = VARIANT_RUN.tests()
        self.assertEqual(sorted(test["variant"] for test in tests), ["dynamic", "static"], VARIANT_RUN.describe())
        self.assertEqual({test["outcome"] for test in tests}, {"PASS"})
        self.assertEqual(VARIANT_RUN.run_record["variants"], ["static", "dynamic"])
        self.assertIn("| eager/dynamic |", (VARIANT_RUN.report_dir / "summary.md").read_text())
        self.assertIn("<th>eager/dynamic</th>", (VARIANT_RUN.report_dir / "report.html").read_text())
        self.assertIn('name="eager/dynamic"', (VARIANT_RUN.report_dir / "junit.xml").read_text())


class SecondSizeTests(unittest.TestCase):
    """harness/axes/second_size.py on graphs captured with sizes symbolic from the start."""

    def capture(self, fn, *args):
        import torch
        from harness import compat
        from harness.axes import second_size

        kept = []

        def backend(gm, example_inputs):
            reference = second_size.copy_graph(gm)
            compiled = torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
            kept.append(second_size.capture(reference, example_inputs, compiled))
            return compiled

        compat.reset_dynamo()
        with torch._dynamo.config.patch(**variants.VARIANTS["dynamic"].dynamo_config):
            torch.compile(fn, backend=backend)(*args)
        compat.reset_dynamo()
        self.assertEqual(len(kept), 1)
        return kept[0]

    def test_sizes_double_and_the_graph_agrees_with_its_backend_there(self):
        import torch

        kept = self.capture(lambda x, y: (x @ y).relu(), torch.randn(3, 4, requires_grad=True), torch.randn(4, 5))
        self.assertEqual(sorted(first_second for first_second in kept.sizes.values()), [(3, 6), (4, 8), (5, 10)])
        self.assertEqual([tuple(t.shape) for t in kept.inputs if isinstance(t, torch.Tensor)], [(6, 8), (8, 10)])
        self.assertTrue(kept.runs_eagerly())
        kept.check(self)

    def test_a_size_the_guards_rule_out_is_not_chosen(self):
        import torch

        # ceil_mode pooling guards 2*(s//2) - 2 < s on each spatial size; doubling keeps it.
        kept = self.capture(lambda x: torch.nn.functional.max_pool2d(x, 3, 2, ceil_mode=True), torch.randn(1, 2, 6, 7))
        self.assertTrue(kept.runs_eagerly())
        kept.check(self)

    def test_static_graphs_have_no_second_size(self):
        import torch

        self.assertIsNone(self.capture(lambda x: x + 1, torch.randn(1)))


class CallersTests(unittest.TestCase):
    """harness/axes/callers.py: each way of calling passes aot_eager and fails what breaks it."""

    def setUp(self):
        from harness import compat

        compat.reset_dynamo()
        self.addCleanup(compat.reset_dynamo)

    @staticmethod
    def served(x, w):
        y = (x @ w).tanh()
        return y * 2, y.sum(0)

    def inputs(self):
        import torch

        return [torch.randn(5, 6, requires_grad=True), torch.randn(6, 4, requires_grad=True)]

    def compiled(self, backend="aot_eager"):
        import torch
        from harness import compat

        compat.reset_dynamo()  # a fresh compile for each backend: the cache is the function's
        return torch.compile(self.served, backend=backend)

    def test_threads_pass_aot_eager_and_fail_a_shared_staging_buffer(self):
        from harness.axes import callers
        from test.harness.faulty_backends import stages_results_in_a_shared_buffer

        for backend in ("aot_eager", stages_results_in_a_shared_buffer):
            compiled = self.compiled(backend)
            compiled(*self.inputs())  # once compiled: the pool's calls overlap (racing compiles take turns)
            if backend == "aot_eager":
                self.assertTrue(callers.from_threads(self, self.served, compiled, self.inputs(), [True, True], True))
                continue
            with self.assertRaisesRegex(AssertionError, r"called from 4 threads at once, thread \d's call \d"):
                callers.from_threads(self, self.served, compiled, self.inputs(), [True, True], True)

    def test_a_caller_writing_into_results_fails_reused_output_buffers(self):
        from harness.axes import callers
        from test.harness.faulty_backends import reuses_output_buffers

        self.assertTrue(callers.after_caller_writes(self, self.served, self.compiled(), self.inputs(), [True, True], False))
        with self.assertRaisesRegex(AssertionError, "the backend returned memory it reuses"):
            callers.after_caller_writes(self, self.served, self.compiled(reuses_output_buffers), self.inputs(),
                                        [True, True], False)

    def test_module_hooks_fail_a_compiled_module_that_skips_them(self):
        import torch
        from harness.axes import callers

        x = [torch.randn(3, 6, requires_grad=True)]
        compile_module = lambda module: torch.compile(module, backend="aot_eager")  # noqa: E731
        self.assertTrue(callers.with_module_hooks(self, torch.nn.Linear(6, 4), compile_module, x, [True], True))
        skipping = lambda module: torch.compile(module.forward, backend="aot_eager")  # noqa: E731
        with self.assertRaisesRegex(AssertionError, "^a module with forward and backward hooks: output"):
            callers.with_module_hooks(self, torch.nn.Linear(6, 4), skipping, x, [True], True)

    def test_saved_tensor_hooks_fail_a_backend_that_saves_around_them_and_prove_nothing_without_a_backward(self):
        import torch
        from harness.axes import callers
        from test.harness.faulty_backends import ignores_saved_tensor_hooks

        self.assertTrue(callers.inside_saved_tensor_hooks(self, self.served, self.compiled(), self.inputs(),
                                                          [True, True], True))
        with self.assertRaisesRegex(AssertionError, "the compiled call packed 0 and unpacked 0"):
            callers.inside_saved_tensor_hooks(self, self.served, self.compiled(ignores_saved_tensor_hooks),
                                              self.inputs(), [True, True], True)
        with torch.no_grad():
            self.assertFalse(callers.inside_saved_tensor_hooks(self, self.served, self.compiled(), self.inputs(),
                                                               [True, True], False))


if __name__ == "__main__":
    unittest.main()
