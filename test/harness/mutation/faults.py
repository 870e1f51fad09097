"""The ways a backend goes wrong, each as a rewrite of one operator call of an ATen graph (a
``Fault``), or of the compiled graph's calls as a whole (a ``CallFault``).

A fault says which operator calls it can change (``eligible``: a reduction, a pointwise call
with a broadcast operand, an indexing call...) and builds, for one such call, the function
that computes the wrong result at run time from the right one and the call's own arguments
(``build``). Whether it fires is the mutant's condition (harness.features.catalogue, read
by test/harness/mutation/mutants.py): these faults are what real backend bugs do once their
condition holds.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree

from harness import compat
from harness.features import catalogue, families
from harness.features.views import Site

# Far outside every tolerance in harness.checks.compare (the loosest, bfloat16, is 1.6e-2
# relative plus 1e-2 absolute), yet small enough to leave the values plausible at a glance.
NUDGE = 5e-2

# A function called as ``apply(result, args, kwargs)`` with the call's right result (None
# where the right call raised) and its arguments, returning the wrong result (None: it
# raises as the right call did).
Apply = Callable[[Any, tuple, dict], Any]


@dataclass(frozen=True)
class Fault:
    """One kind of backend bug at one operator call."""

    name: str
    means: str  # one line: the bug it stands for
    conditions: tuple[str, ...]  # the features it is paired with: a mutant each (with seeds)
    eligible: Callable[[Site], bool]
    build: Callable[[Site], Apply]
    # Where it can be: "any" graph, or only a "forward" or "backward" one.
    graphs: str = "any"
    # It remembers the calls it sees (a cache, a counter): it sees each call, its condition
    # holding or not, and only where it holds is its result used.
    remembers: bool = False
    # Whether its bug shows in values a tolerance sees; not so for references kept (a memory
    # check sees them) or a last bit that changes (a bit-for-bit comparison of two calls).
    shows_in_values: bool = True


@dataclass(frozen=True)
class CallFault:
    """One kind of backend bug in the calls of a compiled graph as a whole: ``wrap(compiled,
    fires, changed)`` is the compiled graph's call, doing the wrong thing when ``fires()``,
    and calling ``changed()`` when that changed something."""

    name: str
    means: str
    conditions: tuple[str, ...]
    wrap: Callable[[Callable, Callable[[], bool], Callable[[], None]], Callable]
    shows_in_values: bool = True
    # Whose calls it wraps: the compiled "forward" call (the whole autograd function), or
    # each call of a "backward" graph (its boxed list of arguments in, gradients out).
    graphs: str = "forward"


@dataclass(frozen=True)
class GraphFault:
    """One kind of backend bug in the graph Dynamo hands the backend, before AOTAutograd
    traces it: ``sites(gm)`` are the nodes it changes, ``rewrite(gm, node)`` changes one."""

    name: str
    means: str
    conditions: tuple[str, ...]  # conditions read on Dynamo's graph at compile time only
    sites: Callable[[torch.fx.GraphModule], list[torch.fx.Node]]
    rewrite: Callable[[torch.fx.GraphModule, torch.fx.Node], None]
    shows_in_values: bool = True


# -- reading a call ------------------------------------------------------------------------------


def _floating(meta: Any) -> bool:
    return meta.dtype in ("float16", "bfloat16", "float32", "float64") or meta.dtype.startswith("complex")


def _computes(site: Site) -> bool:
    """An operator call that computes new values: not a view, a copy or a fill."""
    return site.node is not None and not site.is_view and site.family not in (
        families.CREATION, families.COPY) and not site.name.endswith("_")


def _floating_result(site: Site) -> bool:
    return _computes(site) and bool(site.outputs) and any(_floating(meta) and (meta.numel or 1) > 0
                                                          for meta in site.outputs)


def _tensors(value: Any) -> list[torch.Tensor]:
    return [leaf for leaf in pytree.tree_leaves(value) if isinstance(leaf, torch.Tensor)]


def _each_tensor(value: Any, change: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    return pytree.tree_map(lambda leaf: change(leaf) if isinstance(leaf, torch.Tensor) else leaf, value)


def _recompute(site: Site, args: tuple, kwargs: dict) -> Any:
    return site.node.target(*args, **kwargs)


# -- result faults -------------------------------------------------------------------------------


def _nudged(tensor: torch.Tensor) -> torch.Tensor:
    if not (tensor.dtype.is_floating_point or tensor.is_complex()):
        return tensor
    return tensor + (NUDGE * (1 + tensor.detach().abs())).to(tensor.dtype)


def _perturb(site: Site) -> Apply:
    return lambda result, args, kwargs: _each_tensor(result, _nudged)


def _through_bfloat16(site: Site) -> Apply:
    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        return _each_tensor(result, lambda tensor: tensor.to(torch.bfloat16).to(tensor.dtype)
                            if tensor.dtype in (torch.float32, torch.float64) else tensor)

    return apply


def _accumulated_in_bfloat16(site: Site) -> Apply:
    """The reduction run over its inputs rounded to bfloat16, its result rounded too."""
    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        rounded = pytree.tree_map(lambda leaf: leaf.to(torch.bfloat16).to(leaf.dtype) if isinstance(
            leaf, torch.Tensor) and leaf.dtype in (torch.float32, torch.float64) else leaf, (args, kwargs))
        return _through_bfloat16(site)(_recompute(site, *rounded), args, kwargs)

    return apply


def _nan_skipped(site: Site) -> Apply:
    """A reduction that leaves NaN out, as if it were absent (the identity of the reduction
    where it stood: 0 for sums, -inf for maxima...)."""
    fill = {"amax": -math.inf, "max": -math.inf, "amin": math.inf, "min": math.inf, "prod": 1.0}.get(site.name, 0.0)

    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        cleaned = pytree.tree_map(lambda leaf: torch.nan_to_num(leaf, nan=fill, posinf=math.inf, neginf=-math.inf)
                                  if isinstance(leaf, torch.Tensor) and leaf.dtype.is_floating_point else leaf,
                                  (args, kwargs))
        return _recompute(site, *cleaned)

    return apply


def _infinity_saturated(site: Site) -> Apply:
    def change(tensor: torch.Tensor) -> torch.Tensor:
        if not tensor.dtype.is_floating_point:
            return tensor
        largest = torch.finfo(tensor.dtype).max
        return tensor.clamp(-largest, largest)

    return lambda result, args, kwargs: _each_tensor(result, change)


def _zero_sign_lost(site: Site) -> Apply:
    def change(tensor: torch.Tensor) -> torch.Tensor:
        return tensor + 0.0 if tensor.dtype.is_floating_point else tensor  # -0.0 + 0.0 is +0.0

    return lambda result, args, kwargs: _each_tensor(result, change)


def _flushed(site: Site) -> Apply:
    def change(tensor: torch.Tensor) -> torch.Tensor:
        if not tensor.dtype.is_floating_point:
            return tensor
        small = tensor.abs() < torch.finfo(tensor.dtype).smallest_normal
        return torch.where(small, torch.zeros_like(tensor), tensor)

    return lambda result, args, kwargs: _each_tensor(result, change)


def _saturated_half(site: Site) -> Apply:
    """Large values saturate at float16's largest (a kernel computing in half precision)."""
    def change(tensor: torch.Tensor) -> torch.Tensor:
        return tensor.clamp(-65504.0, 65504.0) if tensor.dtype in (torch.float32, torch.float64) else tensor

    return lambda result, args, kwargs: _each_tensor(result, change)


def _sixteen_bits(site: Site) -> Apply:
    def change(tensor: torch.Tensor) -> torch.Tensor:
        return tensor.to(torch.int16).to(tensor.dtype) if tensor.dtype in (torch.int32, torch.int64) else tensor

    return lambda result, args, kwargs: _each_tensor(result, change)


def _plus_one(site: Site) -> Apply:
    def change(tensor: torch.Tensor) -> torch.Tensor:
        return tensor + 1 if not (tensor.dtype.is_floating_point or tensor.is_complex() or tensor.dtype == torch.bool) \
            else tensor

    return lambda result, args, kwargs: _each_tensor(result, change)


def _one_ulp_on_odd_calls(site: Site) -> Apply:
    """Results that differ in their last bit from one call to the next (a reduction whose
    order changes, as atomics make it)."""
    calls = [0]

    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        calls[0] += 1
        if calls[0] % 2:
            return result
        return _each_tensor(result, lambda tensor: torch.nextafter(tensor, torch.full_like(tensor, math.inf))
                            if tensor.dtype.is_floating_point else tensor)

    return apply


def _stale(site: Site) -> Apply:
    """The result of the call's first run, replayed while the shapes stay (a cache never
    refreshed)."""
    kept: list[Any] = []

    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        leaves = _tensors(result)
        if not kept or [(t.shape, t.dtype) for t in _tensors(kept[0])] != [(t.shape, t.dtype) for t in leaves]:
            kept[:] = [_each_tensor(result, lambda tensor: tensor.detach().clone())]
            return result
        return kept[0]

    return apply


# -- faults that read an argument wrongly ----------------------------------------------------------


def _broadcast_dims(site: Site) -> list[int]:
    """The result's dimensions along which an operand broadcasts."""
    if not site.outputs:
        return []
    result = site.outputs[0].shape
    dims = []
    for operand in site.operands:
        if 0 < operand.ndim <= len(result):
            dims += [position for position in range(len(result) - operand.ndim)
                     if result[position] is not None and result[position] > 1]  # dimensions it lacks
            for index, size in enumerate(operand.shape):
                position = len(result) - operand.ndim + index
                if size == 1 and result[position] is not None and result[position] > 1:
                    dims.append(position)
    return sorted(set(dims))


def _wrong_row(site: Site) -> Apply:
    """An operand broadcast along a dimension read one position along: the result is off by
    one place along that dimension."""
    dims = _broadcast_dims(site)

    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        return _each_tensor(result, lambda tensor: tensor.roll(1, dims[0]) if tensor.dim() > dims[0] else tensor)

    return apply


def _promotion_lost(site: Site) -> Apply:
    """The result computed in its first operand's dtype (an integer times a float truncated;
    a float16 operand keeping float32 ones to half precision)."""
    dtype = getattr(torch, site.operands[0].dtype)

    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        return _each_tensor(result, lambda tensor: tensor.to(dtype).to(tensor.dtype))

    return apply


def _zero_dim_promotes(site: Site) -> Apply:
    """A 0-d operand of a wider dtype sets the result's dtype, as a tensor of the same rank
    would (float32 times a 0-d float64 gives float64)."""
    wide = getattr(torch, next(meta.dtype for meta in site.operands if meta.ndim == 0))

    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        return _each_tensor(result, lambda tensor: tensor.to(torch.promote_types(tensor.dtype, wide)))

    return apply


def _scalar_rounded(site: Site) -> Apply:
    """A Python number operand rounded to the tensor's dtype before use (2.5 with an integer
    tensor is 2; 1e-4 with a float16 one is float16's nearest)."""
    dtype = getattr(torch, site.operands[0].dtype)

    def rounded(value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return value
        return torch.tensor(value).to(dtype).item() if dtype != torch.bool else value

    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        return _recompute(site, tuple(rounded(arg) for arg in args), kwargs)

    return apply


def _as_if_contiguous(tensor: torch.Tensor, from_start: bool) -> torch.Tensor:
    """``tensor``'s storage read in order from its offset (from the storage's start with
    ``from_start``) as if it were contiguous: a kernel that ignores strides or the offset.
    Past the storage's end it wraps around."""
    if tensor.numel() <= 1 or tensor.is_complex():
        return tensor
    flat = torch.empty(0, dtype=tensor.dtype, device=tensor.device).set_(
        tensor.untyped_storage(), 0, (tensor.untyped_storage().nbytes() // tensor.element_size(),), (1,))
    if flat.numel() == 0:
        return tensor
    start = 0 if from_start else tensor.storage_offset()
    positions = (torch.arange(tensor.numel(), device=tensor.device) + start) % flat.numel()
    return flat[positions].reshape(tensor.shape).detach().requires_grad_(tensor.requires_grad)


def _strides_ignored(from_start: bool) -> Callable[[Site], Apply]:
    def build(site: Site) -> Apply:
        def apply(result: Any, args: tuple, kwargs: dict) -> Any:
            def reread(leaf: Any) -> Any:
                if not isinstance(leaf, torch.Tensor) or leaf.is_contiguous() and not (from_start and
                                                                                       leaf.storage_offset()):
                    return leaf
                return _as_if_contiguous(leaf, from_start)

            with torch.no_grad():
                changed = pytree.tree_map(reread, (args, kwargs))
            return _recompute(site, *changed)

        return apply

    return build


_INDEXING_DIM = {"index_select": 1, "gather": 1, "scatter": 1, "scatter_add": 1, "scatter_reduce": 1, "index_add": 1,
                 "index_copy": 1, "index_fill": 1, "take_along_dim": 2}


def _index_positions(site: Site) -> bool:
    return site.family == families.INDEXING and any(meta.dtype in ("int64", "int32") for meta in site.tensors)


def _indices_changed(change: Callable[[torch.Tensor, int], torch.Tensor]) -> Callable[[Site], Apply]:
    """A fault in how an indexing call reads its indices: each integer tensor argument passed
    through ``change(indices, length of the indexed dimension)``."""

    def build(site: Site) -> Apply:
        def apply(result: Any, args: tuple, kwargs: dict) -> Any:
            data = next((arg for arg in args if isinstance(arg, torch.Tensor) and not _integer(arg)), None)
            if data is None or data.dim() == 0:
                return result
            if site.name == "embedding":
                data = args[0]
            dim_at = _INDEXING_DIM.get(site.name)
            dim = args[dim_at] if dim_at is not None and len(args) > dim_at and type(args[dim_at]) is int else 0
            length = data.shape[dim]

            def changed(leaf: Any) -> Any:
                return change(leaf, length) if isinstance(leaf, torch.Tensor) and _integer(leaf) else leaf

            new_args = tuple(changed(arg) if index else arg for index, arg in enumerate(args))
            new_args = tuple([changed(item) for item in arg] if isinstance(arg, (list, tuple)) else arg
                             for arg in new_args)
            return _recompute(site, new_args, kwargs)

        return apply

    return build


def _integer(tensor: torch.Tensor) -> bool:
    return tensor.dtype in (torch.int64, torch.int32)


def _ties_broken_last(site: Site) -> Apply:
    """An arg-reduction that picks the last of equal values, not the first."""
    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        data = args[0]
        dim = args[1] if len(args) > 1 and type(args[1]) is int else kwargs.get("dim")
        if dim is None:
            flipped = data.reshape(-1).flip(0)
            return (data.numel() - 1) - site.node.target(flipped, *args[1:], **kwargs)
        flipped = data.flip(dim)
        return (data.shape[dim] - 1) - site.node.target(flipped, *args[1:], **kwargs)

    return apply


def _duplicates_overwrite(site: Site) -> Apply:
    """An accumulating write whose repeated indices keep one value instead of their sum."""
    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        if site.name == "index_put":
            return torch.ops.aten.index_put.default(args[0], args[1], args[2], False)
        if site.name == "scatter_add":
            return torch.ops.aten.scatter.src(*args[:4])
        if site.name == "index_add":
            return torch.ops.aten.index_copy.default(args[0], args[1], args[2], args[3]) + args[0]
        return result

    return apply


def _accumulates(site: Site) -> bool:
    if site.name == "index_put":
        node = site.node
        return bool(node.args[3] if len(node.args) > 3 else node.kwargs.get("accumulate", False))
    return site.name in ("scatter_add", "index_add")


# -- faults of value semantics (harness/checks/value_semantics.py) --------------------------------


def _round_half_away(site: Site) -> Apply:
    """Ties rounded away from zero (C's round), not to even: 0.5 -> 1, 2.5 -> 3, -0.5 -> -1."""
    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        x = args[0]
        decimals = args[1] if len(args) > 1 else kwargs.get("decimals", 0)
        scale = 10.0 ** decimals
        return (torch.sign(x) * torch.floor(x.abs() * scale + 0.5) / scale).to(result.dtype)

    return apply


def _clamp_max_first(site: Site) -> Apply:
    """The upper bound applied first, then the lower: where min is above max, min wins."""
    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        x = args[0]
        low = args[1] if len(args) > 1 else kwargs.get("min")
        high = args[2] if len(args) > 2 else kwargs.get("max")
        if low is None or high is None:
            return result
        return torch.clamp(torch.clamp(x, max=high), min=low)

    return apply


def _masked_row_zeros(site: Site) -> Apply:
    """A softmax's row that is -inf everywhere comes out zeros (a kernel guarding its
    maximum), not NaN."""
    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        x, dim = args[0], args[1] if len(args) > 1 else kwargs.get("dim", -1)
        masked = (x == -math.inf).all(dim, keepdim=True)
        return result.masked_fill(masked, 0.0)

    return apply


def _attention_masked_row_nan(site: Site) -> Apply:
    """An attention row whose mask is -inf (or False) everywhere comes out NaN (a plain
    softmax over its scores), not eager's zeros."""
    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        mask = kwargs.get("attn_mask")
        if mask is None or not isinstance(result, (tuple, list)):
            return result
        masked = (~mask).all(-1) if mask.dtype == torch.bool else (mask == -math.inf).all(-1)
        out = result[0]
        masked = masked.expand(out.shape[:-1]).unsqueeze(-1)
        return type(result)([out.masked_fill(masked, math.nan), *result[1:]])

    return apply


def _float8_unsaturated(site: Site) -> Apply:
    """A conversion to float8 past its range not saturating as eager's does: float8_e4m3fn
    gives NaN there (eager: +-448, infinities included), float8_e5m2 its largest finite
    number (eager: infinity)."""
    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        source = args[0]
        if not isinstance(result, torch.Tensor) or source.dtype.itemsize == 1:
            return result
        largest = torch.finfo(result.dtype).max
        past = source.abs().double() > largest
        if result.dtype == torch.float8_e4m3fn:
            wrong = torch.full_like(result.float(), math.nan)
        else:
            wrong = torch.sign(source.double()).float() * largest
        return torch.where(past, wrong.to(result.dtype), result)

    return apply


def _bytes_saturated(site: Site) -> Apply:
    """A float converted to uint8 clamped into [0, 255] (inductor's vectorized CPU conversion
    before pytorch#157267 gave 0 for every negative float), not truncated then wrapped
    modulo 256 as eager's conversion through int64 does."""
    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        if not isinstance(result, torch.Tensor) or result.dtype != torch.uint8 or not args[0].dtype.is_floating_point:
            return result
        return args[0].detach().double().trunc().clamp(0, 255).to(torch.uint8)

    return apply


_SIGNED = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}


def _unsigned_as_signed(site: Site) -> Apply:
    """An unsigned 16-, 32- or 64-bit kernel computing on the signed type of its width: the
    same bits, read as signed."""
    def signed(leaf: Any) -> Any:
        if isinstance(leaf, torch.Tensor) and leaf.dtype in _SIGNED:
            return leaf.view(_SIGNED[leaf.dtype])
        return _SIGNED.get(leaf, leaf) if isinstance(leaf, torch.dtype) else leaf

    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        wrong = _recompute(site, *pytree.tree_map(signed, (args, kwargs)))
        right, wrong_leaves = pytree.tree_leaves(result), pytree.tree_leaves(wrong)
        back = [w.view(r.dtype) if isinstance(w, torch.Tensor) and r.dtype in _SIGNED and w.dtype == _SIGNED[r.dtype]
                else w for r, w in zip(right, wrong_leaves)]
        return pytree.tree_unflatten(back, pytree.tree_structure(result))

    return apply


def _padding_row_gradient(site: Site) -> Apply:
    """An embedding's backward that gives the padding row its gradient as any other."""
    def apply(result: Any, args: tuple, kwargs: dict) -> Any:
        changed = list(args)
        if len(changed) > 3:
            changed[3] = -1
        return _recompute(site, tuple(changed), {**kwargs, **({"padding_idx": -1} if "padding_idx" in kwargs else {})})

    return apply


def _max_norm_skipped(site: Site) -> Apply:
    """max_norm not applied: the rows keep their norms."""
    return lambda result, args, kwargs: args[0].clone()


def _converts_to_float8(site: Site) -> bool:
    return site.node is not None and bool(site.outputs) and site.outputs[0].dtype.startswith("float8") and \
        bool(site.tensors) and not site.tensors[0].dtype.startswith("float8")


def _converts_float_to_bytes(site: Site) -> bool:
    return site.node is not None and bool(site.outputs) and site.outputs[0].dtype == "uint8" and \
        bool(site.tensors) and site.tensors[0].dtype in ("float16", "bfloat16", "float32", "float64")


def _reads_wide_unsigned(site: Site) -> bool:
    return site.node is not None and not site.is_view and any(
        meta.dtype in ("uint16", "uint32", "uint64") for meta in (*site.tensors, *site.outputs))


# -- the faults ------------------------------------------------------------------------------------

_INTEGERS = ("int64", "int32", "int16", "int8", "uint8")
# Perturbing a floating result: every condition of an operator call but those a float result
# never meets (integer kernels have faults of their own), or an ATen graph never shows.
_SITE_FEATURES = tuple(name for name, feature in catalogue.CATALOGUE.items() if feature.site is not None
                       and name not in (catalogue.TENSOR_SUBCLASSES, catalogue.DISTRIBUTED, catalogue.DYNAMIC_SHAPES,
                                        *_INTEGERS[1:]))
_CALL_FEATURES = ("later-call", "grad-disabled", "inference-mode", "deterministic", catalogue.AUTOCAST, "backward",
                  "backward-twice")
_GRAPH_FEATURES = ("large-graph", "fan-in", "fan-out", "several-outputs", "output-aliases-input", "outputs-alias",
                   catalogue.INPUT_MUTATION, catalogue.TRAINING, "parameters", "buffers")
_VALUE_FEATURES = ("nan", "infinity", "negative-zero", "subnormal", "large-values", "ties", "repeated-indices",
                   "negative-indices")
_LAYOUT = tuple(feature.name for feature in catalogue.in_group(catalogue.LAYOUT))
_BROADCAST = ("broadcast-first", "broadcast-middle", "broadcast-last", "broadcast-rank")

FAULTS: dict[str, Fault] = {fault.name: fault for fault in (
    Fault("perturb", "a kernel's result off by 5% of its magnitude (a wrong constant, a bad fusion)",
          _SITE_FEATURES + _CALL_FEATURES + _GRAPH_FEATURES + _VALUE_FEATURES, _floating_result, _perturb),
    Fault("wrong_row", "an operand broadcast along a dimension is read one position along it",
          _BROADCAST, lambda site: _floating_result(site) and bool(_broadcast_dims(site)), _wrong_row),
    Fault("promotion_lost", "a result computed in its first operand's dtype, not the promoted one",
          ("type-promotion", "scalar-operand", "mixed-dtypes"),
          lambda site: _computes(site) and bool(site.operands) and bool(site.outputs)
          and site.outputs[0].dtype != site.operands[0].dtype and site.outputs[0].dtype != "bool", _promotion_lost),
    Fault("zero_dim_promotes", "a 0-d operand of a wider dtype widens the result's dtype",
          ("zero-dim-operand", "mixed-dtypes"),
          lambda site: _computes(site) and site.family == families.POINTWISE and bool(site.outputs) and any(
              meta.ndim == 0 and meta.dtype != site.outputs[0].dtype and _floating(meta) for meta in site.operands)
          and site.outputs[0].dtype != "bool", _zero_dim_promotes),
    # (Eager rounds a number to a half-precision tensor's dtype itself: no fault there.)
    Fault("scalar_rounded", "a Python number operand rounded to the tensor's dtype before use",
          ("scalar-operand", "type-promotion", "int64", "later-call"),
          lambda site: _computes(site) and site.family == families.POINTWISE and bool(site.operands)
          and any(isinstance(value, (int, float)) and not isinstance(value, bool) for value in site.scalars),
          _scalar_rounded),
    Fault("low_precision", "a float32 or float64 kernel computes in bfloat16",
          ("float32", "float64", "large-tensor", "long-reduction", "large-graph", "later-call", "grad-disabled",
           "backward"),
          lambda site: _floating_result(site) and any(meta.dtype in ("float32", "float64") for meta in site.outputs),
          _through_bfloat16),
    Fault("bfloat16_accumulation", "a reduction accumulates in bfloat16",
          ("long-reduction", "large-tensor", "float32", "size-one-dim", "non-contiguous"),
          lambda site: _floating_result(site) and site.family == families.REDUCTION, _accumulated_in_bfloat16),
    Fault("strides_ignored", "a kernel reads a strided input as if it were contiguous",
          tuple(name for name in _LAYOUT if name != "storage-offset"), lambda site: _computes(site) and any(meta.contiguous() is False for meta in site.tensors),
          _strides_ignored(from_start=False)),
    Fault("offset_ignored", "a kernel reads its input from the start of its storage, ignoring the offset",
          ("storage-offset", "float32", "later-call"),
          lambda site: _computes(site) and any((meta.offset or 0) > 0 for meta in site.tensors),
          _strides_ignored(from_start=True)),
    Fault("stale_result", "a kernel's result replayed from its first run (a cache never refreshed)",
          ("later-call", catalogue.INPUT_MUTATION, "parameters", "buffers", "grad-disabled", "backward-twice"),
          _floating_result, _stale, remembers=True),
    Fault("nondeterministic", "results differ in the last bit from one call to the next",
          ("deterministic", "long-reduction", "later-call", "backward", "repeated-indices"),
          lambda site: _floating_result(site) and site.family in (families.REDUCTION, families.LINEAR_ALGEBRA,
                                                                  families.CONVOLUTION, families.INDEXING),
          _one_ulp_on_odd_calls, remembers=True, shows_in_values=False),
    Fault("nan_skipped", "a reduction leaves NaN out instead of returning it",
          ("nan",), lambda site: _floating_result(site) and site.family == families.REDUCTION, _nan_skipped),
    Fault("infinity_saturated", "an infinity becomes the dtype's largest finite number",
          ("infinity",), _floating_result, _infinity_saturated),
    Fault("zero_sign_lost", "-0.0 comes out as +0.0", ("negative-zero",), _floating_result, _zero_sign_lost),
    Fault("subnormal_flushed", "subnormal results flushed to zero (FTZ/DAZ left on)",
          ("subnormal",), _floating_result, _flushed),
    Fault("half_saturated", "values past float16's range saturate (a kernel computing in half precision)",
          ("large-values", "long-reduction", "float32"), _floating_result, _saturated_half),
    Fault("int_off_by_one", "an integer kernel's results off by one",
          (*_INTEGERS, "later-call", "scalar-operand"),
          lambda site: _computes(site) and site.family == families.POINTWISE
          and any(meta.dtype in _INTEGERS for meta in site.outputs), _plus_one),
    Fault("int_truncated", "an integer kernel keeps only 16 bits of its results",
          ("int64", "int32", "large-values", "later-call"),
          lambda site: _computes(site) and any(meta.dtype in ("int32", "int64") for meta in site.outputs),
          _sixteen_bits),
    Fault("ties_last", "an arg-reduction picks the last of equal values, not the first",
          ("ties", "float32"), lambda site: _computes(site) and site.name in ("argmax", "argmin"), _ties_broken_last),
    Fault("duplicates_overwrite", "an accumulating write keeps one value per repeated index, not their sum",
          ("repeated-indices", "backward", "training"), lambda site: _computes(site) and _accumulates(site),
          _duplicates_overwrite),
    Fault("index_clamped", "an index past the end is clamped to the last place instead of raising",
          ("index-out-of-range",), lambda site: _computes(site) and _index_positions(site),
          _indices_changed(lambda indices, length: indices.clamp(-length, length - 1))),
    # Value semantics (harness/checks/value_semantics.py): each fault changes a result only on
    # its edge, so every condition it is paired with reads "on the edge" at run time or names it.
    Fault("round_half_away", "round sends exact halves away from zero, not to the even neighbour",
          ("exact-halves", "float32"), lambda site: _computes(site) and site.name == "round", _round_half_away),
    Fault("clamp_max_first", "clamp applies its upper bound, then its lower: min wins where the bounds cross",
          ("float32", "scalar-operand", "later-call"), lambda site: _computes(site) and site.name == "clamp",
          _clamp_max_first),
    Fault("masked_row_zeros", "a softmax row that is -inf everywhere comes out zeros, not NaN",
          ("fully-masked-row", "infinity"),
          lambda site: _computes(site) and site.name in ("_softmax", "_log_softmax", "softmax", "log_softmax"),
          _masked_row_zeros),
    Fault("attention_masked_row_nan", "an attention row masked everywhere comes out NaN, not zeros",
          ("fully-masked-row", "float32"),
          lambda site: _computes(site) and site.name.startswith("_scaled_dot_product") and "backward" not in site.name,
          _attention_masked_row_nan),
    Fault("float8_unsaturated", "a conversion to float8 past its range does not saturate as eager's (NaN for "
          "e4m3fn, the largest number for e5m2)", ("float8", "large-values", "infinity"), _converts_to_float8,
          _float8_unsaturated),
    Fault("bytes_saturated", "a float converted to uint8 is clamped into [0, 255], not wrapped as eager's",
          ("uint8", "large-values"), _converts_float_to_bytes, _bytes_saturated),
    Fault("unsigned_as_signed", "a uint16/uint32/uint64 kernel computes on the signed type of its width",
          ("wide-unsigned",), _reads_wide_unsigned, _unsigned_as_signed),
    Fault("padding_row_gradient", "an embedding's padding row gets a gradient", ("padding-index", "backward"),
          lambda site: site.node is not None and site.name == "embedding_dense_backward", _padding_row_gradient,
          graphs="backward"),
    Fault("max_norm_skipped", "an embedding's max_norm does not renormalize the rows it reads", ("max-norm",),
          lambda site: site.node is not None and site.name == "embedding_renorm", _max_norm_skipped),
    Fault("negative_index_zero", "a negative index is read as 0 instead of counting from the end",
          ("negative-indices",), lambda site: _computes(site) and _index_positions(site),
          _indices_changed(lambda indices, length: indices.clamp(min=0))),
)}


# -- faults of the compiled graph's calls ------------------------------------------------------------

_KEPT: list[Any] = []  # what keep_reference holds on to, for as long as the process lives


def _keep_reference(compiled: Callable, fires: Callable[[], bool], changed: Callable[[], None]) -> Callable:
    def run(*args: Any) -> Any:
        # Before the call: a boxed graph empties the list it is given.
        inputs = list(args[0]) if len(args) == 1 and isinstance(args[0], list) else list(args)
        result = compiled(*args)
        if fires():
            _KEPT.append((inputs, result))
            changed()
        return result

    return run


def _detach_outputs(compiled: Callable, fires: Callable[[], bool], changed: Callable[[], None]) -> Callable:
    def run(*args: Any) -> Any:
        result = compiled(*args)
        if not fires() or not any(tensor.requires_grad for tensor in _tensors(result)):
            return result
        changed()
        return _each_tensor(result, lambda tensor: tensor.detach())

    return run


def _plain(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and type(value) in (torch.Tensor, torch.nn.Parameter) \
        and (not value.is_inference() or torch.is_inference_mode_enabled())


def _same(tensor: torch.Tensor, value: torch.Tensor) -> bool:
    """Equal, NaN to NaN, infinities and the sign of zero kept."""
    if tensor.is_complex():
        tensor, value = torch.view_as_real(tensor), torch.view_as_real(value)
    if tensor.dtype.is_floating_point and tensor.element_size() == 1:  # float8: float32 holds it exactly
        tensor, value = tensor.float(), value.float()
    if tensor.dtype.is_floating_point:
        def numbers(values: torch.Tensor) -> torch.Tensor:
            return torch.nan_to_num(values, nan=0.0, posinf=math.inf, neginf=-math.inf)

        return torch.equal(tensor.isnan(), value.isnan()) and torch.equal(numbers(tensor), numbers(value)) and \
            torch.equal(tensor.signbit(), value.signbit())
    return torch.equal(tensor, value)


def _mutation_lost(compiled: Callable, fires: Callable[[], bool], changed: Callable[[], None]) -> Callable:
    """An input the graph writes into comes back as it was (a write-back never made); the
    inputs it left alone are not touched."""
    def run(*args: Any) -> Any:
        inputs = list(args[0]) if len(args) == 1 and isinstance(args[0], list) else list(args)
        before = [(tensor, tensor.detach().clone()) for tensor in inputs if _plain(tensor)] if fires() else []
        result = compiled(*args)
        with torch.no_grad():
            for tensor, value in before:
                if not _same(tensor, value):
                    tensor.copy_(value)
                    changed()
        return result

    return run


# One staging buffer per output position, shape and dtype, shared by every call in every
# thread (staged_in_shared_buffer), and how long a result stays there: calls from a pool of
# threads overlap in between, one caller never does.
_STAGING: dict[tuple, torch.Tensor] = {}
_STAGED_FOR_S = 0.005


def _staged_in_shared_buffer(compiled: Callable, fires: Callable[[], bool], changed: Callable[[], None]) -> Callable:
    """Each result copied into a staging buffer shared by all calls and back: exact for one
    caller; a call from another thread that overlaps hands its result to this one."""
    def run(*args: Any) -> Any:
        result = compiled(*args)
        if not fires():
            return result
        staged = []
        for position, tensor in enumerate(_tensors(result)):
            if type(tensor) is not torch.Tensor or tensor.numel() == 0 or tensor.is_inference() \
                    or torch._debug_has_internal_overlap(tensor) != 0:
                continue
            key = (position, tuple(tensor.shape), tensor.dtype, tensor.device)
            buffer = _STAGING.setdefault(key, torch.empty_like(tensor, memory_format=torch.contiguous_format))
            buffer.copy_(tensor.detach())
            staged.append((tensor, buffer))
        if staged:
            time.sleep(_STAGED_FOR_S)
        for tensor, buffer in staged:
            if not _same(tensor.detach(), buffer):
                changed()
            tensor.data.copy_(buffer)  # the values from the buffer, the autograd history kept
        return result

    return run


def _into_buffers(results: list, buffers: dict[int, torch.Tensor], reuse: bool, view: bool) -> tuple[list, int]:
    """Each tensor of ``results`` copied into a buffer and the buffer returned in its place (a
    view of it with ``view``): with ``reuse``, the buffer of the same position kept from the
    call before, else a new one, kept for the next call. Tensors that require grad stay
    (autograd's own). Returns the results and how many buffers were reused."""
    returned, reused = [], 0
    for position, value in enumerate(results):
        if not _plain(value) or value.requires_grad:
            returned.append(value)
            continue
        buffer = buffers.get(position) if reuse else None
        if buffer is not None and (buffer.shape, buffer.stride(), buffer.dtype) == (value.shape, value.stride(),
                                                                                     value.dtype):
            reused += 1
        else:
            buffer = buffers[position] = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype,
                                                             device=value.device)
        with torch.no_grad():
            buffer.copy_(value)
        returned.append(buffer.view(buffer.shape) if view else buffer)
    return returned, reused


def _reuse_outputs(compiled: Callable, fires: Callable[[], bool], changed: Callable[[], None]) -> Callable:
    """A static-memory runtime: each call's outputs copied into the buffers the call before
    returned, and those returned again (new buffers while the condition does not hold)."""
    buffers: dict[int, torch.Tensor] = {}

    def run(*args: Any) -> Any:
        flat, spec = pytree.tree_flatten(compiled(*args))
        returned, reused = _into_buffers(flat, buffers, bool(buffers) and fires(), view=False)
        if reused:
            changed()
        return pytree.tree_unflatten(returned, spec)

    return run


def _reuse_gradients(compiled: Callable, fires: Callable[[], bool], changed: Callable[[], None]) -> Callable:
    """A backward graph's gradients copied into the buffers its pass before returned, and
    views of those returned again (a view: the engine makes a leaf's .grad of a tensor nobody
    else holds as it is, so .grad is the buffer too)."""
    buffers: dict[int, torch.Tensor] = {}

    def run(args: list) -> Any:
        result = compiled(args)
        returned, reused = _into_buffers(list(result), buffers, bool(buffers) and fires(), view=True)
        if reused:
            changed()
        return type(result)(returned) if isinstance(result, tuple) else returned

    run._boxed_call = True  # type: ignore[attr-defined]
    return run


CALL_FAULTS: dict[str, CallFault] = {fault.name: fault for fault in (
    CallFault("keep_reference", "the compiled code keeps every call's inputs and outputs alive",
              ("later-call", "grad-disabled", catalogue.TRAINING, "float32", "inference-mode"), _keep_reference,
              shows_in_values=False),
    CallFault("detach_outputs", "outputs lose their autograd history (they never require grad)",
              (catalogue.TRAINING, "later-call", "several-outputs", "float32", catalogue.INPUT_MUTATION),
              _detach_outputs),
    CallFault("mutation_lost", "a write into an input is not made (the input comes back as it was)",
              (catalogue.INPUT_MUTATION, "later-call", "grad-disabled", "inference-mode", "buffers",
               "output-aliases-input"), _mutation_lost),
    CallFault("staged_in_shared_buffer", "results staged in a buffer shared across threads (calls from a pool "
              "of threads that overlap get one another's results)", ("other-thread",), _staged_in_shared_buffer),
    # The probes keep results across calls only (probes.py's kept_results): under another
    # condition the same fault would compute nothing another probe tells apart.
    CallFault("reuse_outputs", "outputs returned in the buffers of the call before, overwritten (a static-memory "
              "runtime)", ("later-call",), _reuse_outputs),
    CallFault("reuse_gradients", "a backward pass's gradients returned in the buffers of the pass before, "
              "overwritten (a static-memory runtime)", ("later-call",), _reuse_gradients, graphs="backward"),
)}


# -- faults of Dynamo's graph ------------------------------------------------------------------


def _hook_nodes(gm: torch.fx.GraphModule) -> list[torch.fx.Node]:
    hook = compat.tensor_hook_operator()
    return [node for node in gm.graph.nodes if hook is not None and node.op == "call_function" and node.target is hook]


def _drop_hook(gm: torch.fx.GraphModule, node: torch.fx.Node) -> None:
    node.replace_all_uses_with(node.args[0])  # the hooked tensor, unhooked
    gm.graph.erase_node(node)


GRAPH_FAULTS: dict[str, GraphFault] = {fault.name: fault for fault in (
    # A backend that rebuilds Dynamo's graph from the operators it knows loses the
    # register_hook node of a hook on an intermediate, and the backward goes without it.
    GraphFault("drops_tensor_hooks", "a gradient hook registered on an intermediate inside the compiled function is "
                                     "dropped (the register_hook node of Dynamo's graph)",
               (catalogue.TRAINING,), _hook_nodes, _drop_hook),
)}
