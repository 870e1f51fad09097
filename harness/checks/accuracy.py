"""Judging a compiled model against eager the way PyTorch's own accuracy runs do.

A whole model accumulates rounding differently once a compiler fuses, reorders or
re-associates its arithmetic, so a fixed tolerance is either too tight for a deep network
or too loose to see a wrong operator. The reference method (``benchmarks/dynamo``) asks a
different question: run the model once more in float64, take that as the truth, and require
the compiled float32 result to be no further from it than a small multiple of how far eager
float32 itself is. A compiled result that is merely reordered stays within that bound; one
computed with a wrong operator, a lost buffer update or bfloat16 arithmetic does not.

For each named tensor:

* dtype and shape must match eager's exactly, and non-floating tensors must be equal;
* floating tensors pass when they are close to eager within ``tol`` (the cheap case), or
  when ``rmse(fp64, compiled) <= multiplier * rmse(fp64, eager) + tol / 10``, where the
  multiplier is 2, or 3 for tensors of fewer than 1000 elements, whose error is noisier.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.utils._pytree as pytree

SMALL_TENSOR = 1000
HALF = (torch.bfloat16, torch.float16)


def rmse(reference: torch.Tensor, value: torch.Tensor) -> float:
    return math.sqrt(torch.mean(torch.square(reference.double() - value.double())).item())


@dataclass(frozen=True)
class Mismatch:
    name: str
    detail: str
    excess: float  # how many times over its allowance; orders the report

    def __str__(self) -> str:
        return f"{self.name}: {self.detail}"


def mismatch(name: str, eager: torch.Tensor, compiled: torch.Tensor, fp64: torch.Tensor | None,
            tol: float) -> Mismatch | None:
    """The mismatch of one tensor, or None when the compiled value is acceptable."""
    if not isinstance(compiled, torch.Tensor):
        return Mismatch(name, f"expected a tensor, got {type(compiled).__name__}", math.inf)
    if compiled.dtype != eager.dtype:
        return Mismatch(name, f"dtype {compiled.dtype}, eager {eager.dtype}", math.inf)
    if compiled.shape != eager.shape:
        return Mismatch(name, f"shape {tuple(compiled.shape)}, eager {tuple(eager.shape)}", math.inf)
    eager, compiled = eager.detach(), compiled.detach()
    if not eager.is_floating_point():
        if torch.equal(eager, compiled):
            return None
        differing = int((eager != compiled).sum())
        return Mismatch(name, f"{differing} of {eager.numel()} values differ from eager", math.inf)
    if torch.allclose(eager, compiled, rtol=tol, atol=tol, equal_nan=True):
        return None
    if fp64 is None:
        worst = (eager - compiled).abs().max().item()
        return Mismatch(name, f"max |compiled - eager| = {worst:.3g} > tolerance {tol:g}", worst / tol)
    if compiled.isnan().any() and not fp64.isnan().any():
        return Mismatch(name, "NaN where the float64 reference has none", math.inf)
    eager_error = rmse(fp64, eager)
    compiled_error = rmse(fp64, compiled)
    multiplier = 3.0 if eager.numel() < SMALL_TENSOR else 2.0
    allowance = multiplier * eager_error + tol / 10
    if compiled_error <= allowance:
        return None
    return Mismatch(
        name,
        f"RMSE vs float64 {compiled_error:.3g}, eager {eager.dtype}'s own {eager_error:.3g} "
        f"(allowed {multiplier:g}x + {tol / 10:g} = {allowance:.3g})",
        compiled_error / allowance,
    )


def assert_accurate(eager: dict[str, torch.Tensor], compiled: dict[str, torch.Tensor],
                    fp64: dict[str, torch.Tensor] | None, tol: float, *, shown: int = 5) -> None:
    """Compare dicts of named tensors (outputs, loss, grads, parameters, buffers); raise one
    AssertionError that names the worst mismatches and how many there were."""
    mismatches = []
    missing = sorted(set(eager) ^ set(compiled))
    if missing:
        mismatches.append(Mismatch(", ".join(missing), "present in only one of eager and compiled", math.inf))
    for name in eager.keys() & compiled.keys():
        found = mismatch(name, eager[name], compiled[name], None if fp64 is None else fp64.get(name), tol)
        if found is not None:
            mismatches.append(found)
    if not mismatches:
        return
    mismatches.sort(key=lambda mismatch: (-mismatch.excess, mismatch.name))
    lines = [str(mismatch) for mismatch in mismatches[:shown]]
    more = f" (and {len(mismatches) - shown} more)" if len(mismatches) > shown else ""
    raise AssertionError(f"{len(mismatches)} of {len(eager)} tensors off{more}: " + "; ".join(lines))


def beyond_reference(eager: Any, compiled: Any, fp64: Any, tol: float) -> str | None:
    """How one floating tensor that missed a fixed tolerance is wrong against the float64
    reference (``mismatch``: further from it than a small multiple of eager's own distance),
    or None when it is right all the same. A compiler that keeps intermediates in a wider
    type and rounds once differs from eager, which rounds after every step, by more than any
    fixed tolerance while being nearer the truth; a wrong kernel is further from it. A
    reference that is no tensor of eager's shape (the code cast explicitly, or has no float64
    kernel) excuses nothing."""
    if not (isinstance(fp64, torch.Tensor) and isinstance(compiled, torch.Tensor) and fp64.shape == eager.shape
            and eager.is_floating_point() and fp64.is_floating_point()):
        return "no float64 reference to judge it by"
    # Where the reference is not finite, the compiled value must be eager's NaN or infinity;
    # where only eager is (it overflowed, the wider reference did not), eager's or the
    # reference's; the distances are taken over the rest, which an infinity would make NaN.
    known = fp64.isfinite()
    want, got = eager[~known], compiled[~known]
    if not bool(((want == got) | (want.isnan() & got.isnan())).all()):
        return "NaN or infinities other than eager's where the float64 reference has them"
    overflowed = known & ~eager.isfinite()
    got, true = compiled[overflowed], fp64[overflowed]
    if not bool(((got == eager[overflowed]) | ((got.double() - true).abs() <= tol * (1 + true.abs()))).all()):
        return "where eager overflowed, neither eager's value nor the float64 reference's"
    finite = known & eager.isfinite()
    if not bool(finite.any()):
        return None
    found = mismatch("", eager[finite], compiled[finite], fp64[finite], tol)
    return None if found is None else found.detail


def in_float64(values: list[Any]) -> list[Any]:
    """``values`` with each real floating tensor as a float64 copy and each complex one as a
    complex128 copy (keeping requires_grad), other tensors as copies, an argument given twice
    still one object: the inputs of the reference run."""
    copies: dict[int, Any] = {}
    for value in values:
        if isinstance(value, torch.Tensor) and id(value) not in copies:
            wide = torch.complex128 if value.dtype.is_complex else torch.float64
            copy = value.detach().to(wide, copy=True) if value.is_floating_point() or value.is_complex() else value.detach().clone()
            copies[id(value)] = copy.requires_grad_(value.requires_grad)
    return [copies.get(id(value), value) for value in values]
