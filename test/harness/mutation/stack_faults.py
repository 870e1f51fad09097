"""Mutants of the compile stack itself: Dynamo's guards, recompiles, automatic dynamic shapes,
the side effects and hooks it replays, and AOTAutograd's runtime (input mutations written
back, outputs that alias inputs regenerated, a grad mode set inside replayed, the caller's
saved-tensor hooks), each a patch of the installed torch that misbehaves only while its
mutant is in use, as a torch nightly with that regression would.

A backend cannot express these faults: Dynamo writes the bytecode that replays side effects,
and builds the guards, before it calls the backend, and AOTAutograd's runtime wraps whatever
the backend returns. So the patches go into torch once (``install``), each a wrapper that asks
which mutant is in use (``activate``): the one it belongs to makes it do the wrong thing
and say so (``fire``); while the control runs it does the right thing and records whether
its piece was exercised (``reach``), so that the kill matrix runs a mutant only where it
can change something, as the kernel mutants' conditions do:

* a dropped guard of a kind (or on a kind of source: defaults, globals, closure cells, a
  module's attributes), a guard of a kind stuck at the first answer it gave a call, a tensor
  match blind to one of its parts (sizes, strides, dtype, device, requires_grad), and a
  recompile limit of one are reached where a guard of that piece failed in the control (a
  recompile);
* automatic dynamic shapes off or forgetting are reached where they learned a new size;
* side effects, tensor hooks, module hooks, fake ``data_ptr`` access, input mutations,
  aliased outputs, a grad mode set inside, saved-tensor hooks, mutated duplicated inputs,
  mutated inputs that overlap (a synthetic base) and a saved tensor modified before backward
  where the control met one. AOTAutograd's functionalized RNG state has no mutant: it is
  off by default (``functionalize_rng_ops``) and serves CUDA's generator only.

Every mutant is named ``<fault>__<piece>__s0`` and listed with the kernel mutants
(test/harness/mutation/mutants.py); its group is its layer: ``dynamo`` or ``aot_autograd``.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import re
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator

LAYERS = ("dynamo", "aot_autograd")


@dataclass(frozen=True)
class StackFault:
    fault: str
    piece: str
    layer: str
    means: str

    @property
    def name(self) -> str:
        return f"{self.fault}__{self.piece}__s0"


# The guard kinds ordinary programs get (GuardBuilder's methods; those this torch lacks are left
# out): each has a mutant that drops it.
GUARD_KINDS = (
    "TENSOR_MATCH", "TYPE_MATCH", "ID_MATCH", "EQUALS_MATCH", "CONSTANT_MATCH", "BOOL_MATCH", "NONE_MATCH",
    "NOT_NONE_MATCH", "NN_MODULE", "FUNCTION_MATCH", "CLASS_MATCH", "CLOSURE_MATCH", "MODULE_MATCH",
    "BUILTIN_MATCH", "SEQUENCE_LENGTH", "DICT_KEYS_MATCH", "DICT_VERSION", "DICT_CONTAINS", "MAPPING_KEYS_CHECK",
    "HASATTR", "DUPLICATE_INPUT", "GLOBAL_STATE", "GRAD_MODE", "DETERMINISTIC_ALGORITHMS", "TORCH_FUNCTION_STATE",
    "DEFAULT_DEVICE", "SHAPE_ENV", "AUTOGRAD_SAVED_TENSORS_HOOKS", "EMPTY_NN_MODULE_HOOKS_DICT", "TUPLE_ITERATOR_LEN",
    "WEAKREF_ALIVE",
)
# What a guard was built on, read from its source.
GUARDED_SOURCES = {
    "defaults": "a function's default arguments (fn.__defaults__, fn.__kwdefaults__)",
    "globals": "module globals",
    "closure_cells": "closure cells (the free variables of the compiled code)",
    "module_attributes": "an nn.Module's attributes (its flags, submodules, parameters)",
}
# The parts of a tensor's match: sizes and strides are the sizes and strides it is built with,
# the others what the tensor it is built from has.
TENSOR_PARTS = {
    "sizes": "a call with other sizes runs the graph traced for the first",
    "strides": "a transposed or sliced input runs the graph traced for a contiguous one",
    "dtype": "an input of another dtype runs the graph traced for the first",
    "device": "an input on another device runs the graph traced for the first",
    "requires_grad": "an input that requires grad runs the graph traced for one that does not, or the reverse",
}
SIDE_EFFECT_KINDS = {
    "containers": "list, deque, dict and set mutations",
    "attributes": "attributes stored on objects and modules",
    "globals": "module globals rebound",
    "cells": "closure cells rebound (nonlocal)",
}


def _faults() -> list[StackFault]:
    from harness import compat

    kinds = set(compat.guard_kinds())
    found = [StackFault("drops_guard", kind.lower(), "dynamo", f"Dynamo builds no {kind} guard: a call that should "
                        "fail it runs the graph compiled for another")
             for kind in GUARD_KINDS if kind in kinds]
    found += [StackFault("stuck_guard", kind.lower(), "dynamo", f"{kind} guards answer every call as they answered "
                         "the first call they judged: a later call that should fail one runs the graph compiled for another")
              for kind in GUARD_KINDS if kind in kinds]
    found += [StackFault("drops_guards_on", source, "dynamo", f"Dynamo builds no guard on {means}")
              for source, means in GUARDED_SOURCES.items()]
    found += [StackFault("tensor_match_ignores", part, "dynamo", f"a tensor's guard checks no {part.rstrip('s')}: "
                         f"{means}") for part, means in TENSOR_PARTS.items()]
    found += [
        StackFault("recompile_limit", "one", "dynamo", "a function is compiled once: every later guard failure runs "
                   "the frame eagerly (a recompile limit of one)"),
        StackFault("automatic_dynamic", "off", "dynamo", "automatic dynamic shapes off: every new size recompiles "
                   "with static sizes"),
        StackFault("automatic_dynamic", "forgets", "dynamo", "automatic dynamic shapes forget the sizes they saw: "
                   "a size that changes is never made dynamic"),
        StackFault("fake_data_ptr", "unchecked", "dynamo", "a fake tensor's data_ptr is readable while tracing "
                   "(the check that rejects it is off)"),
        StackFault("forgets_tensor_hooks", "in_compiled_code", "dynamo", "tensor.register_hook inside compiled "
                   "code is accepted and forgotten"),
        StackFault("skips_module_hooks", "compiled_modules", "dynamo", "a compiled module runs its forward without "
                   "its forward, pre-forward and backward hooks"),
    ]
    found += [StackFault("drops_side_effects", kind, "dynamo", f"Dynamo does not replay {means} after the graph")
              for kind, means in SIDE_EFFECT_KINDS.items()]
    found += [
        StackFault("drops_input_mutation", "data", "aot_autograd", "AOTAutograd's runtime does not write a graph's "
                   "data mutation back into the input"),
        StackFault("drops_input_mutation", "metadata", "aot_autograd", "AOTAutograd's runtime does not replay a "
                   "graph's metadata mutation (t_, as_strided_, resize) on the input"),
        StackFault("copies_aliased_outputs", "runtime", "aot_autograd", "outputs that alias an input or each other "
                   "come back as copies (AOTAutograd's runtime regenerates no view)"),
        StackFault("forgets_grad_mode_change", "inside", "aot_autograd", "a grad mode set inside the compiled "
                   "function is not set again after the call"),
        StackFault("hides_saved_tensors", "caller_hooks", "aot_autograd", "the caller's saved_tensors_hooks never "
                   "see what a compiled call saves for backward"),
        StackFault("distinct_duplicates", "mutated", "aot_autograd", "AOTAutograd traces an input passed twice and "
                   "mutated as two distinct inputs (no dedupe): a write through one is not seen through the other"),
        StackFault("copies_synthetic_base", "runtime", "aot_autograd", "inputs that overlap and are mutated get a "
                   "synthetic base copied from their storage: the mutation never reaches the caller's tensors"),
        StackFault("skips_version_check", "saved_tensors", "aot_autograd", "a tensor saved for backward and modified "
                   "in place before it is not caught (the saved tensors' version check is skipped)"),
    ]
    return found


FAULTS: dict[str, StackFault] = {fault.name: fault for fault in _faults()}


# -- which mutant is in use --------------------------------------------------------------------------


class _State:
    active: str | None = None  # the stack mutant in use
    recording = False  # the control of the kill matrix: record what is reached
    reach: Callable[[str], None] = staticmethod(lambda name: None)
    fire: Callable[[str, str], None] = staticmethod(lambda name, where: None)
    installed = False
    lock = threading.Lock()


_STATE = _State()
# Per code object compiled in the control, each guard: the mutants it belongs to, its code parts,
# its kind and its name.
_GUARDS: dict[Any, list[tuple[set[str], list[str], str, str]]] = {}


def activate(name: str | None, recording: bool = False) -> None:
    """Make ``name`` the stack mutant in use everywhere (None: none; the kill matrix's switch);
    ``recording``: the control runs."""
    if name is not None and name not in FAULTS:
        raise KeyError(name)
    _STATE.active = name
    _STATE.recording = recording


def start_test() -> None:
    _GUARDS.clear()


# A mutant used as a backend of its own (``--backend test.harness.mutation.mutants:<name>``)
# misbehaves only in what is compiled for it: while Dynamo converts a frame for that backend,
# and in the runtime wrappers and modules made for it, never for the other backends of a run.
_SCOPE = threading.local()


def _active() -> str | None:
    """The stack mutant in force here: the one in use, else the backend's being compiled for."""
    return _STATE.active or getattr(_SCOPE, "name", None)


def _on(name: str) -> bool:
    return _active() == name


def fault_of(backend: Any) -> str | None:
    """The stack mutant a backend is, through the wrappers around it (a counter, options, Dynamo's
    own), or None."""
    for _ in range(12):
        if backend is None:
            return None
        name = getattr(backend, "stack_fault", None)
        if isinstance(name, str):
            return name
        backend = next((found for attribute in ("_torchdynamo_orig_backend", "compiler_fn", "backend", "func", "__wrapped__")
                        if (found := getattr(backend, attribute, None)) is not None), None)
        if inspect.ismethod(backend) and backend.__name__ == "compiler_fn":  # the harness's Backend loads it
            backend = backend()
    return None


def _reach(*names: str) -> None:
    if _STATE.recording:
        for name in names:
            if name in FAULTS:
                _STATE.reach(name)


def install(reach: Callable[[str], None], fire: Callable[[str, str], None]) -> None:
    """Put every wrapper into torch, once; ``reach(name)`` and ``fire(name, where)`` are told."""
    with _STATE.lock:
        _STATE.reach, _STATE.fire = reach, fire
        if _STATE.installed:
            return
        _STATE.installed = True
    for patch in (_scope, _guards, _recompiles, _automatic_dynamic, _fake_data_ptr, _side_effects, _tensor_hooks,
                  _module_hooks, _runtime_epilogue, _saved_tensor_hooks, _duplicated_inputs, _synthetic_bases,
                  _saved_tensor_versions):
        patch()


def _scope() -> None:
    from torch._dynamo import convert_frame

    original = convert_frame.ConvertFrameAssert.__call__

    def convert(self: Any, *args: Any, **kwargs: Any) -> Any:
        name = fault_of(getattr(self, "_torchdynamo_orig_backend", None))
        if name is None:
            return original(self, *args, **kwargs)
        before = getattr(_SCOPE, "name", None)
        _SCOPE.name = name
        try:
            return original(self, *args, **kwargs)
        finally:
            _SCOPE.name = before

    convert_frame.ConvertFrameAssert.__call__ = convert


# -- guards --------------------------------------------------------------------------------------------


def _chain(source: Any) -> list[Any]:
    found = []
    while source is not None:
        found.append(source)
        source = getattr(source, "base", None)
    return found


def _pieces(guard: Any, kind: str, code: Any) -> set[str]:
    """The mutants a guard belongs to: its kind's, and its source's."""
    names = {f"drops_guard__{kind.lower()}__s0", f"stuck_guard__{kind.lower()}__s0"}
    chain = _chain(guard.originating_source)
    classes = {type(source).__name__ for source in chain}
    root = chain[-1] if chain else None
    if "DefaultsSource" in classes:
        names.add("drops_guards_on__defaults__s0")
    if type(root).__name__ in ("GlobalSource", "GlobalWeakRefSource") and \
            not getattr(root, "global_name", "").startswith("__import_"):
        names.add("drops_guards_on__globals__s0")
    if type(root).__name__ == "LocalSource" and code is not None and root.local_name in code.co_freevars:
        names.add("drops_guards_on__closure_cells__s0")
    if classes & {"NNModuleSource", "UnspecializedNNModuleSource", "UnspecializedBuiltinNNModuleSource"}:
        names.add("drops_guards_on__module_attributes__s0")
    if kind == "TENSOR_MATCH":
        names |= {f"tensor_match_ignores__{part}__s0" for part in TENSOR_PARTS}
    return names


@contextlib.contextmanager
def _blind_tensor_match(part: str) -> Iterator[None]:
    """Within: the sizes (first) or strides (second) a tensor guard is built with are all None,
    as a dynamic dimension's are."""
    from torch._dynamo import guards

    original = guards.convert_to_concrete_values
    calls = [0]

    def convert(values: Any) -> Any:
        calls[0] += 1
        concrete = original(values)
        wanted = 1 if part == "sizes" else 2
        if calls[0] == wanted and concrete is not None:
            return [None] * len(concrete)
        return concrete

    guards.convert_to_concrete_values = convert
    try:
        yield
    finally:
        guards.convert_to_concrete_values = original


@contextlib.contextmanager
def _leaf_guards_replaced(answer: Callable[[Callable[[Any], bool], tuple], Callable[[Any], bool]],
                          only: str | None = None) -> Iterator[None]:
    """Within: each leaf guard a builder adds to a guard manager (``add_<kind>_guard``; ``only``:
    that method's alone) goes into a manager of its own, and the one it was meant for gets a
    lambda guard instead, ``answer(check, args)``: ``check(value)`` is the guard's own answer,
    ``args`` what it was built with. Guard managers are C++: their checks cannot be wrapped
    once built."""
    from torch._C._dynamo import guards as cguards

    manager = cguards.GuardManager
    add_lambda = manager.add_lambda_guard
    originals = {method: getattr(manager, method) for method in dir(manager) if method.startswith("add_")
                 and method.endswith("_guard") and only in (None, method)}

    def replaced(original: Callable) -> Callable:
        def add(self: Any, *args: Any) -> None:
            own = cguards.RootGuardManager()
            original(own, *args)
            parts = [part for leaf in own.get_leaf_guards() for part in leaf.verbose_code_parts()]
            add_lambda(self, answer(own.check, args), parts, None)

        return add

    for method, original in originals.items():
        setattr(manager, method, replaced(original))
    try:
        yield
    finally:
        for method, original in originals.items():
            setattr(manager, method, original)


def _stuck(name: str, kind: str) -> Callable[[Callable[[Any], bool], tuple], Callable[[Any], bool]]:
    """A guard's answer to the first call it judges, given again to every later call (the
    compile's own check that a new guard passes is not a call)."""
    from torch._guards import CompileContext

    def answer(check: Callable[[Any], bool], args: tuple) -> Callable[[Any], bool]:
        first: list[bool] = []

        def stuck(value: Any) -> bool:
            fresh = bool(check(value))
            if CompileContext.try_get() is not None:
                return fresh
            if not first:
                first.append(fresh)
            elif fresh != first[0]:
                _STATE.fire(name, f"a {kind} guard answered {first[0]} again")
            return first[0]

        return stuck

    return answer


def _as_traced(value: Any, traced: Any, part: str) -> Any:
    """A tensor like ``value`` but for ``part``, which is ``traced``'s."""
    import torch

    requires_grad = traced.requires_grad if part == "requires_grad" else value.requires_grad
    if part == "requires_grad":
        base = value.detach()
    else:
        base = torch.empty_strided(value.size(), value.stride(), dtype=traced.dtype if part == "dtype" else value.dtype,
                                   device=traced.device if part == "device" else value.device)
    requires_grad = requires_grad and (base.is_floating_point() or base.is_complex())
    return base.requires_grad_(requires_grad) if type(value) is torch.Tensor else \
        torch.Tensor._make_subclass(type(value), base, requires_grad)


def _blind_to(name: str, part: str) -> Callable[[Callable[[Any], bool], tuple], Callable[[Any], bool]]:
    """A tensor match that judges a tensor as if its ``part`` were the traced tensor's."""
    import torch

    def answer(check: Callable[[Any], bool], args: tuple) -> Callable[[Any], bool]:
        traced = args[0]

        def blind(value: Any) -> bool:
            if not isinstance(value, torch.Tensor) or getattr(value, part) == getattr(traced, part):
                return check(value)
            seen = check(_as_traced(value, traced, part))
            if seen and not check(value):
                _STATE.fire(name, f"a tensor of {part} {getattr(value, part)} passed for {getattr(traced, part)}")
            return seen

        return blind

    return answer


def _guards() -> None:
    from torch._guards import Guard

    original = Guard.create

    def create(guard: Any, builder: Any) -> Any:
        kind = guard.create_fn_name()
        code = getattr(builder, "f_code", None)
        pieces = _pieces(guard, kind, code)
        active = _active()
        if active in pieces and active.startswith("drops_guard"):
            _STATE.fire(active, f"no {kind} guard on {guard.name or 'global state'}")
            return None
        if active in pieces and active.startswith("stuck_guard"):
            with _leaf_guards_replaced(_stuck(active, kind)):
                return original(guard, builder)
        part = FAULTS[active].piece if active in pieces and active.startswith("tensor_match_ignores") else None
        if part in ("sizes", "strides"):
            _STATE.fire(active, f"a {kind} guard on {guard.name} blind to its {part}")
            with _blind_tensor_match(part):
                return original(guard, builder)
        if part is not None:
            with _leaf_guards_replaced(_blind_to(active, part), only="add_tensor_match_guard"):
                return original(guard, builder)
        result = original(guard, builder)
        if _STATE.recording and code is not None:
            _GUARDS.setdefault(code, []).append((pieces, list(guard.code_list or ()), kind, guard.name or ""))
        return result

    Guard.create = create


_REASON_PREFIX = re.compile(r"^\d+/\d+:\s*")


def _plain(text: str) -> str:
    """A guard's code part or a failure reason, without its location comment and with
    L['x'] as x (reasons name locals plainly)."""
    text = _REASON_PREFIX.sub("", text.splitlines()[0] if text else "").split("  #")[0]
    return re.sub(r"L\['([^']+)'\]", r"\1", text).strip()


# A tensor match's failure reason names what differed ("tensor 'x' size mismatch ..."): the part it
# is. Another device is another dispatch key set, which the match compares first.
_FAILED_PART = {"size": "sizes", "rank": "sizes", "stride": "strides", "dispatch": "device"}


def _failed(code: Any, reason: str) -> set[str]:
    """The mutants whose guards a failure reason names (every guard's of the code, where the
    reason names none of them)."""
    guards = _GUARDS.get(code, [])
    plain = _plain(reason)
    tensor = re.match(r"tensor '([^']+)' (\w+)", plain)
    found: set[str] = set()
    for pieces, parts, kind, name in guards:
        if tensor and kind == "TENSOR_MATCH" and _plain(name) == tensor.group(1):
            part = _FAILED_PART.get(tensor.group(2), tensor.group(2))
            found |= {piece for piece in pieces if not piece.startswith("tensor_match_ignores")
                      or piece == f"tensor_match_ignores__{part}__s0"}
        elif plain.startswith(f"{kind} ") or any(_plain(part) == plain for part in parts):
            found |= pieces
    if not found:
        found = {piece for pieces, _, _, _ in guards for piece in pieces}
    return found


def _recompiles() -> None:
    from torch._dynamo import convert_frame

    reasons_of = convert_frame.get_and_maybe_log_recompilation_reasons
    exceeds = convert_frame.exceeds_recompile_limit

    def recompilation_reasons(cache_entries: Any, frame: Any, *args: Any, **kwargs: Any) -> list[str]:
        reasons = reasons_of(cache_entries, frame, *args, **kwargs)
        if _STATE.recording:
            _reach("recompile_limit__one__s0")
            for reason in reasons:
                _reach(*_failed(frame.f_code, reason))
        return reasons

    def exceeds_recompile_limit(cache_size: Any, compile_id: Any) -> tuple[bool, str]:
        if _on("recompile_limit__one__s0") and convert_frame.is_recompilation(cache_size):
            _STATE.fire("recompile_limit__one__s0", "a recompile refused")
            return True, "recompile_limit"
        return exceeds(cache_size, compile_id)

    convert_frame.get_and_maybe_log_recompilation_reasons = recompilation_reasons
    convert_frame.exceeds_recompile_limit = exceeds_recompile_limit


# -- automatic dynamic shapes ----------------------------------------------------------------------------


def _automatic_dynamic() -> None:
    import torch
    from torch._dynamo import pgo

    original = pgo.update_automatic_dynamic

    def update_automatic_dynamic(tx: Any, name: str, entry: Any, **kwargs: Any) -> Any:
        seen = pgo.get_code_state()[pgo.CodeId.make(tx.f_code, tx.closure)].automatic_dynamic
        learns = False
        if name in seen:
            merged = copy.copy(seen[name])
            merged |= entry
            learns = repr(merged) != repr(seen[name])
        if learns:
            _reach("automatic_dynamic__off__s0", "automatic_dynamic__forgets__s0")
            if _on("automatic_dynamic__off__s0"):
                _STATE.fire("automatic_dynamic__off__s0", f"{name} kept static")
                with torch._dynamo.config.patch(automatic_dynamic_shapes=False):
                    return original(tx, name, entry, **kwargs)
            if _on("automatic_dynamic__forgets__s0"):
                _STATE.fire("automatic_dynamic__forgets__s0", f"the sizes of {name} forgotten")
                del seen[name]
        return original(tx, name, entry, **kwargs)

    pgo.update_automatic_dynamic = update_automatic_dynamic


# -- fake tensors ----------------------------------------------------------------------------------------


def _fake_data_ptr() -> None:
    import torch
    from torch._subclasses.fake_tensor import FakeTensor

    name = "fake_data_ptr__unchecked__s0"
    throws = torch._C._set_throw_on_mutable_data_ptr
    data_ptr = torch.Tensor.data_ptr

    def set_throw_on_mutable_data_ptr(tensor: Any) -> None:
        if _on(name):
            torch._C._set_warn_deprecated_on_mutable_data_ptr(tensor)
            return
        throws(tensor)

    def read_data_ptr(tensor: Any) -> int:
        if not isinstance(tensor, FakeTensor):
            return data_ptr(tensor)
        if _on(name):
            _STATE.fire(name, "a fake tensor's data_ptr read")
        try:
            return data_ptr(tensor)
        except RuntimeError:
            _reach(name)
            raise

    torch._C._set_throw_on_mutable_data_ptr = set_throw_on_mutable_data_ptr
    torch.Tensor.data_ptr = read_data_ptr


# -- side effects and hooks --------------------------------------------------------------------------------


def _side_effects() -> None:
    from torch._dynamo import side_effects
    from test.harness.side_effect_dropping_dynamo import _kind

    original = side_effects.SideEffects.codegen_update_mutated

    def codegen_update_mutated(self: Any, cg: Any, *args: Any, **kwargs: Any) -> Any:
        modified = type(self)._get_modified_vars
        # A tensor is tracked as an object whose attributes may change: one counts where some did.
        kinds = {var: _kind(self, var) for var in modified(self)
                 if _kind(self, var) != "attributes" or self.store_attr_mutations.get(var)}
        _reach(*(f"drops_side_effects__{kind}__s0" for kind in kinds.values() if kind))
        active = _active() or ""
        if not active.startswith("drops_side_effects__"):
            return original(self, cg, *args, **kwargs)
        dropped = FAULTS[active].piece
        if dropped in kinds.values():
            _STATE.fire(active, f"{dropped} not replayed")
        self._get_modified_vars = lambda: [var for var in modified(self) if kinds.get(var) != dropped]
        try:
            return original(self, cg, *args, **kwargs)
        finally:
            del self._get_modified_vars

    side_effects.SideEffects.codegen_update_mutated = codegen_update_mutated


def _tensor_hooks() -> None:
    from torch._dynamo import variables
    from torch._dynamo.variables.base import ValueMutationNew
    from torch._dynamo.variables.tensor import TensorVariable

    name = "forgets_tensor_hooks__in_compiled_code__s0"
    original = TensorVariable.__dict__["_method_register_hook"]

    def register_hook(self: Any, tx: Any, method: str, hook: Any) -> Any:
        _reach(name)
        if _on(name):
            _STATE.fire(name, f"a {method} forgotten")
            return variables.RemovableHandleVariable(mutation_type=ValueMutationNew())
        return original(self, tx, method, hook)

    TensorVariable._method_register_hook = register_hook


def _module_hooks() -> None:
    from torch.nn.modules import module as nn_module
    from torch._dynamo import eval_frame

    name = "skips_module_hooks__compiled_modules__s0"
    original = eval_frame.OptimizedModule.__call__

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        inner = self._orig_mod
        hooked = any((inner._forward_hooks, inner._forward_pre_hooks, inner._backward_hooks,
                      inner._backward_pre_hooks, nn_module._global_forward_hooks,
                      nn_module._global_forward_pre_hooks, nn_module._global_backward_hooks))
        if hooked:
            _reach(name)
            if _on(name) or fault_of(getattr(self.dynamo_ctx, "callback", None)) == name:
                _STATE.fire(name, f"the hooks of {type(inner).__name__}")
                return self.dynamo_ctx(inner.forward)(*args, **kwargs)
        return original(self, *args, **kwargs)

    eval_frame.OptimizedModule.__call__ = call


# -- AOTAutograd's runtime ----------------------------------------------------------------------------------


def _runtime_epilogue() -> None:
    import torch
    from torch._functorch._aot_autograd import runtime_wrappers as runtime
    from torch._functorch._aot_autograd.schemas import TensorAlias

    original = runtime._codegen_epilogue
    aliasing = tuple(getattr(runtime, handler) for handler in ("AliasOfInputHandler", "IsInputHandler",
                                                               "AliasOfIntermediateHandler") if hasattr(runtime, handler))
    grad_mode = "forgets_grad_mode_change__inside__s0"

    def mutations_of(metadata: Any, piece: str) -> list[tuple[int, int]]:
        found = []
        for position, index in enumerate(metadata.mutated_inp_runtime_indices):
            info = metadata.input_info[index]
            data = info.mutates_data and not info.mutates_storage_metadata
            if (piece == "data" and data) or (piece == "metadata" and info.mutates_metadata and not data):
                found.append((position, index))
        return found

    def gated_mutations(apply: Callable, metadata: Any) -> Callable:
        compiled_for = _active()

        def apply_mutations(orig_inputs: Any, updated_inputs: Any) -> Any:
            for piece in ("data", "metadata"):
                name = f"drops_input_mutation__{piece}__s0"
                found = mutations_of(metadata, piece)
                if found:
                    _reach(name)
                if found and (_on(name) or compiled_for == name):
                    _STATE.fire(name, f"{len(found)} input {piece} mutation(s) not written back")
                    updated_inputs = list(updated_inputs)
                    for position, index in found:  # the input as it was: writing it back changes nothing
                        kept = orig_inputs[index]
                        updated_inputs[position] = TensorAlias(kept) if isinstance(
                            updated_inputs[position], TensorAlias) else kept
            return apply(orig_inputs, updated_inputs)

        return apply_mutations

    def gated_aliases(replay: Callable, epilogue: Any) -> Callable:
        name = "copies_aliased_outputs__runtime__s0"
        aliased = [index for index, handler in enumerate(epilogue.output_handlers) if isinstance(handler, aliasing)]
        compiled_for = _active()

        def replay_aliases(orig_inputs: Any, fw_outs: Any) -> Any:
            outputs = replay(orig_inputs, fw_outs)
            if aliased:
                _reach(name)
            if aliased and (_on(name) or compiled_for == name):
                _STATE.fire(name, f"{len(aliased)} aliased output(s) copied")
                outputs = list(outputs)
                for index in aliased:
                    if isinstance(outputs[index], torch.Tensor):
                        outputs[index] = outputs[index].clone()
            return outputs

        return replay_aliases

    def codegen_epilogue(rw_lines: list, rw_globals: dict, metadata: Any, epilogue: Any, *args: Any) -> Any:
        changed = metadata.grad_enabled_mutation
        if changed is not None:
            _reach(grad_mode)
            if _on(grad_mode):
                _STATE.fire(grad_mode, "the grad mode set inside not set again")
                metadata.grad_enabled_mutation = None
        try:
            result = original(rw_lines, rw_globals, metadata, epilogue, *args)
        finally:
            metadata.grad_enabled_mutation = changed
        if "_apply_mutations_" in rw_globals:
            rw_globals["_apply_mutations_"] = gated_mutations(rw_globals["_apply_mutations_"], metadata)
        if "_replay_aliases_" in rw_globals:
            rw_globals["_replay_aliases_"] = gated_aliases(rw_globals["_replay_aliases_"], epilogue)
        return result

    runtime._codegen_epilogue = codegen_epilogue


def _saved_tensor_hooks() -> None:
    import torch
    from torch._functorch._aot_autograd import runtime_wrappers as runtime

    name = "hides_saved_tensors__caller_hooks__s0"
    original = runtime._create_runtime_wrapper

    def keep(tensor: Any) -> Any:
        return tensor

    def create_runtime_wrapper(*args: Any, **kwargs: Any) -> Callable:
        wrapped = original(*args, **kwargs)
        compiled_for = _active()

        def run(*call_args: Any, **call_kwargs: Any) -> Any:
            if torch.is_grad_enabled() and torch._C._autograd._top_saved_tensors_default_hooks(True) is not None:
                _reach(name)
                if _on(name) or compiled_for == name:
                    _STATE.fire(name, "a call saved under hooks of its own")
                    with torch.autograd.graph.saved_tensors_hooks(keep, keep):
                        return wrapped(*call_args, **call_kwargs)
            return wrapped(*call_args, **call_kwargs)

        return functools.wraps(wrapped)(run)

    runtime._create_runtime_wrapper = create_runtime_wrapper


def _duplicated_inputs() -> None:
    import torch
    from torch._functorch._aot_autograd import runtime_wrappers as runtime

    name = "distinct_duplicates__mutated__s0"
    original = runtime.AOTDedupeWrapper.pre_compile

    def pre_compile(self: Any, flat_fn: Any, flat_args: list, *args: Any, fw_metadata: Any, **kwargs: Any) -> Any:
        # Dynamo passes an object once: duplicates reach AOTAutograd called directly (aot_function).
        seen: set[int] = set()
        mutated = []
        for index, arg in enumerate(flat_args):
            if isinstance(arg, torch.Tensor):
                info = fw_metadata.input_info[index]
                if id(arg) in seen and (info.mutates_data or info.mutates_metadata):
                    mutated.append(index)
                seen.add(id(arg))
        if mutated:
            _reach(name)
        if mutated and _on(name):
            _STATE.fire(name, f"{len(mutated)} mutated duplicate(s) traced as distinct inputs")
            # A copy, not a detached alias: an alias would be given a synthetic base, which is right.
            flat_args = [arg.clone().detach().requires_grad_(arg.requires_grad) if index in mutated else arg
                         for index, arg in enumerate(flat_args)]
        return original(self, flat_fn, flat_args, *args, fw_metadata=fw_metadata, **kwargs)

    runtime.AOTDedupeWrapper.pre_compile = pre_compile


def _synthetic_bases() -> None:
    from torch._functorch._aot_autograd import runtime_wrappers as runtime

    name = "copies_synthetic_base__runtime__s0"
    original = runtime.AOTSyntheticBaseWrapper.post_compile

    def post_compile(self: Any, compiled_fn: Callable, *args: Any, **kwargs: Any) -> Callable:
        if not self.needs_post_compile:
            return original(self, compiled_fn, *args, **kwargs)
        bases = len(self.base_groups)
        compiled_for = _active()

        def with_bases(new_args: list) -> Any:  # the synthetic bases first, then the other inputs
            _reach(name)
            if _on(name) or compiled_for == name:
                _STATE.fire(name, f"{bases} synthetic base(s) copied")
                new_args[:bases] = [base.clone() for base in new_args[:bases]]
            return compiled_fn(new_args)

        with_bases._boxed_call = True  # type: ignore[attr-defined]
        return original(self, with_bases, *args, **kwargs)

    runtime.AOTSyntheticBaseWrapper.post_compile = post_compile


def _saved_tensor_versions() -> None:
    import weakref

    from torch._functorch._aot_autograd import runtime_wrappers as runtime

    name = "skips_version_check__saved_tensors__s0"
    state = runtime._AutogradSavedState
    init, save, codegen = state.__init__, state.save_from_forward, runtime._codegen_compiled_backward

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.stack_fault = _active()  # what is compiled for the mutant is saved by it

    def save_from_forward(self: Any, ctx: Any, fw_outs: Any) -> None:
        save(self, ctx, fw_outs)
        checked = list(fw_outs[self.metadata.tensors_saved_for_backwards_with_vc_check_slice])
        if checked and (_STATE.recording or self.stack_fault == name):
            ctx.stack_saved_versions = [(weakref.ref(tensor), tensor._version) for tensor in checked]
        if checked and self.stack_fault == name:  # saved as plain references: no version is checked
            ctx._tensors_no_vc_check = [*ctx.to_save, *ctx._tensors_no_vc_check]
            ctx.to_save = ()

    def codegen_compiled_backward(num_rng: int, num_tensors_no_vc_check: int | None, *args: Any) -> Callable:
        mutated = _active() == name and num_tensors_no_vc_check is not None
        compiled = codegen(num_rng, max(num_tensors_no_vc_check, 1) if mutated else num_tensors_no_vc_check, *args)

        def compiled_backward(flat_args: Any, ctx: Any, *rest: Any) -> Any:
            saved = getattr(ctx, "stack_saved_versions", ())
            if any(tensor() is not None and tensor()._version != version for tensor, version in saved):
                _reach(name)
                if mutated:
                    _STATE.fire(name, "a saved tensor modified before backward")
            return compiled(flat_args, ctx, *rest)

        return functools.wraps(compiled)(compiled_backward)

    state.__init__ = __init__
    state.save_from_forward = save_from_forward
    runtime._codegen_compiled_backward = codegen_compiled_backward
