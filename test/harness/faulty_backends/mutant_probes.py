"""Which mutants (test/harness/faulty_backends/mutants.py) are equivalent: a mutant counts
only if it computes something other than its unmutated base on some probe.

The probes are small functions over the values a rewrite needs to show: ordinary values
with both signs, values near float32's smallest normal, integers past 16 bits, square
matrices (where a swapped operand or a dim off by one keeps every shape), losses, and
backward passes. Each probe is called twice with other values of the same sizes, so a
stale input shows on the second call. The comparison is exact (NaN equal to NaN): on
aot_eager the unmutated base computes what eager computes, bit for bit
(test/harness/test_mutants.py), so there "differs from its base" is "differs from eager";
on inductor, whose own rounding differs from eager's, only the rewrite is measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch.nn.functional as F
import torch.utils._pytree as pytree

TINY = torch.finfo(torch.float32).tiny


@dataclass(frozen=True)
class Probe:
    name: str
    fn: Callable
    # (generator) -> the inputs; tensors that require grad get gradients compared
    inputs: Callable[[torch.Generator], list[torch.Tensor]]


def _normal(*sizes: int, grad: bool = False) -> Callable[[torch.Generator], torch.Tensor]:
    return lambda g: torch.randn(*sizes, generator=g).requires_grad_(grad)


def _ints(*sizes: int, low: int = -10 ** 6, high: int = 10 ** 6) -> Callable[[torch.Generator], torch.Tensor]:
    return lambda g: torch.randint(low, high, sizes, generator=g)


def _tiny(g: torch.Generator) -> torch.Tensor:
    # Around float32's smallest normal, both signs, beside ordinary values: halving them
    # makes subnormals, and some subnormals are among the inputs already.
    scale = torch.tensor([1.0, 2.0, 0.5, 3.0, -1.0, -2.0, -0.25, 1.5])
    return torch.cat([scale * TINY * (1 + torch.rand(8, generator=g)), torch.randn(4, generator=g)])


def _inputs(*makers: Callable[[torch.Generator], torch.Tensor]) -> Callable[[torch.Generator], list[torch.Tensor]]:
    return lambda g: [make(g) for make in makers]


def _labels(g: torch.Generator) -> torch.Tensor:
    return torch.randint(0, 4, (3,), generator=g)


def _indices(g: torch.Generator) -> torch.Tensor:
    return torch.randint(0, 5, (6,), generator=g)


SQUARE = _normal(4, 4)
SQUARE_GRAD = _normal(4, 4, grad=True)

PROBES = (
    # One probe each rewrite shows on, first: a mutant is found to differ in a few compiles.
    Probe("add_scaled", lambda x, y: x * 2 + y, _inputs(SQUARE, SQUARE)),
    Probe("sub", lambda x, y: x - y, _inputs(SQUARE, SQUARE)),
    Probe("tiny_halved", lambda x: x * 0.5, _inputs(_tiny)),
    Probe("int_arith", lambda a, b: a * 3 + b, _inputs(_ints(8), _ints(8))),
    Probe("softmax", lambda x: torch.softmax(x, -1), _inputs(SQUARE)),
    # values with both signs
    Probe("div", lambda x, y: x / y, _inputs(SQUARE, lambda g: torch.rand(4, 4, generator=g) + 0.5)),
    Probe("pow", lambda x, y: x.abs() ** y, _inputs(SQUARE, SQUARE)),
    Probe("atan2", torch.atan2, _inputs(SQUARE, SQUARE)),
    Probe("where", lambda x, y: torch.where(x > 0, x, y), _inputs(SQUARE, SQUARE)),
    Probe("compare", lambda x, y: (x < y).to(x.dtype) * x, _inputs(SQUARE, SQUARE)),
    Probe("shifted_down", lambda x: x - 3.0, _inputs(SQUARE)),
    Probe("clamp", lambda x: x.clamp(-0.5, 0.5) * 3, _inputs(SQUARE)),
    # square matrices: dims, indices and operands that trade places keep every shape
    Probe("mm", torch.mm, _inputs(SQUARE, SQUARE)),
    Probe("bmm", torch.bmm, _inputs(_normal(2, 3, 3), _normal(2, 3, 3))),
    Probe("sum_dim", lambda x: x.sum(0), _inputs(SQUARE)),
    Probe("cumsum", lambda x: x.cumsum(1), _inputs(SQUARE)),
    Probe("select", lambda x: x[1] * 2, _inputs(SQUARE)),
    Probe("tril", lambda x: torch.tril(x, 1), _inputs(SQUARE)),
    Probe("roll", lambda x: torch.roll(x, 1, 0) * 1, _inputs(SQUARE)),
    Probe("transpose", lambda x, y: x.transpose(0, 1) + y, _inputs(SQUARE, SQUARE)),
    Probe("max_dim", lambda x: x.max(1), _inputs(SQUARE)),
    Probe("var", lambda x: x.var(0), _inputs(SQUARE)),
    Probe("cat_slices", lambda x, y: torch.cat([x[:, :2], y[:, 2:]], 1) * 1, _inputs(SQUARE, SQUARE)),
    Probe("float64", lambda x, y: x * y + 1, _inputs(lambda g: SQUARE(g).double(), lambda g: SQUARE(g).double())),
    # values near float32's smallest normal
    Probe("tiny_sum", lambda x, y: x + y * 1e-3, _inputs(_tiny, _tiny)),
    # integers past 16 bits, both signs
    Probe("int_remainder", lambda a, b: a % b, _inputs(_ints(8), _ints(8, low=1, high=1000))),
    Probe("int_cumsum", lambda a: a.cumsum(0), _inputs(_ints(8))),
    Probe("argmax", lambda x: x.argmax(1), _inputs(SQUARE)),
    # losses and backward passes
    Probe("mse_loss", F.mse_loss, _inputs(SQUARE, SQUARE)),
    Probe("cross_entropy", lambda x, t: F.cross_entropy(x, t), _inputs(_normal(3, 4, grad=True), _labels)),
    Probe("sin_backward", lambda x, y: (x.sin() * y).sum(), _inputs(SQUARE_GRAD, SQUARE)),
    Probe("tanh_backward", lambda x: torch.tanh(x) * 2, _inputs(SQUARE_GRAD)),
    Probe("relu_backward", lambda x, y: torch.relu(x) * y, _inputs(SQUARE_GRAD, SQUARE)),
    Probe("softmax_backward", lambda x, y: torch.softmax(x, -1) * y, _inputs(SQUARE_GRAD, SQUARE)),
    Probe("mm_backward", lambda x, w: x @ w, _inputs(SQUARE_GRAD, SQUARE_GRAD)),
    Probe("mse_backward", F.mse_loss, _inputs(SQUARE_GRAD, SQUARE)),
    Probe("layer_norm_backward", lambda x: F.layer_norm(x, (4,)), _inputs(SQUARE_GRAD)),
    Probe("embedding_backward", lambda i, w: F.embedding(i, w, padding_idx=0) * 2,
          _inputs(_indices, _normal(5, 3, grad=True))),
)


def _same(eager: Any, compiled: Any) -> bool:
    if isinstance(eager, torch.Tensor) or isinstance(compiled, torch.Tensor):
        if not (isinstance(eager, torch.Tensor) and isinstance(compiled, torch.Tensor)):
            return False
        if eager.shape != compiled.shape or eager.dtype != compiled.dtype:
            return False
        return bool(torch.equal(eager, compiled)) or (
            eager.dtype.is_floating_point and torch.equal(eager.isnan(), compiled.isnan())
            and torch.equal(eager.nan_to_num(0.0), compiled.nan_to_num(0.0)))
    return eager == compiled


def _results(fn: Callable, inputs: list[torch.Tensor]) -> list[Any]:
    """The outputs, then the gradient of each input that requires grad."""
    outputs = pytree.tree_leaves(fn(*inputs))
    leaves = [value for value in inputs if value.requires_grad]
    floating = [output for output in outputs if isinstance(output, torch.Tensor) and output.requires_grad]
    if leaves and floating:
        # A fixed weighting: a plain sum's gradient of ones would hide a swap of two operands
        # that are both ones.
        loss = sum((output * torch.linspace(0.5, 1.5, output.numel()).reshape(output.shape)).sum()
                   for output in floating)
        loss.backward()
        outputs = [*outputs, *[leaf.grad for leaf in leaves]]
    return [output.detach() if isinstance(output, torch.Tensor) else output for output in outputs]


def _fresh(inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    return [value.detach().clone().requires_grad_(value.requires_grad) for value in inputs]


def run_probe(probe: Probe, backend: Callable, reference: Callable | None = None) -> str | None:
    """Why ``backend`` differs from ``reference`` (eager when None) on ``probe``, or None.

    Both are called twice, with the values of two generator seeds."""
    torch._dynamo.reset()
    compiled = torch.compile(probe.fn, backend=backend, fullgraph=True, dynamic=False)
    expected_fn = probe.fn if reference is None else torch.compile(probe.fn, backend=reference, fullgraph=True,
                                                                     dynamic=False)
    for call in range(2):
        inputs = probe.inputs(torch.Generator().manual_seed(call))
        expected = _results(expected_fn, _fresh(inputs))
        try:
            got = _results(compiled, _fresh(inputs))
        except Exception as error:
            return f"call {call + 1}: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        if len(got) != len(expected):
            return f"call {call + 1}: {len(got)} results, eager {len(expected)}"
        for index, (want, have) in enumerate(zip(expected, got)):
            if not _same(want, have):
                return f"call {call + 1}: result {index} differs"
    return None


def first_difference(backend: Callable, reference: Callable | None = None,
                     probes: tuple[Probe, ...] = PROBES) -> tuple[str, str] | None:
    """``(probe, why)`` for the first probe on which ``backend`` differs, or None: equivalent."""
    for probe in probes:
        why = run_probe(probe, backend, reference)
        if why is not None:
            return probe.name, why
    return None
