"""Value semantics eager defines at edges no value domain holds, as data of the operator
checker: for each, the calls that put an operator on that edge, built in each dtype the
semantics exists in, and the domain a difference is reported under.

A value domain (harness/checks/value_domains.py) lays one kind of value over every operator's
samples; these edges are of one operator and its arguments together, so each is a handful of
calls written out: ``round`` of exact halves (eager rounds half to even), ``clamp`` whose
lower bound is above its upper one (eager gives the upper), a softmax or an attention row
masked everywhere (softmax gives NaN, attention zeros), conversions to float8 past its range
(float8_e4m3fn saturates at 448, infinities included; float8_e5m2 gives infinity) and every
float8 value back, unsigned 16-, 32- and 64-bit integers past the signed range through the
ops torch runs on them on CPU, floats converted to uint8 (through int64: negative ones wrap),
bfloat16 and float16 rounding where an exact comparison sees it, and an embedding's
``padding_idx`` (its row gets no gradient) and ``max_norm`` (the rows it reads renormalized in
place). A new edge is one more entry.

``check`` hands the calls of some dtypes to the operator checker through
value_domains.batch_check, compiled together (one graph, and one backward, for all of them),
each semantics a domain passing its own calls through as written, so that a difference
reads "<call> on <semantics> values: ..." and an expectation accepts it by that name
(``[[value_difference]]`` with ``domain``). Judged as every value domain is: integers and
booleans bit for bit, floats within the dtype's tolerance (float8 exactly) and beyond it
where eager is exact (NaN where eager has NaN, infinities, the sign of zero).

Not here, because torch refuses the call: ``hardtanh`` with min above max (eager raises),
and on CPU the unsigned types' arithmetic beyond multiplication (add, comparisons other
than equality, shifts, maxima: "not implemented" on torch 2.13).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch.nn.functional as F

from harness.checks.opcheck import Call, Difference
from harness.checks.value_domains import Domain, batch_check

FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
UNSIGNED = (torch.uint16, torch.uint32, torch.uint64)
FLOAT8 = (torch.float8_e4m3fn, torch.float8_e5m2)
# The two tests of the operator sweep that carry them: float32 with gradients (and one
# unsigned type, forward only), then the other dtypes forward only, each semantics in those
# of them its entry names (``other_dtypes``): every semantics is in both tests, and every
# dtype meets some, while inductor compiles each test in about ten seconds cold (all of
# them in all four floating dtypes cost it 45 s).
WITH_GRADIENTS = (torch.float32, torch.uint32)
OTHER_DTYPES = (torch.float64, torch.float16, torch.bfloat16, torch.uint16, torch.uint64)

INF = math.inf
# A case: its label, the operator, its arguments (tensors made in the dtype), its keywords.
Case = tuple[str, Callable, tuple, dict]


def _tensor(values: list, dtype: torch.dtype, grad: bool = False) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64).to(dtype).requires_grad_(grad)


def _draws(shape: tuple[int, ...], dtype: torch.dtype, grad: bool, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=generator, dtype=torch.float64).to(dtype).requires_grad_(grad)


def _exact_halves(dtype: torch.dtype, grad: bool) -> list[Case]:
    """Ties of rounding: half to even (0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0), with
    ``decimals`` scaling the tie into place (0.25 at one decimal is 2.5 tenths, 25 at -1 is
    2.5 tens); floor and truncating division of numbers whose quotient is a half or whole."""
    if dtype not in FLOATS:
        return []
    halves = _tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, -3.5, 4.5, 0.25, -0.75, 1.0], dtype)
    tenths = _tensor([0.25, 0.75, -0.25, 1.25, -1.75, 2.25], dtype)
    tens = _tensor([25.0, 35.0, -15.0, 5.0, -45.0, 65.0], dtype)
    numerators = _tensor([-2.5, 2.5, -0.5, 7.5, -7.5, 5.0, -5.0, 0.5], dtype)
    denominators = _tensor([0.5, -1.0, 1.0, 2.0, 2.0, -2.0, 2.0, -0.25], dtype)
    return [("round", torch.round, (halves,), {}),
            ("round, decimals=1", torch.round, (tenths,), {"decimals": 1}),
            ("round, decimals=-1", torch.round, (tens,), {"decimals": -1}),
            ("floor_divide", torch.floor_divide, (numerators, denominators), {}),
            ("div, rounding_mode=trunc", torch.div, (numerators, denominators), {"rounding_mode": "trunc"})]


def _crossed_bounds(dtype: torch.dtype, grad: bool) -> list[Case]:
    """clamp(x, min, max) is min(max(x, min), max): where min is above max, max everywhere;
    with tensor bounds, crossed at some places only; clamp_min and clamp_max with tensors."""
    if dtype not in FLOATS:
        return []
    points = [-3.0, 0.0, 2.0, 4.5, 5.0, 7.0, 10.0, -0.0]
    low = [6.0, 6.0, 1.0, 6.0, 4.0, 8.0, 1.0, 6.0]
    high = [3.0, 3.0, 5.0, 3.0, 6.0, 2.0, 9.0, 3.0]
    return [("clamp, min=6 above max=3", torch.clamp, (_tensor(points, dtype, grad),), {"min": 6.0, "max": 3.0}),
            ("clamp, tensor bounds crossed", torch.clamp,
             (_tensor(points, dtype, grad), _tensor(low, dtype, grad), _tensor(high, dtype, grad)), {}),
            ("clamp_min and clamp_max, tensors", _clamp_min_then_max,
             (_tensor(points, dtype, grad), _tensor(low, dtype, grad), _tensor(high, dtype, grad)), {})]


def _clamp_min_then_max(x: torch.Tensor, low: torch.Tensor, high: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.clamp_min(x, low), torch.clamp_max(x, high)


def _masked_fill_softmax(scores: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    # What attention written by hand does with a padding mask.
    return scores.masked_fill(~keep, -INF).softmax(-1)


def _fully_masked_rows(dtype: torch.dtype, grad: bool) -> list[Case]:
    """A row -inf everywhere: softmax and log_softmax give NaN there; scaled_dot_product_attention with a boolean mask False along a row,
    or an additive mask -inf along it, gives zeros there (torch 2.13, CPU); the other rows
    masked in part."""
    if dtype not in FLOATS:
        return []
    rows = [[-INF, -INF, -INF, -INF], [1.0, 2.0, 3.0, -INF], [-INF, 0.5, -INF, -INF]]
    keep = torch.tensor([[True, True, False, True, True], [False] * 5, [True, False, True, True, False]])
    additive = torch.zeros(3, 5, dtype=torch.float64)
    additive[1] = -INF
    additive[2, 1] = -INF
    scores = _draws((3, 5), dtype, grad, 6)

    def qkv(seed: int) -> tuple[torch.Tensor, ...]:
        return (_draws((1, 2, 3, 4), dtype, grad, seed), _draws((1, 2, 5, 4), dtype, grad, seed + 1),
                _draws((1, 2, 5, 4), dtype, grad, seed + 2))

    attention = F.scaled_dot_product_attention
    return [("softmax", torch.softmax, (_tensor(rows, dtype, grad), -1), {}),
            ("log_softmax", torch.log_softmax, (_tensor(rows, dtype, grad), -1), {}),
            ("masked_fill then softmax", _masked_fill_softmax, (scores, keep), {}),
            ("scaled_dot_product_attention, boolean mask", attention, qkv(0), {"attn_mask": keep}),
            ("scaled_dot_product_attention, additive mask", attention, qkv(3), {"attn_mask": additive.to(dtype)})]


def _to(value: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return value.to(dtype)


def _every_float8(dtype: torch.dtype) -> torch.Tensor:
    """Each of the 256 values of a float8 dtype (NaN and, for e5m2, infinities among them)."""
    return torch.arange(256, dtype=torch.int64).to(torch.uint8).view(dtype)


def _float8_range(dtype: torch.dtype, grad: bool) -> list[Case]:
    """Conversion to float8_e4m3fn saturates at +-448 (infinities too: the type has none),
    to float8_e5m2 gives infinity past 57344 (61440 and up round there), NaN stays NaN; ties
    round to even (2^-10 is half of e4m3fn's smallest subnormal); and every float8 value
    converted back, exactly."""
    if dtype not in FLOATS:
        return []
    values = [448.0, 449.0, 464.0, 465.0, 480.0, 500.0, -1000.0, 57344.0, 61439.0, 61440.0, 6.0e4, INF, -INF,
              math.nan, 2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -10, 2.0 ** -16, 2.0 ** -17, 0.1, -0.0, 240.0]
    if dtype != torch.float16:
        values += [1.0e5, -1.0e6]  # past float16's own range
    source = _tensor(values, dtype)
    cases = [(f"to {str(target).removeprefix('torch.')}", _to, (source, target), {}) for target in FLOAT8]
    cases += [(f"every {str(source_type).removeprefix('torch.')} value to it", _to,
               (_every_float8(source_type), dtype), {}) for source_type in FLOAT8]
    return cases


def _unsigned(dtype: torch.dtype, grad: bool) -> list[Case]:
    """Values past the signed range (2^(n-1) + 5, 2^n - 1) through the ops torch runs on
    unsigned 16-, 32- and 64-bit integers on CPU: sorting, conversions to and from float64,
    the sum (int64), multiplication (wrapping), equality and the bitwise ops. Read as
    signed, they sort first and convert negative."""
    if dtype not in UNSIGNED:
        return []
    bits = 8 * dtype.itemsize
    big, top = 2 ** (bits - 1) + 5, 2 ** bits - 1
    a = torch.tensor([1, big, 3, 0, top, 2 ** (bits - 1), 7], dtype=dtype)
    b = torch.tensor([3, 2, big, 0, 1, top, 7], dtype=dtype)
    floats = torch.tensor([float(big), 1.0, 7.5, 0.0, float(2 ** (bits - 2))], dtype=torch.float64)
    return [("sort", torch.sort, (a,), {}),
            ("to float64", _to, (a, torch.float64), {}),
            ("from float64", _to, (floats, dtype), {}),
            ("sum", torch.sum, (a,), {}),
            ("mul", torch.mul, (a, b), {}),
            ("eq", torch.eq, (a, b), {}),
            ("bitwise_and", torch.bitwise_and, (a, b), {})]


# Past uint8's range on both sides, fractions among them; 64 of them, so that a compiler's
# vectorized loop converts most (inductor's CPU kernel did it wrongly there: pytorch#156788).
_BYTES_FROM = [-0.5, -0.9, -1.0, -1.5, -2.75, -100.25, -128.0, -200.0, -255.0, -255.5, 0.5, 1.9, 254.9, 255.0,
               255.5, 256.0, 257.5, 300.0, 1000.0, -3000.0, 0.0, -0.0]
_BYTES_FROM_WIDE = [70000.0, -1.0e5, 3.0e9, -3.0e9]  # past float16's range; within int64's


def _bytes_from_floats(dtype: torch.dtype, grad: bool) -> list[Case]:
    """A float converted to uint8 goes through int64 (c10's cast, chosen so that CPU and GPU
    agree; a direct conversion of a negative float to an unsigned type is undefined in C++):
    truncated toward zero, then wrapped modulo 256 (-1.5 -> 255, -200 -> 56, 300 -> 44),
    for every float within int64's range; NaN and infinities are outside it."""
    if dtype not in FLOATS:
        return []
    values = _BYTES_FROM + ([] if dtype == torch.float16 else _BYTES_FROM_WIDE)
    source = _tensor((values * 3)[:64], dtype)
    return [("to uint8", _to, (source, torch.uint8), {}),
            ("byte of a product", _byte_of_twice, (source.flip(0),), {})]


def _byte_of_twice(x: torch.Tensor) -> torch.Tensor:
    # Computed, then converted: the conversion inside a compiler's fused kernel.
    return (x * 2).byte()


def _tie_count(scores: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    scaled = scores / scale
    return (scaled == scaled.amax(-1, keepdim=True)).sum(-1)


def _round_trip_kept(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return x.to(dtype).float() == x


def _rope(q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = q.shape[-1] // 2
    return q * cos + torch.cat([-q[..., half:], q[..., :half]], -1) * sin


def _low_precision_rounding(dtype: torch.dtype, grad: bool) -> list[Case]:
    """Eager rounds each bfloat16 or float16 result, and each explicit cast into them, to
    that dtype. A compiler may keep the wider value where only a float sees it (inductor
    does by default, config.emulate_precision_casts: the float results are judged within the
    dtype's tolerance), not where an exact comparison does: there the rounding decides the
    answer (each row's count of ties with its maximum after a division, pytorch#195214; an
    explicit round trip compared with its source). Built in the float32 call only: its
    half-precision tensors are its own."""
    if dtype != torch.float32:
        return []
    cases = []
    for low in (torch.bfloat16, torch.float16):
        name = str(low).removeprefix("torch.")
        scores = _draws((16, 64), low, False, 30)
        cases += [(f"tie count after a {name} division", _tie_count, (scores, _tensor([7.0], low)), {}),
                  (f"{name} round trip compared with its source", _round_trip_kept,
                   (_draws((64,), torch.float32, False, 31), low), {}),
                  (f"rotary embedding in {name}", _rope,
                   (_draws((2, 4, 8, 16), low, False, 32), _draws((8, 16), low, False, 33),
                    _draws((8, 16), low, False, 34)), {})]
    return cases


def _embedding_options(dtype: torch.dtype, grad: bool) -> list[Case]:
    """padding_idx: the row it names reads as any other, and gets no gradient (-1 counts from
    the end); max_norm: each row the indices read whose norm (norm_type) passes it is scaled
    to it in the weight itself, under no_grad, before the lookup (the weight after the call is
    compared, as every input is)."""
    if dtype not in FLOATS:
        return []
    indices = torch.tensor([[0, 2, 2, 5], [1, 2, 0, 5]])

    def weight(seed: int) -> torch.Tensor:
        with torch.no_grad():
            return (_draws((6, 3), dtype, False, seed) * 3).requires_grad_(grad)

    return [("embedding, padding_idx=2", F.embedding, (indices, weight(20)), {"padding_idx": 2}),
            ("embedding, padding_idx=-1, scale_grad_by_freq", F.embedding, (indices, weight(21)),
             {"padding_idx": -1, "scale_grad_by_freq": True}),
            ("embedding, max_norm=1", F.embedding, (indices, weight(23)), {"max_norm": 1.0})]


@dataclass(frozen=True)
class Semantics:
    """One edge eager defines: ``cases(dtype, gradients)`` its calls in that dtype (none where
    it does not exist there); ``tolerance`` how they are judged, in words (docs/checks.md). A
    name is letters and spaces, the domain its differences are reported under."""

    name: str
    why: str
    cases: Callable[[torch.dtype, bool], list[Case]]
    tolerance: str
    other_dtypes: tuple[torch.dtype, ...]  # of OTHER_DTYPES, those it is built in there

    def domain(self) -> Domain:
        return Domain(self.name, self.why, rewrite=lambda call, tensors: list(tensors), categories=(self.name,))

    def calls(self, dtype: torch.dtype, gradients: bool) -> list[Call]:
        if dtype in OTHER_DTYPES and dtype not in self.other_dtypes:
            return []
        suffix = str(dtype).removeprefix("torch.")
        return [Call(f"{label} in {suffix}", func, args, kwargs, category=self.name)
                for label, func, args, kwargs in self.cases(dtype, gradients and dtype.is_floating_point)]


SEMANTICS = (
    Semantics("exact halves", "round and division at ties: half to even, floor and truncation of halves",
              _exact_halves, "exact where eager is (whole numbers, the sign of -0)", (torch.bfloat16,)),
    Semantics("crossed bounds", "clamp with its lower bound above its upper one, scalar and tensor bounds",
              _crossed_bounds, "exact values; gradients of x and of each bound as eager's", (torch.float16,)),
    Semantics("fully masked rows", "softmax, log_softmax and attention over rows masked everywhere",
              _fully_masked_rows, "NaN where eager has NaN (softmax), zeros where eager has zeros (attention), "
              "gradients within the dtype's tolerance", (torch.bfloat16,)),
    Semantics("float8 range", "conversions to float8 past its range, NaN and infinities, and every float8 value back",
              _float8_range, "bit for bit (float8 has no tolerance), NaN where eager has NaN",
              (torch.float64, torch.float16, torch.bfloat16)),
    Semantics("unsigned integers", "uint16, uint32 and uint64 past the signed range",
              _unsigned, "bit for bit", (torch.uint16, torch.uint64)),
    Semantics("bytes from floats", "floats converted to uint8: negative, fractional and past 255",
              _bytes_from_floats, "bit for bit", (torch.float16, torch.bfloat16)),
    Semantics("low precision rounding", "bfloat16 and float16 results and casts rounded where a comparison sees them",
              _low_precision_rounding, "counts and comparisons bit for bit, the half-precision results within "
              "their dtype's tolerance", ()),
    Semantics("embedding options", "an embedding's padding_idx in the backward and max_norm's renorm of the weight",
              _embedding_options, "the weight after the call and its gradient within the dtype's tolerance, the "
              "padding row's gradient exactly zero", (torch.float64,)),
)


def calls(dtypes: tuple[torch.dtype, ...], gradients: bool) -> list[Call]:
    """Every semantics' calls in ``dtypes`` (inputs requiring grad where ``gradients`` and the
    dtype is floating)."""
    return [call for semantics in SEMANTICS for dtype in dtypes for call in semantics.calls(dtype, gradients)]


def check(backend: Callable, dtypes: tuple[torch.dtype, ...], *, gradients: bool, testcase=None) -> list[Difference]:
    """The calls of ``dtypes`` compiled together by ``backend`` and compared with eager
    (value_domains.batch_check), each semantics its own domain. Returns what differed."""
    return batch_check(calls(dtypes, gradients), backend, domains=tuple(semantics.domain() for semantics in SEMANTICS),
                       gradients=gradients, testcase=testcase)
