"""The suite's self-test: each faulty backend breaks one clause of the backend contract,
and the scenarios about that clause must fail on it, while passing on correct backends.

The faulty backends are first checked in-process (they really break what they claim, and
nothing else, where that is checkable in a few lines). Then one ``run_tests.py`` run, shared
with the other proofs of faults that cannot disturb one another (test/harness/shared_runs.py),
puts every fault against the scenarios that must catch it, and the same families against the
correct backends, and each test reads its outcomes from its results.json.
"""

from __future__ import annotations

import unittest
from dataclasses import dataclass

import torch

from harness.axes import registry
from harness.checks import clauses
from harness.axes.backends import probe_backend, resolve_backend
from harness.checks.compare import assert_close
from harness.testcase.base import BackendTestCase
from test.harness import shared_runs
from test.harness.faulty_backends import drops_input_mutations, wrong_values

# Its own seconds (test/harness/budgets.py, shared runs apart): 1 s measured 2026-11-29.
TIME_BUDGET_S = 10

FAULTY_MODULE = "test.harness.faulty_backends"
CONTRACT = "test_backend_contract"
TRANSFORMS = "test_tracing_transforms"
OPTIONS = "test_compile_options.CompileOptionsTests"
STATE = "test_state_changes.StateChangeTests"
TRAINING = "test_training_loop.TrainingLoopTests"
MODULES = "test_training_loop.ModuleStateTests"


@dataclass(frozen=True)
class Fault:
    name: str  # an attribute of test.harness.faulty_backends (defined in its contract.py)
    clause: str  # of the backend contract, as docs/checks.md's table names it
    catches: tuple[str, ...]  # globs over "<module>.<Family>.<test>": each matching test must fail
    controls: tuple[str, ...] = ("eager", "aot_eager")  # the same tests must pass on these
    leak_is_the_fault: bool = False  # a "leaked global state" failure counts as caught
    spared: tuple[str, ...] = ()  # tests within ``catches`` that the fault cannot touch


INTEGER_ONLY = f"{CONTRACT}.OutputContractTests.test_integers_stay_exact"  # floating faults spare it


FAULTS = (
    Fault("wrong_values", "output values", (
        "test_python_autograd.PythonAutogradTests.*", "test_aot_autograd.LSTMTests.*",
        f"{CONTRACT}.OutputContractTests.*", f"{CONTRACT}.CallIndependenceTests.*",
        f"{CONTRACT}.ChangingInputsTests.*"), controls=("eager",), spared=(INTEGER_ONLY,)),
    Fault("computes_in_bfloat16", "output values (precision)", (
        f"{CONTRACT}.OutputContractTests.test_layouts_[0-4]_*", f"{CONTRACT}.GradientContractTests.test_first_order_*")),
    Fault("upcasts_outputs", "output dtype", (f"{CONTRACT}.OutputContractTests.*",), spared=(INTEGER_ONLY,)),
    Fault("copies_outputs", "output strides and aliasing", (
        f"{CONTRACT}.OutputContractTests.test_outputs_that_are_views_of_inputs",
        f"{CONTRACT}.OutputContractTests.test_outputs_that_alias_each_other",
        f"{CONTRACT}.OutputContractTests.test_layouts_1_transposed",
        f"{CONTRACT}.OutputContractTests.test_channels_last",
        # The compile surface's outputs: a transposed one, and a view of the input written into.
        "test_compile_surface.CustomOpTests.test_custom_op_with_several_outputs",
        "test_compile_surface.CustomOpTests.test_custom_op_writing_into_an_input")),
    Fault("detaches_outputs", "output requires_grad and grad_fn", (
        f"{CONTRACT}.GradientContractTests.*", f"{CONTRACT}.OutputContractTests.test_requires_grad_and_grad_fn")),
    Fault("assumes_contiguous", "values for non-contiguous inputs", (
        f"{CONTRACT}.OutputContractTests.test_layouts_[124]_*", f"{CONTRACT}.OutputContractTests.test_channels_last",
        f"{CONTRACT}.GradientContractTests.test_first_order_0_matmul_transposed",
        f"{CONTRACT}.ChangingInputsTests.test_strides")),
    Fault("drops_input_mutations", "input mutations happen", (
        "test_aot_autograd.InputMutationTests.*",
        f"{CONTRACT}.SideEffectContractTests.test_mutation_through_views",
        f"{CONTRACT}.SideEffectContractTests.test_mutation_of_duplicated_argument",
        f"{CONTRACT}.SideEffectContractTests.test_mutation_of_overlapping_views",
        f"{CONTRACT}.SideEffectContractTests.test_mutation_under_grad_free_mode_*",
        f"{TRANSFORMS}.FunctionalizedMutationTests.test_data_mutations_applied_once_per_call",
        f"{TRANSFORMS}.FunctionalizedMutationTests.test_mutation_through_views_of_the_input",
        f"{TRANSFORMS}.FunctionalizedMutationTests.test_mutation_under_no_grad_of_leaf_requiring_grad",
        f"{TRANSFORMS}.FunctionalizedMutationTests.test_mutation_inside_inference_mode",
        f"{TRANSFORMS}.TensorSubclassTests.test_input_mutation"), controls=("aot_eager",)),
    Fault("runs_graph_twice", "input mutations happen once", (
        f"{CONTRACT}.SideEffectContractTests.test_data_mutation_applied_once_per_call",
        f"{CONTRACT}.SideEffectContractTests.test_mutation_of_*",
        f"{CONTRACT}.SideEffectContractTests.test_mutation_under_grad_free_mode_*",
        f"{TRANSFORMS}.FunctionalizedMutationTests.test_data_mutations_applied_once_per_call",
        f"{TRANSFORMS}.FunctionalizedMutationTests.test_mutation_of_input_requiring_grad_keeps_gradients")),
    Fault("wrong_gradients", "first-order gradients", (
        f"{CONTRACT}.GradientContractTests.*", f"{TRANSFORMS}.JointGraphGradientTests.*",
        f"{TRANSFORMS}.RandomOpsTests.test_backward_uses_the_forward_mask")),
    Fault("consumes_rng", "the RNG stream",
          (f"{CONTRACT}.GlobalStateContractTests.test_deterministic_code_leaves_the_rng_stream_alone",)),
    # Not the served block: it calls inside no_grad and inference_mode, which put grad mode back.
    Fault("leaves_grad_disabled", "global state after the call", tuple(
        f"{CONTRACT}.GlobalStateContractTests.test_{name}" for name in (
            "grad_mode_read_and_kept", "default_dtype_read_and_kept", "autocast_region_read_and_kept",
            "deterministic_code_leaves_the_rng_stream_alone", "random_code_is_reproducible_under_a_seed")),
          leak_is_the_fault=True),
    # Seen only by the isolation every test goes through: eager's floating-point environment
    # after the test (harness/state.py).
    Fault("leaves_subnormals_flushed", "global state after the call", tuple(
        f"{CONTRACT}.GlobalStateContractTests.test_{name}" for name in ("grad_mode_read_and_kept",
                                                                       "default_dtype_read_and_kept")),
          leak_is_the_fault=True),
    Fault("reuses_output_buffers", "independence across calls",
          (f"{CONTRACT}.CallIndependenceTests.test_earlier_outputs_survive_later_calls",
           f"{CONTRACT}.CallIndependenceTests.test_writing_to_an_output_does_not_leak_into_the_next_call")),
    # Caught by the observation every scenario goes through (harness/checks/observations/kept_results.py),
    # in the scenarios that keep gradients the ways callers do.
    Fault("reuses_gradient_buffers", "independence across calls (gradients kept)", tuple(
        f"{CONTRACT}.CallIndependenceTests.test_{name}" for name in (
            "gradients_kept_per_micro_batch", "per_sample_gradients", "grad_taken_off_between_steps"))),
    # One staging buffer shared by every call: right for one caller, wrong from a pool of threads.
    Fault("stages_results_in_a_shared_buffer", "the ways callers call (threads)",
          (f"{CONTRACT}.CallerTests.test_calls_from_a_pool_of_threads",)),
    Fault("memoizes_on_shapes", "independence across calls (stale results)", (
        f"{CONTRACT}.CallIndependenceTests.test_earlier_outputs_survive_later_calls",
        f"{CONTRACT}.GradientContractTests.test_first_order_*")),
    Fault("writes_results_into_inputs", "inputs left alone", (
        f"{CONTRACT}.CallIndependenceTests.test_output_does_not_follow_later_writes_to_the_input",
        f"{CONTRACT}.OutputContractTests.test_integers_stay_exact",
        f"{CONTRACT}.OutputContractTests.test_nan_and_inf_propagate")),
    Fault("runs_with_grad_enabled", "the caller's grad mode",
          (f"{CONTRACT}.GlobalStateContractTests.test_grad_mode_read_and_kept",)),
    Fault("caches_by_graph_code", "changing inputs (recompiles)",
          (f"{CONTRACT}.ChangingInputsTests.test_dtypes_recompile",)),
    Fault("unwraps_subclasses", "tensor subclasses survive compilation", (f"{TRANSFORMS}.TensorSubclassTests.*",)),
    Fault("replays_random_draws", "random ops draw fresh numbers",
          (f"{TRANSFORMS}.RandomOpsTests.test_successive_calls_draw_fresh_numbers",)),
    Fault("keeps_its_own_generator", "the global generator drives random ops",
          (f"{TRANSFORMS}.RandomOpsTests.test_same_seed_same_draws",)),
    # Defined in faulty_backends/state.py: right on the call a graph was compiled for.
    Fault("caches_by_graph_structure", "state changed between calls", tuple(
        f"{STATE}.test_{name}" for name in ("dict_key_added", "instance_shadows_class", "grad_mode", "autocast_entered"))),
    Fault("reuses_graphs_by_input_names", "state changed between calls", tuple(
        f"{STATE}.test_{name}" for name in (
            "attribute_added", "autocast_entered", "deterministic_algorithms", "dict_key_added", "dict_key_removed",
            "functional_swapped", "global_function", "global_int", "grad_mode", "instance_shadows_class",
            "list_appended", "module_dtype", "module_flag", "module_string", "set_membership", "submodule_type",
            "torch_function_swapped")) + (f"{TRAINING}.test_compiled_optimizer_step_0_*",)),
    Fault("freezes_module_state", "module state reaches the graph as inputs", (
        *(f"{STATE}.test_{name}" for name in ("parameters_updated", "parameter_data_swapped", "submodule_same_type",
                                               "train_to_eval", "weights_tied")),
        f"{MODULES}.test_batch_norm_trains_then_evaluates", f"{MODULES}.test_buffer_written_by_forward",
        f"{TRAINING}.test_eager_optimizer_updates_the_compiled_model", f"{TRAINING}.test_gradient_accumulation",
        f"{TRAINING}.test_zero_grad_*", f"{TRAINING}.test_autocast_bfloat16", f"{TRAINING}.test_whole_step_compiled")),
    Fault("overshoots_optimizer_steps", "the compiled optimizer step", (
        f"{TRAINING}.test_compiled_optimizer_step_0_*", f"{TRAINING}.test_compiled_optimizer_step_1_*",
        f"{TRAINING}.test_scheduled_tensor_learning_rate", f"{TRAINING}.test_whole_step_compiled",
        f"{STATE}.test_optimizer_grad_none")),
    # Defined in faulty_backends/options.py: wrong only in what they do with mode= and options=.
    Fault("ignores_options", "compile options: an unknown one reported",
          (f"{OPTIONS}.test_unknown_option_is_reported", f"{OPTIONS}.test_unknown_mode_is_reported",
           f"{OPTIONS}.test_options_do_not_leak_into_later_compiles")),
    # Whatever ran before in its worker: the compile after one with options gets them too.
    Fault("keeps_first_options", "compile options: each compile's own",
          (f"{OPTIONS}.test_options_do_not_leak_into_later_compiles",)),
    # Kernels that skip eager's check on the data (ignores_kernel_options, wrong in the
    # operator sweep's options group only, is test_value_domain_faults.py's).
    Fault("skips_validation", "errors eager raises on bad input, the compiled code raises",
          ("test_compile_surface.IndexErrorTests.test_values_eager_rejects_raise_*",
           "test_compile_surface.DataDependentSizeTests.test_a_check_the_data_breaks_raises",
           "test_op_sweep.OpSweepTests.test_error_inputs")),
    # Issue 65 (1, 2): the compiled code always raising, and every recompile failing with an
    # unrelated RuntimeError, passed where any exception counted or the bad values never
    # reached a graph the backend compiled.
    Fault("raises_when_run", "errors eager raises on bad input, the compiled code raises (eager's error)",
          ("test_compile_surface.IndexErrorTests.test_values_eager_rejects_raise_*",
           "test_compile_surface.IndexErrorTests.test_in_place_on_a_leaf_that_requires_grad_raises",
           "test_compile_surface.DataDependentSizeTests.test_a_check_the_data_breaks_raises",
           "test_op_sweep.OpSweepTests.test_error_inputs")),
    Fault("fails_recompiles", "errors eager raises on bad input, the compiled code raises (eager's error)",
          ("test_compile_surface.IndexErrorTests.test_values_eager_rejects_raise_1_smooth_l1_loss_beta",)),
)

# The clause the reports group most of each fault's failures under (harness/checks/clauses.py).
GROUPED_UNDER = {
    "wrong_values": clauses.VALUES,
    "computes_in_bfloat16": clauses.VALUES,
    "upcasts_outputs": clauses.DTYPE,
    "copies_outputs": clauses.STRIDES_AND_ALIASING,
    "detaches_outputs": clauses.AUTOGRAD_METADATA,
    "assumes_contiguous": clauses.NON_CONTIGUOUS,
    "drops_input_mutations": clauses.MUTATIONS_APPLIED,
    # Three faults whose symptoms are another clause's, with no check able to tell them
    # apart: a mutation applied twice reads as one applied wrong, stale memoized results as
    # wrong values, and results written into the inputs first show as wrong outputs.
    "runs_graph_twice": clauses.MUTATIONS_APPLIED,
    "memoizes_on_shapes": clauses.VALUES,
    "writes_results_into_inputs": clauses.VALUES,
    "wrong_gradients": clauses.GRADIENTS,
    "consumes_rng": clauses.RNG_STREAM,
    "leaves_grad_disabled": clauses.STATE_AFTER,
    "leaves_subnormals_flushed": clauses.STATE_AFTER,
    "reuses_output_buffers": clauses.CALL_INDEPENDENCE,
    "reuses_gradient_buffers": clauses.CALL_INDEPENDENCE,
    "stages_results_in_a_shared_buffer": clauses.CALLERS,
    "runs_with_grad_enabled": clauses.CALLER_STATE,
    "caches_by_graph_code": clauses.CHANGING_INPUTS,
    "unwraps_subclasses": clauses.SUBCLASSES,
    "replays_random_draws": clauses.RANDOM_OPS,
    "keeps_its_own_generator": clauses.RANDOM_OPS,
    "ignores_options": clauses.OPTIONS,
    "keeps_first_options": clauses.OPTIONS,
    "caches_by_graph_structure": clauses.STATE_BETWEEN_CALLS,
    "reuses_graphs_by_input_names": clauses.STATE_BETWEEN_CALLS,
    "freezes_module_state": clauses.TRAINING_LOOP,
    "overshoots_optimizer_steps": clauses.TRAINING_LOOP,
    "skips_validation": clauses.ERRORS_RAISED,
    "raises_when_run": clauses.RUNS,  # its compiled code raises on the accepted values first
    "fails_recompiles": clauses.ERRORS_RAISED,
}

_CAUGHT = ("FAIL", "ERROR")
_EXPECTED = ("PASS", "XFAIL", "SKIP")


def _id_glob(scenario_glob: str, backend: str) -> str:
    return registry.test_id(scenario_glob, backend=backend)


def _bump(x):
    x.add_(1)
    return x * 2


def _bump_returning_input(x):
    return x.add_(1)


def _buffer_and_grad(buffer, w):
    buffer.add_(1)
    return (buffer * w).sin()


def _mixed_outputs(w):
    return w.sin(), (w * 10).long(), w.cos().double()


class WrongValuesTests(unittest.TestCase):
    def setUp(self) -> None:
        torch._dynamo.reset()
        self.addCleanup(torch._dynamo.reset)

    def test_outputs_fail_the_comparison(self):
        w = torch.randn(5, requires_grad=True)
        actual = torch.compile(_mixed_outputs, backend=wrong_values)(w)
        expected = _mixed_outputs(w)
        with self.assertRaisesRegex(AssertionError, r"output\[0\]: values differ from eager"):
            assert_close(self, expected, actual)
        # Only the values: everything else a comparison looks at is still right.
        for want, got in zip(expected, actual):
            self.assertEqual((want.shape, want.dtype, want.requires_grad), (got.shape, got.dtype, got.requires_grad))
        self.assertTrue(torch.equal(expected[1], actual[1]))
        # Even the loosest tolerance (bfloat16's, widened by 2) cannot absorb the nudge.
        for index in (0, 2):
            with self.assertRaises(AssertionError):
                torch.testing.assert_close(actual[index], expected[index], rtol=3.2e-2, atol=2e-2)

    def test_gradients_stay_right(self):
        w = torch.randn(5, requires_grad=True)
        torch.compile(_mixed_outputs, backend=wrong_values)(w)[0].sum().backward()
        torch.testing.assert_close(w.grad, w.detach().cos())

    def test_inputs_are_untouched(self):
        x = torch.zeros(3)
        torch.compile(_bump, backend=wrong_values)(x)
        self.assertEqual(x.tolist(), [1.0] * 3)

    def test_is_not_an_aot_autograd_backend(self):
        profile = probe_backend(resolve_backend("test.harness.faulty_backends:wrong_values"))
        self.assertTrue(profile.received_graph)
        self.assertFalse(profile.uses_aot_autograd)


class DropsInputMutationsTests(unittest.TestCase):
    def setUp(self) -> None:
        torch._dynamo.reset()
        self.addCleanup(torch._dynamo.reset)

    def test_inference_mutation_is_dropped(self):
        x = torch.zeros(3)
        torch.compile(_bump_returning_input, backend=drops_input_mutations)(x)
        self.assertEqual(x.tolist(), [0.0] * 3)

    def test_outputs_stay_right(self):
        x = torch.zeros(3)
        out = torch.compile(_bump, backend=drops_input_mutations)(x)
        self.assertEqual((out.tolist(), x.tolist()), ([2.0] * 3, [0.0] * 3))

    def test_mutation_next_to_a_training_graph_is_dropped(self):
        buffer, w = torch.zeros(3), torch.randn(3, requires_grad=True)
        out = torch.compile(_buffer_and_grad, backend=drops_input_mutations)(buffer, w)
        self.assertEqual(buffer.tolist(), [0.0] * 3)
        self.assertIn("CompiledFunction", type(out.grad_fn).__name__)
        out.sum().backward()
        torch.testing.assert_close(w.grad, w.detach().cos())
        torch.testing.assert_close(out, w.detach().sin())

    def test_is_an_aot_autograd_backend(self):
        profile = probe_backend(resolve_backend("test.harness.faulty_backends:drops_input_mutations"))
        self.assertTrue(profile.received_graph)
        self.assertTrue(profile.uses_aot_autograd)


def _sweep_glob(backend: str, op: str) -> str:
    return registry.test_id(f"test_op_sweep.OpSweepTests.test_op_{op}", backend=backend)


REDUCTIONS_RUN = shared_runs.DEFAULT.part([f"{FAULTY_MODULE}:perturbs_reductions"],
                                          [_sweep_glob("perturbs_reductions", "*")])
ATTENTION_OPS = ("nn_functional_scaled_dot_product_attention", "nn_functional_dropout")
ATTENTION_RUN = shared_runs.DEFAULT.part([f"{FAULTY_MODULE}:wrong_attention"],
                                         [_sweep_glob("wrong_attention", op) for op in ATTENTION_OPS])
# The kernels real models reach and no other default-tier scenario does.
KERNEL_FAULTS = {"wrong_group_norm": ("group_norm",), "wrong_conv_transpose": ("conv_transpose2d",),
                 "skips_batch_norm_stats": ("batch_norm",), "folds_batch_norm_wrong": ("batch_norm",),
                 "wrong_upsampling": ("upsample_nearest", "upsample_bilinear")}
KERNELS_RUN = shared_runs.DEFAULT.part(
    [f"{FAULTY_MODULE}:{fault}" for fault in KERNEL_FAULTS],
    [_sweep_glob(fault, f"nn_functional_{op}") for fault in KERNEL_FAULTS for op in KERNEL_FAULTS[fault]])


class OperatorFamilyFaultTests(unittest.TestCase):
    """A backend breaking one operator family is caught on exactly those operators."""

    def test_perturbed_reductions_fail_exactly_the_reducing_ops(self):
        from test.dynamo.test_op_sweep import QUICK_TIER

        tests = REDUCTIONS_RUN.tests()
        self.assertTrue(tests, REDUCTIONS_RUN.describe())
        failed = {test["scenario"].rsplit(".", 1)[1] for test in tests if test["outcome"] in ("FAIL", "ERROR")}
        # einsum's samples sum over an index and cross_entropy averages its loss: they reduce too.
        reducing = QUICK_TIER["reductions"] + ["einsum", "nn.functional.cross_entropy"]
        self.assertEqual(failed, {"test_op_" + name.replace(".", "_") for name in reducing})
        self.assertEqual(len(tests) - len(failed), sum(test["outcome"] == "PASS" for test in tests))

    def test_a_wrong_attention_kernel_fails_the_attention_op(self):
        # OpInfo calls random ops through a seeding wrapper Dynamo skips; the sweep unwraps it.
        outcomes = {test["scenario"].rsplit("test_op_", 1)[1]: test["outcome"] for test in ATTENTION_RUN.tests()}
        self.assertEqual(outcomes, {ATTENTION_OPS[0]: "FAIL", ATTENTION_OPS[1]: "PASS"}, ATTENTION_RUN.describe())

    def test_each_model_kernel_fault_fails_exactly_its_op(self):
        tests = KERNELS_RUN.tests()
        failed = {(test["backend"], test["scenario"].rsplit("test_op_nn_functional_", 1)[1])
                  for test in tests if test["outcome"] != "PASS"}
        self.assertEqual(len(tests), sum(map(len, KERNEL_FAULTS.values())), KERNELS_RUN.describe())
        self.assertEqual(failed, {(fault, op) for fault, names in KERNEL_FAULTS.items() for op in names})


# Every fault against its scenarios, and the controls, in the run the other proofs share.
FAULTS_RUN = shared_runs.DEFAULT.part(
    [f"{FAULTY_MODULE}:{fault.name}" for fault in FAULTS] + ["eager", "aot_eager"],
    sorted({_id_glob(scenario, backend) for fault in FAULTS for scenario in fault.catches
            for backend in (fault.name, *fault.controls)}))


class FaultsAreCaughtTests(unittest.TestCase):
    """Every fault against its scenarios, and the controls, read from the shared run."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.results = FAULTS_RUN.tests()

    def describe(self) -> str:
        return FAULTS_RUN.describe()

    def matching(self, fault: Fault, scenario_glob: str, backend: str) -> list[dict]:
        import fnmatch

        pattern = _id_glob(scenario_glob, backend)
        spared = [_id_glob(glob, backend) for glob in fault.spared]
        # Stress scenarios skip outside the nightly tier: not run, so neither caught nor missed.
        return [test for test in self.results if fnmatch.fnmatchcase(test["id"], pattern)
                and not any(fnmatch.fnmatchcase(test["id"], glob) for glob in spared)
                and not (test["outcome"] == "SKIP" and test["reason"].startswith("nightly tier"))]

    def test_run_reports_unexpected_results(self):
        self.assertEqual(FAULTS_RUN.completed.returncode, 1, self.describe())
        self.assertTrue(any(test["outcome"] in _CAUGHT for test in self.results), self.describe())

    def test_every_listed_scenario_fails_under_its_fault(self):
        for fault in FAULTS:
            for scenario in fault.catches:
                with self.subTest(fault=fault.name, scenario=scenario):
                    tests = self.matching(fault, scenario, fault.name)
                    self.assertTrue(tests, f"no test matches {scenario}" + self.describe())
                    not_caught = {t["id"]: t["outcome"] for t in tests if t["outcome"] not in _CAUGHT + ("XFAIL",)}
                    self.assertEqual(not_caught, {}, f"{fault.name} ({fault.clause}) went unnoticed")
                    self.assertTrue(any(t["outcome"] in _CAUGHT for t in tests), "all exempted by expectations")
                    for test in tests:
                        self.assertNotIn("received no graph", test["reason"], test["id"])
                        if not fault.leak_is_the_fault:
                            self.assertNotIn("leaked global state", test["reason"], test["id"])

    def test_the_same_scenarios_pass_on_the_controls(self):
        for fault in FAULTS:
            for control in fault.controls:
                for scenario in fault.catches:
                    with self.subTest(control=control, scenario=scenario):
                        tests = self.matching(fault, scenario, control)
                        self.assertTrue(tests, f"no test matches {scenario} on {control}" + self.describe())
                        failed = {t["id"]: t["reason"] for t in tests if t["outcome"] not in _EXPECTED}
                        self.assertEqual(failed, {})

    def test_each_faults_problems_are_grouped_under_its_clause(self):
        from collections import Counter

        for fault in FAULTS:
            with self.subTest(fault=fault.name):
                votes = Counter(test["clause"] for test in self.results
                                if test["backend"] == fault.name and test["clause"] is not None)
                self.assertTrue(votes, self.describe())
                self.assertEqual(votes.most_common(1)[0][0], GROUPED_UNDER[fault.name], dict(votes))

    def test_every_transform_family_has_a_fault(self):
        import test.dynamo.test_tracing_transforms as transforms

        families = {value.__name__ for value in vars(transforms).values()
                    if isinstance(value, type) and issubclass(value, BackendTestCase)
                    and value is not BackendTestCase and getattr(value, "family", None) is None}
        covered = {scenario.split(".")[1] for fault in FAULTS for scenario in fault.catches
                   if scenario.startswith(TRANSFORMS)}
        self.assertEqual(families - covered, set())

    def test_every_contract_family_has_a_fault(self):
        import test.dynamo.test_backend_contract as contract

        families = {name for name, value in vars(contract).items()
                    if isinstance(value, type) and issubclass(value, contract.ContractCase)
                    and value is not contract.ContractCase and getattr(value, "family", None) is None}
        covered = {scenario.split(".")[1] for fault in FAULTS for scenario in fault.catches
                   if scenario.startswith(CONTRACT)}
        # The default's size change: a backend wrong only on symbolic sizes and a forgetful
        # Dynamo fail it (test_variant_faults.DefaultSizeChangeFaultTests).
        from test.proofs.test_variant_faults import SIZE_CHANGE_FAMILY

        self.assertEqual(families - covered - {SIZE_CHANGE_FAMILY}, set())


if __name__ == "__main__":
    unittest.main()
