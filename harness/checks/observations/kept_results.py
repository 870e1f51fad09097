"""Results kept across calls: nothing a later compiled call or a later backward pass writes
may change what an earlier one returned.

A caller keeps what a compiled function returned (outputs collected over a loop) and the
gradients of its backward passes (``torch.autograd.grad`` per micro-batch or per sample, a
``.grad`` taken off its leaf between steps). A static-memory runtime (CUDA graphs are one)
copies each call's results into buffers it allocated once and hands those out again: every
result kept from an earlier call or pass then silently becomes the latest one.

What is kept, by weak reference (a result the caller dropped is no longer anyone's
concern, and must stay free to go: test_backend_contract's memory-release scenarios):

* every tensor in each compiled call's result;
* every gradient a backward pass produced once a compiled call has run in the test: what
  ``torch.autograd.grad`` returned, and after ``.backward()`` / ``torch.autograd.backward``
  the ``.grad`` of the leaf tensors the compiled calls were given, of the parameters of a
  compiled module, of the leaves the compiled function reaches (its closure, globals, bound
  module) and of the pass's ``inputs=``.

Just before each compiled call and each backward pass the live kept values are cloned, and
just after they are compared, bit for bit (NaN equal to NaN): so whatever the caller did in
between (writing into an output, an optimizer step, ``zero_grad``) is absorbed. A difference
is forgiven where the call or pass had the right to write there:

* a kept tensor sharing storage with what the call legitimately writes: its arguments and
  what they hold, the function's closure cells, defaults and the globals its code names,
  a module's parameters, buffers and attributes (outputs that are views of inputs, BatchNorm
  running statistics, a compiled optimizer step, state a function updates in place); for a
  backward pass, all of that of every compiled function so far (a hook may step an
  optimizer);
* a ``.grad`` that is still some leaf's ``.grad``: accumulation writes into it in place,
  so it is skipped while attached and checked once the caller took it off.

Limits: at most ``MAX_KEPT`` tensors and ``BUDGET_BYTES`` of clones per call (the oldest
kept go first); tensor subclasses, functorch-wrapped tensors and calls made under a Python
mode (tracing, fake tensors, a mode counting operators) are not watched.
"""

from __future__ import annotations

import functools
import itertools
import threading
import types
import unittest.mock
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

import torch
import torch.utils._pytree as pytree

from harness import compat
from harness.checks.observations.watched_calls import Call, Watcher

BUDGET_BYTES = 16 << 20  # of clones per call or pass
MAX_KEPT = 64
# How far the search for what a call may write goes from its roots (arguments, closure,
# module), and how many objects it visits at most.
_DEPTH = 5
_VISITS = 20000
_LEAF_VISITS = 2000  # once per compiled function, for the leaves whose .grad a pass fills

OUTPUT = "output"
GRADIENT = "gradient"
_WHY = {OUTPUT: "the backend reuses output memory across calls",
        GRADIENT: "the backend reuses gradient memory across backward passes"}


def _plain(value: Any) -> bool:
    """A tensor whose values can be cloned and compared outside any transform."""
    return (isinstance(value, torch.Tensor) and type(value) in (torch.Tensor, torch.nn.Parameter)
            and value.layout == torch.strided and value.device.type != "meta" and value.numel() > 0
            and not compat.functorch_wrapped(value))


def _storage(tensor: torch.Tensor) -> int | None:
    try:
        return tensor.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError, TypeError):
        return None


def _same(now: torch.Tensor, before: torch.Tensor) -> bool:
    """Equal in every bit a caller reads: NaN where NaN was, infinities kept."""
    if now.shape != before.shape or now.dtype != before.dtype:
        return False
    if torch.equal(now, before):
        return True
    if not (now.dtype.is_floating_point or now.dtype.is_complex):
        return False
    if now.dtype.is_complex:
        now, before = torch.view_as_real(now), torch.view_as_real(before)
    return torch.equal(now.isnan(), before.isnan()) and torch.equal(
        now.nan_to_num(0.0, float("inf"), float("-inf")), before.nan_to_num(0.0, float("inf"), float("-inf")))


@dataclass
class _Kept:
    ref: weakref.ref
    what: str  # "the output 0 of call 1", "the gradient of w (its .grad) from backward pass 2"
    kind: str  # OUTPUT or GRADIENT
    nbytes: int


@dataclass
class _Snapshot:
    values: list[tuple[_Kept, torch.Tensor]]  # each kept entry alive then, and its clone


# -- what a call may write -------------------------------------------------------------------------


def _walk(roots: Iterable[tuple[str, Any]], visits: int = _VISITS) -> Iterator[tuple[str, torch.Tensor]]:
    """Every tensor reachable from ``roots`` (name, object), named by its path: through
    containers, objects' attributes, modules' parameters and buffers, functions' closure
    cells, defaults and the globals their code names."""
    seen: set[int] = set()
    stack = [(name, value, 0) for name, value in roots]
    visited = 0
    while stack and visited < visits:
        name, value, depth = stack.pop()
        if id(value) in seen or value is None or isinstance(value, (int, float, str, bytes, bool, complex)):
            continue
        seen.add(id(value))
        visited += 1
        if isinstance(value, torch.Tensor):
            yield name, value
            continue
        if depth >= _DEPTH or isinstance(value, (types.ModuleType, type, types.BuiltinFunctionType)):
            continue
        children: Iterable[tuple[str, Any]] = ()
        if isinstance(value, torch.nn.Module):
            children = itertools.chain(
                ((_join(name, key), tensor) for key, tensor in value.named_parameters()),
                ((_join(name, key), tensor) for key, tensor in value.named_buffers()),
                ((_join(name, key), child) for key, child in vars(value).items() if not key.startswith("_")),
                ((_join(name, key), child) for key, child in value.named_modules() if key))
        elif isinstance(value, dict):
            children = itertools.chain(((f"{name}[{key!r}]", child) for key, child in value.items()),
                                       ((name, key) for key in value if isinstance(key, torch.Tensor)))
        elif isinstance(value, (list, tuple, set, frozenset, deque)):
            children = ((f"{name}[{index}]", child) for index, child in enumerate(value))
        elif isinstance(value, types.FunctionType):
            children = _function_roots(value)
        elif isinstance(value, types.MethodType):
            children = (("self", value.__self__), (name, value.__func__))
        elif isinstance(value, functools.partial):
            children = ((name, value.func), (name, value.args), (name, value.keywords))
        elif hasattr(value, "__dict__"):
            try:
                # Private attributes are the object's machinery (a test case's harness state).
                children = ((_join(name, key), child) for key, child in vars(value).items() if not key.startswith("_"))
            except TypeError:
                children = ()
        stack.extend((child_name, child, depth + 1) for child_name, child in children)


def _join(name: str, key: str) -> str:
    return f"{name}.{key}" if name else key


def _code_names(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _code_names(constant)


def _function_roots(fn: types.FunctionType) -> Iterator[tuple[str, Any]]:
    code = fn.__code__
    for cell_name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            yield cell_name, cell.cell_contents
        except ValueError:  # a cell not yet filled
            pass
    yield "the defaults", fn.__defaults__
    yield "the keyword defaults", fn.__kwdefaults__
    for global_name in set(_code_names(code)):
        if global_name in fn.__globals__:
            yield global_name, fn.__globals__[global_name]


def _parameter_names(fn: Any) -> tuple[str, ...]:
    """The names of ``fn``'s positional parameters (a module's forward's, a bound method's,
    but ``self``), as far as its code tells."""
    target = fn.forward if isinstance(fn, torch.nn.Module) else fn
    code = getattr(getattr(target, "__func__", target), "__code__", None)
    if code is None:
        return ()
    names = code.co_varnames[:code.co_argcount]
    return names[1:] if hasattr(target, "__self__") else names


def _arguments(fn: Any, args: tuple, kwargs: dict) -> Iterator[tuple[str, Any]]:
    """Each tensor of a call's arguments, named after its parameter (``x``, ``state[1]``)."""
    names = _parameter_names(fn)
    named = [(names[index] if index < len(names) else f"argument {index}", value)
             for index, value in enumerate(args)] + list(kwargs.items())
    for name, value in named:
        leaves = pytree.tree_leaves(value)
        for index, leaf in enumerate(leaves):
            yield (name if len(leaves) == 1 else f"{name}[{index}]"), leaf


def _reached(fn: Any) -> list[tuple[str, Any]]:
    """What a compiled function or module reaches besides its arguments."""
    return [("", fn)]


# -- the watcher -----------------------------------------------------------------------------------


class KeptResults(Watcher):
    """Keeps what each compiled call and each backward pass returned, and fails the test when
    a later call or pass changes any of it (see the module's docstring)."""

    def __init__(self, test: Any) -> None:
        super().__init__(test)
        self._kept: deque[_Kept] = deque()
        self._kept_ids: dict[int, _Kept] = {}
        self._lock = threading.Lock()
        self._calls = 0
        self._passes = 0
        # The leaf tensors whose .grad a backward pass fills: id -> (weak reference, name).
        self._leaves: dict[int, tuple[weakref.ref, str]] = {}
        self._functions: dict[int, Any] = {}  # every compiled function or module seen
        self._failure: str | None = None
        module, name = compat.backward_pass_entry()
        test.enter_context(unittest.mock.patch.object(module, name, self._watching_passes(getattr(module, name))))

    # -- compiled calls

    def before(self, call: Call) -> None:
        if torch.compiler.is_compiling():
            return
        with self._lock:
            self._calls += 1
            number = self._calls
            if id(call.eager) not in self._functions:
                self._functions[id(call.eager)] = call.eager
                self._track_leaves(_walk(_reached(call.eager), visits=_LEAF_VISITS))
        self._track_leaves(_arguments(call.eager, call.args, call.kwargs))
        call.notes[__name__] = (number, self._snapshot())

    def after(self, call: Call, result: Any) -> None:
        if torch.compiler.is_compiling() or __name__ not in call.notes:
            return
        number, snapshot = call.notes.pop(__name__)
        changed = self._changed(snapshot)
        if changed:
            written = self._storages([("the arguments", (call.args, call.kwargs)), *_reached(call.eager)])
            self._report(changed, written, f"call {number}")
        for index, value in enumerate(pytree.tree_leaves(result)):
            self._keep(value, f"the output {index} of call {number}", OUTPUT)

    def finish(self) -> None:
        if self._failure is not None:
            raise AssertionError(self._failure)

    # -- backward passes

    def _watching_passes(self, original: Callable) -> Callable:
        watcher = self

        def run_backward(t_outputs: Any, *args: Any, **kwargs: Any) -> Any:
            if not watcher._calls or torch.compiler.is_compiling():
                return original(t_outputs, *args, **kwargs)
            inputs = args[3] if len(args) > 3 else kwargs.get("inputs", ())
            inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,) if inputs is not None else ()
            if not all(_plain(tensor) for tensor in (*pytree.tree_leaves(t_outputs), *inputs)
                       if isinstance(tensor, torch.Tensor)):
                return original(t_outputs, *args, **kwargs)  # a pass traced, or under a transform
            with watcher._lock:
                watcher._passes += 1
                number = watcher._passes
            snapshot = watcher._snapshot()
            result = original(t_outputs, *args, **kwargs)
            watcher._after_pass(number, snapshot, inputs, result, kwargs.get("accumulate_grad", True))
            return result

        return run_backward

    def _after_pass(self, number: int, snapshot: _Snapshot | None, inputs: tuple, result: Any,
                    accumulated: bool) -> None:
        changed = self._changed(snapshot)
        if changed:
            roots = [(f"{index}", fn) for index, fn in enumerate(self._functions.values())]
            self._report(changed, self._storages(roots), f"backward pass {number}")
        names = {id(leaf): name for leaf, name in self._tracked_leaves()}
        for index, tensor in enumerate(inputs):
            if isinstance(tensor, torch.Tensor):
                names.setdefault(id(tensor), f"input {index} of the pass")
        if not accumulated:
            for index, (tensor, gradient) in enumerate(zip(inputs, result or ())):
                name = names.get(id(tensor), f"input {index}")
                self._keep(gradient, f"the gradient of {name} from backward pass {number} (torch.autograd.grad)",
                           GRADIENT)
            return
        leaves = [(leaf, name) for leaf, name in self._tracked_leaves()]
        leaves += [(tensor, names[id(tensor)]) for tensor in inputs if isinstance(tensor, torch.Tensor)]
        for leaf, name in leaves:
            gradient = leaf.grad
            if gradient is not None and id(gradient) not in self._kept_ids:
                self._keep(gradient, f"the gradient of {name} (its .grad) from backward pass {number}", GRADIENT)

    # -- keeping and comparing

    def _track_leaves(self, named: Iterable[tuple[str, Any]]) -> None:
        for name, value in named:
            if isinstance(value, torch.Tensor) and value.requires_grad and value.is_leaf and id(value) not in self._leaves:
                self._leaves[id(value)] = (weakref.ref(value), name)

    def _tracked_leaves(self) -> list[tuple[torch.Tensor, str]]:
        alive = []
        for key, (ref, name) in list(self._leaves.items()):
            leaf = ref()
            if leaf is None:
                del self._leaves[key]
            else:
                alive.append((leaf, name))
        return alive

    def _keep(self, value: Any, what: str, kind: str) -> None:
        if not _plain(value):
            return
        with self._lock:
            known = self._kept_ids.get(id(value))
            if known is not None and known.ref() is value:
                return
            entry = _Kept(weakref.ref(value), what, kind, value.numel() * value.element_size())
            self._kept.append(entry)
            self._kept_ids[id(value)] = entry
            self._prune()

    def _prune(self) -> None:
        """Drop what the caller let go, then the oldest past the limits."""
        live = deque(entry for entry in self._kept if entry.ref() is not None)
        total = sum(entry.nbytes for entry in live)
        while live and (len(live) > MAX_KEPT or total > BUDGET_BYTES):
            total -= live.popleft().nbytes
        self._kept = live
        self._kept_ids = {id(tensor): entry for entry in live if (tensor := entry.ref()) is not None}

    def _attached(self) -> set[int]:
        """The storages of every tracked leaf's .grad now: accumulation writes there in place
        (read before a call or pass: a .grad it attaches may be made of a buffer it reuses)."""
        return {storage for leaf, _ in self._tracked_leaves()
                if leaf.grad is not None and (storage := _storage(leaf.grad)) is not None}

    def _snapshot(self) -> _Snapshot | None:
        if not self._kept or compat.python_modes_active():
            return None
        with self._lock:
            entries = list(self._kept)
        attached = self._attached()
        values = []
        with torch.no_grad():
            for entry in entries:
                tensor = entry.ref()
                if tensor is None or _storage(tensor) in attached:
                    continue
                values.append((entry, tensor.detach().clone()))
        return _Snapshot(values) if values else None

    def _changed(self, snapshot: _Snapshot | None) -> list[tuple[_Kept, torch.Tensor]]:
        if snapshot is None or compat.python_modes_active():
            return []
        changed = []
        with torch.no_grad():
            for entry, before in snapshot.values:
                tensor = entry.ref()
                if tensor is not None and not _same(tensor.detach(), before):
                    changed.append((entry, tensor))
        return changed

    def _storages(self, roots: list[tuple[str, Any]]) -> set[int]:
        """The storages a call or pass may write: what ``roots`` reach, and every tracked leaf
        (the .grad attached before it were left out of the snapshot)."""
        found = {_storage(tensor) for _, tensor in _walk(roots)}
        found.update(_storage(leaf) for leaf, _ in self._tracked_leaves())
        found.discard(None)
        return found  # type: ignore[return-value]

    def _report(self, changed: list[tuple[_Kept, torch.Tensor]], written: set[int], event: str) -> None:
        overwritten = [entry for entry, tensor in changed if _storage(tensor) not in written]
        if not overwritten:
            return
        first = overwritten[0]
        others = f" (and {len(overwritten) - 1} more kept result(s))" if len(overwritten) > 1 else ""
        message = f"{first.what} changed when {event} ran{others}: {_WHY[first.kind]}"
        if self._failure is None:
            self._failure = message
        raise AssertionError(message)


WATCHER = KeptResults
