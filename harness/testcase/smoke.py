"""The smoke tier: a few scenarios that between them touch every clause of the backend
contract, and the scenario families that stand for them, once (``run_tests.py --tier smoke``).

Unlike ``nightly``, which adds scenarios, ``smoke`` is a subset of the default tier: the
runner selects only the tests of the scenarios in PICKS, and every other test is simply not
selected (not a SKIP). Under plain ``unittest`` there is no selection, so
``DYNAMO_SUITE_TIER=smoke python -m unittest ...`` runs what the default tier runs.

How the picks were chosen, so that a backend that breaks a clause still fails the run:

* each faulty backend of ``test/harness/faulty_backends/`` gets at least one pick among
  the scenarios its self-test says must catch it (``test/harness/test_smoke.py`` checks this
  against the fault tables), and each AOTAutograd patch of ``faulty_transforms.py`` too;
* among those, the test that catches the most faults, then the fastest one
  (``test/durations.json``; an inductor time there is low when a parameterized sibling
  had already compiled the same kernel, so such times were not trusted);
* then one test of every other family that a clause names (DoubleBackwardTests), and one
  of each backend-independent family (they count once, not once per backend).

The run stays at most a tenth of the scenarios the default tier chooses from. That leaves no room for one test of every
family: test_aot_autograd alone has 16 families per backend. Those whose clause another pick
already makes observable are listed in LEFT_TO_DEFAULT, so leaving them out is a decision
on record (the self-test fails on a family that is in neither list). The kernels only
real models used to reach (group_norm, transposed convolution, BatchNorm's running
statistics) have one quick-sweep op test each, so a fault in one is caught here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from harness.checks.clauses import (
    AUTOGRAD_METADATA, CALL_INDEPENDENCE, CALLER_STATE, CHANGING_INPUTS, CRASHES, DISTRIBUTED, DOUBLE_BACKWARD, DTYPE,
    EACH_OPERATOR, FUNCTIONAL_MUTATIONS, GRADIENTS, INPUTS_LEFT_ALONE, JOINT_GRADIENTS, MUTATIONS_APPLIED,
    MUTATIONS_ONCE, NON_CONTIGUOUS, OPTIONS, RANDOM_OPERATORS, RANDOM_OPS, REAL_MODELS, RNG_STREAM, RUNS, RUNS_ITSELF,
    STATE_AFTER, STRIDES_AND_ALIASING, SUBCLASSES, SUBNORMALS, VALUE_DOMAINS, VALUES, COMPUTE_PROGRAMS,
    STATE_BETWEEN_CALLS, TRAINING_LOOP, MODULE_STATE, REFUSAL, REFERENCE_INPUTS, CUSTOM_OPERATORS, ERRORS_RAISED,
    PYTHON_WORLD, CALLERS,
)
from harness.checks.clauses import CLAUSES as ALL_CLAUSES

# The clauses a smoke run makes observable: every one but RUNS_ITSELF, which is measured
# only with --max-eager-share (harness/measure/eager_share.py), on every test alike;
# DISTRIBUTED, whose tests start two processes each and run in the nightly tier only; and
# REFUSAL, which every test checks alike once the project declares a capability unsupported.
CLAUSES = tuple(clause for clause in ALL_CLAUSES if clause not in (RUNS_ITSELF, DISTRIBUTED, REFUSAL))


@dataclass(frozen=True)
class Pick:
    scenario: str  # "<module>.<Family>.<test>", as results.json's "scenario"
    clauses: tuple[str, ...] = ()  # of CLAUSES, the ones this test makes observable
    family_checks: str = ""  # for a family no clause names: what the family checks
    per_backend: bool = True  # False for a family that runs once, whatever the backends

    @property
    def family(self) -> str:
        return self.scenario.rsplit(".", 1)[0]


CONTRACT = "test_backend_contract"
AOT = "test_aot_autograd"
TRANSFORMS = "test_tracing_transforms"

PICKS = (
    # -- once per backend ---------------------------------------------------------------
    Pick(f"{CONTRACT}.OutputContractTests.test_layouts_1_transposed",
         (VALUES, DTYPE, STRIDES_AND_ALIASING, NON_CONTIGUOUS)),
    Pick(f"{CONTRACT}.OutputContractTests.test_nan_and_inf_propagate", (VALUES, INPUTS_LEFT_ALONE)),
    Pick(f"{CONTRACT}.GradientContractTests.test_first_order_0_matmul_transposed",
         (GRADIENTS, AUTOGRAD_METADATA, NON_CONTIGUOUS)),
    Pick(f"{CONTRACT}.SideEffectContractTests.test_mutation_of_duplicated_argument",
         (MUTATIONS_APPLIED, MUTATIONS_ONCE)),
    Pick(f"{CONTRACT}.GlobalStateContractTests.test_grad_mode_read_and_kept", (CALLER_STATE, STATE_AFTER)),
    Pick(f"{CONTRACT}.GlobalStateContractTests.test_deterministic_code_leaves_the_rng_stream_alone",
         (RNG_STREAM, STATE_AFTER)),
    Pick(f"{CONTRACT}.CallIndependenceTests.test_earlier_outputs_survive_later_calls", (CALL_INDEPENDENCE,)),
    # Gradients kept per micro-batch: a runtime handing out the same gradient buffers each pass.
    Pick(f"{CONTRACT}.CallIndependenceTests.test_gradients_kept_per_micro_batch", (CALL_INDEPENDENCE,)),
    # A side effect Dynamo replays, seen by the Python world every call is watched for.
    Pick(f"{CONTRACT}.PythonSideEffectTests.test_dict_set_del_pop", (PYTHON_WORLD,)),
    # Callers from a pool of threads (a runtime staging results in one shared buffer), and
    # inside saved-tensor hooks (a runtime saving through hooks of its own).
    Pick(f"{CONTRACT}.CallerTests.test_calls_from_a_pool_of_threads", (CALLERS,)),
    Pick(f"{CONTRACT}.CallerTests.test_call_inside_saved_tensor_hooks", (CALLERS,)),
    Pick(f"{CONTRACT}.ChangingInputsTests.test_dtypes_recompile", (CHANGING_INPUTS,)),
    # The values real data has: ties, repeated indices, past 2^16 elements (NaN and inf: the
    # pick above).
    Pick("test_real_data.RealDataTests.test_tied_values_and_repeated_indices_0_special", (VALUES,)),
    Pick("test_real_data.RealDataTests.test_tensors_past_2_to_the_16_elements_0_special", (VALUES,)),
    # torch's default configuration at a second size: a recompile with symbolic sizes.
    Pick(f"{CONTRACT}.AutomaticDynamicTests.test_a_new_size_recompiles_once_with_symbolic_sizes_0_pointwise_and_reduction",
         (CHANGING_INPUTS,)),
    # The one default-tier test whose forward graph is big enough for a fault that only
    # fires past 150 operators (the LSTM unrolled: 20-30 s with inductor from a cold cache).
    Pick(f"{AOT}.LSTMTests.test_lstm_grad_enabled_input_requires_grad", (VALUES,)),
    # Its family is the one that compiles aten.trunc, on which a compiler can be stuck.
    Pick(f"{AOT}.ArgDupeRecompileTests.test_duplicated_then_distinct_args_recompile_0_two_args",
         (CHANGING_INPUTS, RUNS)),
    Pick(f"{AOT}.DoubleBackwardTests.test_double_backward_inside_compiled_fn_1_implicit", (DOUBLE_BACKWARD,)),
    # One of the scenarios crashes_and_hangs kills its worker in, and none it hangs in:
    # each hang would cost its whole time limit.
    Pick("test_python_autograd.PythonAutogradTests.test_forwards_resetting_tape", (VALUES, CRASHES, RUNS)),
    Pick(f"{TRANSFORMS}.FunctionalizedMutationTests.test_data_mutations_applied_once_per_call",
         (FUNCTIONAL_MUTATIONS, MUTATIONS_ONCE)),
    Pick(f"{TRANSFORMS}.JointGraphGradientTests.test_gradients_only_for_inputs_that_require_grad",
         (JOINT_GRADIENTS,)),
    Pick(f"{TRANSFORMS}.RandomOpsTests.test_same_seed_same_draws", (RANDOM_OPS,)),
    Pick(f"{TRANSFORMS}.RandomOpsTests.test_successive_calls_draw_fresh_numbers", (RANDOM_OPS,)),
    Pick(f"{TRANSFORMS}.TensorSubclassTests.test_input_mutation", (SUBCLASSES, FUNCTIONAL_MUTATIONS)),
    Pick("test_op_sweep.OpSweepTests.test_op_sum", (EACH_OPERATOR,)),
    Pick("test_op_sweep.OpSweepTests.test_op_nn_functional_scaled_dot_product_attention", (RANDOM_OPERATORS,)),
    # Kernels of real models: only the nightly models and these op tests reach them.
    Pick("test_op_sweep.OpSweepTests.test_op_nn_functional_group_norm", (REAL_MODELS,)),
    Pick("test_op_sweep.OpSweepTests.test_op_nn_functional_conv_transpose2d", (REAL_MODELS,)),
    Pick("test_op_sweep.OpSweepTests.test_op_nn_functional_batch_norm", (REAL_MODELS, MUTATIONS_APPLIED)),
    Pick("test_op_sweep.OpSweepTests.test_op_nn_functional_upsample_bilinear", (REAL_MODELS,)),
    # Kinds of value and dtypes (harness/checks/value_domains.py): the cheapest of the sweep's
    # value-domain tests, 1-4 s each on aot_eager (test_values_float32 takes 12 s).
    Pick("test_op_sweep.OpSweepTests.test_subnormals_float32", (SUBNORMALS,)),
    Pick("test_op_sweep.OpSweepTests.test_values_int64", (VALUE_DOMAINS,)),
    Pick("test_op_sweep.OpSweepTests.test_values_int8", (VALUE_DOMAINS,)),
    Pick("test_op_sweep.OpSweepTests.test_values_complex64", (VALUE_DOMAINS,)),
    # OpInfo's reference inputs: the cheapest group, the broadcasting pairs.
    Pick("test_op_sweep.OpSweepTests.test_reference_broadcasting", (REFERENCE_INPUTS,)),
    # A custom operator's write into its input, through auto_functionalized.
    Pick("test_compile_surface.CustomOpTests.test_custom_op_writing_into_an_input",
         (CUSTOM_OPERATORS, MUTATIONS_APPLIED)),
    Pick("test_compile_surface.IndexErrorTests.test_indices_past_the_end_raise", (ERRORS_RAISED,)),
    # A value a kernel's own check rejects (validation lost, pytorch#197554), a new graph of its
    # own: a backend skipping the check and one failing the recompile both fail it.
    Pick("test_compile_surface.IndexErrorTests.test_values_eager_rejects_raise_1_smooth_l1_loss_beta",
         (ERRORS_RAISED,)),
    # A generated compute program that wrong values, wrong gradients, perturbed reductions and
    # bfloat16 arithmetic all fail (test/proofs/test_generated_faults.py); under a second.
    Pick("test_generated_programs.GeneratedComputeTests.test_seed_0001", (COMPUTE_PROGRAMS,)),
    # A class attribute shadowed between calls: both reusing faults of faulty_backends/state.py fail it.
    Pick("test_state_changes.StateChangeTests.test_instance_shadows_class", (STATE_BETWEEN_CALLS,)),
    # A compiled optimizer step, judged by its updates; and an eager optimizer on a compiled model.
    Pick("test_training_loop.TrainingLoopTests.test_compiled_optimizer_step_0_sgd_momentum_foreach", (TRAINING_LOOP,)),
    Pick("test_training_loop.TrainingLoopTests.test_eager_optimizer_updates_the_compiled_model", (TRAINING_LOOP,)),
    # BatchNorm's buffers through training steps and eval().
    Pick("test_training_loop.ModuleStateTests.test_batch_norm_trains_then_evaluates", (MODULE_STATE,)),
    # A real model trained: forward, loss and backward in one compiled step.
    Pick("test_models.ModelTests.test_lstm_language_model_train", (REAL_MODELS,)),
    # An unknown option reported, and the next compile free of it.
    Pick("test_compile_options.CompileOptionsTests.test_options_do_not_leak_into_later_compiles", (OPTIONS,)),
    # -- once, whatever the backends ------------------------------------------------------
    Pick(f"{AOT}.AotAutogradMachineryTests.test_aot_export_joint_simple_as_backend",
         per_backend=False, family_checks="torch's tracing machinery: make_fx, export, the profiler"),
    Pick(f"{TRANSFORMS}.FunctionalizationGraphTests.test_metadata_mutation_is_replayed_outside_the_graph",
         per_backend=False, family_checks="functionalization's graphs, through aot_function"),
    Pick(f"{TRANSFORMS}.JointGraphStructureTests.test_min_cut_recomputes_cheap_pointwise_ops",
         per_backend=False, family_checks="the joint graph and its partitioners, through aot_export_joint_simple"),
    Pick(f"{TRANSFORMS}.FunctionalModuleCallTests.test_buffer_mutation_is_applied_by_the_runtime",
         per_backend=False, family_checks="module calls as functional calls, through aot_module_simplified"),
    Pick(f"{TRANSFORMS}.ExportSignatureTests.test_inference_signature",
         per_backend=False, family_checks="export signatures, through aot_export_module"),
)

# Families of the default tier with no smoke test, and the clause a pick above already makes
# observable for each. One test of each would add 3 tests per family to a default run of
# three backends, past a tenth of the default run.
LEFT_TO_DEFAULT = {
    f"{AOT}.AliasingTests": STRIDES_AND_ALIASING,
    f"{AOT}.DataPtrTests": EACH_OPERATOR,
    f"{AOT}.DonatedBufferTests": GRADIENTS,
    f"{AOT}.ExpandMutationTests": MUTATIONS_APPLIED,
    f"{AOT}.GradModeMutationTests": STATE_AFTER,
    f"{AOT}.GraphBreakExportTests": CHANGING_INPUTS,
    f"{AOT}.InputMutationTests": MUTATIONS_APPLIED,
    f"{AOT}.JointGraphTests": JOINT_GRADIENTS,
    f"{AOT}.MutationEdgeCaseTests": MUTATIONS_APPLIED,
    f"{AOT}.ParameterConstructionTests": AUTOGRAD_METADATA,
    f"{AOT}.RequiresGradRecompileTests": CHANGING_INPUTS,
    f"{AOT}.StorageOverlapTests": CHANGING_INPUTS,
    f"{AOT}.UnbackedShapeTests": CHANGING_INPUTS,
    "test_compile_surface.HigherOrderOpTests": CUSTOM_OPERATORS,
    "test_compile_surface.ControlFlowTests": CUSTOM_OPERATORS,
    "test_compile_surface.AutogradFunctionTests": CUSTOM_OPERATORS,
    "test_compile_surface.DataDependentSizeTests": CHANGING_INPUTS,
    # NumPy code traced into torch: the values its functions return (Dynamo's, every backend alike).
    "test_compile_surface.NumpyCodeTests": VALUES,
    # Combinations of the clauses the picks above check one by one; 16 programs per backend.
    "test_generated_programs.GeneratedProgramTests": STRIDES_AND_ALIASING,
    # Frontend bugs, the same on every backend: expected failures, nothing about the backend.
    "test_generated_programs.FoundProgramTests": STRIDES_AND_ALIASING,
    # Nightly only (two processes, 15-25 s a test); SKIP in the default tier.
    "test_distributed.DistributedTrainingTests": DISTRIBUTED,
}

SCENARIOS = frozenset(pick.scenario for pick in PICKS)


def _picks(selected: Iterable[str] | None) -> list[Pick]:
    """The picks among ``selected`` scenarios (``-k`` and ``--op-sweep none`` select fewer);
    all of them for None."""
    if selected is None:
        return list(PICKS)
    chosen = set(selected)
    return [pick for pick in PICKS if pick.scenario in chosen]


def families(selected: Iterable[str] | None = None) -> list[str]:
    """The scenario families with a smoke test (among ``selected``), in PICKS' order."""
    return list(dict.fromkeys(pick.family for pick in _picks(selected)))


def coverage_lines(selected: Iterable[str] | None = None) -> list[str]:
    """What a smoke run covers: one line per contract clause with the tests that make it
    observable, then one per family with its tests."""
    picks = _picks(selected)
    lines = []
    for clause in CLAUSES:
        tests = [pick.scenario.split(".", 1)[1] for pick in picks if clause in pick.clauses]
        if tests:
            lines.append(f"clause {clause}: {', '.join(tests)}")
    for family in families(selected):
        mine = [pick for pick in picks if pick.family == family]
        checks = next((pick.family_checks for pick in mine if pick.family_checks), "")
        lines.append(f"family {family}: {', '.join(pick.scenario.rsplit('.', 1)[1] for pick in mine)}"
                     + (f" ({checks})" if checks else ""))
    return lines


def _tests(count: int) -> str:
    return f"{count} test" + ("" if count == 1 else "s")


def headline(selected: Iterable[str] | None = None) -> str:
    """The line a smoke run starts with, for the selected tests' scenarios."""
    picks = _picks(selected)
    clauses = {clause for pick in picks for clause in pick.clauses}
    per_backend = sum(pick.per_backend for pick in picks)
    total_families = len(families()) + len(LEFT_TO_DEFAULT)
    return (f"smoke tier: {_tests(per_backend)} per backend and {len(picks) - per_backend} backend-independent, "
            f"covering {len(clauses)} of {len(CLAUSES)} contract clauses and {len(families(selected))} of "
            f"{total_families} scenario families (the others run in the default tier)")
