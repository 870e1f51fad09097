"""Faulty backends that a check's judgement of values and gradients once forgave
(harness/checks/compare.py, accuracy.py, opcheck.py, replay.py; issue 65, findings 3 to 6):
wrong in a leaf the half-precision fallback did not look at, in a call with no input that
requires grad, in a gradient a constant loss cannot see, or by less than a widened half
tolerance (test/proofs/test_judging_faults.py)."""

from __future__ import annotations

from typing import Any, Callable

import torch
import torch.utils._pytree as pytree
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

from test.harness.faulty_backends._shared import _backward_as_traced, retargeting

aten = torch.ops.aten
_HALF = (torch.bfloat16, torch.float16)
# More than the old bfloat16 tolerance widened tenfold (rtol 0.16 with atol 0.1 let 12% through).
_TWELVE_PERCENT = 1.12


def _topk_with_shifted_indices(input, k, dim=-1, largest=True, sorted=True, **kwargs):
    values, indices = torch.topk(input, k, dim, largest, sorted, **kwargs)
    if input.dtype not in _HALF or input.dim() == 0:
        return values, indices
    return values, (indices + 1) % input.shape[dim]


def wrong_half_indices(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *output values* (integer leaves beside half ones). ``topk`` of a bfloat16 or
    float16 tensor returns the right values with each index one place on (modulo the
    dimension's size), as a half-precision sort kernel whose index bookkeeping is off; float32
    and float64 are right, and so are gradients (they follow the right indices)."""
    for node in gm.graph.nodes:
        if (node.op, node.target) in (("call_function", torch.topk), ("call_method", "topk")):
            node.op, node.target = "call_function", _topk_with_shifted_indices
    gm.recompile()
    return gm.forward


def _scaling_half_results(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    def run(*args: Any) -> list[Any]:
        return [value * _TWELVE_PERCENT if isinstance(value, torch.Tensor) and value.dtype in _HALF else value
                for value in gm(*args)]

    return make_boxed_func(run)


_aot_half_gradients_off = aot_autograd(fw_compiler=_backward_as_traced, bw_compiler=_scaling_half_results)


def _twelve_percent_more(value: Any) -> Any:
    if not isinstance(value, torch.Tensor) or value.dtype not in _HALF:
        return value
    # Through a detached offset: requires_grad kept, gradients untouched.
    return value + (value * (_TWELVE_PERCENT - 1)).detach()


def half_outputs_12_percent_off(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *output values* in half precision. Every bfloat16 and float16 output is 12%
    too large (a kernel with a wrong scale factor); float32 and the gradients are right."""
    return lambda *args: pytree.tree_map(_twelve_percent_more, gm(*args))


def half_gradients_12_percent_off(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *first-order gradients* in half precision. Every bfloat16 and float16 result
    of the backward graph is 12% too large; the forward and float32 are right."""
    return _aot_half_gradients_off(gm, example_inputs)


def _other_sizes(args: tuple, example_inputs: list[Any]) -> bool:
    return any(isinstance(arg, torch.Tensor) and isinstance(example, torch.Tensor) and arg.shape != example.shape
               for arg, example in zip(args, example_inputs))


def _at_other_sizes(change: Callable[[list[torch.Tensor]], list[Any]]) -> Callable:
    """A backend compiling as aot_eager whose outputs, where a graph with symbolic sizes is
    called at other sizes than its example inputs', are ``change``d (a kernel specialized on
    the first sizes and a generic one for the others, wrong in the generic one)."""

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
        compiled = torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)

        def run(*args: Any) -> Any:
            outputs = compiled(*args)
            if not _other_sizes(args, example_inputs):
                return outputs
            leaves, spec = pytree.tree_flatten(outputs)
            return pytree.tree_unflatten(change(leaves), spec)

        return run

    return backend


def _float32_off_by_4_beside_half(leaves: list[Any]) -> list[Any]:
    tensors = [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)]
    if not any(leaf.dtype in _HALF for leaf in tensors):
        return leaves
    return [leaf + 4 if isinstance(leaf, torch.Tensor) and leaf.dtype == torch.float32 else leaf for leaf in leaves]


def _half_detached(leaves: list[Any]) -> list[Any]:
    return [leaf.detach() if isinstance(leaf, torch.Tensor) and leaf.dtype in _HALF else leaf for leaf in leaves]


_float32_off_at_other_sizes = _at_other_sizes(_float32_off_by_4_beside_half)
_detached_half_at_other_sizes = _at_other_sizes(_half_detached)


def float32_off_beside_half(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *output values* (a float32 leaf beside half ones). A graph that returns a
    bfloat16 or float16 tensor and float32 ones, called at other sizes than it was compiled
    for (symbolic sizes), returns each float32 output 4 too large; half outputs are right."""
    return _float32_off_at_other_sizes(gm, example_inputs)


def detaches_half_outputs(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *output requires_grad and grad_fn* in half precision. A graph called at other
    sizes than it was compiled for (symbolic sizes) returns its bfloat16 and float16 outputs
    detached: right values, no gradient."""
    return _detached_half_at_other_sizes(gm, example_inputs)


def _index_plus_one(op: Callable) -> Callable:
    def call(*args: Any, **kwargs: Any) -> Any:
        return op(*args, **kwargs) + 1

    return call


def _retarget_gradient_free(op: Any) -> Callable | None:
    name = getattr(getattr(op, "_overloadpacket", None), "__name__", "")
    if name in ("argmax", "argmin"):
        return _index_plus_one(op)
    if name == "any":
        return lambda *args, **kwargs: torch.zeros_like(op(*args, **kwargs))
    return None


_aot_wrong_gradient_free = aot_autograd(fw_compiler=retargeting(_retarget_gradient_free),
                                        bw_compiler=_backward_as_traced)


def wrong_gradient_free_ops(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *each operator over PyTorch's reference inputs* where no input requires grad.
    ``argmax`` and ``argmin`` return each index plus one and ``any`` is always False, the
    operators without a gradient; every other kernel is right."""
    return _aot_wrong_gradient_free(gm, example_inputs)


def _softmax_backward_without_out(grad_output, output, dim, input_dtype):
    # The derivative of softmax is out * (g - sum(g * out)); this one forgets the first factor.
    return (grad_output - (grad_output * output).sum(dim, keepdim=True)).to(input_dtype)


def _retarget_softmax_backward(op: Any) -> Callable | None:
    return _softmax_backward_without_out if op is aten._softmax_backward_data.default else None


_aot_wrong_softmax_backward = aot_autograd(fw_compiler=_backward_as_traced,
                                           bw_compiler=retargeting(_retarget_softmax_backward))


def wrong_softmax_backward(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *first-order gradients* of a normalizing op. softmax's backward drops its
    ``* out`` factor: the gradient is right only where the upstream gradient is the same
    along the softmax dimension, which a loss that is the outputs' plain (or absolute) sum
    makes it."""
    return _aot_wrong_softmax_backward(gm, example_inputs)
