"""Backends that each break one clause of the backend contract on purpose.

The suite's scenarios claim to catch a backend that computes something a user could tell
apart from eager. These backends are how the suite proves that claim about itself: run a
scenario family against the matching faulty backend and every scenario must fail.

Use them like any other backend spec, e.g.
``DYNAMO_SUITE_BACKENDS=test.harness.faulty_backends:wrong_values``.
"""

from __future__ import annotations

import ctypes
import operator
import os
import signal
import time
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

# Far outside every tolerance in harness.checks.compare (the loosest, bfloat16, is 1.6e-2 relative
# plus 1e-2 absolute), yet small enough to leave the values plausible at a glance.
_NUDGE = 5e-2


def _nudged(value: Any) -> Any:
    if not isinstance(value, torch.Tensor) or not (value.dtype.is_floating_point or value.dtype.is_complex):
        return value
    # Out of place and through a detached offset, so inputs are untouched, requires_grad
    # is kept and gradients still reach the inputs: only the forward values are wrong.
    offset = _NUDGE * (1 + value.detach().abs())
    return value + offset.to(value.dtype)


def wrong_values(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *compiled outputs equal eager outputs*.

    Runs Dynamo's graph as captured (no AOTAutograd), then shifts every floating-point
    output by 5% of its magnitude (at least 0.05). Shapes, dtypes, requires_grad, input
    mutations and gradients stay correct, so only a value comparison can notice.
    """

    def run(*args: Any) -> Any:
        return pytree.tree_map(_nudged, gm(*args))

    return run


def _writes_into_input(node: torch.fx.Node) -> bool:
    return (
        node.op == "call_function"
        and node.target is torch.ops.aten.copy_.default
        and isinstance(node.args[0], torch.fx.Node)
        and node.args[0].op == "placeholder"
    )


def _forward_without_input_writes(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    for node in [node for node in gm.graph.nodes if _writes_into_input(node)]:
        # Whoever read the result of the write (an output aliasing the input) now gets the
        # new value without the input having received it.
        node.replace_all_uses_with(node.args[1])
        gm.graph.erase_node(node)
    gm.recompile()
    return make_boxed_func(gm.forward)


def _backward_as_traced(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    return make_boxed_func(gm.forward)


# keep_inference_input_mutations asks AOTAutograd to express mutations of inputs that do
# not require grad as aten.copy_(input, new_value) inside the forward graph (inference and
# training graphs alike), which is where the forward compiler can lose them.
_aot_dropping_input_writes = aot_autograd(
    fw_compiler=_forward_without_input_writes,
    bw_compiler=_backward_as_traced,
    keep_inference_input_mutations=True,
)


def drops_input_mutations(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *in-place changes to the function's inputs are visible after the call*.

    A real AOTAutograd backend (outputs and gradients are right) whose forward compiler
    deletes the ``aten.copy_`` nodes that write new values back into graph inputs. After
    ``compiled(x)`` with ``x.add_(1)`` inside, ``x`` is unchanged. Mutations AOTAutograd
    applies outside the graph (metadata changes such as ``t_()``, data changes of inputs
    that require grad) still happen.
    """
    return _aot_dropping_input_writes(gm, example_inputs)


# Which scenario of PythonAutogradTests each misbehaviour of `crashes_and_hangs` hits.
CRASH_AND_HANG_PLAN = {
    "test_forwards_resetting_tape": "segfault",
    "test_forwards": "exit",
    "test_backwards_resetting_tape": "hang",
    "test_forward_and_backward_in_separate_frames": "hang_ignoring_alarm",
}


def _current_scenario() -> str:
    # pytest names the running test here; under plain unittest there is none, and the
    # backend behaves.
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    return current.split("::")[-1].split(" ")[0]


def crashes_and_hangs(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *compiling returns* -- the failures a runner must survive.

    Under pytest, on the PythonAutogradTests scenarios named in CRASH_AND_HANG_PLAN, it
    dereferences NULL (SIGSEGV), calls ``os._exit(3)``, sleeps forever, or sleeps forever
    with SIGALRM ignored (as a native loop that never returns to Python would). Every other
    scenario gets the graph run as captured.
    """
    action = CRASH_AND_HANG_PLAN.get(_current_scenario())
    if action == "segfault":
        ctypes.string_at(0)
    elif action == "exit":
        os._exit(3)
    elif action in ("hang", "hang_ignoring_alarm"):
        if action == "hang_ignoring_alarm":
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
        while True:
            time.sleep(1)
    return gm.forward


# -- one clause each (see the table in docs/checks.md) -------------------------------------


def _map_tensors(fn: Callable[[torch.Tensor], Any], value: Any) -> Any:
    return pytree.tree_map(lambda item: fn(item) if isinstance(item, torch.Tensor) else item, value)


def _floating(tensor: torch.Tensor) -> bool:
    return tensor.dtype.is_floating_point or tensor.dtype.is_complex


def upcasts_outputs(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *output dtypes*. Floating outputs come back as float64 (values equal): a
    backend computing in higher precision and forgetting to cast back."""
    return lambda *args: _map_tensors(lambda t: t.double() if t.dtype in (torch.float32, torch.float16) else t, gm(*args))


def copies_outputs(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *strides and aliasing of outputs*. Every output is a fresh contiguous copy:
    views of inputs or of other outputs are no longer views (a runtime that always
    allocates its own output buffers)."""
    return lambda *args: _map_tensors(lambda t: t.clone(memory_format=torch.contiguous_format), gm(*args))


def detaches_outputs(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *requires_grad and grad_fn of outputs*. Outputs are detached, so no gradient
    flows back to the inputs (a backend whose kernels sit outside autograd)."""
    return lambda *args: _map_tensors(lambda t: t.detach(), gm(*args))


def assumes_contiguous(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *values for non-contiguous inputs*. Each input is read as if it were dense
    row-major from its first element (a kernel that ignores strides); dense inputs work."""

    def dense_view(tensor: torch.Tensor) -> torch.Tensor:
        if tensor.is_contiguous() or tensor.numel() == 0:
            return tensor
        row_major = torch.empty(tensor.shape).stride()
        return tensor.as_strided(tensor.shape, row_major)

    return lambda *args: gm(*[dense_view(arg) if isinstance(arg, torch.Tensor) else arg for arg in args])


def runs_graph_twice(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *side effects happen once*. The graph runs twice per call, as an autotuner
    timing candidate kernels on the live inputs would: in-place updates apply twice."""

    def run(*args: Any) -> Any:
        gm(*args)
        return gm(*args)

    return run


def consumes_rng(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *the RNG stream*. Each call draws a number from the global generator (a
    runtime that seeds its own kernels from torch's generator even when nothing is random)."""

    def run(*args: Any) -> Any:
        torch.rand(1)
        return gm(*args)

    return run


def leaves_grad_disabled(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *global state after the call*. Runs the graph under no_grad and does not
    restore grad mode (a runtime wrapper that forgets its finally)."""

    def run(*args: Any) -> Any:
        torch.set_grad_enabled(False)
        return gm(*args)

    return run


_REUSED_BUFFERS: dict[int, list[torch.Tensor]] = {}


def reuses_output_buffers(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *independence across calls*. Results are copied into buffers allocated on
    the first call and returned again on every later call, as a static-memory runtime
    (CUDA-graph style) does: an earlier result changes when the function runs again."""
    key = id(gm)

    def run(*args: Any) -> Any:
        outputs = gm(*args)
        flat, spec = pytree.tree_flatten(outputs)
        buffers = _REUSED_BUFFERS.setdefault(key, [t.detach().clone() if isinstance(t, torch.Tensor) else t for t in flat])
        result = []
        for buffer, fresh in zip(buffers, flat):
            if isinstance(fresh, torch.Tensor) and not fresh.requires_grad and buffer.shape == fresh.shape:
                buffer.copy_(fresh)
                result.append(buffer)
            else:
                result.append(fresh)
        return pytree.tree_unflatten(result, spec)

    return run


_COMPILED_BY_CODE: dict[str, Callable] = {}


def caches_by_graph_code(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *changing inputs*. Compiled functions are cached by the graph's Python code
    alone and specialize on the first example inputs' dtypes, so a recompile for new dtypes
    (same code) gets the old function, which casts its inputs back."""
    code = gm.code
    if code not in _COMPILED_BY_CODE:
        dtypes = [arg.dtype if isinstance(arg, torch.Tensor) else None for arg in example_inputs]

        def run(*args: Any) -> Any:
            return gm(*[arg.to(dtype) if dtype is not None and isinstance(arg, torch.Tensor) else arg
                        for arg, dtype in zip(args, dtypes)])

        _COMPILED_BY_CODE[code] = run
    return _COMPILED_BY_CODE[code]


def _backward_scaled(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    def run(*args: Any) -> list[Any]:
        return [value * 1.1 if isinstance(value, torch.Tensor) and _floating(value) else value
                for value in gm(*args)]

    return make_boxed_func(run)


_aot_with_wrong_gradients = aot_autograd(fw_compiler=_backward_as_traced, bw_compiler=_backward_scaled)


def wrong_gradients(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *first-order gradients*. An AOTAutograd backend whose forward is right and
    whose backward graph's results are all 10% too large (a backward kernel bug)."""
    return _aot_with_wrong_gradients(gm, example_inputs)


def computes_in_bfloat16(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *output values, by precision*. Float32 inputs are rounded to bfloat16 for the
    computation and results cast back (a "fast math" mode left on): dtypes and shapes are
    right, values off by about 1%."""

    def lower(value: Any) -> Any:
        return value.to(torch.bfloat16) if isinstance(value, torch.Tensor) and value.dtype == torch.float32 else value

    def run(*args: Any) -> Any:
        outputs = gm(*[lower(arg) for arg in args])
        return _map_tensors(lambda t: t.float() if t.dtype == torch.bfloat16 else t, outputs)

    return run


_MEMO: dict[tuple, Any] = {}


def memoizes_on_shapes(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *results follow the input values*. Results are cached by graph and input
    shapes, as a cache keyed for shape-specialized kernels but storing outputs would."""

    def run(*args: Any) -> Any:
        key = (id(gm), *[tuple(arg.shape) if isinstance(arg, torch.Tensor) else arg for arg in args])
        if key not in _MEMO:
            _MEMO[key] = gm(*args)
        return _MEMO[key]

    return run


def writes_results_into_inputs(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *inputs are left alone*. A result with an input's shape and dtype is written
    into that input and the input returned, as a memory planner that believes inputs are
    dead after the call would do."""

    def reusable(arg: Any, out: torch.Tensor) -> bool:
        return (isinstance(arg, torch.Tensor) and not arg.requires_grad and arg.is_contiguous()
                and (arg.shape, arg.dtype) == (out.shape, out.dtype)
                and arg.untyped_storage().data_ptr() != out.untyped_storage().data_ptr())

    def run(*args: Any) -> Any:
        flat, spec = pytree.tree_flatten(gm(*args))
        results = []
        for out in flat:
            target = None
            if isinstance(out, torch.Tensor) and not out.requires_grad:
                target = next((arg for arg in args if reusable(arg, out)), None)
            if target is not None:
                target.copy_(out)
            results.append(out if target is None else target)
        return pytree.tree_unflatten(results, spec)

    return run


def runs_with_grad_enabled(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *the caller's grad mode applies*. The graph runs under enable_grad, so a call
    made under no_grad returns outputs that require grad (a runtime forcing training mode)."""

    def run(*args: Any) -> Any:
        with torch.enable_grad():
            return gm(*args)

    return run


# The aten reductions `perturbs_reductions` shifts; the quick tier's "reductions" ops are
# exactly the ones whose forward graph holds one of them.
PERTURBED_REDUCTIONS = {
    "sum", "mean", "amax", "amin", "prod", "std", "var", "logsumexp",
    "linalg_vector_norm", "norm",
}


def _perturb_reductions(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    for node in list(gm.graph.nodes):
        packet = getattr(node.target, "_overloadpacket", None)
        if node.op == "call_function" and packet is not None and packet.__name__ in PERTURBED_REDUCTIONS:
            with gm.graph.inserting_after(node):
                shifted = gm.graph.call_function(torch.ops.aten.add.Tensor, (node, 0.05))
            node.replace_all_uses_with(shifted, delete_user_cb=lambda user: user is not shifted)
    gm.recompile()
    return make_boxed_func(gm.forward)


_aot_perturbing_reductions = aot_autograd(fw_compiler=_perturb_reductions, bw_compiler=_backward_as_traced)


def perturbs_reductions(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *one operator family*. An AOTAutograd backend whose forward adds 0.05 to the
    result of every aten reduction in PERTURBED_REDUCTIONS (a bad reduction kernel); every
    other operator is compiled correctly."""
    return _aot_perturbing_reductions(gm, example_inputs)


def _first_inner_tensor(value: Any) -> Any:
    from torch.utils._python_dispatch import is_traceable_wrapper_subclass

    if isinstance(value, torch.Tensor) and is_traceable_wrapper_subclass(value):
        inner_names, _context = value.__tensor_flatten__()
        return getattr(value, inner_names[0])
    return value


def unwraps_subclasses(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *tensor subclasses survive compilation*. Each wrapper-subclass input is
    replaced by its first inner tensor before the graph runs (a runtime that only knows
    plain tensors): results come back plain, without autograd, and in-place updates reach
    one inner tensor only."""
    return lambda *args: gm(*[_first_inner_tensor(arg) for arg in args])


def replays_random_draws(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *random ops draw fresh numbers*. Every call runs from the same generator
    state, taken when the graph was compiled (a runtime seeding its kernels once): each call
    repeats the first call's dropout mask."""
    state = torch.get_rng_state()

    def run(*args: Any) -> Any:
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(state)
            return gm(*args)

    return run


def keeps_its_own_generator(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *the global generator drives random ops*. The graph draws from a private
    generator seeded at compile time and never from torch's global one: calls differ from
    each other, but ``torch.manual_seed`` no longer reproduces them."""
    state = [torch.Generator().manual_seed(int.from_bytes(os.urandom(4), "little")).get_state()]

    def run(*args: Any) -> Any:
        with torch.random.fork_rng(devices=[]):
            torch.set_rng_state(state[0])
            result = gm(*args)
            state[0] = torch.get_rng_state()
        return result

    return run


# -- what only real models exercise (test/harness/test_faulty_models.py) -------------------
#
# Each is an AOTAutograd backend (aot_eager's partitioner and input-mutation handling) that
# miscompiles one kind of ATen node of the forward graph and compiles the rest correctly.
# Where a fault fires it appends the running test's id to the file named by FIRED_LOG_ENV,
# so the self-test can require exactly those tests to fail.

FIRED_LOG_ENV = "DYNAMO_SUITE_FAULT_LOG"
BIG_GRAPH = 150  # ATen operators in a forward graph; the models' graphs are 100-800


def _fired() -> None:
    path = os.environ.get(FIRED_LOG_ENV)
    if path:
        with open(path, "a") as log:
            log.write(os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0] + "\n")


def _boxed(gm: torch.fx.GraphModule, altered: bool, outputs: Callable = lambda values: values) -> Callable:
    """The graph as a boxed forward; when the fault altered it, each call is logged and its
    outputs pass through ``outputs``."""
    forward = make_boxed_func(gm.forward)
    if not altered:
        return forward

    def run(args):
        _fired()
        return outputs(forward(args))

    run._boxed_call = True
    return run


def _packet_name(node: torch.fx.Node) -> str:
    packet = getattr(node.target, "_overloadpacket", None)
    return packet.__name__ if node.op == "call_function" and packet is not None else ""


def _first_results(node: torch.fx.Node) -> list[torch.fx.Node]:
    """The node itself, or for an operator returning several tensors its getitem(0) users."""
    if len(node.target._schema.returns) == 1:
        return [node]
    return [user for user in node.users if user.target is operator.getitem and user.args[1] == 0]


def _nudging(selects: Callable[[torch.fx.Node], bool]) -> Callable:
    """A forward compiler that scales the (first) result of every selected node by 1 + 5%."""

    def compile_forward(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
        results = [result for node in list(gm.graph.nodes) if selects(node) for result in _first_results(node)]
        for result in results:
            with gm.graph.inserting_after(result):
                nudged = gm.graph.call_function(torch.ops.aten.mul.Tensor, (result, 1 + _NUDGE))
            result.replace_all_uses_with(nudged, delete_user_cb=lambda user: user is not nudged)
        gm.recompile()
        return _boxed(gm, bool(results))

    return compile_forward


def _aot_with_forward(compile_forward: Callable) -> Callable:
    from functorch.compile import min_cut_rematerialization_partition

    return aot_autograd(fw_compiler=compile_forward, inference_compiler=compile_forward,
                        bw_compiler=_backward_as_traced, partition_fn=min_cut_rematerialization_partition,
                        keep_inference_input_mutations=True)


wrong_attention = _aot_with_forward(_nudging(lambda node: _packet_name(node).startswith("_scaled_dot_product")))
wrong_attention.__doc__ = """Breaks: *scaled_dot_product_attention*. Every fused attention kernel's output is 5%
too large (a bad attention kernel); the math decomposition AOTAutograd uses with dropout is
left alone."""

wrong_group_norm = _aot_with_forward(_nudging(lambda node: _packet_name(node) == "native_group_norm"))
wrong_group_norm.__doc__ = """Breaks: *group_norm*. Its normalized output is 5% too large."""

wrong_conv_transpose = _aot_with_forward(
    _nudging(lambda node: _packet_name(node) == "convolution" and bool(node.args[6])))
wrong_conv_transpose.__doc__ = """Breaks: *transposed convolution*. Its output is 5% too large;
ordinary convolutions are right."""


def _forward_without_batch_norm_stats(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    fired = False
    for node in list(gm.graph.nodes):
        if _packet_name(node) == "_native_batch_norm_legit_functional":
            # Results 3 and 4 are the updated running mean and variance; hand back the old ones.
            for user in list(node.users):
                if user.target is operator.getitem and user.args[1] in (3, 4):
                    user.replace_all_uses_with(node.args[3 if user.args[1] == 3 else 4])
                    fired = True
    gm.recompile()
    return _boxed(gm, fired)


skips_batch_norm_stats = _aot_with_forward(_forward_without_batch_norm_stats)
skips_batch_norm_stats.__doc__ = """Breaks: *buffer mutations of real modules*. BatchNorm's running
mean and variance are never updated in training (num_batches_tracked still is): outputs and
gradients are right, only the buffers are stale."""


def _output_nudger(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    big = sum(node.op == "call_function" for node in gm.graph.nodes) > BIG_GRAPH
    return _boxed(gm, big, lambda values: [_nudged(value) for value in values])


miscompiles_big_graphs = _aot_with_forward(_output_nudger)
miscompiles_big_graphs.__doc__ = f"""Breaks: *large graphs*. A forward graph of more than {BIG_GRAPH} ATen
operators gets every floating output (user outputs, buffer updates and the activations
saved for backward) shifted by 5%; smaller graphs are compiled correctly (a
register allocator or scheduler that only fails past some size)."""


# -- what a runner must contain (test/harness/test_isolation.py) ---------------------------

_RUNTIME_BROKEN = False  # per process, like a real runtime's global state


def _runtime_that_breaks(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    forward = make_boxed_func(gm.forward)

    def run(args):
        global _RUNTIME_BROKEN
        if _RUNTIME_BROKEN:
            raise RuntimeError("runtime error: semaphore already signaled")
        if any(isinstance(arg, torch.Tensor) and arg.dtype == torch.float64 for arg in args):
            _RUNTIME_BROKEN = True
            raise RuntimeError("float64 buffers are not supported by this runtime")
        return forward(args)

    run._boxed_call = True
    return run


def _breaks_after_float64() -> Callable:
    from functorch.compile import min_cut_rematerialization_partition

    # aot_eager's partitioner: the default one draws dropout masks unlike eager in training.
    return aot_autograd(fw_compiler=_runtime_that_breaks, bw_compiler=_runtime_that_breaks,
                        partition_fn=min_cut_rematerialization_partition, keep_inference_input_mutations=True)


breaks_after_float64 = _breaks_after_float64()
breaks_after_float64.__doc__ = """Breaks: *the process, for every later test*. Its runtime refuses
float64 inputs, and that refusal leaves it broken: every later call of any compiled graph in
the process raises (as a runtime whose error path forgets to release a semaphore would).
Alone, every graph without float64 inputs runs as captured."""


HANGING_OP = "trunc"  # 8 default-run scenarios compile a graph with aten.trunc


def _compiler_hanging_on_trunc(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    if any(_packet_name(node) == HANGING_OP for node in gm.graph.nodes):
        while True:  # a compiler stuck in a loop on one operator
            time.sleep(1)
    return make_boxed_func(gm.forward)


def _hangs_compiling_trunc() -> Callable:
    from functorch.compile import min_cut_rematerialization_partition

    return aot_autograd(fw_compiler=_compiler_hanging_on_trunc, bw_compiler=_compiler_hanging_on_trunc,
                        partition_fn=min_cut_rematerialization_partition, keep_inference_input_mutations=True)


hangs_compiling_trunc = _hangs_compiling_trunc()
hangs_compiling_trunc.__doc__ = f"""Breaks: *compiling finishes*. Compiling a graph that contains
aten.{HANGING_OP} never returns (a compiler stuck in a loop on one operator); every other
graph compiles as aot_eager's would."""


# -- faults on one axis only (harness/axes/variants.py): right under ``static``, wrong under the
# variant that gives the backend what it mishandles.


def bakes_in_first_sizes(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *graphs with symbolic sizes run at any size*. A graph whose inputs include
    sizes (SymInts: the graph was captured with dynamic shapes) is compiled for the sizes
    first seen, as a backend that generates code with its example inputs' sizes as
    constants: every later call receives those first sizes, whatever its tensors are.
    Graphs with static sizes compile as aot_eager's."""
    compiled = torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
    first = {index: int(value.node.hint) for index, value in enumerate(example_inputs)
             if isinstance(value, torch.SymInt) and value.node.hint is not None}
    if not first:
        return compiled

    def run(*args: Any) -> Any:
        return compiled(*[first.get(index, arg) for index, arg in enumerate(args)])

    return run


def wrong_compiled_autograd_backward(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *gradients computed by a backward graph that compiled autograd captured*.
    In a graph compiled while compiled autograd traces a backward, every gradient handed to
    a leaf's AccumulateGrad is 5% too large; every other graph (forwards, AOTAutograd's own
    backward graphs) compiles as aot_eager's."""
    from torch._dynamo import compiled_autograd

    if compiled_autograd.in_compiled_autograd_region:
        for node in list(gm.graph.nodes):
            if node.op == "call_function" and "AccumulateGrad" in getattr(node.target, "__name__", ""):
                with gm.graph.inserting_before(node):
                    grads = [gm.graph.call_function(operator.mul, (grad, 1 + _NUDGE)) if grad is not None else None
                             for grad in node.args[0]]
                node.args = (grads, *node.args[1:])
        gm.recompile()
    return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)


def forgets_to_cast_back_half(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *outputs keep eager's dtypes in half precision* (harness/axes/dtypes.py). A graph
    with a bfloat16 or float16 input is computed in float32, as accelerator compilers do for
    accuracy, and its floating outputs are returned as float32: the cast back to the input's
    precision is forgotten. Graphs without half inputs compile as aot_eager's."""
    compiled = torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
    half = (torch.bfloat16, torch.float16)
    if not any(isinstance(value, torch.Tensor) and value.dtype in half for value in example_inputs):
        return compiled

    def run(*args: Any) -> Any:
        return gm(*[arg.float() if isinstance(arg, torch.Tensor) and arg.dtype in half else arg for arg in args])

    return run


# -- silent eager fallback (harness/measure/eager_share.py): every result is right, so only the
# eager share shows that the backend's own runtime did not run the graph. Where they do
# compile, they compile with inductor.

_fallback_log = __import__("logging").getLogger("dynamo_suite.faulty_backends")


def _strict_converter(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """A converter to a runtime that supports nothing yet: it fails on every graph."""
    raise NotImplementedError(f"no conversion for {next(iter(gm.graph.nodes)).name}'s graph")


def swallows_errors_runs_eagerly(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *the backend runs what it received*. Its converter fails on every graph; the
    error is caught, logged at DEBUG level, and the graph runs with PyTorch's eager kernels,
    as a third-party backend's fallback does. Every result is right."""
    try:
        return _strict_converter(gm, example_inputs)
    except Exception as error:
        _fallback_log.debug("conversion failed, running the graph eagerly: %s", error)
        return gm.forward


def _has_symbolic_sizes(example_inputs: list[Any]) -> bool:
    return any(isinstance(value, torch.SymInt) or (isinstance(value, torch.Tensor) and any(
        isinstance(size, torch.SymInt) for size in value.shape)) for value in example_inputs)


def eager_for_symbolic_sizes(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *the backend runs graphs with symbolic sizes*. A graph whose inputs include
    sizes (captured with dynamic shapes) makes its converter fail, which it swallows and
    runs the graph eagerly; graphs with static sizes compile with inductor."""
    if not _has_symbolic_sizes(example_inputs):
        return torch._dynamo.lookup_backend("inductor")(gm, example_inputs)
    try:
        return _strict_converter(gm, example_inputs)
    except Exception as error:
        _fallback_log.debug("no symbolic sizes in this runtime, running the graph eagerly: %s", error)
        return gm.forward


EAGER_OP = torch.ops.aten.mul.Tensor  # the op one_op_eagerly's runtime has no kernel for


@torch.library.custom_op("suite_faulty::mul_eagerly", mutates_args=())
def _mul_eagerly(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.mul(a, b)


@torch.library.custom_op("suite_faulty::mul_scalar_eagerly", mutates_args=())
def _mul_scalar_eagerly(a: torch.Tensor, b: float) -> torch.Tensor:
    return torch.mul(a, b)


@_mul_eagerly.register_fake
def _(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.mul(a, b)


@_mul_scalar_eagerly.register_fake
def _(a: torch.Tensor, b: float) -> torch.Tensor:
    return torch.mul(a, b)


def _mul_in_eager_kernels(gm: torch.fx.GraphModule) -> None:
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target is not EAGER_OP or node.kwargs:
            continue
        if all(isinstance(arg, torch.fx.Node) for arg in node.args):
            node.target = torch.ops.suite_faulty.mul_eagerly.default
        elif isinstance(node.args[0], torch.fx.Node) and type(node.args[1]) in (int, float):
            node.target = torch.ops.suite_faulty.mul_scalar_eagerly.default
    gm.recompile()


def _inductor_except(gm: torch.fx.GraphModule, example_inputs: list[Any], inner: Callable) -> Callable:
    """Inductor, with ``inner(graph, inputs, compile_inner, **kwargs)`` in place of its inner
    compile of each forward and backward graph. Its caches are off: a graph inductor compiled
    before must not be reused."""
    from torch._inductor.compile_fx import compile_fx, compile_fx_inner

    with torch._functorch.config.patch(enable_autograd_cache=False), \
            torch._inductor.config.patch(fx_graph_cache=False):
        return compile_fx(gm, example_inputs, inner_compile=lambda graph, inputs, **kwargs: inner(
            graph, inputs, compile_fx_inner, **kwargs))


def _forward_mul_eagerly(graph: torch.fx.GraphModule, inputs: list[Any], compile_inner: Callable,
                         **kwargs: Any) -> Callable:
    if not kwargs.get("is_backward", False):
        _mul_in_eager_kernels(graph)
    return compile_inner(graph, inputs, **kwargs)


def one_op_eagerly(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *the backend runs every op of its graph*. Compiles with inductor, except that
    its partitioner declines aten.mul in forward graphs: each runs as a call into PyTorch's
    eager kernel."""
    return _inductor_except(gm, example_inputs, _forward_mul_eagerly)


def _backward_eagerly(graph: torch.fx.GraphModule, inputs: list[Any], compile_inner: Callable,
                      **kwargs: Any) -> Callable:
    if kwargs.get("is_backward", False):
        return make_boxed_func(graph.forward)
    return compile_inner(graph, inputs, **kwargs)


def backward_eagerly(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *the backend runs the backward of what it received*. Forward graphs compile
    with inductor; backward graphs, which its runtime cannot train yet, run with PyTorch's
    eager kernels, as an inference-first backend's do. Every gradient is right."""
    return _inductor_except(gm, example_inputs, _backward_eagerly)
