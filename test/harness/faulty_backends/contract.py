"""Faulty backends that each break one clause of the backend contract (see the table in
docs/checks.md). test/proofs/test_faulty_backends.py runs them against the scenario
families that must catch them; ``crashes_and_hangs``, which breaks *compiling returns*, is
what the runner must survive in test/harness/test_runner.py."""

from __future__ import annotations

import ctypes
import os
import signal
import time
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

from harness.features import views
from test.harness.faulty_backends._shared import _backward_as_traced, _nudged, retargeting

aten = torch.ops.aten


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


def leaves_subnormals_flushed(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *global state after the call*. Turns the CPU's flush-to-zero and
    denormals-are-zero flags on for its kernels and leaves them on (pytorch#136273's kind):
    every later eager result in the process loses its subnormal numbers."""

    def run(*args: Any) -> Any:
        torch.set_flush_denormal(True)
        return gm(*args)

    return run


def reuses_output_buffers(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *independence across calls*. Results are copied into buffers allocated on
    the first call and returned again on every later call, as a static-memory runtime
    (CUDA-graph style) does: an earlier result changes when the function runs again."""
    # Each compiled graph's own (keyed by id(gm) they were another test's once that graph
    # was gone and its id reused, and then of the wrong shapes: nothing reused).
    kept: list[list[Any]] = []

    def run(*args: Any) -> Any:
        outputs = gm(*args)
        flat, spec = pytree.tree_flatten(outputs)
        if not kept:
            kept.append([t.detach().clone() if isinstance(t, torch.Tensor) else t for t in flat])
        buffers = kept[0]
        result = []
        for buffer, fresh in zip(buffers, flat):
            if isinstance(fresh, torch.Tensor) and not fresh.requires_grad and buffer.shape == fresh.shape:
                buffer.copy_(fresh)
                result.append(buffer)
            else:
                result.append(fresh)
        return pytree.tree_unflatten(result, spec)

    return run


def _gradients_into_buffers(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    buffers: dict[int, torch.Tensor] = {}  # per position of the backward graph's outputs

    def run(args: list) -> list:
        result = []
        for position, gradient in enumerate(gm(*args)):
            if not isinstance(gradient, torch.Tensor):
                result.append(gradient)
                continue
            buffer = buffers.get(position)
            if buffer is None or (buffer.shape, buffer.stride(), buffer.dtype) != (
                    gradient.shape, gradient.stride(), gradient.dtype):
                buffer = buffers[position] = torch.empty_strided(gradient.shape, gradient.stride(),
                                                                 dtype=gradient.dtype, device=gradient.device)
            buffer.copy_(gradient)
            # A view: the engine takes a tensor nobody else holds for a leaf's .grad as it
            # is, so .backward()'s gradients are the buffers too, not only autograd.grad's.
            result.append(buffer.view(buffer.shape))
        return result

    run._boxed_call = True  # type: ignore[attr-defined]
    return run


_aot_reusing_gradient_buffers = aot_autograd(fw_compiler=_backward_as_traced, bw_compiler=_gradients_into_buffers)


def reuses_gradient_buffers(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *independence across calls, of gradients*. An AOTAutograd backend whose
    backward copies its results into buffers allocated on its first pass and returns those
    (views of them) on every pass, as a static-memory runtime (CUDA-graph style) does: each
    pass's gradients are right when it returns, and a gradient kept from an earlier pass
    (``torch.autograd.grad`` per micro-batch, a ``.grad`` taken off its leaf) becomes the
    latest one's."""
    return _aot_reusing_gradient_buffers(gm, example_inputs)


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


def keeps_detached_tensors(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *independence across calls* (memory let go of). Runs the graph as captured and
    keeps a detached alias of every tensor input and output of every call (a runtime caching
    buffers by call): the caller's tensor objects are freed, their memory never is."""
    kept: list[torch.Tensor] = []

    def run(*args: Any) -> Any:
        result = gm(*args)
        kept.extend(leaf.detach() for leaf in pytree.tree_leaves((args, result)) if isinstance(leaf, torch.Tensor))
        return result

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


def _at_default_options(op: Any) -> Callable | None:
    """``op`` called with each of its flags and modes (harness.features.views's options) at
    its schema's default, None if it has none."""
    flags = [(position, argument) for position, argument, kind in views.option_arguments(op)
             if kind in views.FLAG_TYPES and argument.has_default_value()]
    if not flags:
        return None

    def call(*args: Any, **kwargs: Any) -> Any:
        args = list(args)
        for position, argument in flags:
            if position < len(args):
                args[position] = argument.default_value
            elif argument.name in kwargs:
                kwargs[argument.name] = argument.default_value
        return op(*args, **kwargs)

    return call


_aot_at_default_options = aot_autograd(fw_compiler=retargeting(_at_default_options),
                                       bw_compiler=retargeting(_at_default_options))


def ignores_kernel_options(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *each operator over PyTorch's reference inputs* (its options). Every kernel
    runs the variant its schema's defaults choose, whatever flags the call sets: a backend
    that implements avg_pool2d counting its padding only, gelu without its tanh
    approximation, scatter_reduce always including self; right wherever a call leaves its
    flags at their defaults."""
    return _aot_at_default_options(gm, example_inputs)

# -- validation ----------------------------------------------------------------------------


def _clamped_target(p, target, *rest, **kwargs):
    return aten.binary_cross_entropy.default(p, target.clamp(0, 1), *rest, **kwargs)


def _any_beta(x, y, reduction=1, beta=1.0):
    return aten.smooth_l1_loss.default(x, y, reduction, abs(beta))


def _any_std(mean, std, *rest, **kwargs):
    return aten.normal.Tensor_Tensor(mean, std.abs(), *rest, **kwargs)


def _clamped_probabilities(p, *rest, **kwargs):
    return aten.bernoulli.default(p.clamp(0, 1), *rest, **kwargs)


def _wrapped_index(base, dim, index, source, alpha=1):
    return aten.index_add.default(base, dim, index % max(base.shape[dim] if base.dim() else 1, 1), source, alpha=alpha)


def _clamped_scatter(overload: Any) -> Callable:
    def scatter(base, dim, index, source, *rest, **kwargs):
        return overload(base, dim, index.clamp(0, max(base.shape[dim] - 1, 0) if base.dim() else 0), source, *rest,
                        **kwargs)

    return scatter


def _unchecked(*args: Any, **kwargs: Any) -> None:
    return None


_MADE_DO = {
    aten.scatter.src: _clamped_scatter(aten.scatter.src),
    aten.scatter.value: _clamped_scatter(aten.scatter.value),
    aten.binary_cross_entropy.default: _clamped_target,
    aten.smooth_l1_loss.default: _any_beta,
    aten.bernoulli.default: _clamped_probabilities,
    aten.normal.Tensor_Tensor: _any_std,
    aten.index_add.default: _wrapped_index,
    # The runtime asserts a graph carries (torch._check on a value read with .item(),
    # torch._assert_async) made no-ops.
    aten._assert_scalar.default: _unchecked,
    aten._assert_async.default: _unchecked,
    aten._assert_async.msg: _unchecked,
}
_aot_skipping_validation = aot_autograd(fw_compiler=retargeting(_MADE_DO.get), bw_compiler=_backward_as_traced,
                                        keep_inference_input_mutations=True)


def skips_validation(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *errors eager raises on bad input, the compiled code
raises*. Kernels that skip eager's check on the data and make do: binary_cross_entropy clamps
its targets into [0, 1], smooth_l1_loss takes a negative beta as positive, normal a negative
standard deviation, bernoulli clamps its probabilities, index_add wraps a negative index,
scatter clamps its indices into range, and the graph's runtime asserts (a torch._check on data, torch._assert_async) do nothing; right on
every value eager accepts."""
    return _aot_skipping_validation(gm, example_inputs)


def raises_when_run(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *errors eager raises on bad input, the compiled code raises* (eager's error,
not any). Compiles every graph, and every call of the compiled code raises AssertionError,
whatever the inputs: a check that accepts any exception from a compiled call, or that never
calls compiled code on the values eager rejects, passes it."""

    def run(*args: Any) -> Any:
        raise AssertionError("raises_when_run: the compiled code always raises")

    return run


_aot_as_traced = aot_autograd(fw_compiler=_backward_as_traced, bw_compiler=_backward_as_traced)


def _recompiling() -> bool:
    from torch._guards import CompileContext

    compile_id = CompileContext.current_compile_id()
    return compile_id is not None and compile_id.frame_compile_id > 0


def fails_recompiles(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *errors eager raises on bad input, the compiled code raises* (eager's error,
not any). aot_eager's compile for a function's first graph; every recompile of a function
(new guards: new sizes, dtypes, a Python number's new value) fails with an unrelated
RuntimeError. Right on every call a first graph serves: a check whose bad values recompile
and that accepts any exception passes it."""
    if _recompiling():
        raise RuntimeError("fails_recompiles: unsupported graph")
    return _aot_as_traced(gm, example_inputs)
