"""One operator call, eager vs compiled by a backend: outputs, gradients, and whether the
compiled code specialized on the example's data.

In the spirit of PyTorch's ``aot_autograd_check`` (which runs AOTAutograd with no-op
compilers), but through ``torch.compile`` with any backend, so the verdict is about what a
user of that backend would get.
"""

from __future__ import annotations

import re
import unittest
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree

from harness import compat
from harness.compare import assert_close

NO_GRAD_ERROR = re.compile(r"does not require grad and does not have a grad_fn")


class OpCheckFailure(AssertionError):
    """The compiled operator is observably different from eager."""


class NoGraphCaptured(AssertionError):
    """Dynamo ran the call eagerly: nothing about the backend was checked."""


def _split(args: tuple, kwargs: dict) -> tuple[list[Any], Callable[[list[Any]], tuple[tuple, dict]]]:
    """The tensor leaves of (args, kwargs), and how to put new tensors in their places."""
    leaves, spec = pytree.tree_flatten((args, kwargs))
    positions = [index for index, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]

    def rebuild(tensors: list[Any]) -> tuple[tuple, dict]:
        filled = list(leaves)
        for position, tensor in zip(positions, tensors):
            filled[position] = tensor
        return pytree.tree_unflatten(filled, spec)

    return [leaves[position] for position in positions], rebuild


def _fresh_copies(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    copies = []
    for tensor in tensors:
        copy = tensor.detach().clone()
        copies.append(copy.requires_grad_(tensor.requires_grad))
    return copies


def _loss(outputs: Any) -> torch.Tensor | None:
    """Sum of absolute values of every differentiable output."""
    parts = [out.abs().sum() for out in pytree.tree_leaves(outputs)
             if isinstance(out, torch.Tensor) and out.requires_grad and (out.dtype.is_floating_point or out.dtype.is_complex)]
    return sum(parts) if parts else None


def _forward_backward(fn: Callable, tensors: list[torch.Tensor], check_gradients: bool) -> tuple[Any, Any]:
    """Outputs, and gradients w.r.t. the inputs that require grad (None when not checked)."""
    outputs = fn(*tensors)
    if not check_gradients:
        return outputs, None
    wrt = [tensor for tensor in tensors if tensor.requires_grad]
    loss = _loss(outputs)
    if loss is None:
        # Like eager autograd on a loss that has no graph: the documented error.
        loss = sum((out.sum() for out in pytree.tree_leaves(outputs) if isinstance(out, torch.Tensor)), torch.zeros(()))
    return outputs, torch.autograd.grad(loss, wrt, allow_unused=True)


def _randomized(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    """Same shapes, strides and dtypes, new values."""
    result = []
    for tensor in tensors:
        with torch.no_grad():
            if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
                values = torch.randn_like(tensor)
            elif tensor.dtype == torch.bool:
                values = torch.randint_like(tensor, 0, 2)
            else:
                values = tensor.clone()  # integer arguments are indices and sizes: keep them valid
        result.append(values.requires_grad_(tensor.requires_grad))
    return result


def op_check(func: Callable, args: tuple, kwargs: dict, backend: Callable, *, check_gradients: bool | str = "auto",
             check_data_specialization: bool = False, testcase=None, tolerance_scale: float = 10.0) -> int:
    """Compare ``func(*args, **kwargs)`` eager vs compiled with ``backend``.

    ``check_gradients``: True, False, or "auto" (when an input and an output require grad).
    Gradients are those of the summed absolute outputs w.r.t. inputs that require grad; when
    eager autograd refuses (no output has a grad_fn), the compiled call must refuse likewise.
    With ``check_data_specialization``, the compiled function is called again on new random
    values and compared with eager; when eager itself rejects those values (the operator has
    preconditions), that part is skipped. Returns the number of graphs the backend received;
    raises NoGraphCaptured when it received none.
    """
    from harness.counters import CompileCounterWithBackend

    tensors, rebuild = _split(tuple(args), dict(kwargs))

    def flat_fn(*values):
        call_args, call_kwargs = rebuild(list(values))
        return func(*call_args, **call_kwargs)

    if check_gradients == "auto":
        check_gradients = any(t.requires_grad for t in tensors) and _eager_needs_grad(flat_fn, tensors)
    compat.reset_dynamo()  # each call is its own compilation, never a recompile
    counter = CompileCounterWithBackend(backend)
    compiled = torch.compile(flat_fn, backend=counter, dynamic=False)

    def compare(label: str, want: Any, got: Any) -> None:
        try:
            assert_close(testcase or unittest.TestCase(), want, got, scale=tolerance_scale, what=label)
        except AssertionError as error:
            raise OpCheckFailure(
                f"{label} differ between eager and the compiled call: the operator would give wrong "
                f"{label} under torch.compile with this backend. {error}") from None

    eager_inputs, compiled_inputs = _fresh_copies(tensors), _fresh_copies(tensors)
    try:
        expected, expected_grads = _forward_backward(flat_fn, eager_inputs, check_gradients)
    except RuntimeError as error:
        if not (check_gradients and NO_GRAD_ERROR.search(str(error))):
            raise
        try:
            _forward_backward(compiled, compiled_inputs, check_gradients)
        except RuntimeError as compiled_error:
            if NO_GRAD_ERROR.search(str(compiled_error)):
                return _graphs(counter)
            raise
        raise OpCheckFailure("eager autograd finds no gradient for these inputs (\"does not require grad and "
                             "does not have a grad_fn\"), but the compiled call produced one") from None
    actual, actual_grads = _forward_backward(compiled, compiled_inputs, check_gradients)
    compare("outputs", expected, actual)
    compare("inputs after the call", eager_inputs, compiled_inputs)
    if check_gradients:
        compare("gradients", _defined(expected_grads), _defined(actual_grads))
    if check_data_specialization:
        _check_new_data(flat_fn, compiled, tensors, compare)
    return _graphs(counter)


def _eager_needs_grad(fn: Callable, tensors: list[torch.Tensor]) -> bool:
    outputs = fn(*_fresh_copies(tensors))
    return any(isinstance(out, torch.Tensor) and out.requires_grad for out in pytree.tree_leaves(outputs))


def _defined(grads: Any) -> list[Any]:
    # allow_unused gives None for inputs that do not influence the loss; keep the positions.
    return [grad if grad is not None else "no gradient" for grad in grads]


def _check_new_data(flat_fn: Callable, compiled: Callable, tensors: list[torch.Tensor], compare) -> None:
    new_values = _randomized(tensors)
    try:
        expected = flat_fn(*_fresh_copies(new_values))
    except Exception:
        return  # the operator's preconditions reject random values; nothing to compare
    compare("outputs on new data (the compiled code specialized on the example's values)",
            expected, compiled(*_fresh_copies(new_values)))


def _graphs(counter) -> int:
    if counter.frame_count == 0:
        breaks = [reason.strip().splitlines()[0] for reason in compat.dynamo_counters()["graph_break"]]
        why = f" (graph break: {breaks[-1]})" if breaks else ""
        raise NoGraphCaptured(f"Dynamo captured no graph for this call, so the backend was not exercised{why}")
    return counter.frame_count

