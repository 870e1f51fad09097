"""Faulty backends that are right on ordinary inputs and wrong only on the values real data
has (test/dynamo/test_real_data.py; test/proofs/test_real_data_faults.py).

Each is an AOTAutograd backend whose forward and backward graphs run as traced, except that
some ATen operators are swapped for a version with a kernel bug that only shows on special
values: the bugs vectorized and parallel kernels really have.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

from test.harness.faulty_backends._shared import _NUDGE, _backward_as_traced, retargeting

aten = torch.ops.aten
WRAP = 2 ** 16  # elements a 16-bit index reaches


def _aot_replacing(replacements: dict[Any, Callable]) -> Callable:
    """Each call of an operator in ``replacements``, forward and backward, calls its
    replacement instead."""
    compile_graph = retargeting(replacements.get)
    return aot_autograd(fw_compiler=compile_graph, bw_compiler=compile_graph, inference_compiler=compile_graph,
                        keep_inference_input_mutations=True)


def _mapping_forward(transform: Callable[[torch.Tensor], torch.Tensor]) -> Callable:
    """An AOTAutograd backend whose forward graphs run as traced, each tensor they return
    then passed through ``transform``; backward graphs as traced."""

    def compile_graph(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
        forward = make_boxed_func(gm.forward)

        def run(args):
            return [transform(value) if isinstance(value, torch.Tensor) else value for value in forward(args)]

        run._boxed_call = True
        return run

    return aot_autograd(fw_compiler=compile_graph, inference_compiler=compile_graph, bw_compiler=_backward_as_traced,
                        keep_inference_input_mutations=True)


# -- NaN ----------------------------------------------------------------------------------


def _without_nan(x: torch.Tensor, fill: float) -> torch.Tensor:
    return torch.where(torch.isnan(x), torch.full((), fill, dtype=x.dtype), x) if x.is_floating_point() else x


skips_nan_in_reductions = _aot_replacing({
    aten.sum.dim_IntList: lambda x, *rest, **kwargs: aten.sum.dim_IntList(_without_nan(x, 0.0), *rest, **kwargs),
    aten.sum.default: lambda x, *rest, **kwargs: aten.sum.default(_without_nan(x, 0.0), *rest, **kwargs),
    aten.mean.dim: lambda x, *rest, **kwargs: aten.mean.dim(_without_nan(x, 0.0), *rest, **kwargs),
    aten.amax.default: lambda x, *rest: aten.amax.default(_without_nan(x, -float("inf")), *rest),
    aten.amin.default: lambda x, *rest: aten.amin.default(_without_nan(x, float("inf")), *rest),
    aten.max.default: lambda x: aten.max.default(_without_nan(x, -float("inf"))),
    aten.min.default: lambda x: aten.min.default(_without_nan(x, float("inf"))),
    aten.max.dim: lambda x, *rest: aten.max.dim(_without_nan(x, -float("inf")), *rest),
    aten.min.dim: lambda x, *rest: aten.min.dim(_without_nan(x, float("inf")), *rest),
})
skips_nan_in_reductions.__doc__ = """Breaks: *NaN propagates through reductions*. Sums, means,
maxima and minima skip NaN elements, as a vectorized max instruction that returns its other
operand for NaN does; inputs without NaN reduce right."""


# -- duplicates -----------------------------------------------------------------------------


def _gathered(base: torch.Tensor, indices: list) -> torch.Tensor:
    return aten.index.Tensor(base, indices)


def _index_put_racing(base, indices, values, accumulate=False):
    if not accumulate:
        return aten.index_put.default(base, indices, values)
    # Every write reads the old value and stores old + value: of duplicates, the last wins.
    return aten.index_put.default(base, indices, _gathered(base, indices) + values.expand_as(_gathered(base, indices)))


def _index_add_racing(base, dim, index, source, alpha=1):
    if base.dim() == 0:  # a scalar: nothing to race on
        return aten.index_add.default(base, dim, index, source, alpha=alpha)
    moved, moved_source = base.movedim(dim, 0), source.movedim(dim, 0)
    written = aten.index_put.default(moved, [index], moved[index] + alpha * moved_source)
    return written.movedim(0, dim)


def _scatter_add_racing(base, dim, index, src):
    return aten.scatter.src(base, dim, index, aten.gather.default(base, dim, index) + src[tuple(
        slice(0, size) for size in index.shape)])


def _embedding_backward_racing(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    rows = grad.reshape(-1, grad.shape[-1])
    result = aten.index_put.default(grad.new_zeros(num_weights, grad.shape[-1]), [indices.reshape(-1)], rows)
    if padding_idx >= 0:
        result[padding_idx] = 0
    return result


loses_duplicate_writes = _aot_replacing({
    aten.index_put.default: _index_put_racing,
    aten.index_add.default: _index_add_racing,
    aten.scatter_add.default: _scatter_add_racing,
    aten.embedding_dense_backward.default: _embedding_backward_racing,
})
loses_duplicate_writes.__doc__ = """Breaks: *accumulating writes sum every duplicate index*.
index_put with accumulate, index_add, scatter_add and the embedding's backward read, add and
store without atomics: of several writes to one index only the last lands (a parallel kernel
racing on duplicates). Distinct indices are written right."""


# -- ties -------------------------------------------------------------------------------------


def _last_index(found: torch.Tensor, size: int) -> torch.Tensor:
    return size - 1 - found


def _argmax_last(x, dim=None, keepdim=False, *, reduction=aten.argmax.default):
    if dim is None:
        return _last_index(reduction(x.reshape(-1).flip(0)), x.numel())
    return _last_index(reduction(x.flip(dim), dim, keepdim), x.shape[dim])


def _max_last(x, dim, keepdim=False, *, reduction=aten.max.dim):
    values, found = reduction(x.flip(dim), dim, keepdim)
    return values, _last_index(found, x.shape[dim])


breaks_ties_last = _aot_replacing({
    aten.argmax.default: _argmax_last,
    aten.argmin.default: lambda x, dim=None, keepdim=False: _argmax_last(x, dim, keepdim, reduction=aten.argmin.default),
    aten.max.dim: _max_last,
    aten.min.dim: lambda x, dim, keepdim=False: _max_last(x, dim, keepdim, reduction=aten.min.dim),
})
breaks_ties_last.__doc__ = """Breaks: *arg-reductions return the first of equal values*.
argmax, argmin, max and min along a dimension return the last of several equal values (a
parallel reduction combining its partial results in the wrong order); without ties they are
right."""


# -- size ---------------------------------------------------------------------------------------


def _wrapped(value: Any) -> Any:
    if not isinstance(value, torch.Tensor) or not value.is_floating_point() or value.numel() <= WRAP:
        return value
    past = torch.arange(value.numel(), device=value.device).view(value.shape) >= WRAP
    return torch.where(past, value * (1 + _NUDGE), value)


wrong_past_2_to_the_16 = _mapping_forward(_wrapped)
wrong_past_2_to_the_16.__doc__ = f"""Breaks: *tensors of any size*. Every floating result of a
forward graph is 5% off from element {WRAP} on, as a kernel whose element index is 16 bits wide;
smaller results are right."""


# -- kinds of value and dtypes (harness/checks/value_domains.py) --------------------------------


def _flush_subnormals(value: torch.Tensor) -> torch.Tensor:
    if not value.is_floating_point():
        return value
    return torch.where(value.abs() < torch.finfo(value.dtype).smallest_normal, value * 0, value)


def _unsigned_zeros(value: torch.Tensor) -> torch.Tensor:
    return value + 0.0 if value.is_floating_point() else value


def _through_float32(value: torch.Tensor) -> torch.Tensor:
    if value.is_floating_point() or value.is_complex() or value.dtype == torch.bool:
        return value
    return value.to(torch.float32).to(value.dtype)


def _saturating_8_bit(value: torch.Tensor) -> torch.Tensor:
    if value.dtype == torch.int8:
        return value.clamp(-127, 127)
    return value.clamp(max=254) if value.dtype == torch.uint8 else value


def _real_part_only(value: torch.Tensor) -> torch.Tensor:
    return torch.complex(value.real, torch.zeros_like(value.real)) if value.is_complex() else value


flushes_subnormals = _mapping_forward(_flush_subnormals)
flushes_subnormals.__doc__ = """Breaks: *subnormal numbers are kept*. Every floating result
smaller than the dtype's smallest normal number becomes zero (of its sign), as hardware
running with flush-to-zero does; normal numbers are right."""

loses_negative_zero = _mapping_forward(_unsigned_zeros)
loses_negative_zero.__doc__ = """Breaks: *the sign of zero*. Every floating result has 0.0
added, which turns -0.0 into +0.0 (a compiler that folds x + 0.0 the wrong way round, or
initializes an accumulator with +0.0); every other value is right."""

integers_through_float32 = _mapping_forward(_through_float32)
integers_through_float32.__doc__ = """Breaks: *integers are exact*. Every integer result goes
through float32 and back, as a runtime whose only arithmetic is float32: integers past 2^24
come back rounded; smaller ones are right."""

saturates_8_bit = _mapping_forward(_saturating_8_bit)
saturates_8_bit.__doc__ = """Breaks: *8-bit integers hold their whole range*. int8 results
are clamped to [-127, 127] and uint8 ones to [0, 254], as saturating instructions with an
off-by-one bound; every other value is right."""

drops_imaginary_parts = _mapping_forward(_real_part_only)
drops_imaginary_parts.__doc__ = """Breaks: *complex numbers*. Complex results keep their real
part and lose their imaginary one, as a runtime that stores complex tensors as real ones;
real tensors are right."""

