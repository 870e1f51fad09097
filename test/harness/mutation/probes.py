"""Which conditional mutants (test/harness/mutation/mutants.py) are equivalent: a mutant counts
only if it computes something other than the control (the same pipeline, nothing rewritten)
on some probe.

The probes are small programs written apart from the suite's scenarios, over the conditions
of every group of the feature catalogue: operands broadcast along each position, 0-d and
Python-number operands, long reductions, every dtype and mixed ones, strided, transposed,
channels_last and offset inputs, NaN, infinities, negative zero, subnormal and large values,
ties and repeated, negative and out-of-range indices, large graphs, aliased outputs, writes
into inputs, modules with buffers, a tensor hook on an intermediate, calls under no_grad,
inference mode, deterministic algorithms and autocast, from a pool of threads at once,
backward passes once and twice, results kept across calls. Each is called three times (values
of seed 0, of seed 1, then of seed 0 again), so that a stale result shows on the second call
and a nondeterministic one between the first and the third. What is compared: the outputs,
the inputs after each call, the gradients, whether a call raised, and whether the calls'
tensors are freed once the program is (exactly: NaN equal to NaN, dtypes, shapes and
requires_grad too).
"""

from __future__ import annotations

import contextlib
import gc
import math
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import torch.nn.functional as F
import torch.utils._pytree as pytree

from test.harness.mutation import stack_probes

Inputs = Callable[[torch.Generator], list[Any]]


@dataclass(frozen=True)
class Probe:
    name: str
    fn: Callable
    inputs: Inputs  # (generator) -> the arguments; tensors that require grad get gradients compared
    mode: Callable[[], Any] = contextlib.nullcontext  # the context each call is made in
    backward: int = 1  # backward passes through the outputs that require grad (retain_graph between)
    module: Callable[[], torch.nn.Module] | None = None  # a module to compile instead of fn (fn unused)
    seeded: bool = False  # reseed torch's generator before each call (random operators)
    threads: int = 0  # each call made from this many threads at once, each on inputs of its own
    keeps: bool = False  # each call's outputs and gradients kept, and compared again after the last call
    # A probe of the compile stack (test/harness/mutation/stack_probes.py): ``script(backend)``
    # compiles and calls its own programs and returns what a caller sees; the fields above unused.
    script: Callable[[Callable], list[Any]] | None = None


def _normal(*sizes: int, grad: bool = False, dtype: torch.dtype = torch.float32) -> Callable:
    return lambda g: torch.randn(sizes, generator=g).to(dtype).requires_grad_(grad)


def _ints(*sizes: int, low: int = -1000, high: int = 1000, dtype: torch.dtype = torch.int64) -> Callable:
    return lambda g: torch.randint(low, high, sizes, generator=g).to(dtype)


def _inputs(*makers: Callable) -> Inputs:
    return lambda g: [make(g) for make in makers]


def _with_values(values: list[float], size: int = 12, grad: bool = False) -> Callable:
    """Ordinary values with ``values`` laid over the first places."""
    def make(g: torch.Generator) -> torch.Tensor:
        tensor = torch.randn(size, generator=g)
        tensor[:len(values)] = torch.tensor(values)
        return tensor.requires_grad_(grad)

    return make


def _tiny(g: torch.Generator) -> torch.Tensor:
    tiny = torch.finfo(torch.float32).tiny
    scale = torch.tensor([1.0, 2.0, 0.5, 3.0, -1.0, -2.0, -0.25, 1.5])
    return torch.cat([scale * tiny * (1 + torch.rand(8, generator=g)), torch.randn(4, generator=g)])


def _ties(g: torch.Generator) -> torch.Tensor:
    return torch.tensor([[3.0, 1.0, 3.0, 2.0, 3.0], [0.5, 0.5, 0.5, -1.0, 0.5]]) + torch.randint(0, 2, (1,), generator=g)


def _deterministic() -> Any:
    @contextlib.contextmanager
    def on() -> Any:
        before = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True)
        try:
            yield
        finally:
            torch.use_deterministic_algorithms(before)

    return on()


def _autocast() -> Any:
    return torch.autocast("cpu", dtype=torch.bfloat16)


@torch.library.custom_op("dynamo_suite_mutation_probe::scaled", mutates_args=())
def _scaled(x: torch.Tensor) -> torch.Tensor:
    return x * 3 + 1


@_scaled.register_fake
def _(x):
    return torch.empty_like(x)


def _chain(x: torch.Tensor) -> torch.Tensor:
    for step in range(60):
        x = torch.sin(x) * 0.9 + 0.01 * step
    return x


def _fan(x: torch.Tensor) -> torch.Tensor:
    y = x.sin()
    return torch.cat([y * 2, y.exp(), y.cos(), y + 1], 0)


def _mutates(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x.mul_(2)
    x[0] = 5.0
    return x + y


def _norm_module() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6), torch.nn.ReLU(), torch.nn.Linear(6, 2))


def _branches(x: torch.Tensor) -> torch.Tensor:
    return torch.cond(x.sum() > 0, lambda y: y.sin() * 2, lambda y: y.cos() - 1, (x,))


def _hooked(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    y.register_hook(lambda grad: grad * 3)  # Dynamo's graph holds it as a node
    return y.sin()


SQUARE = _normal(4, 4)
SQUARE_GRAD = _normal(4, 4, grad=True)

PROBES = (
    # -- shape ----------------------------------------------------------------------------------
    Probe("broadcast_first", lambda x, y: (x * y).exp() - y, _inputs(_normal(4, 3, 5), _normal(1, 3, 5))),
    Probe("broadcast_middle", lambda x, y: torch.where(x > 0, x + y, y * 2), _inputs(_normal(4, 3, 5), _normal(4, 1, 5))),
    Probe("broadcast_last", lambda x, y: x / (y.abs() + 1) + 1, _inputs(_normal(4, 3, 5), _normal(4, 3, 1))),
    Probe("broadcast_rank", lambda x, y: torch.atan2(x, y) * y, _inputs(_normal(3, 4, 5, grad=True), _normal(5))),
    Probe("zero_dim", lambda x, s, t: (x * s + t).sum(1), _inputs(_normal(3, 4), _normal(), _normal(dtype=torch.float64))),
    Probe("scalar_operands", lambda x, i: (x * 2.5 + 3, i * 2.5, i + 7, x.pow(3)), _inputs(_normal(5), _ints(6))),
    Probe("size_one", lambda x: x.sum(-1) + x.softmax(1).mean(0), _inputs(_normal(3, 1, 4, grad=True))),
    Probe("empty", lambda x, y: (x.sum(0), torch.cat([x, y]) * 2, x.amax(1)),
          _inputs(_normal(0, 4), _normal(2, 4))),
    Probe("long_reduction", lambda x: (x.sum(), x.mean(), x.var(), x.reshape(2, -1).logsumexp(-1)),
          _inputs(_normal(8192, grad=True))),
    Probe("large_tensor", lambda x: (x * 1.5 + 1).tanh(), _inputs(_normal(300, 300))),
    # -- dtype ----------------------------------------------------------------------------------
    Probe("float64", lambda x, y: (x * y + 1).exp().sum(0), _inputs(_normal(4, 4, dtype=torch.float64),
                                                                      _normal(4, 4, dtype=torch.float64))),
    Probe("float16", lambda x, y: (x * y + 0.1, (x + y).sum(1)), _inputs(_normal(4, 4, dtype=torch.float16),
                                                                        _normal(4, 4, dtype=torch.float16))),
    Probe("bfloat16", lambda x, y: (x @ y).relu() - 0.3, _inputs(_normal(4, 4, dtype=torch.bfloat16),
                                                                _normal(4, 4, dtype=torch.bfloat16))),
    Probe("complex", lambda x, y: (x * y).abs() + x.real, _inputs(_normal(4, dtype=torch.complex64),
                                                                   _normal(4, dtype=torch.complex64))),
    Probe("integers", lambda a, b, c, d: (a * 3 + b, (c * 3) // 2, d.cumsum(0), a % 7),
          _inputs(_ints(8, low=-10 ** 6, high=10 ** 6), _ints(8), _ints(8, low=-10 ** 6, high=10 ** 6, dtype=torch.int32),
                  _ints(8, low=-50, high=50, dtype=torch.int16))),
    Probe("small_integers", lambda a, b: (a + b, (a & 7) | b, a.to(torch.float32) * 0.5),
          _inputs(_ints(8, low=0, high=200, dtype=torch.uint8), _ints(8, low=-100, high=100, dtype=torch.int8))),
    Probe("booleans", lambda x, m: (x.masked_fill(m, 0.5), m.logical_not() | (x > 0), torch.where(m, x, -x)),
          _inputs(_normal(6), lambda g: torch.rand(6, generator=g) > 0.5)),
    Probe("mixed_dtypes", lambda x, h, i, j: (x + h, i + j, x * j, (h.float() + 1) * x),
          _inputs(_normal(5), _normal(5, dtype=torch.float16), _ints(5, dtype=torch.int32), _ints(5))),
    # -- layout ---------------------------------------------------------------------------------
    Probe("transposed", lambda x, y: (x.t() @ y, x.t() * 2 + y, x.t().sum(0)), _inputs(SQUARE_GRAD, SQUARE)),
    Probe("strided", lambda x: (x[:, ::2].sin(), x[::2].cumsum(1)), _inputs(_normal(6, 6))),
    Probe("channels_last", lambda x, w: F.conv2d(x, w).relu() + x.mean(), _inputs(
        lambda g: torch.randn(2, 3, 6, 6, generator=g).to(memory_format=torch.channels_last), _normal(4, 3, 3, 3))),
    Probe("channels_last_pointwise", lambda x: x.sigmoid() * 2 - x, _inputs(
        lambda g: torch.randn(2, 3, 4, 4, generator=g).to(memory_format=torch.channels_last))),
    Probe("offset", lambda x: (x[1:].exp(), x[2:5] * 3, x[1:].sum()), _inputs(_normal(8))),
    Probe("expanded", lambda x, y: (x.expand(4, 3) * y, x.expand(4, 3).sum(0)), _inputs(_normal(1, 3), _normal(4, 3))),
    # -- values ---------------------------------------------------------------------------------
    Probe("nan", lambda x: (x.sum(), x.amax(), x.mean(), x + 1, x.max()), _inputs(_with_values([math.nan, 1.0, -2.0]))),
    Probe("infinity", lambda x: (x.exp(), x * 2, x.clamp(-5, 5), x.sum()),
          _inputs(_with_values([math.inf, -math.inf, 3.0]))),
    Probe("negative_zero", lambda x, y: (torch.atan2(x, y), x * 1.0, 1.0 / x, torch.copysign(y, x)),
          _inputs(_with_values([-0.0, 0.0, -0.0, 1.0]), _with_values([-1.0, -0.0, 2.0, 0.0]))),
    Probe("subnormal", lambda x, y: (x * 0.5, x + y * 1e-3, x.sum()), _inputs(_tiny, _tiny)),
    Probe("large_values", lambda x, i: (x * 2, x.sum(), i * 3, i + 1),
          _inputs(_with_values([1e5, -3e7, 1e30, 7e4]), _ints(6, low=2 ** 31, high=2 ** 33))),
    Probe("ties", lambda x: (x.argmax(1), x.argmin(1), x.max(1), x.sort(1).values, x.topk(2, 1).values),
          _inputs(_ties)),
    Probe("repeated_indices", lambda w, i, x, j: (w[i] * 2, x.index_add(0, j, torch.ones(4, 3)),
                                                  torch.zeros(5).scatter_add(0, j, torch.ones(4))),
          _inputs(_normal(5, 3, grad=True), lambda g: torch.tensor([1, 1, 3, 1]), _normal(5, 3),
                  lambda g: torch.tensor([0, 2, 2, 4]))),
    Probe("negative_indices", lambda x, i: (x[i] + 1, x[i].sum()), _inputs(_normal(6, 2), lambda g: torch.tensor([-1, 0, -2]))),
    Probe("index_out_of_range", lambda x, i: x[i] * 2, _inputs(_normal(4, 2), lambda g: torch.tensor([1, 4]))),
    Probe("embedding", lambda i, w: F.embedding(i, w) * 2, _inputs(lambda g: torch.tensor([[0, 2, 2], [4, 0, 1]]),
                                                                  _normal(5, 3, grad=True))),
    # Value semantics (harness/checks/value_semantics.py): each probe on its edge.
    Probe("exact_halves", lambda x: (x.round(), x.round(decimals=1) * 2, x.clamp(6.0, 3.0)),
          _inputs(_with_values([0.5, 1.5, 2.5, -0.5, 0.25, -2.5]))),
    Probe("masked_rows", lambda x, q, k, v, m: (x.softmax(-1), F.scaled_dot_product_attention(q, k, v, attn_mask=m)),
          _inputs(lambda g: torch.tensor([[-math.inf] * 3, [1.0, 2.0, -math.inf]]), _normal(1, 1, 3, 2, grad=True),
                  _normal(1, 1, 4, 2, grad=True), _normal(1, 1, 4, 2, grad=True),
                  lambda g: torch.tensor([[True, False, True, True], [False] * 4, [True] * 4]))),
    Probe("float8", lambda x: (x.to(torch.float8_e4m3fn).float(), x.to(torch.float8_e5m2).float()),
          _inputs(_with_values([500.0, -1000.0, 1e5, math.inf, 0.3]))),
    Probe("bytes_from_floats", lambda x: (x.to(torch.uint8), (x * 2).byte()),
          _inputs(_with_values([-1.5, -200.0, 300.0, 0.5, 255.5]))),
    Probe("wide_unsigned", lambda a: (a.sort().values, a.to(torch.float64), a.sum()),
          _inputs(lambda g: torch.tensor([1, 2 ** 31 + 5, 3, 2 ** 32 - 1], dtype=torch.uint32))),
    Probe("embedding_options", lambda i, w, u: (F.embedding(i, w, padding_idx=2) * 2, F.embedding(i, u, max_norm=1.0)),
          _inputs(lambda g: torch.tensor([[0, 2, 2], [4, 0, 1]]), _normal(5, 3, grad=True),
                  lambda g: (torch.randn(5, 3, generator=g) * 3).requires_grad_())),
    # -- graph ----------------------------------------------------------------------------------
    Probe("large_graph", _chain, _inputs(_normal(6, grad=True))),
    Probe("fan", _fan, _inputs(_normal(3, 2, grad=True))),
    Probe("several_outputs", lambda x: (x + 1, x * 2, x.sum(), x.amax()), _inputs(SQUARE)),
    Probe("output_aliases", lambda x: (x.view(-1), x[0], x.t(), x * 2), _inputs(SQUARE)),
    Probe("outputs_alias", lambda x: ((y := x * 2), y.view(-1), y[1]), _inputs(SQUARE)),
    Probe("input_mutation", _mutates, _inputs(_normal(4, 3), _normal(4, 3))),
    Probe("mutation_of_a_view", lambda x: (x[1:].add_(1), x.sum())[1], _inputs(_normal(5))),
    Probe("training", lambda x, w: ((x @ w).tanh() * 2).sum(), _inputs(_normal(3, 4), _normal(4, 2, grad=True))),
    Probe("module", None, _inputs(_normal(5, 4)), module=_norm_module),
    Probe("module_eval", None, _inputs(_normal(5, 4)), module=lambda: _norm_module().eval()),
    Probe("random", lambda x: x + torch.rand_like(x) * 2, _inputs(_normal(6)), seeded=True),
    Probe("custom_op", lambda x: _scaled(x) * 2, _inputs(_normal(5))),
    Probe("higher_order", _branches, _inputs(_normal(4))),
    Probe("tensor_hook", _hooked, _inputs(_normal(4, grad=True))),
    # -- calls ----------------------------------------------------------------------------------
    Probe("no_grad", lambda x, w, b: (b.add_(1), (x @ w).relu() + b)[1],
          _inputs(_normal(3, 4), _normal(4, 2, grad=True), _normal(2)), mode=torch.no_grad),
    Probe("inference_mode", lambda x, y: ((x * y).sum(0), x.add_(1)), _inputs(_normal(3, 4), _normal(3, 4)),
          mode=torch.inference_mode),
    Probe("deterministic", lambda x, y: ((x @ y).sum(0), x.cumsum(0), x.var(1)), _inputs(_normal(6, 6), _normal(6, 6)),
          mode=_deterministic),
    Probe("autocast", lambda x, y: (x @ y).sum(1) + x.mean(), _inputs(_normal(4, 4), _normal(4, 4)), mode=_autocast),
    Probe("threads", lambda x, w: ((x @ w).tanh() * 2, x.sum(0)), _inputs(_normal(3, 4), _normal(4, 2, grad=True)),
          threads=4),
    Probe("backward_twice", lambda x, w: (x.sin() * w).sum() * 2, _inputs(_normal(4, grad=True), _normal(4, grad=True)),
          backward=2),
    Probe("losses", lambda x, t: F.cross_entropy(x, t) + F.mse_loss(x, x.detach() * 0.5),
          _inputs(_normal(3, 4, grad=True), lambda g: torch.randint(0, 4, (3,), generator=g))),
    Probe("norms", lambda x: F.layer_norm(x, (4,)) * 2 + F.softmax(x, -1), _inputs(SQUARE_GRAD)),
    Probe("kept_results", lambda x, w: ((x @ w).tanh(), (x * 2).sum(0)), _inputs(_normal(3, 4), _normal(4, 2, grad=True)),
          keeps=True),
    # -- the compile stack --------------------------------------------------------------------
    *(Probe(name, None, _inputs(), script=script) for name, script in stack_probes.SCRIPTS.items()),
)


@dataclass
class Outcome:
    """What one program's calls gave: per call its results (or the error's type), and
    whether the calls' tensors were still alive after the program was dropped."""

    calls: list[Any] = field(default_factory=list)
    kept_alive: bool = False


def _snapshot(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return (value.detach().clone(), value.dtype, tuple(value.shape), value.requires_grad)
    return value


def _results(fn: Callable, inputs: list[Any], backward: int, kept: list[Any] | None = None) -> list[Any]:
    """The outputs, the inputs after the call, then the gradients of the inputs that require
    grad; the outputs and gradients themselves added to ``kept`` (None: not kept)."""
    outputs = pytree.tree_leaves(fn(*inputs))
    if kept is not None:
        kept += outputs
    found = [_snapshot(output) for output in outputs]
    leaves = [value for value in inputs if isinstance(value, torch.Tensor) and value.requires_grad]
    floating = [output for output in outputs if isinstance(output, torch.Tensor) and output.requires_grad]
    if leaves and floating and torch.is_grad_enabled():
        # A fixed weighting: a plain sum's gradient of ones would hide a swap of two operands
        # that are both ones.
        loss = sum((output.float() * torch.linspace(0.5, 1.5, output.numel()).reshape(output.shape)).sum()
                   for output in floating)
        for index in range(backward):
            loss.backward(retain_graph=index + 1 < backward)
        found += [_snapshot(leaf.grad) for leaf in leaves]
        if kept is not None:
            kept += [leaf.grad for leaf in leaves]
    found += [_snapshot(value) for value in inputs]
    if isinstance(fn, torch.nn.Module):  # its buffers (running statistics) after the call
        found += [_snapshot(value) for value in fn.state_dict().values()]
    return found


_SEEDS = (0, 1, 0)


def run(probe: Probe, backend: Callable) -> Outcome:
    """The probe's three calls through ``backend``, compiled once (a script: its own calls)."""
    torch._dynamo.reset()
    if probe.script is not None:
        try:
            found = probe.script(backend)
        except Exception as error:  # noqa: BLE001 -- a raised error is part of what is compared
            found = [("raised", type(error).__name__)]
        torch._dynamo.reset()
        return Outcome(calls=[found])
    program = probe.module() if probe.module is not None else probe.fn
    compiled = torch.compile(program, backend=backend, fullgraph=probe.module is None, dynamic=False)
    outcome = Outcome()
    alive: list[weakref.ref] = []
    kept: list[Any] | None = [] if probe.keeps else None
    for seed in _SEEDS:
        if probe.threads:
            outcome.calls.append(_from_threads(compiled, probe, seed))
            continue
        inputs = probe.inputs(torch.Generator().manual_seed(seed))
        alive += [weakref.ref(value) for value in inputs if isinstance(value, torch.Tensor)]
        if probe.seeded:
            torch.manual_seed(seed)
        try:
            with probe.mode():
                outcome.calls.append(_results(compiled, inputs, probe.backward, kept))
        except Exception as error:  # noqa: BLE001 -- a raised error is part of what is compared
            outcome.calls.append(("raised", type(error).__name__))
        del inputs
    if kept is not None:  # as they are now, after the later calls
        outcome.calls.append([_snapshot(value) for value in kept])
        del kept
    del compiled, program
    torch._dynamo.reset()
    gc.collect()
    outcome.kept_alive = any(ref() is not None for ref in alive)
    return outcome


def run_on_switch(name: str, mutant: str | None) -> Outcome:
    """The probe called ``name`` through the kill matrix's switch as ``mutant`` (None: the
    control), with what it reaches and fires recorded from a fresh start."""
    from test.harness.mutation import mutants

    probe = next(probe for probe in PROBES if probe.name == name)
    mutants.start_test()
    mutants.use(mutant)
    try:
        return run(probe, mutants.mutant(mutants.SWITCH))
    finally:
        mutants.use(None)


def _from_threads(compiled: Callable, probe: Probe, seed: int) -> list[Any]:
    """One call from each of ``probe.threads`` threads released at once, each on inputs of its
    own seed: their results (or errors) in thread order."""
    start = threading.Barrier(probe.threads)
    found: list[Any] = [None] * probe.threads

    def call(index: int) -> None:
        inputs = probe.inputs(torch.Generator().manual_seed(100 * seed + index))
        start.wait(timeout=60)
        try:
            with probe.mode():
                found[index] = _results(compiled, inputs, probe.backward)
        except Exception as error:  # noqa: BLE001 -- a raised error is part of what is compared
            found[index] = ("raised", type(error).__name__)

    threads = [threading.Thread(target=call, args=(index,)) for index in range(probe.threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return found


def _numbers(tensor: torch.Tensor) -> torch.Tensor:
    return torch.nan_to_num(tensor, nan=0.0, posinf=math.inf, neginf=-math.inf)


def _same(want: Any, got: Any) -> bool:
    if isinstance(want, tuple) and len(want) == 4 and isinstance(want[0], torch.Tensor):
        if not (isinstance(got, tuple) and len(got) == 4 and isinstance(got[0], torch.Tensor)):
            return False
        if want[1:] != got[1:]:
            return False
        a, b = want[0], got[0]
        if a.dtype.is_floating_point or a.is_complex():
            a, b = (torch.view_as_real(a), torch.view_as_real(b)) if a.is_complex() else (a, b)
            return torch.equal(a.isnan(), b.isnan()) and torch.equal(_numbers(a), _numbers(b)) and \
                torch.equal(torch.signbit(a), torch.signbit(b))
        return torch.equal(a, b)
    if isinstance(want, (list, tuple)) and isinstance(got, (list, tuple)):
        return len(want) == len(got) and all(_same(x, y) for x, y in zip(want, got))
    return want == got


def difference(control: Outcome, mutant: Outcome) -> str | None:
    """Where a mutant's outcome differs from the control's, in words, or None."""
    for index, (want, got) in enumerate(zip(control.calls, mutant.calls)):
        if not _same(want, got):
            if isinstance(got, tuple) and got[:1] == ("raised",):
                return f"call {index + 1} raised {got[1]}"
            if isinstance(want, tuple) and want[:1] == ("raised",):
                return f"call {index + 1} did not raise {want[1]}"
            return f"call {index + 1}: results differ"
    if mutant.kept_alive and not control.kept_alive:
        return "the calls' tensors stay alive after the program is dropped"
    return None
