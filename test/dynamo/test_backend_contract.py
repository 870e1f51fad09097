"""The backend contract, clause by clause: ``torch.compile(f, backend=B)(*args)`` must be
indistinguishable from ``f(*args)`` in everything a user can observe.

Each family makes one clause observable; inputs are chosen to expose the usual ways a
backend goes wrong (kernels that assume dense row-major inputs, output buffers reused
between calls, caches keyed too loosely, runtime wrappers that touch global state).
``test/proofs/test_faulty_backends.py`` proves each family fails on a backend that breaks
its clause; the table in docs/checks.md lists which.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import functools
import gc
import random
from typing import Any, Callable

import torch
import torch.nn.functional as F
from parameterized import parameterized

from harness import BackendTestCase, accuracy, callers, compat, device, dtypes, for_each_backend, variants
from harness import (
    assert_close,
    assert_same_aliasing,
    assert_same_autograd_metadata,
    assert_same_strides,
    has_symbolic_sizes,
    weighted_loss,
)


def _leaves(values: Any) -> list[torch.Tensor]:
    return [value for value in values if isinstance(value, torch.Tensor) and value.requires_grad and value.is_leaf]


@dtypes.numeric
class ContractCase(BackendTestCase):
    """``check``: run ``fn`` eagerly and compiled on identical fresh inputs and compare
    everything observable."""

    def fresh(self, make_args: Callable[[], tuple], seed: int) -> tuple:
        torch.manual_seed(seed)
        return tuple(make_args())

    def check(self, fn: Callable, make_args: Callable[[], tuple], *, calls: int = 1, strides: bool = True,
              grads: bool = True, compiled: Callable | None = None, **compile_kwargs: Any) -> Callable:
        """``make_args`` builds the inputs (twice per call, identically seeded: cloning would
        lose the aliasing between arguments that some scenarios are about)."""
        compiled = compiled if compiled is not None else self.compile(fn, **compile_kwargs)
        for call in range(calls):
            eager_args, compiled_args = self.fresh(make_args, 100 + call), self.fresh(make_args, 100 + call)
            expected = fn(*eager_args)
            actual = compiled(*compiled_args)
            reference = functools.cache(lambda call=call: _gradients_in_float64(fn, self.fresh(make_args, 100 + call)))
            self.compare_call(eager_args, expected, compiled_args, actual, strides=strides, grads=grads,
                              reference_gradients=reference)
        return compiled

    def compare_call(self, eager_args, expected, compiled_args, actual, *, strides=True, grads=True,
                     reference_gradients: Callable[[], list] | None = None) -> None:
        assert_close(self, expected, actual)
        assert_same_autograd_metadata(self, expected, actual)
        if strides:
            assert_same_strides(self, expected, actual)
        assert_same_aliasing(self, eager_args, expected, compiled_args, actual)
        assert_close(self, list(eager_args), list(compiled_args), what="inputs after the call")
        assert_same_strides(self, list(eager_args), list(compiled_args), what="input after the call")
        if grads:
            self.compare_gradients(eager_args, expected, compiled_args, actual, reference_gradients)

    def compare_gradients(self, eager_args, expected, compiled_args, actual,
                          reference: Callable[[], list] | None = None) -> None:
        """The gradients of a weighted loss, each within its dtype's tolerance (unwidened:
        harness/checks/compare.py) or, where it misses it, no further than eager's from the
        same function's gradients in float64 (``reference``: _gradients_in_float64)."""
        expected_loss, actual_loss = weighted_loss(expected), weighted_loss(actual)
        self.assertEqual(expected_loss is None, actual_loss is None, "which outputs require grad differs from eager")
        if expected_loss is None:
            return
        expected_loss.backward()
        actual_loss.backward()
        for index, (want, got) in enumerate(zip(_leaves(eager_args), _leaves(compiled_args))):
            self.assertEqual(want.grad is None, got.grad is None, f"grad of input {index}: presence differs from eager")
            if want.grad is not None:
                assert_close(self, want.grad, got.grad, what=f"grad of input {index}",
                             reference=None if reference is None else lambda index=index: reference()[index])


def _gradients_in_float64(fn: Callable, args: tuple) -> list[Any]:
    """The gradients of ``fn``'s weighted loss w.r.t. the leaves of ``args`` that require grad
    (_leaves), computed on float64 copies of the arguments: what gradients are judged by
    where they miss their dtype's tolerance."""
    copies = accuracy.in_float64(list(args))
    wanted = [copy for copy, arg in zip(copies, args) if any(arg is leaf for leaf in _leaves(args))]
    loss = weighted_loss(fn(*copies))
    if loss is None or not wanted:
        return [None] * len(wanted)
    return list(torch.autograd.grad(loss, wanted, allow_unused=True))


# Inputs laid out the ways real callers hand them over.
LAYOUTS = [
    ("contiguous", lambda: torch.randn(4, 6)),
    ("transposed", lambda: torch.randn(6, 4).t()),
    ("strided_slice", lambda: torch.randn(4, 12)[:, ::2]),
    ("offset_view", lambda: torch.randn(5, 6)[1:]),
    ("expanded", lambda: torch.randn(1, 6).expand(4, 6)),
    ("zero_size", lambda: torch.randn(0, 6)),
]


def _pointwise_and_reduce(x, w):
    y = torch.sin(x) * w + 1.5
    return y, y.sum(dim=0), (x @ w.t()).relu()


@for_each_backend
class OutputContractTests(ContractCase):
    """Outputs: values, dtype, shape, strides, requires_grad and grad_fn, aliasing."""

    @parameterized.expand(LAYOUTS)
    def test_layouts(self, _name, make_x):
        def make():
            x = make_x()
            return x, torch.randn(x.shape).requires_grad_()
        self.check(_pointwise_and_reduce, make)

    def test_channels_last(self):
        def fn(x, w):
            return (x * w).relu(), x.mean(dim=(2, 3))
        self.check(fn, lambda: (torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last).requires_grad_(),
                                torch.randn(1, 3, 1, 1)))

    def test_zero_dim(self):
        def fn(x, y):
            return x * y, (x + 1).exp(), y.sum()
        self.check(fn, lambda: (torch.tensor(1.5, requires_grad=True), torch.randn(3)))

    def test_dtypes_and_promotion(self):
        def fn(i, f, h):
            return i + f, i * 2, f > 0, h.to(torch.float32) * f, (f.double() * 3).sum()
        self.check(fn, lambda: (torch.randint(-5, 5, (4,)), torch.randn(4), torch.randn(4).half()))

    def test_integers_stay_exact(self):
        def fn(i, j):
            return i * 3 + 7, i // 5, i % 7, i ^ j, (i >> 3) + j.abs(), i.sum()
        big = 2 ** 40 + 1  # not representable in float32: computing in floats shows
        self.check(fn, lambda: (torch.randint(-big, big, (6,)), torch.randint(-1000, 1000, (6,))))

    def test_nan_and_inf_propagate(self):
        def fn(x):
            return x.relu(), x.clamp(-1, 1), x.max(), torch.maximum(x, torch.zeros(()))
        self.check(fn, lambda: (torch.tensor([1.0, float("nan"), -float("inf"), float("inf"), -2.0]),))

    def test_outputs_that_are_views_of_inputs(self):
        def fn(x):
            return x.t(), x[1], x.view(-1), x.unsqueeze(0)
        self.check(fn, lambda: (torch.randn(3, 4),))

    def test_outputs_that_alias_each_other(self):
        def fn(x):
            y = x.cos()
            return y, y.view(-1), y[0]
        self.check(fn, lambda: (torch.randn(3, 4, requires_grad=True),))

    def test_requires_grad_and_grad_fn(self):
        def fn(w, x):
            return w * x, x * 2, w.detach() + 1, (w > 0), w.sum()
        self.check(fn, lambda: (torch.randn(3, requires_grad=True), torch.randn(3)))

    def test_input_returned_as_is(self):
        def fn(x, y):
            return x, y + 1
        self.check(fn, lambda: (torch.randn(3, requires_grad=True), torch.randn(3)))


def _make_base_and_views():
    base = torch.randn(8)
    return base[0:5], base[3:8]


@for_each_backend
class SideEffectContractTests(ContractCase):
    """Mutations of inputs, data and metadata, visible exactly once after the call."""

    def test_data_mutation_applied_once_per_call(self):
        def fn(x):
            x.add_(1)
            return x * 2
        compiled = self.compile(fn)
        eager_x, compiled_x = torch.zeros(3), torch.zeros(3)
        for _ in range(3):
            assert_close(self, fn(eager_x), compiled(compiled_x))
            assert_close(self, eager_x, compiled_x, what="input after the call")

    def test_mutation_through_views(self):
        def fn(x):
            x[1:].mul_(2)
            x.t()[0].add_(1)
            return x.sum()
        self.check(fn, lambda: (torch.randn(3, 4),), grads=False)

    def test_metadata_mutations(self):
        def fn(x, y):
            x.t_()
            y.unsqueeze_(0)
            return x + 1, y * 2
        self.check(fn, lambda: (torch.randn(3, 4), torch.randn(5)), grads=False)

    def test_mutation_of_non_contiguous_input(self):
        def fn(x):
            x.mul_(3)
            return x.clone()
        self.check(fn, lambda: (torch.randn(6, 4).t(),), grads=False)

    def test_mutation_of_duplicated_argument(self):
        def fn(a, b):
            a.add_(1)
            b.mul_(2)
            return a + b
        x = torch.randn(4)
        compiled = self.compile(fn)
        eager_x, compiled_x = x.clone(), x.clone()
        assert_close(self, fn(eager_x, eager_x), compiled(compiled_x, compiled_x))
        assert_close(self, eager_x, compiled_x, what="input after the call")

    def test_mutation_of_overlapping_views(self):
        def fn(a, b):
            a.add_(1)
            b.mul_(2)
            return a.sum() + b.sum()
        self.check(fn, _make_base_and_views, grads=False)

    @parameterized.expand([("no_grad", torch.no_grad), ("inference_mode", torch.inference_mode)])
    def test_mutation_under_grad_free_mode(self, _name, mode):
        def fn(x, w):
            x.add_(w)
            return x * w
        compiled = self.compile(fn)
        with mode():
            eager_args = (torch.zeros(3), torch.ones(3))
            compiled_args = (torch.zeros(3), torch.ones(3))
            assert_close(self, fn(*eager_args), compiled(*compiled_args))
        assert_close(self, list(eager_args), list(compiled_args), what="inputs after the call")

    def test_mutation_of_non_leaf_requiring_grad(self):
        def fn(x):
            x.mul_(2)
            return x.sin()

        def make():
            w = torch.randn(4, requires_grad=True)
            return w, w * 1

        for_eager, for_compiled = self.fresh(make, 1), self.fresh(make, 1)
        compiled = self.compile(fn)
        expected, actual = fn(for_eager[1]), compiled(for_compiled[1])
        self.compare_call(for_eager, expected, for_compiled, actual, strides=True, grads=True)

    def test_zero_size_and_scalar_inputs_mutated(self):
        def fn(empty, scalar):
            empty.add_(1)
            scalar.mul_(3)
            return scalar + 1
        self.check(fn, lambda: (torch.randn(0, 3), torch.tensor(2.0)), grads=False)


@for_each_backend
class GradientContractTests(ContractCase):
    """First-order gradients, through layouts and ops where backward kernels go wrong."""

    @parameterized.expand([
        ("matmul_transposed", lambda x, w: x @ w.t(), lambda: (torch.randn(5, 3).t(), torch.randn(4, 5))),
        ("softmax", lambda x, w: (x * w).softmax(dim=-1), lambda: (torch.randn(4, 6), torch.randn(6))),
        ("layer_norm", lambda x, w: F.layer_norm(x, (6,), weight=w), lambda: (torch.randn(4, 6), torch.randn(6))),
        ("conv_channels_last", lambda x, w: F.conv2d(x, w, padding=1).relu(),
         lambda: (torch.randn(2, 3, 6, 6).to(memory_format=torch.channels_last), torch.randn(4, 3, 3, 3))),
        ("gather_and_where", lambda x, w: torch.where(x > 0, x, w).gather(1, torch.tensor([[2, 0], [1, 1], [0, 2]])),
         lambda: (torch.randn(3, 3), torch.randn(3, 3))),
        ("broadcast_reduce", lambda x, w: (x.unsqueeze(1) * w).sum(0), lambda: (torch.randn(4, 5), torch.randn(3, 5))),
        ("cumsum_slice", lambda x, w: x.cumsum(0)[1:] * w[:-1], lambda: (torch.randn(6, 2)[::2], torch.randn(3, 2))),
        ("expanded_input", lambda x, w: (x * w).tanh(), lambda: (torch.randn(1, 4).expand(3, 4), torch.randn(3, 4))),
    ])
    def test_first_order(self, _name, fn, make_inputs):
        def make():
            x, w = make_inputs()
            return x.detach().requires_grad_() if x.is_leaf else x.requires_grad_(), w.requires_grad_()

        self.check(fn, make, calls=2)

    def test_gradient_of_input_used_twice(self):
        def fn(x):
            return x * x.flip(0) + x.sin()
        self.check(fn, lambda: (torch.randn(5, requires_grad=True),))

    def test_backward_twice_through_one_call(self):
        # retain_graph=True: the same call's backward runs again on its saved tensors (a
        # second loss on the same forward); the gradients accumulate both passes.
        def fn(x, w):
            return (x.tanh() @ w).sin().sum(), (x * 2).cumsum(0).sum()

        calls = []
        for run in (fn, self.compile(fn)):
            torch.manual_seed(7)
            x, w = torch.randn(4, 3, requires_grad=True), torch.randn(3, 2, requires_grad=True)
            calls.append(((x, w), run(x, w)))
        # The outputs first (their requires_grad included): a backend that cannot be
        # backpropagated through fails here as every gradient test does.
        assert_close(self, calls[0][1], calls[1][1])
        for _, (first, second) in calls:
            first.backward(retain_graph=True)
            (first * 0.5 + second).backward()
        assert_close(self, [x.grad for x in calls[0][0]], [x.grad for x in calls[1][0]],
                     what="gradients after two backward passes", scale=10)


def _uses_global_state(x):
    out = x * 2
    if torch.is_grad_enabled():
        out = out + 1
    return out, torch.ones(2)


class _ServedBlock(torch.nn.Module):
    """The kernels a served model's forward reaches, in one block: an embedding, layer norm,
    linear layers with bias, causal attention, a convolution with batch norm in eval mode,
    GELU, softmax, exp and reductions."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(32, 16)
        self.norm = torch.nn.LayerNorm(16)
        self.qkv = torch.nn.Linear(16, 48)
        self.out = torch.nn.Linear(16, 16)
        self.conv = torch.nn.Conv1d(16, 16, 3, padding=1)
        self.bn = torch.nn.BatchNorm1d(16)

    def forward(self, tokens: torch.Tensor, x: torch.Tensor, wide: torch.Tensor) -> tuple:
        h = self.embed(tokens) + x
        q, k, v = self.qkv(self.norm(h)).chunk(3, -1)
        h = h + self.out(F.scaled_dot_product_attention(q, k, v, is_causal=True))
        h = h + F.gelu(self.bn(self.conv(h.transpose(1, 2))).transpose(1, 2))
        # Past float16's 65504 where the dtype holds it (powers of two: exact in any dtype).
        return h.softmax(-1), h.sum(1), h.amax(-1), (wide * 256.0).exp2() * 0.5, wide * 2.0 ** 20 + 1.0


def _modes() -> dict[str, tuple[Callable[[], Any], torch.dtype]]:
    """Each mode a caller serves a model in: (the context it calls in, the model's dtype)."""
    def deterministic() -> Any:
        stack = contextlib.ExitStack()
        before = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True)
        stack.callback(torch.use_deterministic_algorithms, before)
        stack.enter_context(torch.no_grad())
        return stack

    return {"no_grad": (torch.no_grad, torch.float32), "inference_mode": (torch.inference_mode, torch.float32),
            "autocast_bfloat16": (lambda: _both(torch.no_grad(), torch.autocast(device.selected_type(),
                                                                                dtype=torch.bfloat16)), torch.float32),
            "deterministic": (deterministic, torch.float32),
            "bfloat16": (torch.inference_mode, torch.bfloat16), "float16": (torch.inference_mode, torch.float16)}


def _in_float64(model: torch.nn.Module, args: tuple) -> Any:
    with torch.no_grad():
        return copy.deepcopy(model).double()(*(arg.double() if arg.is_floating_point() else arg for arg in args))


def _both(first: Any, second: Any) -> Any:
    stack = contextlib.ExitStack()
    stack.enter_context(first)
    stack.enter_context(second)
    return stack


@for_each_backend
class GlobalStateContractTests(ContractCase):
    """Grad mode, default dtype and the RNG stream are as eager leaves them (the base class
    also fails any test after which global state changed)."""

    def test_grad_mode_read_and_kept(self):
        compiled = self.compile(_uses_global_state)
        for mode in (True, False, True):
            with torch.set_grad_enabled(mode):
                x = torch.ones(3, requires_grad=True)
                assert_close(self, _uses_global_state(x), compiled(x))
                self.assertEqual(torch.is_grad_enabled(), mode, "grad mode changed by the call")

    def test_default_dtype_read_and_kept(self):
        compiled = self.compile(_uses_global_state)
        previous = torch.get_default_dtype()
        try:
            for dtype in (torch.float64, torch.float32):
                torch.set_default_dtype(dtype)
                assert_close(self, _uses_global_state(torch.ones(3)), compiled(torch.ones(3)))
                self.assertEqual(torch.get_default_dtype(), dtype, "default dtype changed by the call")
        finally:
            torch.set_default_dtype(previous)

    def test_autocast_region_read_and_kept(self):
        def fn(a, b):
            return a @ b, (a * 2).sum()
        compiled = self.compile(fn)
        args = (torch.randn(4, 4), torch.randn(4, 4))
        where = device.selected_type()
        for enabled in (True, False):
            with torch.autocast(where, dtype=torch.bfloat16, enabled=enabled):
                assert_close(self, fn(*args), compiled(*args))
                self.assertEqual(torch.is_autocast_enabled(where), enabled, "autocast state changed by the call")

    @parameterized.expand([(name,) for name in _modes()])
    def test_a_served_block_under_each_mode(self, mode):
        # Serving calls a model in modes training never does (no_grad, inference_mode,
        # autocast, deterministic algorithms, half-precision weights), and a backend's kernels
        # are chosen per mode: a linear layer without its bias under inference mode, bfloat16
        # computed in float16, is wrong in that mode only.
        context, dtype = _modes()[mode]
        torch.manual_seed(0)
        model = _ServedBlock().eval().to(dtype)
        with torch.no_grad():
            model.bn.running_mean.uniform_(-0.5, 0.5)
            model.bn.running_var.uniform_(0.5, 2.0)
        compiled = self.compile(model)
        for call in range(2):
            torch.manual_seed(call)
            # 2^16 to 2^80 from exp2: float16 overflows, bfloat16 and float32 do not.
            args = (torch.randint(0, 32, (2, 8)), torch.randn(2, 8, 16, dtype=dtype),
                    torch.tensor([16.0, 20.0, -30.0, 40.0], dtype=dtype) * (call + 1) / 256)
            with context():
                expected, actual = model(*args), compiled(*args)
            # Half precision kept in float32 between kernels is more right than eager, not
            # less: values that miss their tolerance are judged against the model in float64,
            # as the model zoo is; under autocast every floating value was computed in bfloat16.
            assert_close(self, expected, actual, what=f"call {call + 1} under {mode}",
                         reference=lambda: _in_float64(model, args),
                         computed_in=torch.bfloat16 if mode.startswith("autocast") else None)

    def test_deterministic_code_leaves_the_rng_stream_alone(self):
        compiled = self.compile(lambda x: x.sin() * 2)
        torch.manual_seed(7)
        compiled(torch.randn(4))
        after_compiled = torch.rand(4)
        torch.manual_seed(7)
        torch.randn(4)
        self.assertTrue(torch.equal(after_compiled, torch.rand(4)), "the call consumed random numbers")

    def test_random_code_is_reproducible_under_a_seed(self):
        compiled = self.compile(lambda x: x + torch.rand_like(x))
        compiled(torch.zeros(5))  # compile first: compiling may itself draw a seed
        results = []
        for _ in range(2):
            torch.manual_seed(3)
            results.append((compiled(torch.zeros(5)), torch.rand(3)))
        assert_close(self, results[0], results[1], what="two seeded runs")
        self.assertFalse(torch.equal(results[0][0], compiled(torch.zeros(5))), "random values repeat without reseeding")


@for_each_backend
class CallIndependenceTests(ContractCase):
    """A result returned earlier is not changed by a later call, and vice versa."""

    # Each result below is compared as it comes, and kept: that what was kept stays as it was
    # while later calls and backward passes run is every scenario's check
    # (harness/checks/observations/kept_results.py); these keep results the ways callers do.

    def test_earlier_outputs_survive_later_calls(self):
        def fn(x):
            return x.sin() + 1, x.sum()
        compiled = self.compile(fn)
        outputs = []
        for x in [torch.randn(3, 4) for _ in range(3)]:
            outputs.append(compiled(x))
            assert_close(self, fn(x), outputs[-1], what="an earlier call's output")

    def test_gradients_kept_per_micro_batch(self):
        # torch.autograd.grad on each micro-batch, the gradients kept to be summed at the end.
        def loss(x, w, b):
            return ((x @ w + b).tanh() ** 2).mean()

        compiled = self.compile(loss)
        w, b = torch.randn(4, 3, requires_grad=True), torch.randn(3, requires_grad=True)
        kept = []
        for batch in range(3):
            x = torch.randn(5, 4)
            value, expected = compiled(x, w, b), loss(x, w, b)
            kept.append(torch.autograd.grad(value, (w, b)))
            assert_close(self, [expected, *torch.autograd.grad(expected, (w, b))], [value, *kept[-1]],
                         what=f"micro-batch {batch}'s loss and gradients")

    def test_per_sample_gradients(self):
        # One backward pass per sample through a compiled module, each sample's gradients kept.
        model = torch.nn.Linear(4, 2)
        compiled = self.compile(model)
        x, target = torch.randn(3, 4), torch.randn(3, 2)
        per_sample = []
        for i in range(3):
            per_sample.append(torch.autograd.grad(F.mse_loss(compiled(x[i:i + 1]), target[i:i + 1]),
                                                  tuple(model.parameters())))
            expected = torch.autograd.grad(F.mse_loss(model(x[i:i + 1]), target[i:i + 1]), tuple(model.parameters()))
            assert_close(self, expected, per_sample[-1], what=f"sample {i}'s gradients")

    def test_grad_taken_off_between_steps(self):
        # .backward(), then each step's .grad of the parameters and the input kept and taken
        # off (zero_grad sets it to None): the next pass's .grad must be new memory.
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
        reference = copy.deepcopy(model)
        compiled = self.compile(model)
        kept = []
        for step in range(3):
            x = torch.randn(5, 4, requires_grad=True)
            x_eager = x.detach().clone().requires_grad_()
            out, expected = compiled(x), reference(x_eager)
            out.sum().backward()
            expected.sum().backward()
            grads = [x.grad, *(p.grad for p in model.parameters())]
            assert_close(self, [expected, x_eager.grad, *(p.grad for p in reference.parameters())],
                         [out, *grads], what=f"step {step}'s output and .grad")
            kept.append(grads)
            model.zero_grad(set_to_none=True)
            reference.zero_grad(set_to_none=True)

    def test_writing_to_an_output_does_not_leak_into_the_next_call(self):
        compiled = self.compile(lambda x: x * 2)
        first = compiled(torch.ones(4))
        first.add_(100)
        assert_close(self, torch.full((4,), 2.0), compiled(torch.ones(4)), what="the second call's output")
        # Nor the next call into the output the caller kept and wrote to.
        assert_close(self, torch.full((4,), 102.0), first, what="the first output, written to, after the second call")

    def test_output_does_not_follow_later_writes_to_the_input(self):
        compiled = self.compile(lambda x: x + 0)
        x = torch.ones(4)
        out = compiled(x)
        x.add_(5)
        assert_close(self, torch.ones(4), out, what="output after the input was changed")

    @parameterized.expand([("training",), ("no_grad",), ("inference_mode",)])
    def test_calls_let_go_of_their_tensors(self, mode):
        # A caller that drops a call's inputs and outputs gets their memory back while the
        # compiled function lives on: a runtime that keeps them (a cache keyed by the
        # call, a list of buffers) grows with every step of a training loop, or of serving.
        # Watched on their storages, not the tensor objects: a runtime keeping a detached
        # copy or a view lets the caller's object go and still holds all of the memory.
        def fn(x, w):
            return (x @ w).relu() * 2, x.sum(0)

        context = {"training": contextlib.nullcontext, "no_grad": torch.no_grad,
                   "inference_mode": torch.inference_mode}[mode]
        compiled = self.compile(fn)
        w = torch.randn(8, 8, requires_grad=True)

        def call() -> list:
            x = torch.randn(4, 8)
            with context():
                expected, outputs = fn(x, w), compiled(x, w)
            assert_close(self, expected, outputs)
            del expected
            if mode == "training":
                outputs[0].sum().backward()
            return [compat.storage_alive(tensor) for tensor in (x, *outputs)]

        call()  # the first call: what a compile may keep
        alive = [held for _ in range(3) for held in call()]
        gc.collect()
        kept = sum(held() for held in alive)
        self.assertEqual(kept, 0, f"later calls' tensors stay in memory after the caller dropped them: the storages "
                                  f"of {kept} of {len(alive)} inputs and outputs of the 2nd to 4th calls are held")

    def test_identical_calls_agree_bit_for_bit_under_deterministic_algorithms(self):
        # torch.use_deterministic_algorithms(True) promises the same bits for the same
        # inputs: reductions, products and accumulating writes must not change their order
        # from one call to the next.
        def fn(x, w, index, long):
            return ((x @ w).sum(0), x.cumsum(1).var(0), torch.zeros(6, 8).index_add(0, index, x),
                    long.sum(), long.softmax(-1).amax())  # reductions of 4096 elements and more

        x, w, index = torch.randn(6, 8), torch.randn(8, 8), torch.tensor([0, 2, 2, 5, 0, 2])
        long = torch.randn(5000)
        before = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True)
        self.addCleanup(torch.use_deterministic_algorithms, before)
        compiled = self.compile(fn)
        first, second = compiled(x, w, index, long), compiled(x.clone(), w.clone(), index.clone(), long.clone())
        for position, (a, b) in enumerate(zip(first, second)):
            self.assertTrue(torch.equal(a, b), f"output[{position}]: two identical calls differ in their bits "
                                               f"(largest difference {(a - b).abs().max().item():.3g})")
        assert_close(self, fn(x, w, index, long), first)


def _served(x, w, index):
    # What a served function does: a matmul, pointwise ops, a reduction, an indexed read.
    y = (x @ w).tanh()
    return y * 2, y.sum(0), x.index_select(0, index)


class _ServedModule(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(6, 4)

    def forward(self, x):
        return self.linear(x).tanh() * 2, x.sum(1)


def _served_inputs() -> list:
    return [torch.randn(5, 6, requires_grad=True), torch.randn(6, 4, requires_grad=True), torch.tensor([4, 0, 2])]


@for_each_backend
class CallerTests(ContractCase):
    """The ways callers call (harness/axes/callers.py), each on one small function or module:
    from a pool of threads, with the first call racing from two threads, after writing into
    a result, with module hooks, inside saved-tensor hooks. The variants of the same names
    apply each way to every scenario's calls."""

    def test_calls_from_a_pool_of_threads(self):
        compiled = self.compile(_served)
        inputs = _served_inputs()
        compiled(*inputs)  # compiled from this thread; then served from the pool
        frames = self.counter.frame_count
        self.assertTrue(callers.from_threads(self, _served, compiled, inputs, [True] * 3, True))
        self.assertEqual(self.counter.frame_count, frames, "calls from other threads recompiled the function")

    def test_first_call_racing_from_two_threads(self):
        # Both threads call a function never called before at once; each compiles it or
        # waits for the other's compile, and gets its own right result.
        compiled = self.compile(_served)
        self.assertTrue(callers.from_threads(self, _served, compiled, _served_inputs(), [True] * 3, True,
                                             threads=2, calls=1))
        racing = self.counter.frame_count
        self.assertLessEqual(racing, 2, "two racing first calls compiled more than once each")
        compiled(*_served_inputs())
        self.assertEqual(self.counter.frame_count, racing, "a call after the race compiled the function again")

    def test_caller_writes_into_a_result_before_calling_again(self):
        # Under no_grad, as a server calls: where a static-memory runtime hands out its buffers.
        self.assertTrue(callers.after_caller_writes(self, _served, self.compile(_served), _served_inputs(),
                                                    [True] * 3, False))

    def test_module_with_forward_and_backward_hooks(self):
        self.assertTrue(callers.with_module_hooks(self, _ServedModule(), self.compile, [torch.randn(3, 6, requires_grad=True)],
                                                  [True], True))

    def test_call_inside_saved_tensor_hooks(self):
        self.assertTrue(callers.inside_saved_tensor_hooks(self, _served, self.compile(_served), _served_inputs(),
                                                          [True] * 3, True))


class _FilledCache(torch.nn.Module):
    """A buffer written up to the input's length, as a KV cache is filled."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("cache", torch.zeros(10, 3))

    def forward(self, x):
        self.cache[: x.shape[0]] = x
        return self.cache.cumsum(0)


def _repeated_if(x, flag):
    return x.repeat(2, 1) if flag else x


def _position_table_for(image, table):
    # A table of position embeddings resized to the image's 14-pixel patches by a scale
    # factor computed from its size, as vision transformers do: a float that must follow the
    # declared-dynamic size, not keep the first one's value
    rows, columns = image.shape[-2] // 14, image.shape[-1] // 14
    scale = ((rows + 0.1) / table.shape[-2], (columns + 0.1) / table.shape[-1])
    return F.interpolate(table, scale_factor=scale, mode="bicubic") + image.mean()


def _marked(tensor: torch.Tensor, *dims: int) -> torch.Tensor:
    for dim in dims:
        torch._dynamo.mark_dynamic(tensor, dim)
    return tensor


# Programs whose sizes the caller declares dynamic (torch._dynamo.mark_dynamic; torch.export
# reads the mark as a dynamic dim) and where one size could be silently kept: a buffer filled
# up to the input's length, first called at the buffer's full length (pytorch#146046); a
# Python argument beside the marked input (pytorch#135796); a float computed from the size
# (pytorch#147475's dynamic multiples of 14), on whose value Dynamo guards and so compiles
# each size again. Each is called at its first size, then others.
MARKED_DYNAMIC = [
    ("buffer_filled_to_the_input_length", _FilledCache,
     lambda rows: (_marked(torch.randn(rows, 3), 0),), (10, 4, 7), True),
    ("python_argument_beside", lambda: _repeated_if,
     lambda rows: (_marked(torch.randn(rows, 3), 0), True), (6, 4, 9), True),
    ("scale_factor_from_the_size", lambda: _position_table_for,
     lambda rows: (_marked(torch.randn(1, 3, 14 * rows, 14 * (rows + 1)), 2, 3), torch.randn(1, 4, 5, 5)),
     (3, 6, 2), False),
]


@for_each_backend
class ChangingInputsTests(ContractCase):
    """Different shapes, strides, dtypes and Python numbers between calls: right results,
    and recompiles when the captured graph no longer fits."""

    def assert_each_call_right(self, fn, inputs, **compile_kwargs):
        compiled = self.compile(fn, **compile_kwargs)
        for args in inputs:
            assert_close(self, fn(*args), compiled(*args), what=f"output for {[getattr(a, 'shape', a) for a in args]}")
        return compiled

    @parameterized.expand([("static", False), ("dynamic", True)])
    def test_shapes(self, _name, dynamic):
        inputs = [(torch.randn(3, 4),), (torch.randn(5, 2),), (torch.randn(7, 4),), (torch.randn(0, 4),)]
        self.assert_each_call_right(lambda x: (x.cos() * x.shape[0]).sum(1), inputs, dynamic=dynamic)

    def test_strides(self):
        inputs = [(torch.randn(4, 6),), (torch.randn(6, 4).t(),), (torch.randn(4, 12)[:, ::2],)]
        def fn(x):
            return x.exp() * 2 + x.sum(0)
        compiled = self.assert_each_call_right(fn, inputs)
        for args in inputs:
            assert_same_strides(self, fn(*args), compiled(*args))

    def test_dtypes_recompile(self):
        inputs = [(torch.randn(4),), (torch.randn(4, dtype=torch.float64),), (torch.randint(0, 9, (4,)),)]
        self.assert_each_call_right(lambda x: x * 3 + 1, inputs)
        self.assertEqual(self.counter.frame_count, 3, "a dtype change must recompile")

    def test_python_numbers(self):
        def fn(x, n, scale):
            return x.repeat(n, 1) * scale
        inputs = [(torch.randn(2, 3), 1, 0.5), (torch.randn(2, 3), 3, 2.0), (torch.randn(2, 3), 2, -1.0)]
        self.assert_each_call_right(fn, inputs)

    def test_requires_grad_changes(self):
        def fn(x):
            return x.sin()
        compiled = self.compile(fn)
        for requires_grad in (False, True, False):
            eager_x = torch.randn(4, requires_grad=requires_grad)
            compiled_x = eager_x.detach().clone().requires_grad_(requires_grad)
            self.compare_call((eager_x,), fn(eager_x), (compiled_x,), compiled(compiled_x))

    @parameterized.expand(MARKED_DYNAMIC)
    def test_dims_marked_dynamic(self, _name, make_fn, make_args, sizes, one_graph):
        fn = make_fn()
        # Separate copies where fn is a module: each side fills its own buffer.
        compiled = self.compile(copy.deepcopy(fn))
        for size in sizes:
            self.check(fn, lambda size=size: make_args(size), compiled=compiled, grads=False)
        if one_graph:
            self.assertEqual(self.counter.frame_count, 1, f"sizes {sizes} of dims declared dynamic: one graph "
                                                          "with symbolic sizes serves them all")
        else:
            self.assertLessEqual(self.counter.frame_count, len(sizes), f"sizes {sizes}: at most a graph each")
        self.assertTrue(has_symbolic_sizes(self.counter.graphs[0]), "the dims declared dynamic are symbolic "
                                                                   "in the graph")

    def test_guards_still_recompile_on_a_new_constant_branch(self):
        def fn(x, flag):
            return x + 1 if flag else x - 1
        self.assert_each_call_right(fn, [(torch.ones(2), True), (torch.ones(2), False)])
        self.assertEqual(self.counter.frame_count, 2)


def _scaled_rows(x, w):
    return (x.sin() * w).sum(1), x.cos() * x.shape[0]


def _projection_and_views(x, w):
    y = x @ w
    return y.t(), y[1:], x.unsqueeze(0).expand(2, -1, -1)


def _bump_rows(x, w):
    x.mul_(2)
    return x + w


def _padded_rows(x, w):
    # Python's modulo of a negative size pads the rows up to a multiple of 4 (and 4 more, so
    # that no size pads nothing): symbolic size arithmetic whose sign rules differ from C's
    # (pytorch#169602)
    padding = -x.shape[0] % 4 + 4
    padded = torch.cat([x * w, x.new_zeros(padding, x.shape[1])])
    return padded.cumsum(0), padded.shape[0] // 4 * w


def _rows(columns: int, requires_grad: bool = False):
    def make(rows: int) -> tuple:
        return torch.randn(rows, columns, requires_grad=requires_grad), torch.randn(columns, requires_grad=requires_grad)
    return make


# Functions a caller calls at one batch size, then another: each family of the contract where
# sizes reach the kernels (pointwise and reductions, matmuls and views, input mutations, a
# backward). The rows of the inputs change; a row count below 2 would be specialized.
SIZE_CHANGES = [
    ("pointwise_and_reduction", _scaled_rows, _rows(6), True),
    ("matmul_and_views", _projection_and_views,
     lambda rows: (torch.randn(rows, 6), torch.randn(6, 3)), True),
    ("input_mutation", _bump_rows, _rows(6), False),
    ("training", _scaled_rows, _rows(6, requires_grad=True), True),
    ("padded_to_a_multiple", _padded_rows, _rows(6), False),
]
SIZES = (3, 5, 8)


@variants.opt_out("dynamic", "its sizes are symbolic from the first call; this family is the default's size change")
@variants.opt_out("automatic_dynamic", "it replays each first call at a grown size itself; this family counts "
                                       "the recompiles of the default configuration")
@variants.opt_out("compiled_autograd", "compiled autograd compiles the backwards too; this family counts the "
                                       "forwards' recompiles")
@for_each_backend
class AutomaticDynamicTests(ContractCase):
    """torch's default configuration when a size changes: the first call compiles static
    sizes, the first new size recompiles once with symbolic sizes (automatic dynamic
    shapes), and every later size runs that graph. Right results at each size, and that
    recompile count."""

    @parameterized.expand(SIZE_CHANGES)
    def test_a_new_size_recompiles_once_with_symbolic_sizes(self, _name, fn, make_args, grads):
        compiled = self.compile(fn)
        for rows in SIZES:
            self.check(fn, lambda rows=rows: make_args(rows), compiled=compiled, grads=grads)
        self.assertEqual(self.counter.frame_count, 2, f"sizes {SIZES}: one compile, then one recompile with "
                                                      "symbolic sizes that every later size reuses")
        self.assertFalse(has_symbolic_sizes(self.counter.graphs[0]), "the first compile has static sizes")
        self.assertTrue(has_symbolic_sizes(self.counter.graphs[1]), "the recompile after a size change has "
                                                                    "symbolic sizes")


_CALLS = 0  # rebound by PythonSideEffectTests.test_global_rebound


class _Record:
    """A plain Python object, as a caller's bookkeeping keeps them."""

    def __init__(self, calls: int = 0) -> None:
        self.calls = calls


class _Box:
    """A property whose setter and getter compute: set 5, read 11."""

    def __init__(self, value: float) -> None:
        self._value = value

    @property
    def value(self) -> float:
        return self._value + 1

    @value.setter
    def value(self, value: float) -> None:
        self._value = value * 2


class _CountingBlock(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.steps = 0  # a plain Python attribute: not a buffer, not a parameter

    def forward(self, x):
        self.steps += 1
        return self.linear(x).relu()


def _helper_class_over(log: list, counts: dict) -> type:
    class Helper:
        def record(self, value):
            log.append(value)
            counts["n"] = counts.get("n", 0) + 1

    return Helper


@variants.opt_out("export", "an exported program has no Python side effects to replay")
@variants.opt_out("export_strict", "an exported program has no Python side effects to replay")
@for_each_backend
class PythonSideEffectTests(BackendTestCase):
    """Python side effects Dynamo traces and replays after the graph: each scenario only
    calls its compiled function; the Python world watcher (harness/checks/observations/python_world.py),
    which every scenario goes through, compares what each call left in the containers,
    objects, globals and cells it reaches with what eager leaves. Each fails when its kind of
    side effect is not replayed (test/proofs/test_python_world_faults.py)."""

    def call_twice(self, compiled: Callable, *args: Any) -> None:
        for _ in range(2):
            compiled(*args)

    def test_list_append(self):
        log: list = []

        def fn(x):
            y = x.sin()
            log.append(y)
            log.append(len(log))
            return y * 2

        self.call_twice(self.compile(fn, fullgraph=True), torch.randn(4))

    def test_list_extend_and_clear(self):
        def fn(seen, stale, x):
            seen.extend([x.sum(), "step"])
            stale.clear()
            return x.cos()

        self.call_twice(self.compile(fn, fullgraph=True), [0], [1, 2], torch.randn(4))

    def test_dict_set_del_pop(self):
        def fn(state, x):
            state["total"] = state.get("total", 0) + 1
            state["last"] = x.mean()
            state.pop("once", None)
            if "stale" in state:
                del state["stale"]
            return x * 3

        self.call_twice(self.compile(fn, fullgraph=True), {"once": 1, "stale": 2, "kept": 3}, torch.randn(4))

    def test_ordered_dict_move_to_end(self):
        # pytorch#198189: move_to_end on an argument is not replayed
        def fn(order, x):
            order.move_to_end("first")
            return x + 1

        self.call_twice(self.compile(fn, fullgraph=True), collections.OrderedDict(first=1, second=2, third=3),
                        torch.randn(4))

    def test_attribute_set_on_existing_object(self):
        def fn(record, x):
            record.calls += 1
            record.last = x.abs().max()
            return x - 1

        self.call_twice(self.compile(fn, fullgraph=True), _Record(), torch.randn(4))

    def test_attribute_set_on_object_made_in_the_call(self):
        def fn(holder, x):
            record = _Record(calls=holder.calls + 1)
            record.norm = x.norm()
            holder.latest = record  # it reaches the caller through an attribute (no container)
            return x.exp()

        self.call_twice(self.compile(fn, fullgraph=True), _Record(), torch.randn(4))

    def test_module_attribute_counter(self):
        self.call_twice(self.compile(_CountingBlock(), fullgraph=True), torch.randn(2, 4))

    def test_global_rebound(self):
        global _CALLS
        _CALLS = 0

        def fn(x):
            global _CALLS
            _CALLS = _CALLS + 1
            return x.tanh()

        self.call_twice(self.compile(fn, fullgraph=True), torch.randn(4))

    def test_closure_cell_rebound(self):
        calls, last = 0, None

        def fn(x):
            nonlocal calls, last
            calls += 1
            last = x.sum()
            return x.sigmoid()

        self.call_twice(self.compile(fn, fullgraph=True), torch.randn(4))

    def test_helper_class_mutating_its_closure(self):
        # pytorch#197896: a method of a class made outside, instantiated inside the compiled
        # function, mutates a list and a dict it closes over: the mutation is dropped
        helper = _helper_class_over([], {})

        def fn(x):
            helper().record(x.shape[0])
            return x * 2

        self.call_twice(self.compile(fn, fullgraph=True), torch.randn(4))

    def test_random_instance_passed_in(self):
        # pytorch#145445: the compiled call must draw from the caller's generator and leave
        # its state where eager's draw leaves it
        def fn(x, rng):
            return x + rng.randint(1, 100) + rng.random()

        self.call_twice(self.compile(fn, fullgraph=True), torch.randn(4), random.Random(0))

    def test_random_module_shuffles_a_list(self):
        # pytorch#197085: each call draws a new permutation from the global generator, as eager's
        def fn(x):
            order = list(range(4))
            random.shuffle(order)
            return x[order] * random.random()

        random.seed(3)
        self.call_twice(self.compile(fn), torch.randn(4))

    def test_object_identity_flipped_each_call(self):
        # pytorch#196173: the branch depends on which object an attribute holds, and the call
        # swaps it: every call takes the other branch
        holder = _Record()
        holder.left, holder.right = object(), object()
        holder.current = holder.left

        def fn(x, holder):
            was_left = holder.current is holder.left
            holder.current = holder.right if was_left else holder.left
            return x.square() if was_left else -x

        compiled = self.compile(fn)
        for _ in range(3):
            compiled(torch.randn(4), holder)

    def test_generator_expression_with_a_filter(self):
        # pytorch#176693: next() on a filtered generator expression
        def fn(x):
            odd = (v * 2 for v in range(6) if v % 2 == 1)
            return x + next(odd) + 10 * next(odd) + 100 * next(odd)

        self.call_twice(self.compile(fn, fullgraph=True), torch.randn(4))

    def test_generator_returned_to_the_caller(self):
        # pytorch#198190: a generator made in the call and returned keeps its protocol: the
        # caller drains it and reads the value it returns
        def make(x):
            def steps():
                yield x * 2
                yield x + 1
                return "done"
            return steps()

        def drain(steps):
            seen = []
            try:
                while True:
                    seen.append(next(steps))
            except StopIteration as stop:
                return type(steps).__name__, seen, stop.value

        x = torch.randn(4)
        (kind, seen, value), (want_kind, want_seen, want_value) = drain(self.compile(make)(x)), drain(make(x))
        self.assertEqual((kind, value), (want_kind, want_value), "what the caller drained: the iterator's type and "
                                                                 "the value its StopIteration carries")
        assert_close(self, want_seen, seen, what="the values it yielded")

    def test_property_setter_and_class_reassigned(self):
        # pytorch#176599, #174050: a property's setter and getter run their own code; an
        # object's class reassigned changes what isinstance and hasattr say
        def fn(x):
            box = _Box(3.0)
            box.value = 5.0
            relabelled = _Record()
            relabelled.__class__ = _Box
            return x + box.value, isinstance(relabelled, _Box), hasattr(relabelled, "_value")

        self.call_twice(self.compile(fn), torch.randn(4))
        x = torch.randn(4)
        self.assertEqual(self.compile(fn)(x)[1:], fn(x)[1:], "isinstance and hasattr after __class__ is reassigned")
        assert_close(self, fn(x)[0], self.compile(fn)(x)[0], what="the property's value")

    def test_iterator_resumed_after_next(self):
        # pytorch#196211: iter() of a partly consumed iterator goes on where next() left it
        def fn(x):
            backwards = reversed([x, x + 2, x + 5])
            last = next(backwards)
            return last - next(iter(backwards))

        self.call_twice(self.compile(fn, fullgraph=True), torch.randn(4))
