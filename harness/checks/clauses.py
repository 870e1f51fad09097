"""The backend contract's clauses, and which clause a failed check enforces.

docs/checks.md's table states the contract; each clause here is one of its rows. A backend
author asks "which clauses does my backend break", so the reports group problems under the
clause their failed check enforces (harness/report/problems.py). The clause of an
unexpected result is found in this order:

1. by its outcome, where the outcome says it all: an error, crash or hang broke RUNS (the
   backend did not compile and run what it was given), an expected failure that passed is
   stale expectations, not the backend;
2. by its check, when the check's message says what it compared: a requires_grad, a dtype,
   strides, an input after the call, a gradient, the RNG, an earlier call's output... (the
   suite's checks write ``<what>: <how it differs>``: harness/checks/compare.py); except
   that a test written for a condition (the caller's grad mode, a second call, a changed
   input) sees that condition's breach in its outputs' properties;
3. otherwise (a plain difference in output values, or a test's own assertion) by its test:
   the clause the scenario, or its family, was written to make observable (SCENARIOS).

A problem (one check failing the same way in several tests) takes the clause most of its
tests give it.

A result none of these names has no clause: the reports list it under NO_CLAUSE, and that
is a finding (a scenario family missing from SCENARIOS, or a check whose message says
nothing of what it compares). test/harness/test_clauses.py keeps every family of the
bundled scenarios in SCENARIOS.
"""

from __future__ import annotations

import re
from collections import Counter

VALUES = "output values (floats, large integers, NaN and inf)"
DTYPE = "output dtype"
STRIDES_AND_ALIASING = "output strides, views of inputs, outputs aliasing each other"
AUTOGRAD_METADATA = "output requires_grad and grad_fn"
NON_CONTIGUOUS = "right values for non-contiguous inputs"
MUTATIONS_APPLIED = "input mutations are applied"
MUTATIONS_ONCE = "input mutations are applied exactly once"
GRADIENTS = "first-order gradients"
INPUTS_LEFT_ALONE = "inputs not written to unless the function does"
RNG_STREAM = "the RNG stream"
CALLER_STATE = "the caller's grad mode, autocast and default dtype apply"
STATE_AFTER = "global state after the call"
CALL_INDEPENDENCE = "independence across calls"
CHANGING_INPUTS = "changing inputs recompile or stay correct"
FUNCTIONAL_MUTATIONS = "data mutations come back out of the functional graph"
JOINT_GRADIENTS = "gradients only where required, any tangent layout"
RANDOM_OPS = "random ops: forward mask reused in backward, seeded, fresh per call"
SUBCLASSES = "tensor subclasses survive compilation"
EACH_OPERATOR = "each operator, one by one"
RANDOM_OPERATORS = "random operators: reproducible under a seed, fresh draws, gradients through the draws"
REAL_MODELS = "real models: a training step, large graphs"
CRASHES = "the run survives crashes and hangs"
DOUBLE_BACKWARD = "double backward follows the AOTAutograd contract"
RUNS = "compiles and runs what it is given: no error, crash or hang"
RUNS_ITSELF = "runs its graphs itself, not through PyTorch's eager kernels"
OPTIONS = "compile options: an unknown one reported, each compile's own"
DISTRIBUTED = "distributed training: each bucket's graph compiled, its gradients all-reduced"
VALUE_DOMAINS = "each operator over every kind of value and dtype: exact where eager is exact"
SUBNORMALS = "subnormal numbers kept, not flushed to zero"
COMPUTE_PROGRAMS = "operators in combination, over every kind of value: exact where eager is exact"
STATE_BETWEEN_CALLS = "state changed between calls (configs, modules, hooks, global modes): eager's result after it"
TRAINING_LOOP = "the training loop compiled: each step's update of parameters and optimizer state as eager's"
MODULE_STATE = "module state: buffers written back, train and eval, graphs of any size"
REFUSAL = "what it declares unsupported: refused with an error naming it, or eager's answer"
REFERENCE_INPUTS = "each operator over PyTorch's reference inputs: broadcasting, layouts, scalars, promotion, sizes"
CUSTOM_OPERATORS = "custom and higher-order operators: their own kernel or subgraphs, their writes, their gradient"
ERRORS_RAISED = "errors eager raises on bad input, the compiled code raises (indices past the end...)"
PYTHON_WORLD = ("Python side effects: the lists, dicts, objects, module attributes, globals and cells a call "
                "reaches, changed as eager changes them")
CALLERS = ("the ways callers call (from threads at once, writing into what a call returned, through module and "
           "saved-tensor hooks): eager's results each way")

CLAUSES = (
    VALUES, DTYPE, STRIDES_AND_ALIASING, AUTOGRAD_METADATA, NON_CONTIGUOUS, MUTATIONS_APPLIED, MUTATIONS_ONCE,
    GRADIENTS, INPUTS_LEFT_ALONE, RNG_STREAM, CALLER_STATE, STATE_AFTER, CALL_INDEPENDENCE, CHANGING_INPUTS,
    FUNCTIONAL_MUTATIONS, JOINT_GRADIENTS, RANDOM_OPS, SUBCLASSES, EACH_OPERATOR, RANDOM_OPERATORS, REAL_MODELS,
    CRASHES, DOUBLE_BACKWARD, RUNS, RUNS_ITSELF, OPTIONS, DISTRIBUTED, VALUE_DOMAINS, SUBNORMALS, COMPUTE_PROGRAMS,
    STATE_BETWEEN_CALLS, TRAINING_LOOP, MODULE_STATE, REFUSAL, REFERENCE_INPUTS, CUSTOM_OPERATORS, ERRORS_RAISED,
    PYTHON_WORLD, CALLERS,
)

# Not clauses of the backend contract, but where an unexpected result may still belong.
TORCH_ITSELF = "torch's own transforms, with no backend (a torch regression)"
STALE_EXPECTATIONS = "expected failures that passed (the expectations are out of date)"
NO_CLAUSE = "no named clause (a finding: name the clause this check enforces)"

# A check's message, as problems.signature() leaves it, and the clause that check enforces.
# First match wins, so the narrower patterns come first.
_CHECKS = [(re.compile(pattern), clause) for pattern, clause in (
    # harness/report/problems.py: a test of a capability declared unsupported that was not refused.
    (r"^declared unsupported\b", REFUSAL),
    (r"leaked global state|changed by the call|mode after the call", STATE_AFTER),
    # harness/checks/observations/python_world.py, whatever the scenario: its paths name attributes and grads.
    (r"^the Python world after compiled call", PYTHON_WORLD),
    # The value-domain check (harness/checks/value_domains.py): "<dtype> on <domain> values: ..."
    (r"\bon reference [a-z ]+ values: ", REFERENCE_INPUTS),
    (r"\bon [a-z ]+ values: .*subnormal values flushed to zero", SUBNORMALS),
    (r"\bon [a-z ]+ values: ", VALUE_DOMAINS),
    (r"consumed random numbers|generator ended in a different state", RNG_STREAM),
    (r"same seed|dropout mask|dropped other elements|another mask|random values repeat|two seeded runs"
     r"|implausible fraction", RANDOM_OPS),
    (r"subclass|rewrapped|per inner tensor", SUBCLASSES),
    (r"earlier call's output|after the input was changed|second call's output|stay (alive|in memory) after the caller"
     r"|identical calls differ|reuses (output|gradient) memory across", CALL_INDEPENDENCE),
    (r"gave a result where eager raises|raised something else than (an index error|eager's)|gave a result$",
     ERRORS_RAISED),
    (r"ran part of its graphs eagerly", RUNS_ITSELF),
    # The export variants: torch.export or its decomposition refused, or its graph broke its own contract.
    (r"breaks export's contract|^(ExportRefused: )?(torch\.export \(|run_decompositions\(\) of)", TORCH_ITSELF),
    (r"^compiled program raised", RUNS),  # a generated program's call or compile raised
    (r"received no graph", RUNS),
    (r"guard failure|recompil|symbolic sizes", CHANGING_INPUTS),
    (r"must not compute its gradient|but got a gradient|must not get a tangent|needs no joint graph", JOINT_GRADIENTS),
    (r"requires?[_ ]grad|grad_fn|presence differs|is_leaf|is_inference", AUTOGRAD_METADATA),
    (r"dtype differs", DTYPE),
    (r"strides differ|\balias|stay a view", STRIDES_AND_ALIASING),
    (r"^(input|parameter|buffer)s? after|^call # input|mutat", MUTATIONS_APPLIED),
    (r"^(grad|gradient)s?\b|gradient (after|through|of)", GRADIENTS),
)]
# A test written for a condition (the caller's grad mode, a second call, an input that
# changed) observes it through the outputs' properties: an output that differs there breaks
# the condition's clause, not the property's.
_OUTPUT_PROPERTIES = frozenset({VALUES, DTYPE, AUTOGRAD_METADATA, STRIDES_AND_ALIASING})
_CONDITIONS = frozenset({CALLER_STATE, CALL_INDEPENDENCE, CHANGING_INPUTS, STATE_BETWEEN_CALLS, TRAINING_LOOP,
                         MODULE_STATE})
_WRAPPERS = re.compile(r"^(AssertionError: )?((generated )?program disagrees with eager: )?")

# The clause each scenario, or each family of scenarios (``<module>.<Family>``), was written
# to make observable: for a failed check whose message does not say. The longest name that
# is a prefix of the scenario's wins.
AOT = "test_aot_autograd"
CONTRACT = "test_backend_contract"
TRANSFORMS = "test_tracing_transforms"
SCENARIOS = {
    f"{AOT}.LSTMTests": VALUES,
    f"{AOT}.InputMutationTests": MUTATIONS_APPLIED,
    f"{AOT}.MutationEdgeCaseTests": MUTATIONS_APPLIED,
    f"{AOT}.ExpandMutationTests": MUTATIONS_APPLIED,
    f"{AOT}.AliasingTests": STRIDES_AND_ALIASING,
    f"{AOT}.ArgDupeRecompileTests": CHANGING_INPUTS,
    f"{AOT}.RequiresGradRecompileTests": CHANGING_INPUTS,
    f"{AOT}.StorageOverlapTests": CHANGING_INPUTS,
    f"{AOT}.GraphBreakExportTests": CHANGING_INPUTS,
    f"{AOT}.ParameterConstructionTests": AUTOGRAD_METADATA,
    f"{AOT}.DoubleBackwardTests": DOUBLE_BACKWARD,
    f"{AOT}.GradModeMutationTests": STATE_AFTER,
    f"{AOT}.DonatedBufferTests": GRADIENTS,
    f"{AOT}.DataPtrTests": EACH_OPERATOR,
    f"{AOT}.JointGraphTests": JOINT_GRADIENTS,
    f"{AOT}.UnbackedShapeTests": CHANGING_INPUTS,
    f"{AOT}.AotAutogradMachineryTests": TORCH_ITSELF,
    f"{CONTRACT}.OutputContractTests": VALUES,
    f"{CONTRACT}.OutputContractTests.test_layouts_1": NON_CONTIGUOUS,  # transposed
    f"{CONTRACT}.OutputContractTests.test_layouts_2": NON_CONTIGUOUS,  # a strided slice
    f"{CONTRACT}.OutputContractTests.test_layouts_4": NON_CONTIGUOUS,  # expanded
    f"{CONTRACT}.OutputContractTests.test_channels_last": NON_CONTIGUOUS,
    f"{CONTRACT}.SideEffectContractTests": MUTATIONS_APPLIED,
    # Its graph adds to the input once per call: a second application changes only values.
    f"{CONTRACT}.SideEffectContractTests.test_data_mutation_applied_once_per_call": MUTATIONS_ONCE,
    f"{CONTRACT}.SideEffectContractTests.test_mutation_of_non_leaf": MUTATIONS_ONCE,
    # Its outputs come first: a plain output difference is a value's (a gradient's says so).
    f"{CONTRACT}.GradientContractTests": VALUES,
    f"{CONTRACT}.GradientContractTests.test_first_order_0_matmul_transposed": NON_CONTIGUOUS,
    f"{CONTRACT}.GlobalStateContractTests": CALLER_STATE,
    f"{CONTRACT}.CallIndependenceTests": CALL_INDEPENDENCE,
    f"{CONTRACT}.ChangingInputsTests": CHANGING_INPUTS,
    f"{CONTRACT}.AutomaticDynamicTests": CHANGING_INPUTS,
    f"{CONTRACT}.PythonSideEffectTests": PYTHON_WORLD,
    f"{CONTRACT}.CallerTests": CALLERS,
    "test_generated_programs.GeneratedProgramTests": VALUES,
    "test_generated_programs.GeneratedComputeTests": COMPUTE_PROGRAMS,
    "test_generated_programs.FoundProgramTests": TORCH_ITSELF,
    "test_models.ModelTests": REAL_MODELS,
    "test_state_changes.StateChangeTests": STATE_BETWEEN_CALLS,
    "test_training_loop.TrainingLoopTests": TRAINING_LOOP,
    "test_training_loop.ModuleStateTests": MODULE_STATE,
    "test_compile_options.CompileOptionsTests": OPTIONS,
    "test_distributed.DistributedTrainingTests": DISTRIBUTED,
    # A perf test fails only when its compiled step disagrees with eager (or does not run).
    "test_perf.PerfTests": VALUES,
    "test_op_sweep.OpSweepTests": EACH_OPERATOR,
    "test_op_sweep.OpSweepTests.test_reference": REFERENCE_INPUTS,
    "test_op_sweep.OpSweepTests.test_error_inputs": ERRORS_RAISED,
    "test_compile_surface.CustomOpTests": CUSTOM_OPERATORS,
    "test_compile_surface.HigherOrderOpTests": CUSTOM_OPERATORS,
    "test_compile_surface.IndexErrorTests": ERRORS_RAISED,
    "test_compile_surface.ControlFlowTests": CUSTOM_OPERATORS,
    "test_compile_surface.AutogradFunctionTests": CUSTOM_OPERATORS,
    "test_compile_surface.DataDependentSizeTests": CHANGING_INPUTS,
    "test_compile_surface.DataDependentSizeTests.test_a_check_the_data_breaks": ERRORS_RAISED,
    "test_compile_surface.NumpyCodeTests": VALUES,
    "test_python_autograd.PythonAutogradTests": VALUES,
    "test_real_data.RealDataTests": VALUES,
    f"{TRANSFORMS}.FunctionalizedMutationTests": FUNCTIONAL_MUTATIONS,
    f"{TRANSFORMS}.FunctionalizedMutationTests.test_data_mutations_applied_once_per_call": MUTATIONS_ONCE,
    f"{TRANSFORMS}.JointGraphGradientTests": JOINT_GRADIENTS,
    f"{TRANSFORMS}.RandomOpsTests": RANDOM_OPS,
    f"{TRANSFORMS}.TensorSubclassTests": SUBCLASSES,
    f"{TRANSFORMS}.FunctionalizationGraphTests": TORCH_ITSELF,
    f"{TRANSFORMS}.JointGraphStructureTests": TORCH_ITSELF,
    f"{TRANSFORMS}.FunctionalModuleCallTests": TORCH_ITSELF,
    f"{TRANSFORMS}.ExportSignatureTests": TORCH_ITSELF,
}


def of_scenario(scenario: str) -> str | None:
    """The clause ``scenario`` (``module.Family.test``) was written for, if SCENARIOS says."""
    names = [name for name in SCENARIOS if scenario == name or scenario.startswith(name + ".")
             or scenario.startswith(name + "_")]
    return SCENARIOS[max(names, key=len)] if names else None


def of_check(signature: str) -> str | None:
    """The clause a failed check enforces, from its message (numbers and indexes taken out)."""
    text = _WRAPPERS.sub("", signature)
    return next((clause for pattern, clause in _CHECKS if pattern.search(text)), None)


def of_result(scenario: str, outcome: str, signature: str) -> str:
    """The clause an unexpected result breaks (or one of the three headings that are not
    clauses: TORCH_ITSELF, STALE_EXPECTATIONS, NO_CLAUSE)."""
    if outcome == "XPASS":
        return STALE_EXPECTATIONS
    if outcome in ("CRASH", "TIMEOUT"):
        return RUNS
    by_test = of_scenario(scenario)
    if by_test == TORCH_ITSELF:  # no backend ran: whatever the check, torch broke it
        return TORCH_ITSELF
    by_check = of_check(signature)
    if by_check in _OUTPUT_PROPERTIES and by_test in _CONDITIONS:
        return by_test
    return by_check or (RUNS if outcome == "ERROR" else by_test) or NO_CLAUSE


def of_problem(scenarios: list[str], outcome: str, signature: str) -> str:
    """One clause for a problem (one check failing the same way in several scenarios): the
    clause most of its scenarios give it; on a tie, the earlier in CLAUSES."""
    votes = Counter(of_result(scenario, outcome, signature) for scenario in scenarios)
    order = {clause: index for index, clause in enumerate((*CLAUSES, TORCH_ITSELF, STALE_EXPECTATIONS, NO_CLAUSE))}
    return min(votes, key=lambda clause: (-votes[clause], order[clause]))
