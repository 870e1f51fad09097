"""The eager share: how much of a compiled call ran through PyTorch's own kernels.

Every scenario proves the backend *received* a graph; this shows whether it *ran* it. A
backend that catches its own error and runs the graph with PyTorch's eager kernels gives
right results, so nothing else would notice.

Two counts per graph the backend compiles, both of ATen compute ops seen by a
TorchDispatchMode (which observes, and changes no result):

* the graph's own ops: the graph Dynamo handed over, run eagerly once before the backend
  sees it, on copies of its example inputs and with the RNG state put back;
* the ops run eagerly: those that went through PyTorch's kernels while the backend's
  compiled callable ran (each call).

share = ops run eagerly / graph ops, at most 1. ``eager`` and ``aot_eager`` run every op
eagerly (~100%); ``inductor`` on the CPU runs its extern kernels (mm, conv) through ATen; a
backend with its own runtime should be near 0%.

The backward of a call is measured the same way: the reference is the graph's backward run
eagerly (``torch.autograd.grad`` from its outputs to its inputs, on the copies), and what
runs eagerly is counted while the autograd nodes between the call's outputs and its inputs
run (hooks on those nodes switch the counter on and off). A backend whose forward is its own
but whose backward is PyTorch's shows there and nowhere else.

What counts as compute: ops of the ``aten`` namespace except views (and in-place view ops),
allocation (``empty``, ``zeros``, ``fill_``...), copies (``copy_``, which writes mutations
back), metadata and assertions (NOT_COMPUTE). Ops of other namespaces are a backend's or a
library's own kernels and are not counted. A higher-order op (``wrap``, ``cond``,
checkpoint) is not looked into, on either side. Under compiled autograd (the
``compiled_autograd`` variant) the backward is a graph of its own, measured as one, and the
nodes are not hooked (compiled autograd would trace the hooks).
"""

from __future__ import annotations

import copy
import functools
import operator
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode, _pop_mode, _push_mode

from harness import compat, state

NOT_COMPUTE = frozenset({
    # allocation and initialisation of fresh memory
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
    "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "scalar_tensor",
    "zero_", "fill_", "resize_", "resize_as_", "set_",
    # copies: writing mutations back into inputs, and identity
    "copy_", "_copy_from", "_copy_from_and_resize", "detach", "alias", "lift_fresh", "lift_fresh_copy",
    "_unsafe_view",
    # metadata, synchronisation and checks
    "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "is_same_size", "is_pinned", "_local_scalar_dense",
    "_assert_async", "_assert_scalar", "_functional_assert_async", "_functional_assert_scalar",
    "_assert_tensor_metadata", "sym_constrain_range", "sym_constrain_range_for_size", "record_stream",
    "_has_compatible_shallow_copy_type", "_nested_tensor_size",
})

_PLAIN = (torch.Tensor, torch.nn.Parameter)
_BELOW_PYTHON = compat.dispatch_keys_below_python()
_COMPUTE_CACHE: dict[Any, str | None] = {}


def compute_name(func: Any) -> str | None:
    """``aten.mm`` for a compute op, None for anything NOT_COMPUTE, a view or not ATen."""
    try:
        return _COMPUTE_CACHE[func]
    except KeyError:
        pass
    name = None
    if getattr(func, "namespace", None) == "aten":
        packet = func._opname
        if not (func.is_view or torch.Tag.inplace_view in func.tags or packet in NOT_COMPUTE):
            name = f"aten.{packet}"
    _COMPUTE_CACHE[func] = name
    return name


class OpCounter(TorchDispatchMode):
    """Counts the ATen compute ops that run on plain tensors while it is active."""

    # Higher-order ops come here too (instead of raising for a mode without a rule for them);
    # they run as they would have, their insides unseen.
    supports_higher_order_operators = True

    def __init__(self) -> None:
        super().__init__()
        self.ops: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if compat.is_higher_order_op(func) or not all(kind in _PLAIN for kind in types):
            return func(*args, **kwargs)
        name = compute_name(func)
        if name is not None:
            self.ops[name] += 1
        elif getattr(func, "namespace", "aten") not in ("aten", "prim", "prims"):
            # A custom op (a backend's kernel, or a library's): the ATen ops it calls run
            # through PyTorch's kernels too, so it runs with this mode still counting.
            keys = [compat.dispatch_keys(value) for value in pytree.tree_leaves((args, kwargs))
                    if isinstance(value, torch.Tensor)]
            if keys:
                with self:
                    return func.redispatch(functools.reduce(operator.or_, keys) & _BELOW_PYTHON, *args, **kwargs)
        return func(*args, **kwargs)


class BackwardCounter(OpCounter):
    """Counts while the autograd nodes of one compiled call run, switched on and off by hooks
    on those nodes (``count_backward``). Pushed on the mode stack without the flags that
    ``with`` sets, which would outlive a node that raises (the autograd engine puts the
    stack itself back after each node); and Dynamo compiles as if it were not there (a
    backward compiled lazily, inside its node), so it changes nothing the scenario sees."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: Counter[int] = Counter()  # per node, how often it ran to the end (retain_graph)

    @classmethod
    def ignore_compile_internals(cls) -> bool:
        return True

    def start(self) -> None:
        end_left_on()
        _push_mode(self)

    def stop(self, node: int) -> None:
        if _get_current_dispatch_mode() is self:
            _pop_mode()
            self.runs[node] += 1


def end_left_on() -> None:
    """Switches off a BackwardCounter left on by a node that raised, where the engine did not."""
    while isinstance(_get_current_dispatch_mode(), BackwardCounter):
        _pop_mode()


@dataclass
class Reference:
    """A graph's own compute ops, forward and (when its outputs need gradients) backward."""

    forward: Counter[str]
    backward: Counter[str] | None = None


def graph_ops(gm: Callable, example_inputs: list[Any]) -> Reference | None:
    """The compute ops ``gm`` runs eagerly on copies of ``example_inputs``, and those of its
    backward; None when it cannot be run apart from the scenario (tensor subclass inputs, or
    it raised)."""
    tensors = [value for value in example_inputs if isinstance(value, torch.Tensor)]
    if any(type(value) not in _PLAIN or not _backed(value) for value in tensors):
        return None
    try:
        copies = [_copy(value) for value in example_inputs]
        if isinstance(gm, torch.fx.GraphModule) and any(node.op == "get_attr" for node in gm.graph.nodes):
            # State Dynamo attached to the graph instead of passing it (an optimizer's
            # parameters) would be written by this run: it runs on a copy of that too.
            gm = copy.deepcopy(gm)
        counter = OpCounter()
        # The RNG streams, grad mode and autocast are put back (a graph may set grad mode part
        # way, or raise inside an autocast block).
        with torch.random.fork_rng(devices=[]), _device_rng(), torch.set_grad_enabled(torch.is_grad_enabled()), \
                state.autocast_kept():
            with counter:
                outputs = gm(*copies)
            backward = _backward_ops(outputs, copies)
    except Exception:
        return None
    return Reference(counter.ops, backward)


def _backward_ops(outputs: Any, inputs: list[Any]) -> Counter[str] | None:
    """The compute ops of the backward from ``outputs`` to ``inputs``, counted as a call's
    backward is (``count_backward``); None when there is none, or compiled autograd would
    capture it."""
    differentiable = [value for value in _tensors(outputs) if value.grad_fn is not None]
    wanted = [value for value in inputs if isinstance(value, torch.Tensor) and value.requires_grad]
    if not differentiable or not wanted or compat.compiled_autograd_active():
        return None
    counter = count_backward(differentiable, _ends(inputs))
    if counter is None:
        return None
    seeds = [torch.ones_like(value) for value in differentiable]
    try:
        torch.autograd.grad(differentiable, wanted, seeds, allow_unused=True)
    except Exception:  # e.g. a graph whose backward raises by design
        return None
    return counter.ops if counter.runs else None


def _tensors(value: Any) -> list[torch.Tensor]:
    return [leaf for leaf in pytree.tree_leaves(value) if isinstance(leaf, torch.Tensor)]


def _backed(tensor: torch.Tensor) -> bool:
    """Whether its storage holds all its elements: Dynamo hands over placeholders for
    parameters created inside the graph whose storage is resized only when the graph runs."""
    if tensor.is_sparse or tensor.numel() == 0:
        return True
    try:
        needed = tensor.storage_offset() + sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride())) + 1
        return tensor.untyped_storage().nbytes() >= needed * tensor.element_size()
    except Exception:
        return False


def _copy(value: Any) -> Any:
    if not isinstance(value, torch.Tensor):
        # A size Dynamo passes as a symbol: its example value, unguarded (an int() of it
        # would specialize a dynamic size while the graph is being compiled).
        plain = compat.example_value(value)
        if plain is None and value is not None:
            raise ValueError("an unbacked symbolic input has no example value")
        return plain
    copy = value.detach().clone().requires_grad_(value.requires_grad)
    # A non-leaf stays one: a graph may write into it in place, which a leaf would refuse.
    return copy.clone() if value.requires_grad and not value.is_leaf else copy


def _device_rng():
    """Forks the default device's RNG too, when it has one apart from the CPU's."""
    device = torch.get_default_device()
    if device.type == "cpu" or not hasattr(torch, device.type):
        return torch.random.fork_rng(enabled=False)
    return torch.random.fork_rng(devices=[device], device_type=device.type)


@dataclass
class Pass:
    """One run of a graph, forward or backward: what ran eagerly, against the graph's own ops."""

    call: int  # the call's number, from 1
    backward: bool
    eager: Counter[str]
    total: int  # the graph's own compute ops in this pass (times its runs)

    @property
    def share(self) -> float:
        return min(1.0, sum(self.eager.values()) / self.total)

    @property
    def label(self) -> str:
        return f"the backward of call {self.call}" if self.backward else f"call {self.call}"


@dataclass
class GraphRecord:
    """One compiled graph: its own ops and, per call of the compiled callable, the ops that
    ran eagerly in the call and in its backward."""

    reference: Reference | None
    calls: list[Counter[str]] = field(default_factory=list)
    backwards: dict[int, BackwardCounter] = field(default_factory=dict)  # by call number

    def passes(self) -> list[Pass]:
        """The measured passes, forward calls first."""
        if self.reference is None:
            return []
        forward_total = sum(self.reference.forward.values())
        found = [Pass(number, False, eager, forward_total)
                 for number, eager in enumerate(self.calls, 1) if forward_total]
        backward_total = sum(self.reference.backward.values()) if self.reference.backward else 0
        for number, counter in self.backwards.items():
            runs = max(counter.runs.values(), default=0)
            if backward_total and runs:
                found.append(Pass(number, True, counter.ops, backward_total * runs))
        return found


def probe(compiled: Callable, record: GraphRecord) -> Callable:
    """``compiled``, counting the ops that run eagerly in each call, and in its backward, into
    ``record``."""
    boxed = getattr(compiled, "_boxed_call", False)  # called with one list, which it may clear

    def counted(*args: Any, **kwargs: Any) -> Any:
        end_left_on()
        # (Dynamo calls even a boxed callable with its arguments spread out.)
        boxed_call = boxed and len(args) == 1 and isinstance(args[0], list) and not kwargs
        inputs = list(args[0]) if boxed_call else (args, kwargs)
        ends = _ends(inputs)  # before the call: an input written in place gets a node of the call's
        counter = OpCounter()
        with counter:
            result = compiled(*args, **kwargs)
        record.calls.append(counter.ops)
        if record.reference is not None and record.reference.backward and not compat.compiled_autograd_active():
            backward = count_backward(result, ends)
            if backward is not None:
                record.backwards[len(record.calls)] = backward
        return result

    if boxed:
        counted._boxed_call = True  # type: ignore[attr-defined]
    return counted


def _ends(inputs: Any) -> set[Any]:
    """Where the backward of a call on ``inputs`` ends: their autograd nodes, and those of the
    bases of views among them (a view written in place gives its base a node of the call's)."""
    tensors = _tensors(inputs)
    return {value.grad_fn for value in (*tensors, *(value._base for value in tensors if value._base is not None))
            if value.grad_fn is not None}


def count_backward(outputs: Any, ends: set[Any]) -> BackwardCounter | None:
    """A BackwardCounter switched on while the autograd nodes between ``outputs`` and the
    call's inputs (``ends``; leaves end at their AccumulateGrad) run; None when none would
    count. The nodes of views are passed through, not counted, as views are not in the
    forward: AOTAutograd replays an output that is a view outside the compiled graph, so
    the backward of that view is autograd's own, never the backend's."""
    counter = BackwardCounter()
    pending = [value.grad_fn for value in _tensors(outputs) if value.grad_fn is not None]
    seen: set[Any] = set()
    hooked = False
    while pending:
        node = pending.pop()
        if node is None or node in seen or node in ends or hasattr(node, "variable"):  # AccumulateGrad
            continue
        seen.add(node)
        pending.extend(next_node for next_node, _ in node.next_functions)
        if _is_view_backward(node):
            continue
        # The node's id, not the node: a hook holding its node would keep the graph alive.
        node.register_prehook(functools.partial(_start, counter))
        node.register_hook(functools.partial(_stop, counter, id(node)))
        hooked = True
    return counter if hooked else None


@functools.lru_cache(maxsize=None)
def _view_node_type(name: str) -> bool:
    """``ExpandBackward0`` -> whether aten.expand is a view op."""
    match = re.fullmatch(r"([A-Z]\w*?)Backward\d*", name)
    if not match:
        return False
    packet = getattr(torch.ops.aten, re.sub(r"(?<!^)(?=[A-Z])", "_", match.group(1)).lower(), None)
    try:
        return any(getattr(packet, overload).is_view for overload in packet.overloads())
    except Exception:
        return False


def _is_view_backward(node: Any) -> bool:
    return _view_node_type(type(node).__name__)


def _start(counter: BackwardCounter, grad_outputs: Any) -> None:
    counter.start()


def _stop(counter: BackwardCounter, node: int, grad_inputs: Any, grad_outputs: Any) -> None:
    counter.stop(node)


def summarize(records: list[GraphRecord]) -> dict[str, Any] | None:
    """For results.json: per test, over every call (and backward) of every measured graph;
    ``backward`` again over the backwards alone, when one was measured."""
    end_left_on()
    measured = [one for record in records for one in record.passes()]
    if not measured:
        return None
    eager: Counter[str] = Counter()
    for one in measured:
        eager.update(one.eager)
    worst = max(measured, key=lambda one: one.share)
    summary = {"calls": sum(not one.backward for one in measured), **_totals(measured),
               "max_call_share": round(worst.share, 4), "worst_call_ops": dict(worst.eager.most_common()),
               "eager_op_counts": dict(eager.most_common())}
    backwards = [one for one in measured if one.backward]
    if backwards:
        summary["backward"] = {"calls": len(backwards), **_totals(backwards)}
    return summary


def _totals(passes: list[Pass]) -> dict[str, Any]:
    total = sum(one.total for one in passes)
    # Each pass counts for at most its own ops: a backward may recompute forward ops.
    return {"graph_ops": total, "eager_ops": sum(sum(one.eager.values()) for one in passes),
            "share": round(sum(one.share * one.total for one in passes) / total, 4)}


# A pass that ran at least this share of its graph's ops eagerly ran wholly on PyTorch's
# kernels: a silent fallback to eager (a graph run as handed over gives exactly 1).
WHOLLY = 0.999


def _ops_text(eager: Counter[str]) -> str:
    ops = ", ".join(f"{name} x{count}" for name, count in eager.most_common(8))
    more = len(eager) - 8
    return ops + (f" and {more} more" if more > 0 else "")


def ran_wholly_eagerly(records: list[GraphRecord]) -> str | None:
    """A one-line message for the first compiled call (or backward) that ran wholly on
    PyTorch's kernels, or None."""
    for index, record in enumerate(records, 1):
        for one in record.passes():
            if one.share >= WHOLLY:
                return (f"graph {index}, {one.label} ran all {one.total} of its compute ops through "
                        f"PyTorch's kernels: {_ops_text(one.eager)}")
    return None


def over_limit(records: list[GraphRecord], limit: float) -> str | None:
    """A one-line message for the first compiled call (or backward) that ran more than
    ``limit`` eagerly."""
    for index, record in enumerate(records, 1):
        for one in record.passes():
            if one.share > limit + 1e-9:
                return (f"graph {index}, {one.label} ran {one.share:.0%} of its {one.total} "
                        f"compute ops eagerly (limit {limit:.0%}), through PyTorch's kernels: {_ops_text(one.eager)}")
    return None
