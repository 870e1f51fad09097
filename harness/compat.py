"""Everything the suite knows about differences between torch versions.

Tests and the rest of the harness never compare version numbers themselves: they ask this
module for the object, name or message that fits the torch being run. When a new torch
release moves something, this is the one file to change. It is also the only module of the
harness that names torch's private API (``torch._dynamo``, ``torch._C``, ``torch._ops``...),
since that is what moves between releases (test/harness/test_layout.py checks it).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import re
import sys
from typing import Any, Callable, Iterable

import torch
from packaging.version import Version

MINIMUM_TORCH = Version("2.9")


def torch_version() -> Version:
    """The running torch's version without its local tag (``2.13.0+cpu`` -> ``2.13.0``)."""
    return Version(torch.__version__.split("+")[0])


TORCH_VERSION = torch_version()


# ---------------------------------------------------------------------------------------
# Backend registry. torch keeps registered names in two dicts: names that are known (some
# only as unloaded entry points) and names whose compiler function is loaded.


def _registry():
    return importlib.import_module("torch._dynamo.backends.registry")


def registered_backend_names() -> list[str]:
    """Every name torch.compile accepts, entry points and debug backends included."""
    return sorted(torch._dynamo.list_backends(exclude_tags=()))


def lookup_backend(name: str) -> Callable:
    """The compiler function registered under ``name`` right now."""
    return _registry().lookup_backend(name)


# Backends torch.compile wraps in its own option handler when given by name (torch/__init__.py).
OPTION_WRAPPED_BACKENDS = ("inductor",)


def with_options(backend: Any, kwargs: dict[str, Any]) -> Callable:
    """``backend`` (a compiler callable or a registered name) as ``torch.compile(...,
    backend=backend, **kwargs)`` would call it. torch hands a backend ``mode`` and ``options``
    as keyword arguments, only when given; inductor, by name, instead goes through torch's
    option wrapper, which turns them into configuration patches and refuses unknown ones."""
    if isinstance(backend, str):
        if kwargs and backend in OPTION_WRAPPED_BACKENDS:
            return torch._TorchCompileInductorWrapper(kwargs.get("mode"), kwargs.get("options"), None)
        backend = lookup_backend(backend)
    return functools.partial(backend, **kwargs) if kwargs else backend


def replace_registered_backend(name: str, compiler_fn: Callable) -> None:
    """Register ``compiler_fn`` as ``name``, replacing a backend already registered so.

    torch's own ``register_backend`` refuses duplicate names; a backend author who wants
    the suite's ``aot_eager`` to mean their build of it needs the replacement.
    """
    registry = _registry()
    registry._lazy_import()
    registry._COMPILER_FNS.pop(name, None)
    registry._BACKENDS.pop(name, None)
    # torch's register_backend overwrites the function's tags; keeping them lets a caller
    # put back the backend it replaced exactly as it was (aot_eager is tagged "debug").
    registry.register_backend(compiler_fn=compiler_fn, name=name, tags=getattr(compiler_fn, "_tags", ()))


# ---------------------------------------------------------------------------------------
# Dynamo state.


def warm_inductor_toolchain() -> None:
    """Probe which vector instruction sets g++ and this CPU support, as inductor's first CPU
    compile does (the probes' programs land in inductor's cache on disk); nothing where the
    probe lives elsewhere."""
    try:
        pick_vec_isa = importlib.import_module("torch._inductor.cpu_vec_isa").pick_vec_isa
    except (ImportError, AttributeError):
        return
    pick_vec_isa()


def compiled_autograd(compile_backward: Callable[[Any], Any]):
    """A context in which every ``backward()`` is captured by compiled autograd and its graph
    handed to ``compile_backward`` (a GraphModule -> callable). The entry point is private on
    every supported torch (2.9-2.14: ``torch._dynamo.compiled_autograd._enable``); the public
    switch, ``torch._dynamo.config.compiled_autograd``, only captures a backward that runs
    inside the compiled function."""
    return importlib.import_module("torch._dynamo.compiled_autograd")._enable(compile_backward)


def compiled_autograd_active() -> bool:
    """Whether a backward run now would be captured by compiled autograd (the module flag
    ``compiled_autograd_enabled``, 2.9-2.14), which traces Python autograd hooks into its graph."""
    module = sys.modules.get("torch._dynamo.compiled_autograd")
    return bool(getattr(module, "compiled_autograd_enabled", False) or getattr(module, "in_compiled_autograd_region", False))


def autocast_enabled() -> bool:
    """Whether autocast is on for the CPU or CUDA (``torch.is_autocast_enabled(device_type)``
    takes a device from 2.4 on; without one it means CUDA)."""
    return any(torch.is_autocast_enabled(device) for device in ("cpu", "cuda"))


# The node of a compiled autograd graph that runs an AOTAutograd backward (2.9-2.14 inline
# it through this prologue; earlier, the whole CompiledFunctionBackward node appears).
_AOT_BACKWARD_IN_COMPILED_AUTOGRAD = ("call_aot_bwd_prologue", "CompiledFunctionBackward")


def runs_backward_of_compiled_code(graph: Any) -> bool:
    """Whether a graph compiled autograd captured runs the backward of AOTAutograd-compiled code."""
    return any(any(marker in getattr(node.target, "__name__", str(node.target))
                   for marker in _AOT_BACKWARD_IN_COMPILED_AUTOGRAD)
               for node in graph.graph.nodes if node.op == "call_function")


def example_value(value: Any) -> Any:
    """A SymInt, SymFloat or SymBool's example value, read without adding a guard (reading it
    as ``int()`` would specialize the symbol in Dynamo's shape environment): ``node.hint``,
    2.9-2.14; None for an unbacked symbol. Any other value as it is."""
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return value.node.hint
    return value


def size_hints(shape_env: Any) -> dict:
    """A ShapeEnv's backed size symbols and their values (``backed_var_to_val`` from 2.13,
    ``var_to_val`` before, deprecated since)."""
    return getattr(shape_env, "backed_var_to_val", None) or shape_env.var_to_val


def exception_chain(error: BaseException) -> list[BaseException]:
    """``error`` and what it wraps (its cause, or the exception it was raised handling): Dynamo
    wraps an exception a traced call raises (TorchRuntimeError, its class and message
    changing between versions) and keeps the original as the cause."""
    chain: list[BaseException] = []
    while error is not None and error not in chain:
        chain.append(error)
        error = error.__cause__ or error.__context__
    return chain


def reset_dynamo() -> None:
    # torch._dynamo.test_case.reset is gone on 2.14; the public reset does the same job.
    torch._dynamo.reset()


def dynamo_config_patch(**values: Any):
    """A context (also a decorator) in which Dynamo's config has ``values``; an unknown key raises."""
    return torch._dynamo.config.patch(**values)


def recompiles_allowed(count: int):
    """A context in which Dynamo compiles a function at least ``count`` times before it gives
    up and runs it eagerly: per guard set (``recompile_limit``) and in all
    (``accumulated_recompile_limit``, 256 by default)."""
    config = torch._dynamo.config
    names = [name for name in ("recompile_limit", "accumulated_recompile_limit") if hasattr(config, name)]
    return config.patch(**{name: max(count, getattr(config, name)) for name in names})


def recompiles_refused():
    """A context in which a call that would compile its function anew raises instead
    (``refused_recompile`` tells that error): a call inside it runs the code compiled before,
    or nothing."""
    return torch.compiler.set_stance("fail_on_recompile")


_RECOMPILE_REFUSED = re.compile(r"Detected recompile when torch\.compile stance is 'fail_on_recompile'")


def refused_recompile(error: BaseException) -> bool:
    """Whether ``error`` is ``recompiles_refused``'s: the call needed a new graph."""
    return isinstance(error, RuntimeError) and _RECOMPILE_REFUSED.search(str(error)) is not None


# How a runtime assert names a value the graph read from the data (``x.item()``) when its
# message is the checked condition (inductor's, which drops torch._check's own message): an
# unbacked symbol, ``u0 <= 3``.
UNBACKED_SYMBOL = r"u\d+"


def dynamo_config_value(name: str) -> Any:
    """The current value of one of Dynamo's config keys (``assume_static_by_default``)."""
    return getattr(torch._dynamo.config, name)


def dynamo_disable(fn: Callable) -> Callable:
    """``fn``, run eagerly even when called from code Dynamo compiles (a graph break around it)."""
    return torch._dynamo.disable(fn)


# Dynamo wraps every fused optimizer kernel (torch.optim's _fused_adam, _fused_sgd...) in
# torch.compiler.disable ("don't trace into fused optimizer", torch/_dynamo/eval_frame.py):
# a compiled step of a fused optimizer runs eagerly and hands the backend no graph.
FUSED_OPTIMIZERS_RUN_EAGERLY = ("Dynamo does not trace fused optimizers (torch.compiler.disable on "
                                "torch.optim's _fused_* kernels): the compiled step runs them eagerly")


def guard_kinds() -> list[str]:
    """The kinds of guard this Dynamo can install: ``GuardBuilder``'s upper-case methods
    (``TENSOR_MATCH``, ``CONSTANT_MATCH``...), a list that changes between releases."""
    builder = importlib.import_module("torch._dynamo.guards").GuardBuilder
    return sorted(name for name, value in vars(builder).items() if name.isupper() and callable(value))


@contextlib.contextmanager
def guard_kinds_called(disabled: Iterable[str] = ()):
    """A context that yields the set of guard kinds Dynamo builds guards with inside it, the
    ones a kind delegates to included (``CONSTANT_MATCH`` builds a bool as ``BOOL_MATCH``).
    Guards of the ``disabled`` kinds are not built at all: how a self-test plays a Dynamo
    that lost a kind of guard."""
    disabled = frozenset(disabled)
    builder = importlib.import_module("torch._dynamo.guards").GuardBuilder
    guard_class = importlib.import_module("torch._guards").Guard
    called: set[str] = set()
    originals = {name: vars(builder)[name] for name in guard_kinds()}
    original_create = guard_class.create

    def recording(name: str, method: Callable) -> Callable:
        @functools.wraps(method)
        def build(self, *args: Any, **kwargs: Any) -> Any:
            called.add(name)
            return None if name in disabled else method(self, *args, **kwargs)
        return build

    # Guards are built through both doors: Guard.create calls the kind a guard was made
    # with (some modules hold a kind they looked up at import), and kinds call one another.
    def create(guard: Any, builder_: Any) -> Any:
        name = guard.create_fn_name()
        called.add(name)
        return None if name in disabled else original_create(guard, builder_)

    try:
        for name, method in originals.items():
            setattr(builder, name, recording(name, method))
        guard_class.create = create
        yield called
    finally:
        guard_class.create = original_create
        for name, method in originals.items():
            setattr(builder, name, method)


def guard_failure_store() -> dict[Any, list[str]]:
    """The dict in which Dynamo appends the reason of every guard failure, per code object."""
    return importlib.import_module("torch._dynamo.utils").guard_failures


def dynamo_counters() -> dict[str, Any]:
    return importlib.import_module("torch._dynamo.utils").counters


def dynamo_metrics() -> dict[str, int]:
    """What Dynamo did since its counters were last cleared: frames compiled, graphs
    captured, graph breaks. (Recompiles are counted from guard failures by the caller.)"""
    counters = dynamo_counters()
    return {
        "frames": int(counters["frames"].get("ok", 0)),
        "graphs": int(counters["stats"].get("unique_graphs", 0)),
        "graph_breaks": int(sum(counters["graph_break"].values())),
    }


# Timers Dynamo keeps: compiling a frame (tracing and the backend's compiler), and compiling
# a backward that AOTAutograd left for the first backward() call.
_COMPILE_TIMERS = ("_compile.compile_inner", "backward._backward_impl")


# Functions on the stack while a backend compiles: Dynamo handing it a graph, and
# AOTAutograd compiling the backward lazily at the first backward() (get_or_compile from
# 2.10; older releases compile it inside _backward_impl, which also runs it, so a hang
# there cannot be told from one in the compiled backward).
COMPILE_FRAMES = ("call_user_compiler", "_call_user_compiler", "get_or_compile")


def compile_seconds() -> float:
    """Seconds spent compiling since Dynamo's last reset; 0 where this torch keeps no record."""
    metrics = getattr(importlib.import_module("torch._dynamo.utils"), "compilation_time_metrics", {})
    return float(sum(sum(metrics.get(timer, ())) for timer in _COMPILE_TIMERS))


# The config modules whose values a test may patch and must leave as found.
CONFIG_MODULES = (
    "torch._dynamo.config",
    "torch._functorch.config",
    "torch._inductor.config",
    "torch.fx.experimental._config",
)


def loaded_config_modules() -> dict[str, Any]:
    """Config modules already imported (snapshotting must not import inductor on its own)."""
    import sys

    return {name: sys.modules[name] for name in CONFIG_MODULES if name in sys.modules}


def config_values(module: Any) -> dict[str, Any]:
    return module.get_config_copy()


def restore_config_values(module: Any, values: dict[str, Any]) -> None:
    module.load_config(values)


# ---------------------------------------------------------------------------------------
# Operators, dispatch and tensors: what a graph's call targets are, and what the eager-share
# measurement and the generated programs ask of a tensor.


def is_op_overload(target: Any) -> bool:
    """Whether a graph node's call target is one overload of an operator (``aten.mul.Tensor``)."""
    return isinstance(target, torch._ops.OpOverload)


def is_op_overload_packet(target: Any) -> bool:
    """Whether a graph node's call target is an operator with all its overloads (``aten.mul``)."""
    return isinstance(target, torch._ops.OpOverloadPacket)


def operator_types() -> tuple[type, ...]:
    """The types of operators: values whose identity is all there is to them
    (harness/checks/observations/python_world.py)."""
    return (torch._ops.OpOverload, torch._ops.OpOverloadPacket)


def is_compiled_module(value: Any) -> bool:
    """Whether ``value`` is what ``torch.compile(module)`` returns."""
    return isinstance(value, torch._dynamo.eval_frame.OptimizedModule)


def control_flow_operator(name: str) -> Callable | None:
    """torch's ``while_loop``, ``scan`` or ``map`` control-flow operator (private modules of
    torch._higher_order_ops on 2.9-2.14; torch.cond is public), or None where this torch has
    none by that name."""
    module = getattr(torch, "_higher_order_ops", None)
    found = getattr(module, name, None)
    return getattr(found, name, found) if found is not None and not callable(found) else found


def tensor_hook_operator() -> Callable | None:
    """The operator Dynamo puts in its graph for ``y.register_hook(fn)`` on an intermediate
    (torch 2.13: the ``register_hook`` higher-order operator, whose trace registers the hook on
    the traced tensor; its first argument is that tensor), or None where this torch has none
    (an older one breaks the graph there, or keeps such hooks for compiled autograd)."""
    try:
        return importlib.import_module("torch._higher_order_ops.register_hook").register_hook_op
    except (ImportError, AttributeError):
        return None


def is_higher_order_op(target: Any) -> bool:
    """Whether ``target`` is a higher-order operator (``wrap``, ``cond``, checkpoint...)."""
    return isinstance(target, torch._ops.HigherOrderOperator)


def is_grad_mode_switch(target: Any) -> bool:
    """Whether a graph node's call target switches grad mode (Dynamo puts
    ``torch._C._set_grad_enabled`` in a graph for ``torch.no_grad()`` inside it)."""
    return target is torch._C._set_grad_enabled


def dispatch_keys(tensor: torch.Tensor) -> Any:
    """The dispatch key set of ``tensor`` (a ``DispatchKeySet``: ``|`` and ``&`` combine them)."""
    return torch._C._dispatch_keys(tensor)


def dispatch_keys_below_python() -> Any:
    """Every dispatch key after ``Python`` except ``PythonDispatcher``: redispatching an op
    with a tensor's keys masked by this runs its kernel past every Python mode."""
    below = torch._C._dispatch_keyset_full_after(torch._C.DispatchKey.Python)
    return below.remove(torch._C.DispatchKey.PythonDispatcher)


def no_internal_overlap(tensor: torch.Tensor) -> bool:
    """Whether torch can tell that no two elements of ``tensor`` share memory (an expanded or
    unfolded tensor has some; a layout too hard to tell counts as overlapping)."""
    return torch._debug_has_internal_overlap(tensor) == 0


def python_modes_active() -> bool:
    """Whether a TorchDispatchMode or a TorchFunctionMode is on the stack (tracing, fake
    tensors, a mode a test counts operators with): an operator the harness runs then would be
    seen by it. The mode ``torch.set_default_device`` pushes does not count: it only places
    new tensors, and it stays on for the rest of a process once set."""
    if torch._C._len_torch_dispatch_stack() > 0:
        return True
    if torch._C._len_torch_function_stack() == 0:
        return False
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils._device import DeviceContext

    return any(not isinstance(mode, DeviceContext) for mode in _get_current_function_mode_stack())


def functorch_wrapped(tensor: torch.Tensor) -> bool:
    """Whether ``tensor`` is a transform's wrapper (vmap's batched tensor, grad's level)."""
    return torch._C._functorch.is_functorch_wrapped_tensor(tensor)


def backward_pass_entry() -> tuple[Any, str]:
    """The module and name of the function through which both ``torch.autograd.backward``
    (``Tensor.backward`` included) and ``torch.autograd.grad`` hand a backward pass to the
    engine, looked up there on each call (2.3 to 2.14): patched there, every pass is seen,
    while Dynamo still finds ``torch.autograd.grad`` the object its rules name."""
    return torch.autograd, "_engine_run_backward"


def pop_torch_function_mode() -> None:
    """Take the innermost TorchFunctionMode off the stack (one a test entered and never left)."""
    torch._C._pop_torch_function_stack()


def functorch_transforms() -> tuple[str, ...]:
    """The functorch transforms open on this thread, outermost first (``Grad``, ``Vmap``...)."""
    return tuple(str(interpreter.key()).rsplit(".", 1)[-1]
                 for interpreter in torch._C._functorch.get_interpreter_stack() or ())


def pop_functorch_transform() -> None:
    """Leave the innermost functorch transform (one a raising backend left open: every later
    tensor op is then traced by it, and Dynamo runs every later scenario eagerly)."""
    functorch = torch._C._functorch
    innermost = functorch_transforms()[-1]
    {"Grad": functorch._grad_decrement_nesting, "Vmap": functorch._vmap_decrement_nesting,
     "Jvp": functorch._jvp_decrement_nesting, "Functionalize": functorch._func_decrement_nesting}[innermost]()


# ---------------------------------------------------------------------------------------
# Guard-failure reasons. Dynamo's wording of a reason stays put across releases; what
# changes is the decoration around it, which normalization strips.

_REASON_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = (
    # 2.14 appends the user's stack below the reason.
    (re.compile(r"\nUser stack trace:.*", re.S), ""),
    # Some releases append the source line that installed the guard as a comment.
    (re.compile(r"[ \t]+#[^\n]*"), ""),
    # Compile id prefix: "0/0: ", "[0/1] ", "1/0_1: ".
    (re.compile(r"^\s*\[?\d+/\d+(?:_\d+)?\]?:?\s*", re.M), ""),
    # Older releases spell locals as L['x'] (and globals as G['x']).
    (re.compile(r"\b[LG]\[['\"]([^'\"]+)['\"]\]"), r"\1"),
    (re.compile(r"[ \t]+"), " "),
)


def normalize_source_fn_name(name: str) -> str:
    """The name in a node's ``source_fn_stack`` without Dynamo's module-attribute prefix.

    torch 2.9 records the module attribute that was called (``l__self___fc``); later
    versions inline nn modules and record the function (``linear``). Scenarios accept
    either, so the prefix goes.
    """
    return re.sub(r"^[lL]__self___", "", name)


def normalize_guard_reason(reason: str) -> str:
    for pattern, replacement in _REASON_REWRITES:
        reason = pattern.sub(replacement, reason)
    return reason.strip()


# ---------------------------------------------------------------------------------------
# Error messages, by their stable core.

DOUBLE_BACKWARD_ERROR = r"torch\.compile with aot_autograd does not currently support double backward"
ONCE_DIFFERENTIABLE_ERROR = r"trying to differentiate twice a function that was marked with @once_differentiable"
DATA_PTR_ERROR = r"Cannot access data pointer of Tensor"
LEAF_INPLACE_ERROR = r"a leaf Variable that requires grad is being used in an in-place operation"
DONATED_BUFFER_RETAIN_ERROR = r"compiled with non-empty donated buffers which requires create_graph=False and retain_graph=False"

# The logger on which AOTAutograd reports the compiled graph's metadata, including the
# indices of backward inputs it donates.
AOT_GRAPH_COMPILE_LOGGER = "torch._functorch._aot_autograd.graph_compile"
DONATED_INDICES = re.compile(r"bw_donated_idxs=\[([0-9, ]*)\]")


# ---------------------------------------------------------------------------------------
# AOTAutograd internals the machinery scenarios drive directly.


def aot_export_function() -> Callable:
    return importlib.import_module("torch._functorch.aot_autograd")._aot_export_function


def create_functional_call() -> Callable:
    return importlib.import_module("torch._functorch.aot_autograd").create_functional_call


def aot_export_joint_simple() -> Callable:
    return importlib.import_module("torch._functorch.aot_autograd").aot_export_joint_simple


def aot_module_simplified() -> Callable:
    return importlib.import_module("torch._functorch.aot_autograd").aot_module_simplified


def aot_export_module() -> Callable:
    return importlib.import_module("torch._functorch.aot_autograd").aot_export_module


def min_cut_partition() -> Callable:
    # Looked up on each call (not imported once) so a test can stand in a patched one.
    return importlib.import_module("torch._functorch.partitioners").min_cut_rematerialization_partition


def default_partition() -> Callable:
    return importlib.import_module("torch._functorch.partitioners").default_partition


def fx_minifier() -> Callable:
    """PyTorch's FX minifier, ``minifier(graph, inputs, fails, dump_state=..., skip_offload=...)``."""
    return importlib.import_module("torch._functorch.fx_minifier").minifier


def setup_stacktrace_preservation_hooks() -> Callable:
    return importlib.import_module("torch._functorch.aot_autograd").setup_stacktrace_preservation_hooks


def detect_fake_mode(inputs: Iterable[Any]):
    return importlib.import_module("torch._dynamo.utils").detect_fake_mode(inputs)


def storage_overlap_guard_type() -> type:
    return importlib.import_module("torch._guards").StorageOverlap


def current_aot_autograd_guards() -> list[Any]:
    """The live list AOTAutograd appends its guards to during the compile in progress."""
    tracing = importlib.import_module("torch._guards").TracingContext.get()
    return tracing.guards_context.aotautograd_guards


def current_shape_env_guards() -> list[str]:
    """The live list of ShapeEnv guard sources of the compile in progress."""
    return importlib.import_module("torch._guards").CompileContext.get().shape_env_guards


def cpu_allocations(profiler: Any) -> list[tuple[int, int, int]]:
    """(time in ns, address, bytes: negative for a free) of each CPU allocation and free that
    a finished ``torch.profiler.profile(profile_memory=True)`` recorded, in order. The
    addresses come from the profiler's event tree, which torch marks experimental."""
    from torch._C._profiler import _EventType

    found = []
    pending = list(profiler.profiler.kineto_results.experimental_event_tree())
    while pending:
        node = pending.pop()
        pending.extend(node.children)
        if node.tag == _EventType.Allocation and node.extra_fields.device.type == "cpu":
            found.append((node.start_time_ns, node.extra_fields.ptr, node.extra_fields.alloc_size))
    return sorted(found)


def storage_alive(tensor: torch.Tensor) -> Callable[[], bool]:
    """Whether ``tensor``'s memory (its storage, not the Python tensor object) is still held
    by anyone: a detached copy or a view kept elsewhere keeps it alive. A weak reference to
    the storage itself, the one torch.multiprocessing keeps (StorageWeakRef, unchanged from
    2.9 to 2.14); a Python weakref to ``untyped_storage()`` would follow the wrapper object,
    which torch may keep or drop on its own."""
    from torch.multiprocessing.reductions import StorageWeakRef

    ref = StorageWeakRef(tensor.untyped_storage())
    return lambda: not ref.expired()


def scoped_library(namespace: str, kind: str = "FRAGMENT"):
    return torch.library._scoped_library(namespace, kind)


def dynamo_export(fn: Callable, *args: Any):
    """Run ``torch._dynamo.export`` and return the captured graph module."""
    graph_module, _guards = torch._dynamo.export(fn)(*args)
    return graph_module


def onednn_has_bfloat16() -> bool:
    """Whether oneDNN runs bfloat16 kernels on this CPU (AVX512-BF16 or AMX): without them
    some of its primitives, the LSTM's among them, cannot be created in bfloat16."""
    probe = getattr(getattr(torch.ops, "mkldnn", None), "_is_mkldnn_bf16_supported", None)
    try:
        return bool(probe()) if probe is not None else True
    except RuntimeError:
        return False


def cpu_vec_isa() -> str:
    """The vector instructions inductor generates CPU code for here: ``avx512``, ``avx2``,
    ``neon``..., or ``none`` (ATEN_CPU_CAPABILITY=default, or a CPU it cannot vectorize for)."""
    from torch._inductor import cpu_vec_isa as vec_isa

    picked = vec_isa.pick_vec_isa()
    return str(picked).split()[0].lower() if picked else "none"


def rnn_tracing_config():
    """Dynamo skips nn.RNN/LSTM/GRU (runs them eagerly) unless this is enabled."""
    return dynamo_config_patch(allow_rnn=True)


def _config_if_present(config: Any, values: dict[str, Any]):
    import contextlib

    present = {key: value for key, value in values.items() if hasattr(config, key)}
    return config.patch(**present) if present else contextlib.nullcontext()


def dynamo_config_if_present(**values: Any):
    """Patch Dynamo config keys this torch has; keys it lacks are left out.

    For switches that newer releases added (``trace_autograd_ops``): on an older torch the
    scenario runs with that release's default behaviour.
    """
    return _config_if_present(torch._dynamo.config, values)


def functorch_config_if_present(**values: Any):
    """The same for AOTAutograd's config (``check_custom_op_aliasing`` is newer than 2.9)."""
    return _config_if_present(importlib.import_module("torch._functorch.config"), values)


def fresh_compilation(inner=None):
    """A context in which compiled artifacts are neither loaded from nor saved to caches
    (the FX graph cache and AOTAutograd's cache), around the optional context ``inner``."""
    import contextlib

    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    stack = contextlib.ExitStack()
    stack.enter_context(inductor_config.patch(fx_graph_cache=False, fx_graph_remote_cache=False))
    switches = {key: False for key in ("enable_autograd_cache", "enable_remote_autograd_cache")
                if hasattr(functorch_config, key)}
    stack.enter_context(functorch_config.patch(**switches))
    if inner is not None:
        stack.enter_context(inner)
    return stack


def random_ops_as_in_eager():
    """Random operators drawn from torch's generator, as eager draws them, so a compiled
    training step with dropout can be compared with eager's (PyTorch's accuracy runs do the
    same). Only inductor has a switch for it; other backends already call the ATen ops."""
    import torch._inductor.config as inductor_config

    return _config_if_present(inductor_config, {"fallback_random": True})


# torchvision's Python-side registrations that fail when its C++ operators did not load.
_TORCHVISION_OPERATORS_NEEDED_AT_IMPORT = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
)
_torchvision_library = None


def import_torchvision():
    """``import torchvision``, also where its C++ extension cannot load.

    PyPI's torchvision is built against CUDA torch; beside a CPU torch its extension fails to
    load and ``import torchvision`` then dies registering fake kernels for operators that do
    not exist ("operator torchvision::nms does not exist"). The models need none of those
    operators, so they are declared without kernels (calling one raises) and the import is
    tried again. A torchvision whose extension loads is imported as it is.
    """
    global _torchvision_library
    import sys

    try:
        import torchvision
    except RuntimeError as error:
        if "torchvision::" not in str(error) or _torchvision_library is not None:
            raise
        for name in [name for name in sys.modules if name.split(".")[0] == "torchvision"]:
            del sys.modules[name]
        _torchvision_library = torch.library.Library("torchvision", "FRAGMENT")
        for schema in _TORCHVISION_OPERATORS_NEEDED_AT_IMPORT:
            _torchvision_library.define(schema)
        import torchvision
    return torchvision


def opinfo_database() -> list:
    """PyTorch's OpInfo database (``op_db``), its sample generators made cheap to start.

    Each ``sample_inputs``/``reference_inputs`` call of torch.testing looks for the running
    unittest test with ``inspect.stack()``, which reads the source of every frame: 70 ms a call
    under the runner's deep stacks, 7 of the 9 s the first-samples tests took on aot_eager
    (2026-12-07). The same search walks the frames here without reading any source.
    """
    from torch.testing._internal import common_utils
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.opinfo import core

    if hasattr(common_utils, "extract_test_fn"):
        common_utils.extract_test_fn = _running_test_function
    if hasattr(core, "extract_test_fn"):
        core.extract_test_fn = _running_test_function
    return op_db


def _running_test_function() -> Callable | None:
    """The function of the unittest test whose frame is on the stack (innermost first), or None."""
    import unittest

    frame = sys._getframe(1)
    while frame is not None:
        case = frame.f_locals.get("self")
        if isinstance(case, unittest.TestCase):
            *_, class_name, name = case.id().rsplit(".", 2)
            if class_name == type(case).__name__ and name.startswith("test"):
                return getattr(getattr(case, name, None), "__func__", None)
        frame = frame.f_back
    return None


def out_of_tree_device_count(device_type: str) -> int | None:
    """How many devices of ``device_type`` its package sees here, for a device whose package
    registers no ``torch.<type>`` runtime module (so ``torch.get_device_module`` refuses it);
    None for any other type. torch_xla 2.9 is one: it registers the ``xla`` device, not the
    module (``PJRT_DEVICE=CPU`` gives one XLA device on the CPU)."""
    if device_type != "xla":
        return None
    try:
        import torch_xla.runtime as xla_runtime
    except ImportError:
        return None
    return int(xla_runtime.global_runtime_device_count())


def out_of_tree_synchronize(device_type: str) -> Callable[[], None] | None:
    """What waits for the work queued on a device whose package registers no ``torch.<type>``
    module; None for any other type. torch_xla's tensors are lazy: a step only runs when it
    is synced, so a timing without this measures the tracing alone."""
    if device_type != "xla":
        return None
    import torch_xla
    import torch_xla.core.xla_model as xla_model

    def sync() -> None:
        torch_xla.sync()
        xla_model.wait_device_ops()

    return sync
