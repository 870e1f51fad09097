"""One operator call, eager vs compiled by a backend: outputs, gradients, and whether the
compiled code specialized on the example's data.

In the spirit of PyTorch's ``aot_autograd_check`` (which runs AOTAutograd with no-op
compilers), but through ``torch.compile`` with any backend, so the verdict is about what a
user of that backend would get.
"""

from __future__ import annotations

import functools
import itertools
import re
import unittest
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree

from harness import compat
from harness.checks import accuracy
from harness.checks.compare import assert_close, identical, tolerance, weighted_loss

NO_GRAD_ERROR = re.compile(r"does not require grad and does not have a grad_fn")


class OpCheckFailure(AssertionError):
    """The compiled operator is observably different from eager."""


class NoGraphCaptured(AssertionError):
    """Dynamo ran the call eagerly: nothing about the backend was checked."""


class _Slot:
    """Where the ``index``-th tensor goes back into a call's arguments."""

    def __init__(self, index: int) -> None:
        self.index = index


_CONTAINERS = (tuple, list, dict)


def _template(value: Any, tensors: list[torch.Tensor]) -> Any:
    """``value`` with each tensor replaced by a _Slot (appended to ``tensors``); a container
    holding no tensor stays the object it was (a torch.Size, a tuple of sizes)."""
    if isinstance(value, torch.Tensor):
        tensors.append(value)
        return _Slot(len(tensors) - 1)
    if type(value) not in _CONTAINERS:
        return value
    found = len(tensors)
    items = value.items() if isinstance(value, dict) else enumerate(value)
    filled = {key: _template(item, tensors) for key, item in items}
    if len(tensors) == found:
        return value
    return filled if isinstance(value, dict) else type(value)(filled.values())


def _filled(template: Any, tensors: tuple) -> Any:
    if isinstance(template, _Slot):
        return tensors[template.index]
    if type(template) is dict:
        return {key: _filled(item, tensors) for key, item in template.items()}
    if type(template) in (tuple, list):
        return type(template)([_filled(item, tensors) for item in template])
    return template


def _split(args: tuple, kwargs: dict) -> tuple[list[Any], Callable[[list[Any]], tuple[tuple, dict]]]:
    """The tensors of (args, kwargs), and how to put new tensors in their places.

    Tensors inside other containers than tuples, lists and dicts (a namedtuple, a custom
    pytree node) are found with torch's pytree; otherwise the rebuild is a few lines of plain
    Python, which Dynamo traces in a fraction of the time pytree's unflattening costs it
    (2 s against 13 s for the quick tier's 73 ops compiled as one function)."""
    leaves = pytree.tree_leaves((args, kwargs))
    tensors: list[torch.Tensor] = []
    template = _template((args, kwargs), tensors)
    if len(tensors) == sum(isinstance(leaf, torch.Tensor) for leaf in leaves):
        return tensors, lambda values: _filled(template, tuple(values))
    leaves, spec = pytree.tree_flatten((args, kwargs))
    positions = [index for index, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]

    def rebuild(values: list[Any]) -> tuple[tuple, dict]:
        filled = list(leaves)
        for position, tensor in zip(positions, values):
            filled[position] = tensor
        return pytree.tree_unflatten(filled, spec)

    return [leaves[position] for position in positions], rebuild


_FLAT_FNS = itertools.count()


def _flattened(func: Callable, args: tuple, kwargs: dict) -> tuple[list[torch.Tensor], Callable]:
    """The call's tensors, and ``func`` as a function of just those tensors."""
    tensors, rebuild = _split(tuple(args), dict(kwargs))

    def flat_fn(*values):
        call_args, call_kwargs = rebuild(list(values))
        return func(*call_args, **call_kwargs)

    # A code object of its own: where Dynamo compiles each call's flat_fn as a frame apart (a
    # graph break in a batch's loop), calls sharing one code object share its cache, and
    # torch 2.13 does not guard on a torch.Tensor method held in a closure (pytorch#197811):
    # rsub would run the graph __radd__ compiled.
    flat_fn.__code__ = flat_fn.__code__.replace(co_name=f"flat_fn_{next(_FLAT_FNS)}")
    return tensors, flat_fn


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


def _comparer(testcase, tolerance_scale: float) -> Callable[..., None]:
    def compare(label: str, want: Any, got: Any, reference: Callable[[], Any] | None = None) -> None:
        try:
            assert_close(testcase or unittest.TestCase(), want, got, scale=tolerance_scale, what=label)
        except AssertionError as error:
            if reference is not None and accuracy.no_worse_than_eager(
                    want, got, reference, lambda dtype: tolerance(dtype, tolerance_scale)[0]):
                return
            raise OpCheckFailure(
                f"{label} differ between eager and the compiled call: the operator would give wrong "
                f"{label} under torch.compile with this backend. {error}") from None

    return compare


def _compile_kwargs(testcase) -> dict:
    """Static sizes, never recompiled as dynamic, unless the test runs with sizes symbolic
    from the first compile (the ``dynamic`` variant, which then applies); and the run's
    compile options, when a test case is at hand."""
    dynamic = False if compat.dynamo_config_value("assume_static_by_default") else None
    return testcase.compile_kwargs(dynamic=dynamic) if hasattr(testcase, "compile_kwargs") else {"dynamic": dynamic}


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
    from harness.measure.counters import CompileCounterWithBackend

    tensors, flat_fn = _flattened(func, args, kwargs)

    if check_gradients == "auto":
        check_gradients = any(t.requires_grad for t in tensors) and _eager_needs_grad(flat_fn, tensors)
    compat.reset_dynamo()  # each call is its own compilation, never a recompile
    counter = CompileCounterWithBackend(backend)
    compiled = torch.compile(flat_fn, backend=counter, **_compile_kwargs(testcase))

    compare = _comparer(testcase, tolerance_scale)
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
    truth = functools.cache(lambda: _forward_backward(flat_fn, accuracy.in_float64(tensors), check_gradients))
    compare("outputs", expected, actual, reference=lambda: truth()[0])
    compare("inputs after the call", eager_inputs, compiled_inputs)
    if check_gradients:
        compare("gradients", _defined(expected_grads), _defined(actual_grads),
                reference=lambda: _defined(truth()[1]))
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



# -- random operators --------------------------------------------------------------------

SEEDS = (1234, 5678, 91, 2024, 7, 31337, 4242, 100)
_STEP = 1e-3  # of the finite difference that checks gradients through the drawn values


def _seeded(fn: Callable, seed: int, tensors: list[torch.Tensor]) -> Any:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return fn(*tensors)


def _draws_random_numbers(fn: Callable, tensors: list[torch.Tensor]) -> bool:
    """Whether an eager call advances torch's generator (dropout with p = 0 does not)."""
    with torch.random.fork_rng(devices=[]):
        before = torch.get_rng_state()
        fn(*_fresh_copies(tensors))
        return not torch.equal(before, torch.get_rng_state())


def _layout(value: Any) -> list[Any]:
    return [(tuple(leaf.shape), leaf.dtype) if isinstance(leaf, torch.Tensor) else type(leaf).__name__
            for leaf in pytree.tree_leaves(value)]


def random_op_check(func: Callable, args: tuple, kwargs: dict, backend: Callable, *, testcase=None,
                    tolerance_scale: float = 10.0) -> int:
    """Check an operator that draws random numbers, compiled with ``backend``.

    Where eager draws no random numbers for the sample (dropout with p = 0, or not training),
    ``op_check`` compares values and gradients with eager. Otherwise a backend may draw other
    numbers than eager, but the compiled call must give eager's shapes and dtypes, repeat
    itself under the same ``torch.manual_seed``, draw anew under other seeds (where eager's
    results differ between them), and compute gradients through the draws its forward made:
    the gradient of a weighted sum of the outputs, along a random direction, must match the
    finite difference of two compiled calls under the same seed.
    """
    from harness.measure.counters import CompileCounterWithBackend

    tensors, flat_fn = _flattened(func, args, kwargs)

    if not _draws_random_numbers(flat_fn, tensors):
        return op_check(func, args, kwargs, backend, check_gradients="auto", check_data_specialization=True,
                        testcase=testcase, tolerance_scale=tolerance_scale)
    eager = [_seeded(flat_fn, seed, _fresh_copies(tensors)) for seed in SEEDS]
    compat.reset_dynamo()
    counter = CompileCounterWithBackend(backend)
    compiled = torch.compile(flat_fn, backend=counter, **_compile_kwargs(testcase))
    compare = _comparer(testcase, tolerance_scale)

    first = _seeded(compiled, SEEDS[0], _fresh_copies(tensors))
    if _layout(first) != _layout(eager[0]):
        raise OpCheckFailure(f"shapes or dtypes differ from eager: compiled {_layout(first)}, eager {_layout(eager[0])}")
    if not identical(first, _seeded(compiled, SEEDS[0], _fresh_copies(tensors))):
        raise OpCheckFailure("two compiled calls after the same torch.manual_seed drew different numbers: "
                             "the seed does not reproduce the operator under this backend")
    eager_varies = not all(identical(eager[0], other) for other in eager[1:])  # a rare event may never occur
    if eager_varies and all(identical(first, _seeded(compiled, seed, _fresh_copies(tensors))) for seed in SEEDS[1:]):
        raise OpCheckFailure(f"compiled calls under {len(SEEDS)} different seeds drew the same numbers (eager's "
                             "differ): the operator does not draw from torch's generator under this backend")
    _check_gradients_of_draws(flat_fn, compiled, tensors, compare)
    return _graphs(counter)


def _directional(fn: Callable, tensors: list[torch.Tensor], seed: int) -> tuple[float, float, list[Any]] | None:
    """For a weighted sum of ``fn``'s floating outputs under ``seed``: the gradients, the
    derivative along a random direction they predict, and the one two calls under the same
    seed measure by finite difference. None when no output is differentiable."""
    wrt = [index for index, tensor in enumerate(tensors) if tensor.requires_grad and tensor.is_floating_point()]
    inputs = _fresh_copies(tensors)
    loss = weighted_loss(_seeded(fn, seed, inputs))  # the same weights on every call
    if not wrt or loss is None:
        return None
    generator = torch.Generator().manual_seed(SEEDS[0])
    directions = [torch.randn(tensors[index].shape, generator=generator, device="cpu").to(tensors[index].device)
                  for index in wrt]
    grads = torch.autograd.grad(loss, [inputs[index] for index in wrt], allow_unused=True)
    predicted = sum(float((grad.double() * direction).sum()) for grad, direction in zip(grads, directions)
                    if grad is not None)

    def shifted(step: float) -> float:
        moved = _fresh_copies(tensors)  # still requiring grad, so the outputs are weighted as above
        with torch.no_grad():
            for index, direction in zip(wrt, directions):
                moved[index].add_(step * direction)
        return float(weighted_loss(_seeded(fn, seed, moved)).detach())

    measured = (shifted(_STEP) - shifted(-_STEP)) / (2 * _STEP)
    return predicted, measured, _defined(grads)


def _agree(predicted: float, measured: float) -> bool:
    # 5% of the derivative, plus the finite difference's own float32 error (about 1e-4 here).
    return abs(predicted - measured) <= 0.05 * max(abs(measured), abs(predicted)) + 1e-3


def _check_gradients_of_draws(flat_fn: Callable, compiled: Callable, tensors: list[torch.Tensor], compare) -> None:
    eager = _directional(flat_fn, tensors, SEEDS[0])
    if eager is None:
        return
    compiled_result = _directional(compiled, tensors, SEEDS[0])
    if compiled_result is None:
        raise OpCheckFailure("eager's outputs are differentiable, the compiled call's are not")
    predicted, measured, grads = compiled_result
    if _agree(*eager[:2]):
        # Eager's gradient is the derivative of what its forward drew (dropout's mask): so must be the backend's.
        if not _agree(predicted, measured):
            raise OpCheckFailure(
                f"the gradient does not follow the forward's draws: along a random direction it predicts "
                f"{predicted:.4g}, while two compiled calls under the same seed change by {measured:.4g} "
                f"(the backward used other random numbers than the forward, or wrong gradients)")
        return
    # A sampling operator's gradient is defined otherwise (bernoulli's and normal's are zero); where it
    # does not depend on the draws, the backend's must be eager's.
    other = _directional(flat_fn, tensors, SEEDS[1])
    if other is not None and identical(eager[2], other[2]):
        compare("gradients", eager[2], grads)
