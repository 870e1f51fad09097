"""Conditional mutants (test/harness/mutation) stay killed: a mutant of each kind of fault fails
the default-tier test that kills it in the measured kill matrix (scripts/mutation_score.py,
docs/coverage.md), where its condition holds; the unmutated control passes those tests. A
change to a scenario, a check or the mutants that lets one through shows here, without the
hour the whole matrix takes. Each family written for a condition no test met before
(reference inputs, custom operators, indices past the end, calls that keep tensors alive,
results that change between identical calls, a model served under each mode) has its
mutant here: the faulty backends that show those families can fail.

And scripts/mutation_score.py end to end on two tests and three mutants: equivalence on the
probes, the control, the kills, the matrix as data.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from harness.axes import registry
from test.harness import shared_runs
from test.harness.mutation import mutants

# Its own seconds (test/harness/budgets.py, shared runs apart): 45 s measured 2026-12-02, the
# script's run of two tests.
TIME_BUDGET_S = 90

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "mutation_score.py"
CONTRACT = "test_backend_contract"
SURFACE = "test_compile_surface"
STATES = "test_state_changes.StateChangeTests"
# Each mutant and a test that kills it (the kill matrix of 2026-12-02, nightly pool).
KILLED_BY = {
    "wrong_row__broadcast_middle__s0": "test_op_sweep.OpSweepTests.test_reference_broadcasting",
    "strides_ignored__transposed__s0": f"{CONTRACT}.OutputContractTests.test_layouts_1_transposed",
    "zero_dim_promotes__zero_dim_operand__s0": "test_op_sweep.OpSweepTests.test_documented_type_promotion",
    "bfloat16_accumulation__long_reduction__s0":
        "test_real_data.RealDataTests.test_tensors_past_2_to_the_16_elements_0_special",
    "keep_reference__float32__s0": f"{CONTRACT}.CallIndependenceTests.test_calls_let_go_of_their_tensors_0_training",
    "nondeterministic__deterministic__s0":
        f"{CONTRACT}.CallIndependenceTests.test_identical_calls_agree_bit_for_bit_under_deterministic_algorithms",
    "perturb__custom_ops__s0": "test_compile_surface.CustomOpTests.test_functional_custom_op",
    "index_clamped__index_out_of_range__s0": "test_compile_surface.IndexErrorTests.test_indices_past_the_end_raise",
    "negative_index_zero__negative_indices__s0":
        "test_compile_surface.IndexErrorTests.test_negative_indices_count_from_the_end",
    "stale_result__later_call__s0": f"{CONTRACT}.CallIndependenceTests.test_earlier_outputs_survive_later_calls",
    "mutation_lost__grad_disabled__s0": f"{CONTRACT}.SideEffectContractTests.test_mutation_under_grad_free_mode_0_no_grad",
    "detach_outputs__training__s0": f"{CONTRACT}.OutputContractTests.test_requires_grad_and_grad_fn",
    "nan_skipped__nan__s0": f"{CONTRACT}.OutputContractTests.test_nan_and_inf_propagate",
    "subnormal_flushed__subnormal__s0": "test_op_sweep.OpSweepTests.test_subnormals_float32",
    "perturb__backward__s0": f"{CONTRACT}.GradientContractTests.test_first_order_1_softmax",
    # The served block, written for the kernel conditions the matrix showed no test met
    # (addmm under inference mode, exp in bfloat16); measured on its own (-k served_block).
    "perturb__inference_mode__s0":
        f"{CONTRACT}.GlobalStateContractTests.test_a_served_block_under_each_mode_1_inference_mode",
    "perturb__autocast__s0": f"{CONTRACT}.GlobalStateContractTests.test_a_served_block_under_each_mode_2_autocast_bfloat16",
    # The compile surface's families (measured on their own, -k, 2026-12-02).
    "perturb__control_flow__s0": f"{SURFACE}.ControlFlowTests.test_while_loop_runs_as_many_steps_as_the_data_says",
    "perturb__random__s0": f"{SURFACE}.ControlFlowTests.test_checkpointed_dropout_draws_the_same_mask_again",
    "perturb__backward__s1": f"{SURFACE}.AutogradFunctionTests.test_straight_through_backward_is_the_functions_own",
    "perturb__later_call__s0": f"{SURFACE}.DataDependentSizeTests.test_nonzero_and_masked_select_sizes_from_the_data",
    # Results kept across calls (harness/checks/observations/kept_results.py; measured -k CallIndependenceTests).
    "reuse_outputs__later_call__s0": f"{CONTRACT}.CallIndependenceTests.test_earlier_outputs_survive_later_calls",
    "reuse_gradients__later_call__s0": f"{CONTRACT}.CallIndependenceTests.test_gradients_kept_per_micro_batch",
    # A hook on an intermediate, written for issue 66 (measured on its own, -k, 2026-12-06).
    "drops_tensor_hooks__training__s0": "test_state_changes.StateChangeTests.test_intermediate_hook",
    # The compile stack's mutants, patches of Dynamo and AOTAutograd (test/harness/mutation/
    # stack_faults.py; the stack layers' matrix of 2026-12-06, `--layer dynamo --layer aot_autograd`).
    "drops_guard__tensor_match__s0": f"{CONTRACT}.ChangingInputsTests.test_requires_grad_changes",
    "drops_guard__duplicate_input__s0":
        "test_aot_autograd.ArgDupeRecompileTests.test_duplicated_then_distinct_args_recompile_0_two_args",
    "drops_guard__global_state__s0": f"{STATES}.test_grad_mode",
    "drops_guards_on__defaults__s0": f"{STATES}.test_default_rebound",
    "drops_guards_on__globals__s0": f"{STATES}.test_global_int",
    "drops_guards_on__closure_cells__s0": f"{STATES}.test_dict_key_added",
    "drops_guards_on__module_attributes__s0": f"{STATES}.test_module_flag",
    "tensor_match_ignores__sizes__s0": f"{STATES}.test_buffer_grows",
    "recompile_limit__one__s0": f"{STATES}.test_deterministic_algorithms",
    "automatic_dynamic__forgets__s0":
        f"{CONTRACT}.AutomaticDynamicTests.test_a_new_size_recompiles_once_with_symbolic_sizes_0_pointwise_and_reduction",
    "fake_data_ptr__unchecked__s0": "test_aot_autograd.DataPtrTests.test_data_ptr_in_forward_rejected_0_graph_input",
    "forgets_tensor_hooks__in_compiled_code__s0": f"{STATES}.test_input_hook",
    "skips_module_hooks__compiled_modules__s0": f"{CONTRACT}.CallerTests.test_module_with_forward_and_backward_hooks",
    "drops_side_effects__containers__s0": f"{CONTRACT}.PythonSideEffectTests.test_list_append",
    "drops_side_effects__attributes__s0": f"{CONTRACT}.PythonSideEffectTests.test_attribute_set_on_existing_object",
    "drops_side_effects__globals__s0": f"{CONTRACT}.PythonSideEffectTests.test_global_rebound",
    "drops_side_effects__cells__s0": f"{CONTRACT}.PythonSideEffectTests.test_closure_cell_rebound",
    "drops_input_mutation__data__s0": f"{CONTRACT}.SideEffectContractTests.test_mutation_of_non_leaf_requiring_grad",
    "copies_aliased_outputs__runtime__s0": f"{CONTRACT}.OutputContractTests.test_outputs_that_are_views_of_inputs",
    "forgets_grad_mode_change__inside__s0": "test_aot_autograd.GradModeMutationTests.test_grad_mode_disabled_inside_compiled_fn",
    "hides_saved_tensors__caller_hooks__s0": f"{CONTRACT}.CallerTests.test_call_inside_saved_tensor_hooks",
    # Issue 67's further stack mutants (their matrix of 2026-12-06, -k over the classes where a
    # guard failed or AOTAutograd's runtime met its piece).
    "stuck_guard__global_state__s0": f"{STATES}.test_grad_mode",
    "tensor_match_ignores__dtype__s0": f"{CONTRACT}.ChangingInputsTests.test_dtypes_recompile",
    "copies_synthetic_base__runtime__s0": f"{CONTRACT}.SideEffectContractTests.test_mutation_of_overlapping_views",
    "skips_version_check__saved_tensors__s0": f"{SURFACE}.IndexErrorTests.test_a_saved_input_modified_before_backward_raises",
}


def _id(backend: str, test: str) -> str:
    return registry.test_id(test, backend=backend)


RUN = shared_runs.DEFAULT.part(
    [*(mutants.spec(name) for name in KILLED_BY), mutants.spec(mutants.CONTROL)],
    [*(_id(name, test) for name, test in KILLED_BY.items()),
     *(_id(mutants.CONTROL, test) for test in sorted(set(KILLED_BY.values())))])


class MutantsKilledTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tests = RUN.tests()

    def test_each_mutant_is_killed_by_its_test(self):
        outcomes = {test["backend"]: test["outcome"] for test in self.tests if test["backend"] != mutants.CONTROL}
        for name in KILLED_BY:
            with self.subTest(mutant=name):
                self.assertIn(outcomes.get(name), {"FAIL", "ERROR"}, RUN.describe())

    def test_the_unmutated_control_passes_them(self):
        control = [test for test in self.tests if test["backend"] == mutants.CONTROL]
        self.assertEqual(len(control), len(set(KILLED_BY.values())), RUN.describe())
        self.assertEqual({test["outcome"] for test in control}, {"PASS"}, RUN.describe())


class ScoreScriptTests(unittest.TestCase):
    def test_two_tests_and_three_mutants_end_to_end(self):
        chosen = ["keep_reference__float32__s0", "stale_result__later_call__s0", "wrong_row__broadcast_rank__s2"]
        with tempfile.TemporaryDirectory() as directory:
            done = subprocess.run(
                [sys.executable, str(SCRIPT), "--tier", "nightly",
                 "-k", "CallIndependenceTests_switch.test_calls_let_go_of_their_tensors_0",
                 "-k", "CallIndependenceTests_switch.test_earlier", "--mutants", ",".join(chosen), "-j", "1",
                 "--report-dir", directory], capture_output=True, text=True, timeout=600)
            self.assertEqual(done.returncode, 0, done.stdout[-3000:] + done.stderr[-3000:])
            report = json.loads((Path(directory) / "mutation_score.json").read_text())
        by_name = {entry["name"]: entry for entry in report["mutants"]}
        self.assertEqual(len(report["tests"]), 2)
        self.assertTrue(all(test["control"] == "pass" for test in report["tests"]))
        self.assertTrue(by_name["keep_reference__float32__s0"]["killed"])
        self.assertTrue(by_name["stale_result__later_call__s0"]["killed"])
        killers = {name: entry["killers"] for name, entry in by_name.items()}
        self.assertRegex(killers["keep_reference__float32__s0"][0], r"test_calls_let_go_of_their_tensors_0_training$")
        self.assertEqual(report["score"]["killed"], sum(entry["killed"] for entry in report["mutants"]))
        rows = [[row, column] for row, column in report["matrix"]["killed"]]
        self.assertEqual(len(rows), sum(len(test["killed"]) for test in report["tests"]))
        self.assertIn("mutation score:", done.stdout)
        self.assertRegex(done.stdout, r"(?m)^call +\d+ +\d+ +[\d.]+%$")


if __name__ == "__main__":
    unittest.main()
