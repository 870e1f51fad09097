"""Faulty backends written apart from the suite's mutants and scenarios: each is aot_eager
whose ATen graphs call one kernel that goes wrong the way a real backend's does (floor
division truncating, a softmax without its maximum subtracted, strides ignored...), most
only under a condition (an argument, a dtype, a layout, a mode). bench/held_out.py runs them
as backends without recordings and counts which the default tier catches.

They measure what the suite catches of faults no mutant is; the first twelve (SET1) and the
next nine (SET2) were written before the tiers they were measured on (docs/coverage.md).

    python run_tests.py --backend bench/held_out_faults.py:cumsum_memory_order
    PYTHONPATH=bench DYNAMO_SUITE_IMPORTS=held_out_faults HELD_OUT_FAULT=remainder_as_fmod \\
        python run_tests.py --backend aot_eager       # the fault registered as aot_eager
"""

from __future__ import annotations

import math
import os
from typing import Any, Callable

import torch

aten = torch.ops.aten
FAULT_ENV = "HELD_OUT_FAULT"
Wrong = Callable[..., Any]  # wrong(right_kernel, *args, **kwargs)


def faulty(name: str, wrong_kernels: dict[Any, Wrong]) -> Callable:
    """aot_eager with each call of an operator in ``wrong_kernels`` (overload packets) routed
    through its wrong version, forward and backward.

    It imports nothing of the suite (test/harness/faulty_backends has a graph compiler like
    it): the same faults run against an earlier checkout to measure "before"."""
    from torch._dynamo.backends.debugging import aot_eager, boxed_nop

    def rewrite(graph: torch.fx.GraphModule) -> torch.fx.GraphModule:
        for node in graph.graph.nodes:
            packet = getattr(node.target, "overloadpacket", None) if node.op == "call_function" else None
            if packet in wrong_kernels:
                node.target = _routed(node.target, wrong_kernels[packet])
        graph.recompile()
        return graph

    def compile_graph(graph: torch.fx.GraphModule, inputs: list, **options: Any) -> Callable:
        return boxed_nop(rewrite(graph), inputs, **options)

    def backend(graph: torch.fx.GraphModule, example_inputs: list, **kwargs: Any) -> Callable:
        return aot_eager(graph, example_inputs, fw_compiler=compile_graph, bw_compiler=compile_graph, **kwargs)

    backend.__name__ = name
    return backend


def _routed(right: Callable, wrong: Wrong) -> Callable:
    def call(*args: Any, **kwargs: Any) -> Any:
        return wrong(right, *args, **kwargs)

    call.__name__ = f"faulty_{right.__name__.replace('.', '_')}"
    return call


def _memory_order(tensor: torch.Tensor) -> torch.Tensor:
    """Its elements in the order its dimensions lie in memory, read as if that were its shape:
    a kernel that takes a permuted tensor for a contiguous one."""
    if tensor.is_contiguous() or tensor.numel() == 0:
        return tensor
    order = sorted(range(tensor.dim()), key=lambda dim: -tensor.stride(dim))
    return tensor.permute(order).contiguous().reshape(tensor.shape)


def _is_bfloat16(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.dtype == torch.bfloat16


# -- the wrong kernels ---------------------------------------------------------------------


def _floor_as_trunc(right, *args, **kwargs):
    if kwargs.get("rounding_mode") == "floor":
        kwargs = {**kwargs, "rounding_mode": "trunc"}
    return right(*args, **kwargs)


def _floor_divide_as_trunc(right, a, b):
    return aten.div.Tensor_mode(a, b, rounding_mode="trunc")


def _softmax_without_max(right, x, dim, half_to_float):
    exponentials = torch.exp(x.float() if half_to_float else x)
    return exponentials / exponentials.sum(dim, keepdim=True)


def _mean_over_last_count(right, x, dim=None, keepdim=False, **kwargs):
    result = right(x, dim, keepdim, **kwargs)
    dims = [d % max(x.dim(), 1) for d in dim] if dim else list(range(x.dim()))
    if len(dims) > 1 and x.numel():  # over several dimensions, divides by the last one's size
        return result * math.prod(x.shape[d] for d in dims) / x.shape[dims[-1]]
    return result


def _clamp_without_max(right, x, min=None, max=None):
    return right(x, min, None) if min is not None and max is not None else right(x, min, max)


def _int8_saturating(right, a, b, *args, **kwargs):
    result = right(a, b, *args, **kwargs)
    if isinstance(result, torch.Tensor) and result.dtype == torch.int8:
        wide = [value.to(torch.int32) if isinstance(value, torch.Tensor) else value for value in (a, b)]
        return right(*wide, *args, **kwargs).clamp(-128, 127).to(torch.int8)
    return result


def _empty_sum_nan(right, x, *args, **kwargs):
    result = right(x, *args, **kwargs)
    return torch.full_like(result, float("nan")) if x.numel() == 0 and result.is_floating_point() else result


def _addmm_without_bias_when_serving(right, bias, a, b, *args, **kwargs):
    if torch.is_inference_mode_enabled() or not torch.is_grad_enabled():
        return torch.mm(a, b)
    return right(bias, a, b, *args, **kwargs)


def _cumsum_in_memory_order(right, x, dim, **kwargs):
    return right(_memory_order(x), dim, **kwargs)


def _bfloat16_as_half(right, *args, **kwargs):
    if not any(_is_bfloat16(value) for value in args):
        return right(*args, **kwargs)
    result = right(*[value.to(torch.float16) if _is_bfloat16(value) else value for value in args], **kwargs)
    return result.to(torch.bfloat16) if isinstance(result, torch.Tensor) and result.dtype == torch.float16 else result


def _gather_first_column(right, x, dim, index, **kwargs):
    if index.dim() and index.shape[dim] == 1:  # one index per row: reads the first
        return right(x, dim, torch.zeros_like(index), **kwargs)
    return right(x, dim, index, **kwargs)


def _where_widening_to_zero_dim(right, condition, a, b):
    result = right(condition, a, b)
    for value in (a, b):
        if isinstance(value, torch.Tensor) and value.dim() == 0 and value.is_floating_point() \
                and value.dtype != result.dtype:
            return result.to(value.dtype)
    return result


def _layer_norm_without_eps(right, x, shape, weight, bias, eps):
    return right(x, shape, weight, bias, 0.0)


def _remainder_as_fmod(right, a, b):
    return torch.fmod(a, b)


def _var_correction_ignored(right, x, dim=None, *, correction=None, keepdim=False):
    return right(x, dim, correction=None, keepdim=keepdim)


def _mm_strides_ignored(right, a, b):
    return right(_memory_order(a), _memory_order(b))


def _avg_pool_padding_uncounted(right, x, kernel, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                                divisor_override=None):
    return right(x, kernel, stride, padding, ceil_mode, False, divisor_override)


def _half_log_softmax_naive(right, x, dim, half_to_float):
    if x.dtype not in (torch.float16, torch.bfloat16):
        return right(x, dim, half_to_float)
    exponentials = torch.exp(x - x.amax(dim, keepdim=True))
    return torch.log(exponentials / exponentials.sum(dim, keepdim=True))


def _cat_in_first_dtype(right, tensors, dim=0):
    result = right(tensors, dim)
    return result.to(tensors[0].dtype)


def _gelu_tanh_ignored(right, x, approximate="none"):
    return right(x, approximate="none")


def _argmax_keepdim_dropped(right, x, dim=None, keepdim=False):
    return right(x, dim, False)


def _scatter_reduce_self_included(right, x, dim, index, src, reduce, include_self=True):
    return right(x, dim, index, src, reduce, include_self=True)


_BFLOAT16_KERNELS = (aten.exp, aten.exp2, aten.mul, aten.add, aten.addmm, aten.mm, aten.sum, aten.pow, aten._softmax)
SET1 = {
    "floordiv_truncates": {aten.div: _floor_as_trunc, aten.floor_divide: _floor_divide_as_trunc},
    "softmax_no_max": {aten._softmax: _softmax_without_max},
    "mean_wrong_count": {aten.mean: _mean_over_last_count},
    "clamp_drops_max": {aten.clamp: _clamp_without_max},
    "int8_saturates": {aten.add: _int8_saturating, aten.mul: _int8_saturating, aten.sub: _int8_saturating},
    "empty_sum_nan": {aten.sum: _empty_sum_nan},
    "inference_drops_bias": {aten.addmm: _addmm_without_bias_when_serving},
    "cumsum_memory_order": {aten.cumsum: _cumsum_in_memory_order},
    "bfloat16_as_half": dict.fromkeys(_BFLOAT16_KERNELS, _bfloat16_as_half),
    "gather_first_column": {aten.gather: _gather_first_column},
    "where_widens": {aten.where: _where_widening_to_zero_dim},
    "layer_norm_no_eps": {aten.native_layer_norm: _layer_norm_without_eps},
}
SET2 = {
    "remainder_as_fmod": {aten.remainder: _remainder_as_fmod},
    "var_correction_ignored": {aten.var: _var_correction_ignored, aten.var_mean: _var_correction_ignored},
    "mm_strides_ignored": {aten.mm: _mm_strides_ignored},
    "avg_pool_padding_uncounted": {aten.avg_pool2d: _avg_pool_padding_uncounted},
    "log_softmax_half_naive": {aten._log_softmax: _half_log_softmax_naive},
    "cat_promotion_lost": {aten.cat: _cat_in_first_dtype},
    "gelu_tanh_ignored": {aten.gelu: _gelu_tanh_ignored},
    "argmax_keepdim_dropped": {aten.argmax: _argmax_keepdim_dropped},
    "scatter_reduce_self_included": {aten.scatter_reduce: _scatter_reduce_self_included},
}
FAULTS = {**SET1, **SET2}
control = faulty("control", {})  # the same backend with no fault: what a correct one shows
for _name, _wrong_kernels in FAULTS.items():
    globals()[_name] = faulty(_name, _wrong_kernels)

if os.environ.get(FAULT_ENV):  # imported through DYNAMO_SUITE_IMPORTS: the fault is aot_eager
    import harness

    harness.register_backend(globals()[os.environ[FAULT_ENV]], name="aot_eager")
