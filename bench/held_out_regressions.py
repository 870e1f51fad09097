"""Regressions of PyTorch's compile stack written apart from the suite's stack mutants
(test/harness/mutation/stack_faults.py, which chose the tiers): each patches the installed
torch in the test process, as a nightly with that bug would, in Dynamo's graph, its guards,
AOTAutograd's functionalized graphs or its runtime wrappers. Each is modelled on a class of
real silent-correctness bugs of PyTorch's tracker (the C-numbers are the classes of a catalogue
of 96 issues of 2024-2026 made for issue 67, the issues those it cites) and changes only the programs
that meet its condition, so that most tests still pass. bench/held_out.py counts which a tier
catches; test/proofs/test_held_out_regressions.py shows each is a real fault.

    PYTHONPATH=bench DYNAMO_SUITE_IMPORTS=held_out_regressions HELD_OUT_REGRESSION=detach_dropped \\
        python run_tests.py --backend aot_eager      # the regression in every worker of the run

The suite imports the modules of DYNAMO_SUITE_IMPORTS in the runner and in each worker
process, so the patch is in every process that compiles. ``regression(name)`` is the same
patch as a context, for one process (the proof's).

Written 2026-12-06, before any run of the tiers against them; after the first run one was
mended to do what its description says (attribute_tensors_frozen had frozen the tensors of list
arguments too) and run again (docs/coverage.md).
"""

from __future__ import annotations

import contextlib
import functools
import operator
import os
from typing import Any, Callable, Iterator

import torch

REGRESSION_ENV = "HELD_OUT_REGRESSION"
Patch = Callable[[], Callable[[], None]]  # installs itself, returns its uninstall

# name -> (what it breaks, why it is a realistic bug); the patches are below.
REGRESSIONS: dict[str, tuple[str, str]] = {
    "detach_dropped": (
        "Dynamo's graph loses its detach() calls: gradients flow through what the program detached",
        "a pass that removes no-op looking calls takes detach for one; C18, pytorch#176854 (detach_ semantics)"),
    "no_grad_region_dropped": (
        "a `with torch.no_grad():` block inside the compiled function is traced with grad on",
        "the set_grad_enabled nodes Dynamo records are dropped by a graph pass; C19 (grad mode inside regions)"),
    "autocast_region_dropped": (
        "an autocast block inside the compiled function is ignored: its ops run in the input dtype",
        "the _enter_autocast/_exit_autocast nodes are dropped; C19, pytorch#179804 (inner autocast ignored)"),
    "input_clone_elided": (
        "x.clone() of a graph input is elided: the clone aliases the input, an in-place op on it writes the "
        "caller's tensor",
        "copy elimination that misses a later mutation (remove_no_ops-style passes); C14"),
    "view_inplace_dce": (
        "an in-place op on a view whose result is unused is removed as dead code: the write into the base is "
        "lost",
        "DCE that treats mutating ops on views as pure (is_impure missing an op); C14, pytorch#195422"),
    "attribute_tensors_frozen": (
        "a tensor reached through a module or a global (a buffer, a constant table) that the graph reads and "
        "does not require grad is copied into the graph as a constant: an in-place change between calls is "
        "not seen",
        "freezing / constant lifting without a guard on the tensor's contents; C2, pytorch#129362, "
        "pytorch#147405 (constant tensors), pytorch#115774 (buffers)"),
    "aliasing_guard_dropped": (
        "no guard that distinct tensor inputs do not alias: a call passing one tensor twice (or overlapping "
        "views) reuses a graph traced for distinct ones",
        "C11, pytorch#139789 (input mutation then aliasing does not recompile)"),
    "scatter_lost": (
        "functionalization drops the *_scatter that writes a mutated view back into its base: writes through "
        "a slice, select or diagonal of an intermediate are lost",
        "view replay in functionalization regenerating the base from the old value; C14, pytorch#198095"),
    "rng_state_rewound": (
        "a compiled call that draws random numbers leaves the global CPU generator where it was: the next call "
        "(and the eager code after it) draws the same numbers again",
        "functionalized RNG whose offset is not advanced after the graph; C6, pytorch#143431, pytorch#118735"),
    "outputs_made_contiguous": (
        "outputs that do not alias an input come back contiguous where eager gives them transposed or strided",
        "outputs restrided to the layout the fake kernels predicted; C18, pytorch#198364, pytorch#168381"),
    "outputs_require_grad": (
        "floating outputs that do not require grad in eager come back requiring grad when some input does",
        "output metadata (requires_grad) taken from the graph's joint instead of each output; C18, pytorch#123713"),
    "version_counter_kept": (
        "an input mutated by the compiled call keeps its version counter: autograd no longer sees the mutation "
        "of a tensor saved for backward",
        "the write back done under _unsafe_preserve_version_counter; C14, pytorch#135441 (Tensor._version)"),
    "aliased_output_offset_lost": (
        "an output that is a view of an input at a storage offset is regenerated at offset 0",
        "view regeneration from the wrong base or offset; C11, pytorch#198095 (synthetic base view regenerated "
        "from the wrong tensor)"),
    "training_buffer_mutation_dropped": (
        "in a graph that trains, an input that does not require grad (a buffer, BatchNorm's running stats) "
        "mutated in the forward is not written back",
        "the copy_ into the input kept in the forward graph taken for dead code; C22 (BN buffers), C13"),
}


# -- the places a patch goes -----------------------------------------------------------------------------


def _replace(owner: Any, attribute: str, make: Callable[[Any], Any]) -> Callable[[], None]:
    original = owner.__dict__[attribute] if isinstance(owner, type) else getattr(owner, attribute)
    setattr(owner, attribute, make(getattr(owner, attribute)))
    return lambda: setattr(owner, attribute, original)


def _dynamo_graph_pass(rewrite: Callable[[torch.fx.GraphModule], bool]) -> Patch:
    """A pass over the FX graph Dynamo hands to the backend (every backend gets it)."""
    def install() -> Callable[[], None]:
        from torch._dynamo.output_graph import OutputGraph

        def make(original: Callable) -> Callable:
            def call_user_compiler(self: Any, gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
                if rewrite(gm):
                    gm.graph.lint()
                    gm.recompile()
                return original(self, gm, example_inputs)
            return call_user_compiler

        return _replace(OutputGraph, "call_user_compiler", make)
    return install


def _aot_graph_pass(rewrite: Callable[[torch.fx.GraphModule], bool], inference: bool = True) -> Patch:
    """A pass over AOTAutograd's functionalized forward graphs (and inference graphs: ``inference``),
    before the compiler."""
    def install() -> Callable[[], None]:
        from torch._dynamo.backends.common import AotAutograd

        def rewritten(compiler: Callable) -> Callable:
            @functools.wraps(compiler)
            def compile_graph(gm: torch.fx.GraphModule, *args: Any, **kwargs: Any) -> Any:
                if rewrite(gm):
                    gm.graph.lint()
                    gm.recompile()
                return compiler(gm, *args, **kwargs)
            return compile_graph

        def make(original: Callable) -> Callable:
            def call(self: Any, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
                saved = self.kwargs
                forward = saved["fw_compiler"]
                serving = saved.get("inference_compiler") or forward
                self.kwargs = {**saved, "fw_compiler": rewritten(forward),
                               "inference_compiler": rewritten(serving) if inference else serving}
                try:
                    return original(self, gm, example_inputs, **kwargs)
                finally:
                    self.kwargs = saved
            return call

        return _replace(AotAutograd, "__call__", make)
    return install


def _runtime(wrap: Callable[[Callable, tuple], Any]) -> Patch:
    """Around every call of a compiled region (AOTAutograd's runtime wrapper): ``wrap(call, args)``."""
    def install() -> Callable[[], None]:
        import torch._functorch.aot_autograd  # noqa: F401  (first: its package imports runtime_wrappers in order)
        from torch._functorch._aot_autograd import runtime_wrappers

        def make(original: Callable) -> Callable:
            def create_runtime_wrapper(*args: Any, **kwargs: Any) -> Callable:
                wrapped = original(*args, **kwargs)

                def run(*call_args: Any, **call_kwargs: Any) -> Any:
                    return wrap(lambda: wrapped(*call_args, **call_kwargs), call_args)
                return functools.wraps(wrapped)(run)
            return create_runtime_wrapper

        return _replace(runtime_wrappers, "_create_runtime_wrapper", make)
    return install


def _epilogue(name: str, wrap: Callable[[Callable, Any], Callable]) -> Patch:
    """``wrap(step, runtime_metadata)`` replaces the epilogue's step ``name`` (_apply_mutations_ or
    _replay_aliases_) in each runtime wrapper generated from now on."""
    def install() -> Callable[[], None]:
        import torch._functorch.aot_autograd  # noqa: F401  (first: its package imports runtime_wrappers in order)
        from torch._functorch._aot_autograd import runtime_wrappers

        def make(original: Callable) -> Callable:
            def codegen_epilogue(rw_lines: list, rw_globals: dict, metadata: Any, *args: Any) -> Any:
                result = original(rw_lines, rw_globals, metadata, *args)
                if name in rw_globals:
                    rw_globals[name] = wrap(rw_globals[name], metadata)
                return result
            return codegen_epilogue

        return _replace(runtime_wrappers, "_codegen_epilogue", make)
    return install


def _tensors(values: Any) -> list[torch.Tensor]:
    found: list[torch.Tensor] = []
    for value in (values.values() if isinstance(values, dict) else values):  # orig_inputs: index -> input
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, (list, tuple, dict)):
            found += _tensors(value)
    return found


def _shares_storage(tensor: torch.Tensor, others: list[torch.Tensor]) -> bool:
    try:
        storage = tensor.untyped_storage().data_ptr()
        return any(other.untyped_storage().data_ptr() == storage for other in others)
    except (RuntimeError, NotImplementedError):  # a subclass or a tensor without storage
        return True


def _map_outputs(outputs: Any, change: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    if isinstance(outputs, torch.Tensor):
        return change(outputs)
    if isinstance(outputs, (list, tuple)):
        return type(outputs)(_map_outputs(output, change) for output in outputs)
    return outputs


# -- Dynamo's graph ------------------------------------------------------------------------------------


def _method_or_function(node: torch.fx.Node, names: tuple[str, ...], functions: tuple) -> bool:
    return (node.op == "call_method" and node.target in names) or \
        (node.op == "call_function" and node.target in functions)


def _drop_detach(gm: torch.fx.GraphModule) -> bool:
    changed = False
    for node in list(gm.graph.nodes):
        if _method_or_function(node, ("detach",), (torch.detach, torch.Tensor.detach)):
            node.replace_all_uses_with(node.args[0])
            gm.graph.erase_node(node)
            changed = True
    return changed


def _drop_calls(gm: torch.fx.GraphModule, targets: tuple) -> bool:
    changed = False
    for node in reversed(list(gm.graph.nodes)):  # the exits (users) first
        if node.op == "call_function" and node.target in targets:
            for user in list(node.users):
                if user.op == "call_function" and user.target in targets:
                    gm.graph.erase_node(user)
            if not node.users:
                gm.graph.erase_node(node)
                changed = True
    return changed


def _drop_grad_mode(gm: torch.fx.GraphModule) -> bool:
    return _drop_calls(gm, (torch._C._set_grad_enabled,))


def _drop_autocast(gm: torch.fx.GraphModule) -> bool:
    from torch.amp import autocast_mode

    return _drop_calls(gm, (autocast_mode._enter_autocast, autocast_mode._exit_autocast))


def _elide_input_clone(gm: torch.fx.GraphModule) -> bool:
    changed = False
    for node in list(gm.graph.nodes):
        if _method_or_function(node, ("clone",), (torch.clone, torch.Tensor.clone)) and node.args \
                and isinstance(node.args[0], torch.fx.Node) and node.args[0].op == "placeholder" \
                and not node.kwargs.get("memory_format"):
            node.replace_all_uses_with(node.args[0])
            gm.graph.erase_node(node)
            changed = True
    return changed


_VIEWS = ("view", "reshape", "transpose", "t", "permute", "select", "narrow", "unsqueeze", "squeeze", "diagonal",
          "expand", "view_as", "unflatten", "flatten", "unbind", "chunk", "split", "T", "mT")


def _is_view(node: Any) -> bool:
    if not isinstance(node, torch.fx.Node):
        return False
    if node.op == "call_function" and node.target is operator.getitem:
        return True
    return (node.op == "call_method" and node.target in _VIEWS) or \
        (node.op == "call_function" and getattr(node.target, "__name__", "") in _VIEWS)


def _dce_view_inplace(gm: torch.fx.GraphModule) -> bool:
    changed = False
    for node in reversed(list(gm.graph.nodes)):
        name = node.target if node.op == "call_method" else getattr(node.target, "__name__", "")
        if node.op in ("call_method", "call_function") and isinstance(name, str) and name.endswith("_") \
                and not name.startswith("_") and not node.users and node.args and _is_view(node.args[0]):
            gm.graph.erase_node(node)
            changed = True
    return changed


def _mutates(node: torch.fx.Node) -> bool:
    for user in node.users:
        name = user.target if user.op == "call_method" else getattr(user.target, "__name__", "")
        if isinstance(name, str) and (name.endswith("_") and not name.startswith("_") or name == "setitem") \
                or _is_view(user) and _mutates(user):
            return True
    return False


def _read_off_an_object(source: Any) -> bool:
    chain = []
    while source is not None:
        chain.append(type(source).__name__)
        source = getattr(source, "base", None)
    return bool(chain) and (chain[-1] in ("GlobalSource", "GlobalWeakRefSource") or any(
        name.endswith(("AttrSource", "NNModuleSource", "ParamBufferSource")) for name in chain))


def _frozen_inputs(gm: torch.fx.GraphModule) -> dict[int, torch.Tensor]:
    """The inputs of Dynamo's graph read through a module or a global, unmutated and without grad,
    each with a copy of its value when traced."""
    frozen = {}
    for position, node in enumerate(gm.graph.find_nodes(op="placeholder")):
        grapharg = node.meta.get("grapharg")
        source, example = getattr(grapharg, "source", None), getattr(grapharg, "example", None)
        # Frozen: what is read off an object (a module's buffer, obj.table) or a global; an argument,
        # an element of a list argument or a closure cell is passed in as ever.
        if not _read_off_an_object(source) or type(example) is not torch.Tensor or example.requires_grad \
                or _mutates(node) or not node.users:
            continue
        frozen[position] = example.detach().clone()
    return frozen


def _freeze_attribute_tensors() -> Callable[[], None]:
    from torch._dynamo.output_graph import OutputGraph

    def make(original: Callable) -> Callable:
        def call_user_compiler(self: Any, gm: torch.fx.GraphModule, example_inputs: Any) -> Any:
            frozen = _frozen_inputs(gm)
            compiled = original(self, gm, example_inputs)
            if not frozen:
                return compiled

            def substituted(args: Any) -> list:
                args = list(args)
                for position, value in frozen.items():
                    args[position] = value
                return args

            # Dynamo calls what its backend returned with the graph's inputs, unboxed.
            return lambda *args: compiled(*substituted(args))
        return call_user_compiler

    return _replace(OutputGraph, "call_user_compiler", make)


# -- Dynamo's guards -----------------------------------------------------------------------------------


def _drop_aliasing_guards() -> Callable[[], None]:
    from torch._dynamo import guards

    undo = [_replace(guards, name, lambda original: (lambda *args, **kwargs: None))
            for name in ("install_no_tensor_aliasing_guard", "install_storage_overlapping_guard")]
    return lambda: [step() for step in undo] and None


# -- AOTAutograd's functionalized graphs ----------------------------------------------------------------


def _lose_scatters(gm: torch.fx.GraphModule) -> bool:
    aten = torch.ops.aten
    scatters = (aten.slice_scatter.default, aten.select_scatter.default, aten.diagonal_scatter.default)
    changed = False
    for node in list(gm.graph.nodes):
        base = node.args[0] if node.op == "call_function" and node.target in scatters else None
        # A write into an intermediate only: the base a placeholder is an input's mutation, kept.
        if isinstance(base, torch.fx.Node) and base.op != "placeholder":
            node.replace_all_uses_with(base)
            gm.graph.erase_node(node)
            changed = True
    return changed


def _drop_input_copies(gm: torch.fx.GraphModule) -> bool:
    changed = False
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target is torch.ops.aten.copy_.default and not node.users \
                and isinstance(node.args[0], torch.fx.Node) and node.args[0].op == "placeholder":
            gm.graph.erase_node(node)
            changed = True
    return changed


# -- AOTAutograd's runtime --------------------------------------------------------------------------------


def _rewind_rng(call: Callable, args: tuple) -> Any:
    state = torch.get_rng_state()
    result = call()
    torch.set_rng_state(state)
    return result


def _contiguous_outputs(call: Callable, args: tuple) -> Any:
    inputs = _tensors(args)
    return _map_outputs(call(), lambda out: out.contiguous() if out.dim() > 1 and not out.is_contiguous()
                        and not _shares_storage(out, inputs) else out)


def _outputs_require_grad(call: Callable, args: tuple) -> Any:
    inputs = _tensors(args)
    result = call()
    if not torch.is_grad_enabled() or not any(value.requires_grad for value in inputs):
        return result
    return _map_outputs(result, lambda out: out.detach().requires_grad_() if out.is_floating_point()
                        and not out.requires_grad and not _shares_storage(out, inputs) else out)


def _keep_versions(call: Callable, args: tuple) -> Any:
    inputs = [value for value in _tensors(args) if not value.is_inference()]
    versions = [value._version for value in inputs]
    result = call()
    changed = [(value, version) for value, version in zip(inputs, versions) if value._version != version]
    if changed:
        torch._C._autograd._unsafe_set_version_counter(tuple(value for value, _ in changed),
                                                       tuple(version for _, version in changed))
    return result


def _offset_lost(replay: Callable, metadata: Any) -> Callable:
    def replay_aliases(orig_inputs: Any, fw_outs: Any) -> Any:
        outputs = list(replay(orig_inputs, fw_outs))
        inputs = _tensors(orig_inputs)
        for index, out in enumerate(outputs):
            if isinstance(out, torch.Tensor) and out.storage_offset() and _shares_storage(out, inputs):
                outputs[index] = out.as_strided(out.size(), out.stride(), 0)
        return outputs
    return replay_aliases


PATCHES: dict[str, Patch] = {
    "detach_dropped": _dynamo_graph_pass(_drop_detach),
    "no_grad_region_dropped": _dynamo_graph_pass(_drop_grad_mode),
    "autocast_region_dropped": _dynamo_graph_pass(_drop_autocast),
    "input_clone_elided": _dynamo_graph_pass(_elide_input_clone),
    "view_inplace_dce": _dynamo_graph_pass(_dce_view_inplace),
    "attribute_tensors_frozen": _freeze_attribute_tensors,
    "aliasing_guard_dropped": _drop_aliasing_guards,
    "scatter_lost": _aot_graph_pass(_lose_scatters),
    "rng_state_rewound": _runtime(_rewind_rng),
    "outputs_made_contiguous": _runtime(_contiguous_outputs),
    "outputs_require_grad": _runtime(_outputs_require_grad),
    "version_counter_kept": _runtime(_keep_versions),
    "aliased_output_offset_lost": _epilogue("_replay_aliases_", _offset_lost),
    "training_buffer_mutation_dropped": _aot_graph_pass(_drop_input_copies, inference=False),
}
assert PATCHES.keys() == REGRESSIONS.keys()


@contextlib.contextmanager
def regression(name: str) -> Iterator[None]:
    """Torch with the regression ``name`` within (and Dynamo's caches emptied on both sides)."""
    torch._dynamo.reset()
    uninstall = PATCHES[name]()
    try:
        yield
    finally:
        uninstall()
        torch._dynamo.reset()


_INSTALLED: dict[str, Callable[[], None]] = {}


def install(name: str) -> None:
    """Patch torch with ``name`` in this process for good (once)."""
    if name not in PATCHES:
        raise KeyError(f"{REGRESSION_ENV}={name}: no such regression; one of {', '.join(PATCHES)}")
    if name not in _INSTALLED:
        _INSTALLED[name] = PATCHES[name]()


if os.environ.get(REGRESSION_ENV):  # imported through DYNAMO_SUITE_IMPORTS, in the runner and each worker
    install(os.environ[REGRESSION_ENV])
