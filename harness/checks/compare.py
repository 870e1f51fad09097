"""Comparing what a compiled function produced with what eager produced.

Compiled code may reassociate floating-point arithmetic, so floating values are compared
with a dtype-aware tolerance, and where a caller gives the same code run in float64, a
floating value that misses it is judged against that reference instead (no further from it
than eager is: harness/checks/accuracy.py); everything else a user can observe (structure,
shape, dtype, requires_grad, integers, gradients) must match exactly. Each leaf is judged by
its own rule: a leaf that passes never excuses another. docs/checks.md, "How values and
gradients are judged".
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import torch
import torch.utils._pytree as pytree

from harness.checks import accuracy

# (rtol, atol) by dtype, torch.testing.assert_close's defaults: about 100 float32 ulp, 2 to 4
# bfloat16 and float16 ulp; dtypes not listed compare exactly.
_TOLERANCES = {
    torch.float16: (1e-3, 1e-3),
    torch.bfloat16: (1.6e-2, 1e-2),
    torch.float32: (1.3e-5, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-5, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}


def tolerance(dtype: torch.dtype, scale: float = 1.0) -> tuple[float, float]:
    """(rtol, atol) for comparing values of ``dtype``, widened by ``scale``."""
    rtol, atol = _TOLERANCES.get(dtype, (0.0, 0.0))
    return rtol * scale, atol * scale


def rand_strided(
    size: Sequence[int],
    stride: Sequence[int],
    dtype: torch.dtype | None = None,
    device: str | torch.device | None = None,
) -> torch.Tensor:
    """A random tensor with exactly the given size and stride (over a minimal storage), of
    ``dtype`` or else torch's default dtype (the test's, harness/axes/dtypes.py), on ``device`` or
    else torch's default device (the run's device, harness/axes/device.py)."""
    dtype = dtype or torch.get_default_dtype()
    if len(size) != len(stride):
        raise ValueError(f"size {tuple(size)} and stride {tuple(stride)} differ in length")
    storage = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    if dtype.is_floating_point or dtype.is_complex:
        flat = torch.randn(storage, dtype=dtype, device=device)
    elif dtype == torch.bool:
        flat = torch.randint(0, 2, (storage,), device=device).to(torch.bool)
    else:
        flat = torch.randint(-100, 100, (storage,), dtype=dtype, device=device)
    return torch.as_strided(flat, size, stride)


def clone_input(value: Any) -> Any:
    """A detached copy of a tensor keeping requires_grad (and strides); other values as is."""
    if not isinstance(value, torch.Tensor):
        return value
    copy = torch.empty_strided(value.size(), value.stride(), dtype=value.dtype, device=value.device)
    with torch.no_grad():
        copy.copy_(value)
    if isinstance(value, torch.nn.Parameter):
        return torch.nn.Parameter(copy, requires_grad=value.requires_grad)
    return copy.requires_grad_(value.requires_grad)


def clone_inputs(values: Sequence[Any]) -> list[Any]:
    return [clone_input(value) for value in values]


def assert_close(testcase, expected: Any, actual: Any, *, scale: float = 1.0, what: str = "output",
                 check_requires_grad: bool = True, reference: Callable[[], Any] | None = None,
                 computed_in: torch.dtype | None = None) -> None:
    """Structure, shape, dtype, requires_grad and values must match, each leaf by its own
    rule: non-floating tensors and Python values exactly, floating tensors within the
    dtype's tolerance (times ``scale``) or, where ``reference`` gives the same structure
    computed in float64 (called at most once, when a value misses the tolerance), no further
    from it than eager is (accuracy.beyond_reference). ``computed_in``: the dtype the code
    computed in (under autocast), whose tolerance floating leaves then get."""
    expected_flat, expected_spec = pytree.tree_flatten(expected)
    actual_flat, actual_spec = pytree.tree_flatten(actual)
    testcase.assertEqual(
        str(expected_spec), str(actual_spec), f"{what}: structure differs from eager"
    )
    truths = functools.cache(lambda: _reference_leaves(reference, len(expected_flat)))
    for index, (want, got) in enumerate(zip(expected_flat, actual_flat)):
        where = f"{what}[{index}]" if len(expected_flat) > 1 else what
        if not isinstance(want, torch.Tensor):
            testcase.assertEqual(want, got, f"{where}: differs from eager")
            continue
        testcase.assertIsInstance(got, torch.Tensor, f"{where}: eager gave a tensor")
        testcase.assertEqual(tuple(want.shape), tuple(got.shape), f"{where}: shape differs from eager")
        testcase.assertEqual(want.dtype, got.dtype, f"{where}: dtype differs from eager")
        if check_requires_grad:
            testcase.assertEqual(
                want.requires_grad, got.requires_grad, f"{where}: requires_grad differs from eager"
            )
        judged_as = computed_in if computed_in is not None and want.is_floating_point() else want.dtype
        rtol, atol = tolerance(judged_as, scale)
        try:
            torch.testing.assert_close(
                got.detach(), want.detach(), rtol=rtol, atol=atol, equal_nan=True,
                check_device=True, check_stride=False,
                msg=lambda message, where=where: f"{where}: values differ from eager\n{message}",
            )
        except AssertionError as error:
            # float8 is judged exactly (no tolerance), and has no kernels to measure a distance with.
            if reference is None or not want.is_floating_point() or want.element_size() == 1:
                raise
            truth = truths()[index] if truths() is not None else None
            wrong = accuracy.beyond_reference(want.detach(), got.detach(), truth, tolerance(judged_as)[0])
            if wrong is not None:
                raise AssertionError(f"{error}\n{where}: against the float64 reference: {wrong}") from None


def _reference_leaves(reference: Callable[[], Any], count: int) -> list[Any] | None:
    try:
        leaves = pytree.tree_leaves(reference())
    except Exception:  # no float64 kernel, or code that casts explicitly: the tolerance decides
        return None
    return leaves if len(leaves) == count else None


def _differentiable_leaves(values: Sequence[Any]) -> list[torch.Tensor]:
    return [v for v in pytree.tree_leaves(values) if isinstance(v, torch.Tensor) and v.requires_grad]


def assert_same_outputs_and_grads(testcase, fn: Callable, compiled: Callable, args: Sequence[Any],
                                  *, scale: float = 1.0) -> tuple[Any, Any]:
    """Run ``fn`` and ``compiled`` on separate copies of ``args``; compare outputs, mutated
    inputs and the gradients of a weighted loss (weighted_loss) w.r.t. every input that
    requires grad. Returns both outputs."""
    eager_args, compiled_args = clone_inputs(args), clone_inputs(args)
    expected = fn(*eager_args)
    actual = compiled(*compiled_args)
    assert_close(testcase, expected, actual, scale=scale)
    assert_close(testcase, eager_args, compiled_args, scale=scale, what="inputs after the call")
    expected_loss, actual_loss = weighted_loss(expected), weighted_loss(actual)
    testcase.assertEqual(expected_loss is None, actual_loss is None, "which outputs require grad differs")
    if expected_loss is not None:
        expected_loss.backward()
        actual_loss.backward()
        for index, (want, got) in enumerate(
            zip(_differentiable_leaves(eager_args), _differentiable_leaves(compiled_args))
        ):
            testcase.assertEqual(want.grad is None, got.grad is None, f"grad of input {index}: presence differs")
            if want.grad is not None:
                assert_close(testcase, want.grad, got.grad, scale=scale, what=f"grad of input {index}")
    return expected, actual


def _tensors(values: Any) -> list[torch.Tensor]:
    return [value for value in pytree.tree_leaves(values) if isinstance(value, torch.Tensor)]


def _storage(tensor: torch.Tensor) -> int:
    return tensor.untyped_storage().data_ptr()


def aliasing(inputs: Any, outputs: Any) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Per output tensor: which inputs and which earlier outputs share its storage."""
    ins, outs = _tensors(inputs), _tensors(outputs)
    relations = []
    for index, out in enumerate(outs):
        if out.numel() == 0:  # empty tensors may or may not get storage; nothing to observe
            relations.append(((), ()))
            continue
        relations.append((
            tuple(i for i, value in enumerate(ins) if value.numel() and _storage(value) == _storage(out)),
            tuple(j for j, earlier in enumerate(outs[:index]) if earlier.numel() and _storage(earlier) == _storage(out)),
        ))
    return relations


def assert_same_aliasing(testcase, eager_inputs: Any, expected: Any, compiled_inputs: Any, actual: Any) -> None:
    """Outputs must be views of the same inputs (and of each other) as eager's: a caller
    writing through one sees the change through the other."""
    testcase.assertEqual(
        aliasing(eager_inputs, expected), aliasing(compiled_inputs, actual),
        "outputs alias inputs / each other differently from eager: (inputs shared, earlier outputs shared) per output",
    )


def assert_same_strides(testcase, expected: Any, actual: Any, what: str = "output") -> None:
    for index, (want, got) in enumerate(zip(_tensors(expected), _tensors(actual))):
        if want.numel() > 1:  # strides of size-1 dims and empty tensors carry no meaning
            testcase.assertEqual(
                [s for s, n in zip(want.stride(), want.shape) if n > 1],
                [s for s, n in zip(got.stride(), got.shape) if n > 1],
                f"{what}[{index}]: strides differ from eager ({want.stride()} vs {got.stride()})",
            )


def assert_same_autograd_metadata(testcase, expected: Any, actual: Any) -> None:
    for index, (want, got) in enumerate(zip(_tensors(expected), _tensors(actual))):
        testcase.assertEqual(want.grad_fn is None, got.grad_fn is None,
                             f"output[{index}]: grad_fn presence differs from eager")
        testcase.assertEqual(want.is_leaf, got.is_leaf, f"output[{index}]: is_leaf differs from eager")
        testcase.assertEqual(want.is_inference(), got.is_inference(),
                             f"output[{index}]: is_inference differs from eager")


def weighted_loss(outputs: Any, seed: int = 1234) -> torch.Tensor | None:
    """The loss every gradient check differentiates: each differentiable output times weights
    drawn uniformly from [-1, 1], summed. The weights differ per element and in sign: a plain
    (or absolute) sum is constant through softmax and every normalizing op, so their
    gradients would be 0 whatever the backward computes, and it would hide a gradient right
    only on average, or permuted. Seeded and drawn on the CPU in float64: the same on every
    call and every device."""
    generator = torch.Generator().manual_seed(seed)
    parts = []
    for out in _tensors(outputs):
        if out.requires_grad and (out.dtype.is_floating_point or out.dtype.is_complex):
            weights = torch.rand(out.shape, generator=generator, dtype=torch.float64, device="cpu") * 2 - 1
            weights = weights.to(out.device, out.dtype)
            parts.append((out * weights).real.sum() if out.dtype.is_complex else (out * weights).sum())
    return sum(parts) if parts else None


def identical(first: Any, second: Any) -> bool:
    """Bit for bit the same values (NaN equal to NaN), shapes and dtypes."""
    left, right = pytree.tree_leaves(first), pytree.tree_leaves(second)
    if len(left) != len(right):
        return False
    for a, b in zip(left, right):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            if a.shape != b.shape or a.dtype != b.dtype:
                return False
            a, b = a.detach(), b.detach()
            both_nan = a.isnan() & b.isnan() if a.is_floating_point() else torch.zeros_like(a, dtype=torch.bool)
            if not bool(((a == b) | both_nan).all()):
                return False
        elif a != b:
            return False
    return True
