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

What counts as compute: ops of the ``aten`` namespace except views (and in-place view ops),
allocation (``empty``, ``zeros``, ``fill_``...), copies (``copy_``, which writes mutations
back), metadata and assertions (NOT_COMPUTE). Ops of other namespaces are a backend's or a
library's own kernels and are not counted. A higher-order op (``wrap``, ``cond``,
checkpoint) is not looked into, on either side. Only the forward of a compiled call is
seen; a backward is measured where it is compiled as a graph of its own (the
``compiled_autograd`` variant).
"""

from __future__ import annotations

import functools
import operator
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

from harness.share_limit import MEASURE_ENV

NOT_COMPUTE = frozenset({
    # allocation and initialisation of fresh memory
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
    "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "scalar_tensor",
    "zero_", "fill_", "resize_", "resize_as_", "set_",
    # copies: writing mutations back into inputs, and identity
    "copy_", "_copy_from", "_copy_from_and_resize", "detach", "alias", "lift_fresh", "lift_fresh_copy",
    "_unsafe_view",
    # metadata, synchronisation and checks
    "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "is_same_size", "_local_scalar_dense",
    "_assert_async", "_assert_scalar", "_functional_assert_async", "_functional_assert_scalar",
    "_assert_tensor_metadata", "sym_constrain_range", "sym_constrain_range_for_size", "record_stream",
    "_has_compatible_shallow_copy_type", "_nested_tensor_size",
})

_PLAIN = (torch.Tensor, torch.nn.Parameter)
_BELOW_PYTHON = torch._C._dispatch_keyset_full_after(torch._C.DispatchKey.Python).remove(
    torch._C.DispatchKey.PythonDispatcher)
_COMPUTE_CACHE: dict[Any, str | None] = {}


def measuring() -> bool:
    return os.environ.get(MEASURE_ENV, "1").strip() != "0"


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
        if isinstance(func, torch._ops.HigherOrderOperator) or not all(kind in _PLAIN for kind in types):
            return func(*args, **kwargs)
        name = compute_name(func)
        if name is not None:
            self.ops[name] += 1
        elif getattr(func, "namespace", "aten") not in ("aten", "prim", "prims"):
            # A custom op (a backend's kernel, or a library's): the ATen ops it calls run
            # through PyTorch's kernels too, so it runs with this mode still counting.
            keys = [torch._C._dispatch_keys(value) for value in pytree.tree_leaves((args, kwargs))
                    if isinstance(value, torch.Tensor)]
            if keys:
                with self:
                    return func.redispatch(functools.reduce(operator.or_, keys) & _BELOW_PYTHON, *args, **kwargs)
        return func(*args, **kwargs)


def graph_ops(gm: Callable, example_inputs: list[Any]) -> Counter[str] | None:
    """The compute ops ``gm`` runs eagerly on copies of ``example_inputs``; None when it
    cannot be run apart from the scenario (tensor subclass inputs, or it raised)."""
    tensors = [value for value in example_inputs if isinstance(value, torch.Tensor)]
    if any(type(value) not in _PLAIN or not _backed(value) for value in tensors):
        return None
    try:
        copies = [_copy(value) for value in example_inputs]
        counter = OpCounter()
        # The RNG streams and grad mode are put back (a graph may set grad mode part way).
        with torch.random.fork_rng(devices=[]), _device_rng(), torch.set_grad_enabled(torch.is_grad_enabled()):
            with counter:
                gm(*copies)
    except Exception:
        return None
    return counter.ops


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
        return value
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
class GraphRecord:
    """One compiled graph: its own ops and, per call of the compiled callable, the ops that
    ran eagerly."""

    graph_ops: Counter[str] | None
    calls: list[Counter[str]] = field(default_factory=list)

    def share(self, eager: Counter[str]) -> float | None:
        total = sum(self.graph_ops.values()) if self.graph_ops is not None else 0
        return min(1.0, sum(eager.values()) / total) if total else None


def probe(compiled: Callable, record: GraphRecord) -> Callable:
    """``compiled``, counting the ops that run eagerly in each call into ``record``."""

    def counted(*args: Any, **kwargs: Any) -> Any:
        counter = OpCounter()
        with counter:
            result = compiled(*args, **kwargs)
        record.calls.append(counter.ops)
        return result

    if getattr(compiled, "_boxed_call", False):  # called with one list, which it may clear
        counted._boxed_call = True  # type: ignore[attr-defined]
    return counted


def summarize(records: list[GraphRecord]) -> dict[str, Any] | None:
    """For results.json: per test, over every call of every measured graph."""
    measured = [(record, call) for record in records for call in record.calls if record.share(call) is not None]
    if not measured:
        return None
    graph_total = sum(sum(record.graph_ops.values()) for record, _ in measured)
    eager = Counter()
    for _, call in measured:
        eager.update(call)
    worst_record, worst_call = max(measured, key=lambda pair: pair[0].share(pair[1]))
    return {
        "calls": len(measured),
        "graph_ops": graph_total,
        "eager_ops": sum(eager.values()),
        "share": round(min(1.0, sum(eager.values()) / graph_total), 4),
        "max_call_share": round(worst_record.share(worst_call), 4),
        "worst_call_ops": dict(worst_call.most_common()),
        "eager_op_counts": dict(eager.most_common()),
    }


def over_limit(records: list[GraphRecord], limit: float) -> str | None:
    """A one-line message for the first compiled call that ran more than ``limit`` eagerly."""
    for index, record in enumerate(records, 1):
        for number, call in enumerate(record.calls, 1):
            share = record.share(call)
            if share is not None and share > limit + 1e-9:
                ops = ", ".join(f"{name} x{count}" for name, count in call.most_common(8))
                more = len(call) - 8
                return (f"graph {index}, call {number} ran {share:.0%} of its {sum(record.graph_ops.values())} "
                        f"compute ops eagerly (limit {limit:.0%}), through PyTorch's kernels: {ops}"
                        + (f" and {more} more" if more > 0 else ""))
    return None
