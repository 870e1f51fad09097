"""AOTAutograd scenarios, each run against every backend under test.

Each family is one contract a torch.compile backend must keep (input mutation,
aliasing, recompilation on duplicated arguments, double backward...). Families decorated
with ``@for_each_backend`` become ``<Family>_<backend>`` classes; every one of their tests
also proves that the backend under test received a graph. ``AotAutogradMachineryTests``
exercises torch's own tracing machinery (make_fx, export, the profiler) and runs once.

Where AOTAutograd changes what a user sees (double backward, donated buffers, storage
overlap guards), the expected behaviour is chosen by probing the backend
(``self.uses_aot_autograd``), never by its name.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import logging
import re
from unittest import mock

import torch
import torch._dynamo
import torch._functorch.config as functorch_config
import torch.fx.traceback as fx_traceback
from parameterized import parameterized

from harness import (
    BackendTestCase,
    CompileCounter,
    CompileCounterWithBackend,
    DynamoTestCase,
    assert_close,
    assert_same_outputs_and_grads,
    clone_input,
    clone_inputs,
    for_each_backend,
    needs,
    rand_strided,
)
from harness import capabilities, compat, dtypes, tiers, variants
from harness import weighted_loss


def _grads(outputs, inputs, grad_outputs=None, **kwargs):
    return torch.autograd.grad(outputs, inputs, grad_outputs=grad_outputs, **kwargs)


# ---------------------------------------------------------------------------------------
# LSTM


class _BidirectionalLSTM(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = torch.nn.LSTM(64, 64, num_layers=2, bidirectional=True)

    def forward(self, seq):
        return (self.lstm(seq),)


# Dynamo unrolls the LSTM: one cell per step, layer and direction. The default tier's short
# sequence keeps every structural feature (2 layers, both directions, a permuted input);
# the nightly tier adds the full-length sequence of PyTorch's own scenario (368 cells).
SHORT_SEQUENCE = 4  # 16 cells; 8 steps (32 cells) took 39 s of cold inductor compile, 4 take 28 s
FULL_SEQUENCE = 92


@for_each_backend
@dtypes.numeric
class LSTMTests(BackendTestCase):
    """nn.LSTM is only traced when Dynamo's RNN support is on; otherwise it runs eagerly."""

    def run_lstm(self, input_requires_grad: bool, length: int = SHORT_SEQUENCE, backward: bool = False):
        model = _BidirectionalLSTM()
        compiled_model = copy.deepcopy(model)
        # A permuted (non-contiguous) input, as a transformer-style caller produces it.
        seq = rand_strided((length, 4, 64), (1, 64 * length, length)).requires_grad_(input_requires_grad)
        compiled_seq = clone_input(seq)
        with compat.rnn_tracing_config():
            actual = self.compile(compiled_model)(compiled_seq)
        expected = model(seq)
        assert_close(self, expected, actual, scale=10)
        self.assertGreater(self.counter.frame_count, 0, "the LSTM was not compiled")
        if backward:
            weighted_loss(expected).backward()
            weighted_loss(actual).backward()
            assert_close(self, seq.grad, compiled_seq.grad, scale=10, what="grad of the input")
            for (name, want), got in zip(model.named_parameters(), compiled_model.parameters()):
                assert_close(self, want.grad, got.grad, scale=10, what=f"grad of {name}")

    def test_lstm_grad_enabled(self):
        # Only the LSTM's parameters require grad, as when training on plain data.
        self.run_lstm(input_requires_grad=False)

    def test_lstm_grad_enabled_input_requires_grad(self):
        # The default tier's one graph of real-model size (its forward over 150 ATen
        # operators), with the backward of that graph.
        self.run_lstm(input_requires_grad=True, backward=True)

    def test_lstm_no_grad(self):
        with torch.no_grad():
            self.run_lstm(input_requires_grad=False)

    @tiers.nightly("a 92-step sequence unrolls into 368 LSTM cells: about 30 s warm, 5 min cold on inductor")
    def test_lstm_full_length_input_requires_grad(self):
        self.run_lstm(input_requires_grad=True, length=FULL_SEQUENCE)


# ---------------------------------------------------------------------------------------
# Input mutation


def _add_under_no_grad(param, y):
    previous = torch.is_grad_enabled()
    try:
        torch.set_grad_enabled(False)
        param.add_(y)
    finally:
        torch.set_grad_enabled(previous)
    return y


def _slice_assign_into_input(dest, src):
    dest[:, :-1, :, 8:] = src[:, :, :8, :9]
    return (dest.view(1, 2, 32, 17),)


def _slice_assign_into_intermediate(dest, src):
    dest = torch.sin(dest)
    dest[:, :-1, :, 8:] = src[:, :, :8, :9]
    return (dest.view(1, 2, 32, 17),)


def _inplace_on_intermediate(x, y):
    return torch.sin(x).add_(y)


class _CopiesGradInBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone(), x.clone()

    @staticmethod
    def backward(ctx, grad_a, grad_b):
        # Writes one incoming gradient (a tangent) in place.
        return grad_a.copy_(grad_b)


@for_each_backend
class InputMutationTests(BackendTestCase):
    """Mutations of graph inputs must reach the caller's tensors."""

    @parameterized.expand([
        ("add", lambda x, y: x.add_(y)),
        ("view_mul", lambda x, y: x[1:].mul_(y[1:])),
        ("transposed_copy", lambda x, y: x.t().copy_(y.t() * 2)),
        ("twice", lambda x, y: x.add_(y).mul_(3)),
    ])
    def test_input_mutation_visible_to_caller(self, _name, mutate):
        def fn(x, y):
            mutate(x, y)
            return x.sum() + y

        assert_same_outputs_and_grads(self, fn, self.compile(fn), [torch.randn(3, 3), torch.randn(3, 3)])

    def test_slice_assignment_into_input(self):
        args = [torch.randn(2, 4, 8, 17), torch.randn(2, 3, 16, 17)]
        assert_same_outputs_and_grads(self, _slice_assign_into_input,
                                      self.compile(_slice_assign_into_input), args)


@for_each_backend
class MutationEdgeCaseTests(BackendTestCase):
    """Mutations of leaves, intermediates and tangents, which AOTAutograd treats specially."""

    def test_parameter_mutated_under_no_grad(self):
        param = torch.nn.Parameter(torch.randn(4))
        assert_same_outputs_and_grads(self, _add_under_no_grad, self.compile(_add_under_no_grad),
                                      [param, torch.randn(4)])

    def test_slice_assignment_into_intermediate(self):
        args = [torch.randn(2, 4, 8, 17), torch.randn(2, 3, 16, 17)]
        assert_same_outputs_and_grads(self, _slice_assign_into_intermediate,
                                      self.compile(_slice_assign_into_intermediate), args)

    def test_inplace_on_intermediate(self):
        args = [torch.randn(4, requires_grad=True), torch.randn(4)]
        assert_same_outputs_and_grads(self, _inplace_on_intermediate,
                                      self.compile(_inplace_on_intermediate), args)

    def test_mutation_of_clone_through_view(self):
        def fn(x, y):
            z = x.clone()
            z[0].mul_(y[0])
            return z * y

        assert_same_outputs_and_grads(self, fn, self.compile(fn),
                                      [torch.randn(3, 3, requires_grad=True), torch.randn(3, 3, requires_grad=True)])

    def test_autograd_function_mutates_tangent(self):
        def fn(x):
            return _CopiesGradInBackward.apply(x)

        assert_same_outputs_and_grads(self, fn, self.compile(fn, fullgraph=True),
                                      [torch.randn(4, requires_grad=True)])

    def test_set_on_leaf_requiring_grad_raises(self):
        def fn(x):
            x.set_(torch.ones(2))

        compiled = self.compile(fn)
        with self.assertRaisesRegex(RuntimeError, compat.LEAF_INPLACE_ERROR):
            compiled(torch.ones(2, requires_grad=True))


# ---------------------------------------------------------------------------------------
# Mutation through expand (several elements share one memory location)


def _expand_then_mutate_one(x):
    y = x.expand(3, *x.shape)
    y[0, 0].add_(5)
    return y


def _expand_then_mutate_and_multiply(x, z):
    y = x.expand(3, *x.shape)
    y[1, 1].mul_(5)
    return y * z


def _expand_then_mutate_overlapping(x):
    y = x.expand(3, *x.shape)
    y[0:3, 0].add_(5)
    return y


@for_each_backend
class ExpandMutationTests(BackendTestCase):
    def test_mutation_through_expand_functionalizes(self):
        assert_same_outputs_and_grads(self, _expand_then_mutate_one, self.compile(_expand_then_mutate_one),
                                      [torch.arange(6)])

    def test_mutation_through_expand_backwards(self):
        x = torch.arange(6, dtype=torch.float)
        assert_same_outputs_and_grads(self, _expand_then_mutate_and_multiply,
                                      self.compile(_expand_then_mutate_and_multiply),
                                      [x, x.clone().requires_grad_()])

    def test_overlapping_write_through_expand_raises(self):
        with self.assertRaisesRegex(RuntimeError, "more than one element of the written-to tensor"):
            _expand_then_mutate_overlapping(torch.arange(6))
        compiled = self.compile(_expand_then_mutate_overlapping)
        with self.assertRaises(RuntimeError):
            compiled(torch.arange(6))


# ---------------------------------------------------------------------------------------
# Aliasing


def _alias_outlives_writes():
    a = torch.tensor([1])[0:1]
    b = a.squeeze()
    a[0] = 0
    if a[0] < 1e5:  # data-dependent: a graph break between the two writes
        pass
    a[0] = 2
    return b


class _ReturnsInputAsGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        # Both gradients alias something: a saved input and the incoming gradient.
        return x, grad


def _zero_dim_times_sentinel(sentinel, squeeze: bool):
    x = torch.reshape(torch.unique(torch.ones(1)), [1])
    if squeeze:
        x = torch.squeeze(x)
    return x * sentinel


@for_each_backend
class AliasingTests(BackendTestCase):
    def test_alias_of_intermediate_sees_later_writes(self):
        expected = _alias_outlives_writes()
        actual = self.compile(_alias_outlives_writes)()
        assert_close(self, expected, actual)

    def test_gradients_that_alias_inputs(self):
        def fn(x, y):
            return _ReturnsInputAsGrad.apply(x, y)

        assert_same_outputs_and_grads(self, fn, self.compile(fn),
                                      [torch.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)])

    @parameterized.expand([("zero_dim", True), ("one_dim", False)])
    def test_output_stride_reconstruction(self, _name, squeeze):
        sentinel = torch.tensor(1.0, requires_grad=True)
        expected = _zero_dim_times_sentinel(sentinel, squeeze)
        actual = self.compile(_zero_dim_times_sentinel, fullgraph=True)(sentinel, squeeze)
        assert_close(self, expected, actual)
        self.assertEqual(expected.stride(), actual.stride())


# ---------------------------------------------------------------------------------------
# Recompilation when arguments are duplicated


class _TruncTwo(torch.nn.Module):
    def forward(self, x, y):
        x = x.trunc_()
        y = y.trunc_()
        return (x + y,)


class _TruncFour(torch.nn.Module):
    def forward(self, a, b, c, d):
        for t in (a, b, c, d):
            t.trunc_()
        return (a + b + c + d,)


class _TruncWithParam(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mean = torch.nn.Parameter(torch.randn(3, 3))

    def forward(self, a, b):
        a.trunc_()
        b.trunc_()
        return a + b + self.mean


class _TruncWithParamAndScalars(_TruncWithParam):
    def forward(self, a, b, e, f):
        a.trunc_()
        b.trunc_()
        return (a + b + self.mean) * e * f


class _TruncWithParamAndLists(_TruncWithParam):
    def forward(self, e, f, a, b):
        a.trunc_()
        b.trunc_()
        return (a + b + self.mean) * e[0] * f[0]


_GLOBAL_TENSOR = torch.randn(3, 3)


class _TruncWithParamAndGlobal(_TruncWithParam):
    def __init__(self):
        super().__init__()
        global _GLOBAL_TENSOR
        _GLOBAL_TENSOR = _GLOBAL_TENSOR.to(torch.get_default_device())  # the run's device (harness/axes/device.py)

    def forward(self, a, b, e, f):
        a.trunc_()
        b.trunc_()
        return (a + b + _GLOBAL_TENSOR + self.mean) * e * f


def _leaf():
    return torch.randn(3, 3, requires_grad=True)


def _copies_keeping_duplicates(args):
    """Differentiable copies of the tensors in ``args``; an argument passed twice stays one
    tensor passed twice (the eager reference must see the same duplication)."""
    copies = {}
    return [copies.setdefault(id(a), a.clone()) if isinstance(a, torch.Tensor) else a for a in args]


@for_each_backend
class ArgDupeRecompileTests(BackendTestCase):
    """Dynamo guards that two tensor arguments are (or are not) the same object."""

    def call_twice(self, module, first, second):
        """Call a fresh compile of ``module`` with two argument lists; return its counter."""
        counter = self.new_counter()
        compiled = self.compile(module, counter=counter)
        with functorch_config.patch(debug_assert=True):
            for args in (first, second):
                assert_close(self, module(*_copies_keeping_duplicates(args)), compiled(*args))
        return counter

    def test_distinct_args_compile_once(self):
        x, y = _leaf(), _leaf()
        # trunc_ mutates inputs; each call gets its own copies so nothing else changes.
        counter = self.call_twice(_TruncTwo(), [x.clone(), y.clone()], [x.clone(), y.clone()])
        self.assertEqual(counter.frame_count, 1)
        self.assertNoGuardFailure()

    @parameterized.expand([
        ("two_args", _TruncTwo, lambda p, q: [p, p], lambda p, q: [p, q], "x is y"),
        ("many_args", _TruncFour, lambda p, q: [p, p, p, p], lambda p, q: [p, q, q, q], "a is b"),
        ("many_args_last_pair", _TruncFour, lambda p, q: [_leaf().clone(), _leaf().clone(), p, p],
         lambda p, q: [_leaf().clone(), _leaf().clone(), p, q], "c is d"),
        ("param", _TruncWithParam, lambda p, q: [p, p], lambda p, q: [p, q], "a is b"),
        ("param_non_tensor_args", _TruncWithParamAndScalars, lambda p, q: [p, p, 2, 2],
         lambda p, q: [p, q, 2, 2], "a is b"),
        ("param_non_tensor_lists", _TruncWithParamAndLists, lambda p, q: [[3, 2, 1], [4, 5, 6], p, p],
         lambda p, q: [[3, 2, 1], [4, 5, 6], p, q], "a is b"),
        ("param_and_global", _TruncWithParamAndGlobal, lambda p, q: [p, p, 2, 2],
         lambda p, q: [p, q, 2, 2], "a is b"),
    ])
    def test_duplicated_then_distinct_args_recompile(self, _name, module_type, duplicated, distinct, reason):
        p, q = _leaf(), _leaf()
        counter = self.call_twice(module_type(), duplicated(p.clone(), q.clone()), distinct(p.clone(), q.clone()))
        self.assertEqual(counter.frame_count, 2)
        self.assertGuardFailure(rf"\b{reason}\b")


# ---------------------------------------------------------------------------------------
# Recompilation when requires_grad changes


class _Add(torch.nn.Module):
    def forward(self, x, y):
        return (x + y,)


@for_each_backend
class RequiresGradRecompileTests(BackendTestCase):
    def test_requires_grad_change_recompiles(self):
        module = _Add()
        compiled = self.compile(module)
        with functorch_config.patch(debug_assert=True):
            assert_same_outputs_and_grads(self, module, compiled, [_leaf(), _leaf()])
            assert_same_outputs_and_grads(self, module, compiled, [_leaf(), torch.randn(3, 3)])
        self.assertEqual(self.counter.frame_count, 2)
        self.assertGuardFailure(r"tensor 'y' requires_grad mismatch\. expected requires_grad=1")

    def test_same_requires_grad_does_not_recompile(self):
        module = _Add()
        compiled = self.compile(module)
        with functorch_config.patch(debug_assert=True):
            for _ in range(2):
                assert_same_outputs_and_grads(self, module, compiled, [_leaf(), torch.randn(3, 3)])
        self.assertEqual(self.counter.frame_count, 1)
        self.assertNoGuardFailure()


# ---------------------------------------------------------------------------------------
# Storage-overlap guards (AOTAutograd guards on which mutated inputs share memory)


def _add_one_to_each(*args):
    for arg in args:
        arg.add_(1)
    return args[0]


def _double_first_then_sum(a, b, c, d):
    a.mul_(2)
    return a + b + c + d


class _RecordsAotGuards:
    """A backend wrapper that keeps the AOTAutograd guard list of the compile in progress."""

    def __init__(self, counter):
        self.counter = counter
        self.guards = []

    def __call__(self, gm, example_inputs):
        # The list is filled after the backend returns; keep the live object.
        self.guards = compat.current_aot_autograd_guards()
        return self.counter(gm, example_inputs)


@for_each_backend
class StorageOverlapTests(BackendTestCase):
    def setUp(self):
        super().setUp()
        # A compiled artifact loaded from AOTAutograd's cache comes without the overlap
        # guard, so whether the second call recompiles would depend on earlier runs.
        self.enter_context(compat.fresh_compilation())

    @parameterized.expand([
        ("overlap_removed", _add_one_to_each,
         lambda x: (x[:5], x[7:13], x[9:]), lambda x: (x[:5], x[7:13], x[13:15]),
         r"check_overlapping\(overlapping=\[args\[1\], args\[2\]\], non_overlapping=\[args\[0\]\]\)"),
        ("overlap_grows", _double_first_then_sum,
         lambda x: (x[:5], x[4:9], x[10:15], x[15:]), lambda x: (x[:5], x[4:9], x[8:13], x[15:]),
         r"check_overlapping\(overlapping=\[a, b\], non_overlapping=\[c, d\]\)"),
    ])
    def test_overlap_change_recompiles(self, _name, fn, first_views, second_views, reason):
        compiled = self.compile(fn, dynamic=True)
        eager_base, compiled_base = torch.ones(20), torch.ones(20)
        for views in (first_views, second_views):
            assert_close(self, fn(*views(eager_base)), compiled(*views(compiled_base)))
            assert_close(self, eager_base, compiled_base, what="the mutated base")
        if self.uses_aot_autograd:
            self.assertGuardFailure(reason, count=1)
        else:
            # Without AOTAutograd nothing is specialized on overlap: no reason to recompile.
            self.assertNoGuardFailure()

    @parameterized.expand([
        ("no_mutation", lambda a, b: a + b, lambda x: (x[:10], x[5:15])),
        ("no_aliasing", lambda a, b: (a.add_(1), b.add_(1))[0], lambda x: (x[:10], torch.arange(20)[5:15])),
    ])
    def test_no_overlap_guard_when_not_needed(self, _name, fn, views):
        recorder = _RecordsAotGuards(self.counter)
        compiled = torch.compile(fn, backend=recorder, dynamic=True)
        eager_base, compiled_base = torch.arange(20), torch.arange(20)
        assert_close(self, fn(*views(eager_base)), compiled(*views(compiled_base)))
        self.assertEqual(self.counter.frame_count, 1)
        overlap_guard = compat.storage_overlap_guard_type()
        self.assertFalse([g for g in recorder.guards if isinstance(g, overlap_guard)])


# ---------------------------------------------------------------------------------------
# Graph breaks with non-constant inputs, and graphs from torch._dynamo.export


class _ConvThroughPrivateForward(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels=3, out_channels=20, kernel_size=(5, 5))

    def forward(self, x):
        return self.conv._conv_forward(x, self.conv.weight, self.conv.bias)


class _MutatesLeafUnderNoGrad(torch.nn.Module):
    def forward(self, x, y):
        return _add_under_no_grad(x, y)


class _DataDependentBranch(torch.nn.Module):
    def branch(self, param, y):
        if y[0][0] < 3:
            return y + param
        return param * y

    def forward(self, x, y):
        a = x * y
        a = self.branch(a, a)
        return a * (x + y)


@for_each_backend
class GraphBreakExportTests(BackendTestCase):
    def test_exported_graph_compiles(self):
        module, x = _ConvThroughPrivateForward(), torch.randn(3, 10, 10)
        graph = compat.dynamo_export(module, x)
        assert_close(self, module(x), graph(x))
        assert_same_outputs_and_grads(self, graph, self.compile(graph), [x])

    def test_exported_graph_mutating_leaf_under_no_grad(self):
        module = _MutatesLeafUnderNoGrad()
        args = [torch.nn.Parameter(torch.randn(4)), torch.randn(4)]
        graph = compat.dynamo_export(module, *clone_inputs(args))
        assert_same_outputs_and_grads(self, module, graph, args)
        assert_same_outputs_and_grads(self, module, self.compile(graph), args)

    def test_data_dependent_branch_splits_frames(self):
        module = _DataDependentBranch()
        args = [torch.nn.Parameter(torch.randn(2, 2)), torch.randn(2, 2)]
        assert_same_outputs_and_grads(self, module, self.compile(module), args)
        # forward up to the branch | the condition | the taken branch | the rest.
        self.assertEqual(self.counter.frame_count, 4)
        self.assertEqual(self.counter.op_count, 7)

    def test_compiling_an_already_compiled_module(self):
        module = _DataDependentBranch()
        args = [torch.nn.Parameter(torch.randn(2, 2)), torch.randn(2, 2)]
        inner = self.compile(module)
        inner(*clone_inputs(args))
        self.reset_dynamo()
        outer = self.compile(inner, counter=self.new_counter())
        assert_same_outputs_and_grads(self, module, outer, args)


# ---------------------------------------------------------------------------------------
# nn.Parameter constructed inside the compiled function


@for_each_backend
class ParameterConstructionTests(BackendTestCase):
    def test_parameter_constructed_inside(self):
        def fn(x):
            return x.sin() + torch.nn.Parameter(torch.ones(1))

        assert_same_outputs_and_grads(self, fn, self.compile(fn), [torch.rand(4, 4)])

    def test_parameter_from_input_returned(self):
        def fn(x):
            p = torch.nn.Parameter(x + 123)
            return p, p.sin()

        with torch._dynamo.config.patch(graph_break_on_nn_param_ctor=False):
            expected = fn(torch.ones(4))
            actual = self.compile(fn, fullgraph=True)(torch.ones(4))
        assert_close(self, expected, actual)
        self.assertIsInstance(actual[0], torch.nn.Parameter)
        actual[1].sum().backward()


# ---------------------------------------------------------------------------------------
# Double backward


# Flat on purpose: where Dynamo breaks the graph (at autograd.grad, inside this frame)
# decides which backward runs through AOTAutograd's compiled function.
def _grad_inside(x, grad_output):
    y = x.sin().exp()
    (gx,) = torch.autograd.grad(y, x, grad_outputs=grad_output, create_graph=True)
    return gx


def _double_backward_inside(x, grad_output):
    y = x.sin().exp()
    (gx,) = torch.autograd.grad(y, x, grad_outputs=grad_output, create_graph=True)
    (ggx,) = torch.autograd.grad(gx, x)
    return gx, ggx


def _sin_exp(x):
    return x.sin().exp()


_GRAD_OUTPUTS = [("seeded", lambda: torch.tensor(1.0, requires_grad=True)), ("implicit", lambda: None)]


class _LayerNormWithInputGrad(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(64)

    def forward(self, x):
        x = x.clone().requires_grad_(True)
        y = self.norm(x)
        (grad,) = torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y), create_graph=True, allow_unused=True)
        return y, grad


@for_each_backend
@variants.opt_out("automatic_dynamic", "its functions run backward() themselves: a replayed call's outputs have no graph "
                                       "left to differentiate")
class DoubleBackwardTests(BackendTestCase):
    """AOTAutograd backends refuse double backward with a documented error; others must
    compute it like eager."""

    def setUp(self) -> None:
        super().setUp()
        context = compat.dynamo_config_if_present(trace_autograd_ops=True)
        context.__enter__()
        self.addCleanup(context.__exit__, None, None, None)

    @parameterized.expand(_GRAD_OUTPUTS)
    @needs(capabilities.DOUBLE_BACKWARD)
    def test_double_backward_inside_compiled_fn(self, _name, grad_output):
        x = torch.tensor(1.0, requires_grad=True)
        compiled = self.compile(_double_backward_inside)
        if self.uses_aot_autograd:
            with self.assertRaisesRegex(RuntimeError, compat.DOUBLE_BACKWARD_ERROR):
                compiled(x, grad_output())
        else:
            assert_close(self, _double_backward_inside(x, grad_output()), compiled(x, grad_output()))

    @parameterized.expand(_GRAD_OUTPUTS)
    def test_second_backward_outside_compiled_fn(self, _name, grad_output):
        x = torch.tensor(1.0, requires_grad=True)
        expected = _grads(_grad_inside(x, grad_output()), x)
        gx = self.compile(_grad_inside)(x, grad_output())
        assert_close(self, expected, _grads(gx, x))

    @parameterized.expand(_GRAD_OUTPUTS)
    @needs(capabilities.DOUBLE_BACKWARD)
    def test_double_backward_outside_compiled_fn(self, _name, grad_output):
        x = torch.tensor(1.0, requires_grad=True)
        y = self.compile(_sin_exp)(x)
        (gx,) = _grads(y, x, grad_output(), create_graph=True)
        if self.uses_aot_autograd:
            with self.assertRaisesRegex(RuntimeError, compat.DOUBLE_BACKWARD_ERROR):
                _grads(gx, x)
        else:
            (eager_gx,) = _grads(_sin_exp(x), x, grad_output(), create_graph=True)
            assert_close(self, _grads(eager_gx, x), _grads(gx, x))

    @parameterized.expand(_GRAD_OUTPUTS)
    def test_single_backward_without_create_graph(self, _name, grad_output):
        x = torch.tensor(1.0, requires_grad=True)
        y = self.compile(_sin_exp)(x)
        assert_close(self, _grads(_sin_exp(x), x, grad_output()), _grads(y, x, grad_output()))

    @needs(capabilities.DOUBLE_BACKWARD)
    def test_layer_norm_double_backward_dynamic_shapes(self):
        model = _LayerNormWithInputGrad()
        traced = torch.fx.experimental.proxy_tensor.make_fx(
            model, tracing_mode="symbolic", _allow_non_fake_inputs=True
        )(torch.randn(10, 64))
        compiled = self.compile(traced, dynamic=True, fullgraph=True)
        for batch in (10, 20, 30, 40):
            x = torch.randn(batch, 64)
            assert_close(self, traced(x), compiled(x), check_requires_grad=False)
        self.assertEqual(self.counter.frame_count, 1, "a new batch size caused a recompile")


# ---------------------------------------------------------------------------------------
# Grad mode changed inside the compiled function


def _square_then_disable_grad(x):
    y = x * x
    torch.set_grad_enabled(False)
    return y.clone(), y


@for_each_backend
class GradModeMutationTests(BackendTestCase):
    def test_grad_mode_disabled_inside_compiled_fn(self):
        compiled = self.compile(_square_then_disable_grad, fullgraph=True)
        x = torch.ones(3, requires_grad=True) * 3
        try:
            expected = _square_then_disable_grad(x)
            eager_grad_mode = torch.is_grad_enabled()
            torch.set_grad_enabled(True)
            actual = compiled(x)
            compiled_grad_mode = torch.is_grad_enabled()
        finally:
            torch.set_grad_enabled(True)
        self.assertFalse(eager_grad_mode)
        self.assertEqual(compiled_grad_mode, eager_grad_mode, "grad mode after the call differs from eager")
        assert_close(self, expected, actual)
        self.assertIsNone(actual[0].grad_fn)
        self.assertIsNotNone(actual[1].grad_fn)
        seed = torch.tensor([-1.0, 2.0, 0.0])
        assert_close(self, _grads(expected[1], x, seed), _grads(actual[1], x, seed))


# ---------------------------------------------------------------------------------------
# Donated buffers: AOTAutograd lets the backward overwrite saved activations, which
# forbids retain_graph / create_graph backward calls.


class _ReluPlusParam(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.param = torch.nn.Parameter(torch.zeros([3, 3]))

    def forward(self, x):
        return torch.nn.functional.relu(x) + self.param


@for_each_backend
class DonatedBufferTests(BackendTestCase):
    def setUp(self) -> None:
        super().setUp()
        # Compiled-artifact caches replay a backward compiled under other conditions and
        # make donation depend on test order; these scenarios compile from scratch.
        self.enter_context(compat.fresh_compilation(functorch_config.patch(donated_buffer=True)))

    def check(self, calls, check_requires_grad=True):
        """Run ``calls(module, x)`` eagerly and compiled; the grads must agree."""
        eager, compiled = _ReluPlusParam(), _ReluPlusParam()
        x = torch.randn(3, 3, requires_grad=True)
        x_compiled = clone_input(x)
        calls(eager, x)
        calls(self.compile(compiled), x_compiled)
        assert_close(self, (x.grad, eager.param.grad), (x_compiled.grad, compiled.param.grad),
                     check_requires_grad=check_requires_grad)

    def test_repeated_backward(self):
        def calls(module, x):
            for _ in range(5):
                module(x).sum().backward()

        self.check(calls)

    def test_backward_with_retain_graph_on_fresh_graph(self):
        def calls(module, x):
            out = module(x).sum()
            for _ in range(5):
                out.backward(retain_graph=True)
            out.backward()

        self.check(calls)

    @needs(capabilities.DOUBLE_BACKWARD)
    def test_backward_with_create_graph_first(self):
        def calls(module, x):
            module(x).sum().backward(create_graph=True)
            out = module(x).sum()
            for _ in range(5):
                out.backward(retain_graph=True)
            out.backward()

        # AOTAutograd's backward is not differentiable (see DoubleBackwardTests), so the
        # create_graph grads come back without history; the values must still agree.
        self.check(calls, check_requires_grad=not self.uses_aot_autograd)

    def test_retain_graph_after_donation_raises(self):
        module = self.compile(_ReluPlusParam())
        x = torch.randn(3, 3, requires_grad=True)
        module(x).sum().backward()
        out = module(x).sum()
        if self.uses_aot_autograd:
            with self.assertRaisesRegex(RuntimeError, compat.DONATED_BUFFER_RETAIN_ERROR):
                out.backward(retain_graph=True)
        else:
            out.backward(retain_graph=True)
            out.backward()


# ---------------------------------------------------------------------------------------
# data_ptr access on tensors that are fake while tracing


_op_serial = itertools.count()


@contextlib.contextmanager
def _op_touching_data_ptr(name, in_backward: bool):
    """Define ``suite_dataptr::<name>``, which reads data_ptr in its forward or backward."""

    class TouchesGradDataPtr(torch.autograd.Function):
        called = False

        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            TouchesGradDataPtr.called = True
            grad.data_ptr()
            return grad.clone()

    def forward_touching(x):
        x.data_ptr()
        return x.clone()

    # torch.ops caches op objects by name, so every definition gets a fresh name.
    name = f"{name}_{next(_op_serial)}"
    with compat.scoped_library("suite_dataptr", "FRAGMENT") as lib:
        lib.define(f"{name}(Tensor x) -> Tensor")
        impl = TouchesGradDataPtr.apply if in_backward else forward_touching
        lib.impl(name, impl, "CompositeImplicitAutograd")
        yield getattr(torch.ops.suite_dataptr, name), TouchesGradDataPtr


def _on_input(op):
    return op


def _on_intermediate(op):
    return lambda x: op(x.clone())


@for_each_backend
@variants.opt_out("automatic_dynamic", "its custom op reads raw memory for the 3-element input it was written for; "
                                       "another size crashes the process, in eager too")
class DataPtrTests(BackendTestCase):
    @parameterized.expand([("graph_input", _on_input), ("intermediate", _on_intermediate)])
    def test_data_ptr_in_forward_rejected(self, _name, wrap):
        with _op_touching_data_ptr("forward_reads", in_backward=False) as (op, _):
            compiled = self.compile(wrap(op), fullgraph=True)
            with self.assertRaisesRegex(Exception, compat.DATA_PTR_ERROR):
                compiled(torch.randn(3))
        self.expect_no_graph("Dynamo's fake-tensor run of the op raises before a graph exists")

    def test_data_ptr_in_backward(self):
        with _op_touching_data_ptr("backward_reads", in_backward=True) as (op, function):
            compiled = self.compile(op, fullgraph=True)
            x = torch.randn(3, requires_grad=True)
            if self.uses_aot_autograd:
                # AOTAutograd traces the backward ahead of time, on fake tensors.
                with self.assertRaisesRegex(Exception, compat.DATA_PTR_ERROR):
                    compiled(x)
                self.assertTrue(function.called)
            else:
                assert_same_outputs_and_grads(self, op, compiled, [x])


# ---------------------------------------------------------------------------------------
# Joint graph


@for_each_backend
class JointGraphTests(BackendTestCase):
    def setUp(self):
        super().setUp()
        # A cache hit skips building the joint graph, and with it the custom pass.
        self.enter_context(compat.fresh_compilation())

    def test_joint_custom_pass_sees_joint_graph_only_when_grad_needed(self):
        calls = []

        def joint_pass(joint_graph, joint_inputs):
            calls.append((joint_graph, joint_inputs))
            return joint_graph

        compiled = self.compile(torch.sin)
        with functorch_config.patch(joint_custom_pass=joint_pass):
            compiled(torch.randn(10))
            self.assertEqual(calls, [], "an input without grad needs no joint graph")
            out = compiled(torch.randn(10, requires_grad=True))
        out.sum().backward()
        if not self.uses_aot_autograd:
            self.assertEqual(calls, [], "a backend without AOTAutograd builds no joint graph")
            return
        self.assertEqual(len(calls), 1)
        joint_graph, (primals, tangents) = calls[0]
        self.assertIsInstance(joint_graph, torch.fx.GraphModule)
        self.assertIsInstance(primals, list)
        self.assertIsInstance(tangents, list)


# ---------------------------------------------------------------------------------------
# Unbacked (data-dependent) sizes in activations


def _divide_by_nonzero_result(arg, sentinel):
    offsets = torch.full((1, 2), -66, dtype=torch.int32) + torch.full((1, 2), 77, dtype=torch.int64)
    scaled = offsets * torch.full((1, 2), -64, dtype=torch.int32)
    empty_indices = torch.nonzero(torch.full((3, 4), False, dtype=torch.bool))
    result = torch.div(arg, scaled + empty_indices) * sentinel
    return result.real if result.is_complex() else result


@for_each_backend
class UnbackedShapeTests(BackendTestCase):
    def test_unbacked_activation(self):
        sentinel = torch.tensor(1.0, requires_grad=True)
        arg = torch.randint(0, 3, (1, 2), dtype=torch.int64)
        with torch._dynamo.config.patch(capture_scalar_outputs=True, capture_dynamic_output_shape_ops=True):
            actual = self.compile(_divide_by_nonzero_result, fullgraph=True, dynamic=True)(arg, sentinel)
        assert_close(self, _divide_by_nonzero_result(arg, sentinel), actual)


# ---------------------------------------------------------------------------------------
# torch's own machinery, run once (no backend axis)


class _ConvBnLinearLoss(torch.nn.Module):
    def __init__(self, spatial: int) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(16, 16, kernel_size=(1, 1), padding="same")
        self.bn = torch.nn.BatchNorm2d(16)
        self.relu = torch.nn.ReLU()
        self.fc = torch.nn.Linear(16 * spatial * spatial * 2, 1)
        self.loss = torch.nn.L1Loss()

    def forward(self, x, target):
        y = self.relu(self.bn(self.conv(x))) + x
        return (self.loss(self.fc(torch.flatten(y)), target),)


def _dupe_outputs_for_small(x):
    y = x + 1
    return (y, y) if x.numel() < 5 else (y, x + 2)


class _TupleOutputs(torch.nn.Module):
    """aot_module_simplified needs a module whose output is a tuple or list."""

    def __init__(self, inner) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, *args):
        out = self.inner(*args)
        return out if isinstance(out, (list, tuple)) else (out,)


class _CallsFunction(torch.nn.Module):
    """Lets a compiled function stand where a submodule is expected."""

    def __init__(self, fn, single_output: bool) -> None:
        super().__init__()
        self.fn = fn
        self.single_output = single_output

    def forward(self, *args):
        out = self.fn(*args)
        return out[0] if self.single_output else out


def _donated_indices(log_lines: list[str]) -> list[int]:
    found = [m for line in log_lines for m in compat.DONATED_INDICES.findall(line)]
    if not found:
        raise AssertionError("AOTAutograd logged no bw_donated_idxs")
    return [int(i) for i in found[0].replace(" ", "").split(",") if i]


def _relu_only(x):
    return torch.nn.functional.relu(x)


class AotAutogradMachineryTests(DynamoTestCase):
    def test_sequence_nr_links_backward_nodes_to_forward(self):
        module = _ConvBnLinearLoss(spatial=4)
        x, target = torch.rand(2, 16, 4, 4, requires_grad=True), torch.rand(1)
        graph = compat.dynamo_export(module, x, target)
        params = dict(graph.named_parameters(remove_duplicate=False))
        params.update(graph.named_buffers(remove_duplicate=False))
        flat, spec = torch.utils._pytree.tree_flatten(params)
        traced = compat.create_functional_call()(graph, spec, len(flat))
        with torch.enable_grad(), fx_traceback.preserve_node_meta():
            joint, *_ = compat.aot_export_function()(
                traced, [*flat, x, target], decompositions=None, num_params_buffers=len(flat), no_tangents=True
            )
        forward_fns, backward_links = {}, []
        for node in joint.graph.nodes:
            seq_nr = node.meta.get("seq_nr", -1)
            if not node.op.startswith("call_") or seq_nr < 0 or "getitem" in str(node.target):
                continue
            source = node.meta.get("source_fn_stack") or []
            fwd_source = node.meta.get("fwd_source_fn_stack") or []
            if source:
                forward_fns.setdefault(seq_nr, set()).add(source[-1][0])
            if fwd_source:
                backward_links.append((seq_nr, fwd_source[-1][0]))
        self.assertTrue(backward_links, "no backward node carries its forward's source")
        for seq_nr, fn_name in backward_links:
            self.assertIn(fn_name, forward_fns.get(seq_nr, set()),
                          f"backward node with seq_nr {seq_nr} names {fn_name!r}, not its forward")
        linked = {compat.normalize_source_fn_name(fn_name) for _, fn_name in backward_links}
        # Each layer, named as the module attribute called or as the function it ran.
        for layer in (("conv", "conv2d"), ("bn", "batch_norm"), ("relu",), ("fc", "linear"), ("loss", "l1_loss")):
            self.assertTrue(linked & set(layer), f"no backward node links to {layer[0]}'s forward: {linked}")

    def test_profiler_sees_compiled_backward_sequence_nrs(self):
        module = _ConvBnLinearLoss(spatial=4)
        x, target = torch.rand(2, 16, 4, 4, requires_grad=True), torch.rand(1)

        def grad_with_create_graph(x, target):
            (loss,) = module(x, target)
            return _grads(loss, x, torch.tensor(1.0, requires_grad=True), create_graph=True)

        compiled = torch.compile(grad_with_create_graph, backend="aot_eager")
        with functorch_config.patch(donated_buffer=False), torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU]
        ) as prof:
            compiled(x, target)
        forward_nrs = {e.sequence_nr for e in prof.events() if e.sequence_nr >= 0 and "Backward" not in e.name}
        backward_nrs = {e.sequence_nr for e in prof.events()
                        if e.sequence_nr >= 0 and re.search(r"Backward[01]", e.name)}
        self.assertTrue(backward_nrs, "the profiler recorded no backward node with a sequence number")
        self.assertLessEqual(backward_nrs, forward_nrs, "a backward node's sequence number matches no forward op")

    def test_split_with_sizes_backward_cleans_traceback_meta(self):
        result = torch.randn(32, requires_grad=True)
        outs = torch.ops.aten.split_with_sizes(result, [7, 16, 9])
        compat.setup_stacktrace_preservation_hooks()([out.grad_fn for out in outs])
        with fx_traceback.preserve_node_meta():
            sum(out.sum() for out in outs).backward()
            self.assertNotIn("grad_fn_seq_nr", fx_traceback.current_meta)
            self.assertNotIn("in_grad_fn", fx_traceback.current_meta)

    def test_aot_export_joint_simple_as_backend(self):
        def export_forward_only(gm, sample_inputs):
            fake_mode = compat.detect_fake_mode(sample_inputs)
            with mock.patch.object(fake_mode, "allow_non_fake_inputs", True), fake_mode:
                return compat.aot_export_joint_simple()(gm, sample_inputs, trace_joint=False)

        model = torch.nn.Linear(5, 7)
        x = torch.rand(3, 4, 5)
        assert_close(self, model(x), torch.compile(model, backend=export_forward_only)(x), check_requires_grad=False)

    def test_split_graph_compiled_piecewise_with_duplicate_outputs(self):
        compiled_pieces = CompileCounter()

        def compile_piece(piece, inputs):
            compiled_pieces(piece, inputs)
            from functorch.compile import nop

            single_output = not isinstance(piece(*inputs), (list, tuple))
            compiled = compat.aot_module_simplified()(_TupleOutputs(piece), inputs, nop)
            return _CallsFunction(compiled, single_output)

        def split_at_mul(gm, example_inputs):
            split = torch.fx.passes.split_module.split_module(
                gm, None, lambda node: 1 if "mul" in str(node) else 0
            )
            second_inputs = split.submod_0(*example_inputs)
            split.submod_0 = compile_piece(split.submod_0, example_inputs)
            split.submod_1 = compile_piece(split.submod_1, second_inputs)
            return split

        with compat.scoped_library("suite_dupe", "FRAGMENT") as lib:
            lib.define("maybe_dupe(Tensor a) -> (Tensor, Tensor)")
            lib.impl("maybe_dupe", _dupe_outputs_for_small, "CompositeExplicitAutograd")  # every device

            def f(a):
                b, c = torch.ops.suite_dupe.maybe_dupe(a)
                return (b.mul_(c),)

            compiled = torch.compile(f, backend=split_at_mul)
            with torch._dynamo.config.patch(automatic_dynamic_shapes=False), compat.functorch_config_if_present(
                check_custom_op_aliasing=False, debug_assert=True
            ):
                for n in (4, 6):
                    assert_close(self, f(torch.ones(n)), compiled(torch.ones(n)))
        self.assertEqual(compiled_pieces.frame_count, 4, "each of two frames compiles two pieces")

    def check_overlap_guards(self, disjoint_views: int):
        contexts = []

        def keep_compile_context(gm, example_inputs):
            contexts.append(compat.current_shape_env_guards())
            return CompileCounterWithBackend("aot_eager")(gm, example_inputs)

        base = torch.arange(10 * disjoint_views)
        # Disjoint views plus one overlapping the first five of them, all mutated.
        views = (*base.split(10), base[4:44])
        expected_base = base.clone()
        _add_one_to_each(*expected_base.split(10), expected_base[4:44])
        torch.compile(_add_one_to_each, backend=keep_compile_context, dynamic=True)(*views)
        assert_close(self, expected_base, base)
        shape_guards = contexts[0]
        # Overlap is checked at run time among the views that may overlap, not by shape
        # guards over every pair of inputs.
        self.assertFalse([g for g in shape_guards if "compute_overlapping_inputs" in g])
        self.assertLess(len(shape_guards), 10 * disjoint_views)
        return shape_guards

    def test_overlap_guards_for_mutated_views(self):
        self.check_overlap_guards(disjoint_views=10)

    @tiers.nightly("101 mutated views under dynamic shapes: 25-50 s")
    def test_overlap_guards_scale_to_many_inputs(self):
        self.check_overlap_guards(disjoint_views=100)

    @parameterized.expand([
        ("relu", lambda: (_relu_only, [torch.rand(3, 3, requires_grad=True)]), [0]),
        ("module_param", lambda: (_ReluPlusParam(), [torch.ones(3, 3, requires_grad=True)]), [0]),
        ("view_mm_relu", lambda: (lambda x, z: torch.mm(x.view(2, 3), x) + torch.nn.functional.relu(z),
                                  [torch.rand(3, 2, requires_grad=True), torch.rand(2, 2, requires_grad=True)]), [1]),
        ("matmul_of_input", lambda: (torch.matmul, [torch.ones(4, 4), torch.ones(4, 4, requires_grad=True)]), []),
        ("matmul_of_saved_exp", lambda: (lambda a, b: torch.matmul(torch.exp(a), b),
                                         [torch.ones(4, 4, requires_grad=True),
                                          torch.ones(4, 4, requires_grad=True)]), [0]),
    ])
    def test_donated_backward_inputs(self, _name, make, expected):
        fn, args = make()
        with functorch_config.patch(donated_buffer=True), self.assertLogs(
            compat.AOT_GRAPH_COMPILE_LOGGER, level=logging.INFO
        ) as captured:
            # The min-cut partitioner (as inductor uses) decides what is saved for backward.
            out = torch.compile(fn, backend="aot_eager_decomp_partition")(*args)
            (out if isinstance(out, torch.Tensor) else out[0]).sum().backward()
        self.assertEqual(_donated_indices(captured.output), expected)

    def test_copy_of_fake_tensor(self):
        from torch._subclasses.fake_tensor import FakeTensorMode

        with functorch_config.patch(fake_tensor_allow_unsafe_data_ptr_access=False), FakeTensorMode():
            x = torch.randn(3)
            y = copy.copy(x)
        self.assertEqual(y.shape, x.shape)

    @parameterized.expand([
        (f"{mode}_{where.__name__.strip('_')}", mode, where)
        for mode in ("fake", "symbolic")
        for where in (_on_input, _on_intermediate)
    ])
    def test_make_fx_rejects_data_ptr(self, _name, mode, wrap):
        with _op_touching_data_ptr("make_fx_reads", in_backward=False) as (op, _):
            with self.assertRaisesRegex(RuntimeError, compat.DATA_PTR_ERROR):
                torch.fx.experimental.proxy_tensor.make_fx(wrap(op), tracing_mode=mode)(torch.randn(3))
