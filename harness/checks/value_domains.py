"""The values real programs feed an operator, as one catalogue, and the check of an operator
over all of them.

An operator's own samples are random numbers of moderate size; kernels go wrong elsewhere:
on NaN, infinities, numbers past a type's range, subnormal numbers, negative zero, ties,
integers past 2^31 or at the edges of 8-bit types, and in dtypes other than float32. Each
``Domain`` below is one such kind of value: a reader sees the whole catalogue here, and a
new kind is one more entry, data alone. ``batch_check`` hands the calls, the domains and the
judging below to the operator checker (harness/checks/opcheck.py, OperatorChecker.together),
which compiles several operators together, once, at their samples' shapes and dtype, and
feeds them every domain that applies, in one call each, so a domain costs an eager and a
compiled call rather than a compile; a domain whose values eager rejects (an index out of
range, a negative size) is passed over for that operator, since there is nothing to compare.

Three domains rewrite the call instead of laying values over its data. The shape domains,
empty and scalar (0-d) tensors through reductions and indexing, change the shapes of the
call's tensors: each is a batch of its own, compiled once at its shapes (forward and
backward), and an operator eager refuses them (a reduction of nothing without an identity,
an index past a scalar) is passed over. Repeated indices rewrite the index tensors of the
operators that take them, within the values they already hold; the shapes stay, so it is one
more call of the samples' batch.

Judging (``exact_mismatch``): integers and booleans bit for bit; floats within the dtype's
tolerance (half precision no worse than eager against float64, as op_check judges it), and
beyond it exactly where eager is exact: NaN where eager has NaN, infinities of eager's sign,
the sign of every zero, and no subnormal result flushed to zero. Flushing subnormals is a
legitimate choice for some hardware, so it is reported in words of its own (clause
``subnormal numbers kept``, harness/checks/clauses.py), which a backend's expectations
accept by name (``[[value_difference]]`` with ``domain = "subnormal"``); it is never
silently equal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree

from harness.checks.opcheck import Call, Difference, OperatorChecker

# The dtypes an operator is checked in, beside float32, where OpInfo says it supports them.
# Half precision is judged against float64, as the sweep's half-precision runs are.
SWEPT_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64, torch.int64, torch.int32,
                torch.int8, torch.uint8, torch.bool)

FLOATING = "floating"


def kind(dtype: torch.dtype) -> str:
    """floating (complex included), bool or integer."""
    if dtype.is_floating_point or dtype.is_complex:
        return FLOATING
    return "bool" if dtype == torch.bool else "integer"


def _subnormals(dtype: torch.dtype) -> tuple[float, ...]:
    smallest_normal = torch.finfo(dtype).smallest_normal
    tiny = torch.finfo(dtype).smallest_normal * torch.finfo(dtype).eps  # the smallest subnormal
    return (smallest_normal / 2, -smallest_normal / 2, tiny, -tiny, smallest_normal / 3, tiny * 3,
            smallest_normal, 1.0, -1.0)


def _large(dtype: torch.dtype) -> tuple[float, ...] | None:
    if dtype == torch.bool:
        return None
    if dtype == torch.float16:  # 1e20 is past its range: the largest it holds, and OpInfo's large float16 values
        return (-60000.0, 60000.0, 13437.7, -1001.2, 501.0)
    if dtype.is_floating_point or dtype.is_complex:
        # OpInfo's large values. Not the type's largest: where two equivalent formulas add such
        # numbers, one overflows and the other does not, and neither is wrong.
        return (-1e20, 1e20, 4988429.2, -4988429.2, -13437.7, 501.0)
    info = torch.iinfo(dtype)
    past_31 = (2**31 + 5, -(2**31) - 7, 2**40 + 1) if info.bits == 64 else ()
    return (info.max, info.min, info.max - 1, info.min + 1, *past_31, 0, 1)


def _small(dtype: torch.dtype) -> tuple[float, ...]:
    if dtype == torch.bool:
        return (False, True, True, False, False)
    if dtype.is_floating_point or dtype.is_complex:
        return (0.0, -0.0, 0.001, -0.001, 0.25, -0.25, 1.0, -1.0, math.pi / 2, -math.pi / 2, math.pi, -math.pi)
    if dtype == torch.uint8:
        return (0, 1, 55, 127, 128, 190, 254, 255)
    return (0, -1, 1, -55, 55, -127, 127, -128)


def _no_values(dtype: torch.dtype) -> None:
    return None


@dataclass(frozen=True)
class Domain:
    """A kind of value: ``values(dtype)`` the numbers laid over the operator's inputs
    (cycled through each tensor, element by element), or None where the kind does not exist
    in that dtype. A domain of another kind ``rewrite``s the call's tensors instead
    (``rewrite(call, tensors)``: the tensors to call it with, or None where the domain does
    not reach the call), for the calls of ``categories`` (none named: every call);
    ``changes_shapes`` says the rewritten tensors have other shapes than the sample's, so the
    domain is a compile of its own. A name is letters and spaces: a difference reads "<op> on
    <name> values: ...", which is how harness/checks/clauses.py knows it."""

    name: str
    why: str
    values: Callable[[torch.dtype], tuple | None] = _no_values
    # Outside pointwise arithmetic, the magnitudes only: summing numbers of both signs around
    # 1e20 cancels them, and then any other order of the sum (a backend's right) changes the
    # answer wholesale. OpInfo gives its large values to elementwise ops alone.
    one_sign_beyond_pointwise: bool = False
    rewrite: Callable[[Call, list[Any]], list[Any] | None] | None = None
    categories: tuple[str, ...] = ()
    changes_shapes: bool = False

    def inputs(self, call: Call, tensors: list[Any]) -> list[Any] | None:
        """The tensors ``call`` is checked with on this domain (``tensors``: its sample's), or
        None where the domain passes it over."""
        if self.categories and call.category not in self.categories:
            return None
        if self.rewrite is None:
            return with_domain(tensors, self, call.every_operand)
        rewritten = self.rewrite(call, tensors)
        if rewritten is not None and self.changes_shapes and \
                [tensor.shape for tensor in rewritten] == [tensor.shape for tensor in tensors]:
            return None  # the sample has these shapes: the other domains checked them
        return rewritten


# The categories of the operator sweep (QUICK_TIER in test/dynamo/test_op_sweep.py) the
# catalogue names: pointwise arithmetic, where every tensor is an operand, and the ops whose
# kernels take shapes apart (a reduction's identity, an index's range), where the shape
# domains go.
OPERAND_CATEGORIES = ("unary pointwise", "binary pointwise")
SHAPE_CATEGORIES = ("reductions", "indexing")

# Operators that, given one place twice, write one of the values there without combining
# them: PyTorch documents which one lands as undefined (scatter_, index_put_, index_copy_,
# put_), so eager's answer is nobody's contract and repeated indices pass them over, unless
# the keyword named here (None: none) makes them combine the values. Running eager twice
# would not tell: on CPU it writes in one order every time.
OVERWRITING = {"scatter": "reduce", "index_put": "accumulate", "index_copy": None, "put": "accumulate"}


def index_positions(call: Call, tensors: list[Any]) -> list[int]:
    """Where a call's index tensors are: its integer tensors other than the data, outside
    pointwise arithmetic (whose tensors are operands), where the data is not of an integer
    type itself (then its weights and values are integers too, and nothing tells them from
    its indices)."""
    if call.every_operand or not tensors or kind(tensors[0].dtype) == "integer":
        return []
    return [position for position, tensor in enumerate(tensors) if position and isinstance(tensor, torch.Tensor)
            and kind(tensor.dtype) == "integer"]


def repeats_defined(call: Call) -> bool:
    """Whether eager's result is defined when ``call``'s indices repeat (OVERWRITING)."""
    if call.name not in OVERWRITING:
        return True
    combining = OVERWRITING[call.name]
    return combining is not None and bool(call.kwargs.get(combining))


def _repeated_indices(call: Call, tensors: list[Any]) -> list[Any] | None:
    """Each index tensor of two entries or more (index_positions) holding only its smallest
    and largest entries, each repeated: values the operator takes there, in duplicate."""
    positions = [position for position in index_positions(call, tensors) if tensors[position].numel() >= 2]
    if not positions or not repeats_defined(call):
        return None
    result = list(tensors)
    for position in positions:
        low, high = int(tensors[position].min()), int(tensors[position].max())
        result[position] = filled(tensors[position], (low, low, high, low, high, high))
    return result


def _emptied(call: Call, tensors: list[Any]) -> list[Any]:
    """Every tensor of the call without rows: its first dimension of size 0 (a 0-d tensor:
    shape (0,)), so that the indices and values that go with the data stay consistent with it."""
    return [torch.empty((0, *tensor.shape[1:]), dtype=tensor.dtype, device=tensor.device)
            .requires_grad_(tensor.requires_grad) for tensor in tensors]


def _scalars(call: Call, tensors: list[Any]) -> list[Any] | None:
    """Every tensor of the call 0-d, holding its first element; an index (index_positions)
    0, the one place a 0-d tensor has."""
    if any(tensor.numel() == 0 for tensor in tensors):
        return None
    indices = index_positions(call, tensors)
    with torch.no_grad():
        return [tensor.reshape(-1)[0].clone().zero_() if position in indices else
                tensor.reshape(-1)[0].clone().requires_grad_(tensor.requires_grad)
                for position, tensor in enumerate(tensors)]


DOMAINS = (
    Domain("small", "PyTorch's OpInfo small values: zeros of both signs, near-zero, one, multiples of pi",
           _small),
    Domain("large", "past the range the samples use: 1e20 (in float16, 60000); for integers the type's edges "
           "and (int64) past 2^31", _large, one_sign_beyond_pointwise=True),
    Domain("extremal", "NaN and both infinities among ordinary numbers",
           lambda dtype: (math.nan, math.inf, -math.inf, 1.0, -2.5, 0.5) if kind(dtype) == FLOATING else None),
    Domain("subnormal", "numbers below the smallest normal one, which hardware may flush to zero",
           lambda dtype: _subnormals(dtype) if dtype.is_floating_point else None),
    Domain("negative zero", "-0.0, whose sign decides atan2, division, copysign and the sign of a product",
           lambda dtype: (-0.0, -0.0, 0.0, -1.0, 2.0, -0.0) if kind(dtype) == FLOATING else None),
    Domain("ties", "repeated values: sorting, ranking and arg-reductions must break ties as eager does",
           lambda dtype: (True, False) if dtype == torch.bool else (3, 3, 1, 1, 3, 2)),
    Domain("repeated indices", "index tensors naming one place many times (a batch's repeated tokens or "
           "classes): accumulating writes, and the backward of every gather, must sum each duplicate",
           rewrite=_repeated_indices),
    Domain("empty", "a reduction's or an indexing op's tensors with a size-0 first dimension (an empty batch or "
           "selection): a reduction's identity, or eager's refusal where it has none",
           rewrite=_emptied, categories=SHAPE_CATEGORIES, changes_shapes=True),
    Domain("scalar", "a reduction's or an indexing op's tensors 0-d (its indices 0)",
           rewrite=_scalars, categories=SHAPE_CATEGORIES, changes_shapes=True),
)


def filled(tensor: torch.Tensor, values: tuple, shift: int = 0) -> torch.Tensor:
    """A copy of ``tensor`` (its shape, strides and requires_grad) holding ``values`` in turn,
    starting ``shift`` places along, so that two operands pair different values; a complex
    tensor's imaginary parts are the values one place further."""
    def turn(start: int) -> torch.Tensor:
        return torch.tensor([values[(index + start) % len(values)] for index in range(tensor.numel())],
                            dtype=torch.float64 if kind(tensor.dtype) == FLOATING else torch.int64)

    flat = torch.complex(turn(shift), turn(shift + 1)) if tensor.is_complex() else turn(shift)
    out = torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype, device=tensor.device)
    with torch.no_grad():
        out.copy_(flat.reshape(tensor.shape))
    return out.requires_grad_(tensor.requires_grad)


def with_domain(tensors: list[Any], domain: Domain, every_operand: bool) -> list[Any] | None:
    """The operator's tensors with the domain's values laid over the data input (the first:
    its other tensors are weights, bounds and indices, which real data does not carry) and,
    with ``every_operand`` (the operands of pointwise arithmetic), over every tensor of its
    dtype; None where the domain has no values for the data's dtype."""
    data = tensors[0]
    values = domain.values(data.dtype)
    if values is None:
        return None
    if domain.one_sign_beyond_pointwise and not every_operand and kind(data.dtype) == FLOATING:
        values = tuple(dict.fromkeys(abs(value) for value in values))
    result = list(tensors)
    for index, tensor in enumerate(tensors):
        if index == 0 or (every_operand and isinstance(tensor, torch.Tensor) and tensor.dtype == data.dtype):
            result[index] = filled(tensor, values, shift=3 * index)
    return result


def exact_mismatch(want: Any, got: Any) -> str | None:
    """Where eager is exact, the compiled results must be too: the first such difference,
    in words, or None. Values within tolerance are op_check's to judge; this looks at what
    a tolerance lets through: the sign of zeros and subnormal numbers flushed to zero."""
    for index, (expected, actual) in enumerate(zip(pytree.tree_leaves(want), pytree.tree_leaves(got))):
        if not (isinstance(expected, torch.Tensor) and isinstance(actual, torch.Tensor)):
            continue
        if expected.shape != actual.shape or not expected.dtype.is_floating_point or actual.dtype != expected.dtype \
                or expected.layout != torch.strided or actual.layout != torch.strided:  # sparse: values compared
            continue
        expected, actual = expected.detach(), actual.detach()
        smallest_normal = torch.finfo(expected.dtype).smallest_normal
        if expected.dtype.itemsize == 1:  # float8: no kernels for signbit; float32 holds its values exactly
            expected, actual = expected.float(), actual.float()
        both_zero = (expected == 0) & (actual == 0)
        signs = (torch.signbit(expected) != torch.signbit(actual)) & both_zero
        if bool(signs.any()):
            return (f"output[{index}]: the sign of zero differs from eager at {int(signs.sum())} of "
                    f"{expected.numel()} positions")
        flushed = (expected != 0) & (expected.abs() < smallest_normal) & (actual == 0)
        if bool(flushed.any()):
            return (f"output[{index}]: subnormal values flushed to zero at {int(flushed.sum())} of "
                    f"{expected.numel()} positions (eager keeps them)")
    return None


def batch_check(calls: list[Call], backend: Callable, *, domains: tuple[Domain, ...] = DOMAINS,
                gradients: bool = False, testcase=None, tolerance_scale: float = 1.0,
                exact_layouts: bool = False) -> list[Difference]:
    """Every call over every domain (the catalogue's, unless given), compared with eager by
    the operator checker (OperatorChecker.together: compiled together, one graph for all of
    them), and beyond the tolerance wherever eager is exact (exact_mismatch). Returns what
    differed; raises NoGraphCaptured when the backend received no graph."""
    checker = OperatorChecker(backend, testcase=testcase, tolerance_scale=tolerance_scale)
    return checker.together(calls, domains, gradients=gradients, exact_layouts=exact_layouts,
                            beyond_tolerance=exact_mismatch)
