"""Backends that each break one clause of the backend contract on purpose.

The suite's scenarios claim to catch a backend that computes something a user could tell
apart from eager. These backends are how the suite proves that claim about itself: run a
scenario family against the matching faulty backend and every scenario must fail.

Use them like any other backend spec, e.g.
``DYNAMO_SUITE_BACKENDS=test.harness.faulty_backends:wrong_values``: every faulty backend is
re-exported here, so ``test.harness.faulty_backends:NAME`` names any of them. Each module
holds one catalogue, with the self-test that runs it:

* ``contract``: one clause of the backend contract each (docs/checks.md;
  test/proofs/test_faulty_backends.py), and ``crashes_and_hangs``, the crashes and hangs a
  runner must survive (test/harness/test_runner.py);
* ``models``: what only real models exercise (test/proofs/test_faulty_models.py), and
  eval-mode BatchNorm folded wrong (test/proofs/test_state_change_faults.py);
* ``isolation``: what a runner must contain, a runtime broken for the rest of the process
  and a compiler that never returns (test/harness/test_isolation.py);
* ``axes``: faults on one axis only, right under ``static`` and float32
  (harness/axes/variants.py; test/proofs/test_variant_faults.py);
* ``real_data``: right on ordinary inputs, wrong only on NaN, ties, repeated indices or
  tensors past 2^16 elements (test/proofs/test_real_data_faults.py);
* ``eager_share``: silent eager fallback, every result right
  (harness/measure/eager_share.py; test/proofs/test_eager_share_faults.py);
* ``perf``: right in every result, slower or hungrier than aot_eager, which they build on
  (harness/testcase/perf.py; test/proofs/test_perf_faults.py); their docstrings start with
  ``Costs:``;
* ``state``: right on the call a graph was compiled for, wrong after the state around it
  changed or only in a training loop's graphs (test/dynamo/test_state_changes.py,
  test_training_loop.py; test/proofs/test_state_change_faults.py);
* ``distributed``: right in one process, wrong in a process group (test/dynamo/test_distributed.py;
  test/proofs/test_distributed_faults.py);
* ``scope``: backends that do not train (or draw random numbers, or call custom operators) and
  refuse, clearly or not, or crash with words of the capability in another phrase, for the refusal
  contract of a declared-unsupported capability (harness/features/scope.py;
  test/proofs/test_scope_faults.py);
* ``options``: right in every result, wrong in what they do with ``mode=`` and ``options=``
  (harness/axes/compile_options.py; test/proofs/test_option_faults.py);
* ``draws``: right in everything but the law of a random operator's draws
  (harness/checks/opcheck.py; test/proofs/test_random_law_faults.py);
* ``surface``: one higher-order operator Dynamo captures lowered wrongly (an autograd.Function,
  a checkpoint, cond and while_loop, a while_loop that never steps, a scan's closure), for
  the compile surface (test/dynamo/test_compile_surface.py; test/proofs/test_compile_surface_faults.py);
* ``judging``: wrong where a check's judgement of values and gradients forgave them: a
  leaf beside half-precision ones, a call with no input that requires grad, a gradient a
  constant loss hides, 12% in half precision (harness/checks/compare.py;
  test/proofs/test_judging_faults.py);
* ``callers``: right for one caller in one thread, wrong when calls from a pool of threads
  overlap or under a caller's saved-tensor hooks (harness/axes/callers.py;
  test/proofs/test_caller_faults.py);
* ``_shared``: the helpers several catalogues use.

A faulty backend's docstring starts with ``Breaks: *the clause*``; that is how
test/harness/test_smoke.py finds every faulty backend among this package's names, so a new
one must be added to the imports and ``__all__`` below.
"""

from __future__ import annotations

from test.harness.faulty_backends.axes import (
    bakes_in_first_sizes,
    forgets_to_cast_back_half,
    refuses_exported_graphs,
    wrong_compiled_autograd_backward,
    wrong_on_exported_graphs,
)
from test.harness.faulty_backends.callers import ignores_saved_tensor_hooks, stages_results_in_a_shared_buffer
from test.harness.faulty_backends.contract import (
    CRASH_AND_HANG_PLAN,
    PERTURBED_REDUCTIONS,
    assumes_contiguous,
    caches_by_graph_code,
    computes_in_bfloat16,
    consumes_rng,
    copies_outputs,
    crashes_and_hangs,
    detaches_outputs,
    drops_input_mutations,
    fails_recompiles,
    ignores_kernel_options,
    keeps_detached_tensors,
    keeps_its_own_generator,
    leaves_grad_disabled,
    leaves_subnormals_flushed,
    memoizes_on_shapes,
    perturbs_reductions,
    raises_when_run,
    replays_random_draws,
    reuses_gradient_buffers,
    reuses_output_buffers,
    runs_graph_twice,
    runs_with_grad_enabled,
    skips_validation,
    unwraps_subclasses,
    upcasts_outputs,
    wrong_gradients,
    wrong_values,
    writes_results_into_inputs,
)
from test.harness.faulty_backends.draws import bernoulli_ignores_p, dropout_ignores_p, normal_ignores_std
from test.harness.faulty_backends.eager_share import (
    EAGER_OP,
    backward_eagerly,
    eager_for_symbolic_sizes,
    falls_back_on_some_graphs,
    one_op_eagerly,
    swallows_errors_runs_eagerly,
)
from test.harness.faulty_backends.distributed import crashes_one_rank, drops_one_ddp_bucket, hangs_one_rank
from test.harness.faulty_backends.judging import (
    detaches_half_outputs,
    float32_off_beside_half,
    half_gradients_12_percent_off,
    half_outputs_12_percent_off,
    wrong_gradient_free_ops,
    wrong_half_indices,
    wrong_softmax_backward,
)
from test.harness.faulty_backends.options import ignores_options, keeps_first_options
from test.harness.faulty_backends.perf import keeps_activation_copies, runs_forward_twice, sleeps_per_call
from test.harness.faulty_backends.real_data import (
    breaks_ties_last,
    drops_imaginary_parts,
    flushes_subnormals,
    integers_through_float32,
    loses_duplicate_writes,
    loses_negative_zero,
    saturates_8_bit,
    skips_nan_in_reductions,
    wrong_past_2_to_the_16,
)
from test.harness.faulty_backends.state import (
    caches_by_graph_structure,
    freezes_module_state,
    overshoots_optimizer_steps,
    reuses_graphs_by_input_names,
)
from test.harness.faulty_backends.scope import (
    crashes_with_refusal_words,
    refuses_in_form,
    refuses_training,
    refuses_vaguely,
)
from test.harness.faulty_backends.surface import (
    differentiates_autograd_function_forwards,
    drops_gradients_of_what_a_scan_closes_over,
    keeps_checkpointed_activations,
    returns_carried_values_from_a_loop_that_never_steps,
    wrong_control_flow_backward,
)
from test.harness.faulty_backends.isolation import HANGING_OP, breaks_after_float64, hangs_compiling_trunc
from test.harness.faulty_backends.models import (
    BIG_GRAPH,
    FIRED_LOG_ENV,
    folds_batch_norm_wrong,
    miscompiles_big_graphs,
    skips_batch_norm_stats,
    wrong_attention,
    wrong_conv_transpose,
    wrong_group_norm,
    wrong_upsampling,
)

__all__ = [
    # callers
    "stages_results_in_a_shared_buffer",
    "ignores_saved_tensor_hooks",
    # contract
    "wrong_values",
    "drops_input_mutations",
    "skips_validation",
    "raises_when_run",
    "fails_recompiles",
    "ignores_kernel_options",
    "CRASH_AND_HANG_PLAN",
    "crashes_and_hangs",
    "upcasts_outputs",
    "copies_outputs",
    "detaches_outputs",
    "assumes_contiguous",
    "runs_graph_twice",
    "consumes_rng",
    "leaves_grad_disabled",
    "leaves_subnormals_flushed",
    "reuses_output_buffers",
    "reuses_gradient_buffers",
    "caches_by_graph_code",
    "wrong_gradients",
    "computes_in_bfloat16",
    "memoizes_on_shapes",
    "writes_results_into_inputs",
    "runs_with_grad_enabled",
    "PERTURBED_REDUCTIONS",
    "perturbs_reductions",
    "unwraps_subclasses",
    "replays_random_draws",
    "keeps_its_own_generator",
    "keeps_detached_tensors",
    # draws
    "bernoulli_ignores_p",
    "normal_ignores_std",
    "dropout_ignores_p",
    # state
    "caches_by_graph_structure",
    "freezes_module_state",
    "overshoots_optimizer_steps",
    "reuses_graphs_by_input_names",
    # scope
    "refuses_training",
    "refuses_vaguely",
    "crashes_with_refusal_words",
    "refuses_in_form",
    # surface
    "differentiates_autograd_function_forwards",
    "keeps_checkpointed_activations",
    "wrong_control_flow_backward",
    "returns_carried_values_from_a_loop_that_never_steps",
    "drops_gradients_of_what_a_scan_closes_over",
    # models
    "FIRED_LOG_ENV",
    "BIG_GRAPH",
    "wrong_attention",
    "wrong_group_norm",
    "wrong_conv_transpose",
    "wrong_upsampling",
    "skips_batch_norm_stats",
    "folds_batch_norm_wrong",
    "miscompiles_big_graphs",
    # real_data
    "skips_nan_in_reductions",
    "loses_duplicate_writes",
    "breaks_ties_last",
    "wrong_past_2_to_the_16",
    "flushes_subnormals",
    "loses_negative_zero",
    "integers_through_float32",
    "saturates_8_bit",
    "drops_imaginary_parts",
    # isolation
    "breaks_after_float64",
    "HANGING_OP",
    "hangs_compiling_trunc",
    # axes
    "bakes_in_first_sizes",
    "wrong_compiled_autograd_backward",
    "forgets_to_cast_back_half",
    "wrong_on_exported_graphs",
    "refuses_exported_graphs",
    # eager_share
    "swallows_errors_runs_eagerly",
    "eager_for_symbolic_sizes",
    "EAGER_OP",
    "one_op_eagerly",
    "backward_eagerly",
    "falls_back_on_some_graphs",
    # perf
    "sleeps_per_call",
    "runs_forward_twice",
    "keeps_activation_copies",
    # distributed
    "drops_one_ddp_bucket",
    "crashes_one_rank",
    "hangs_one_rank",
    # judging
    "wrong_half_indices",
    "half_outputs_12_percent_off",
    "half_gradients_12_percent_off",
    "float32_off_beside_half",
    "detaches_half_outputs",
    "wrong_gradient_free_ops",
    "wrong_softmax_backward",
    # options
    "ignores_options",
    "keeps_first_options",
]
