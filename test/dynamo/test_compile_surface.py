"""What users reach through torch.compile beyond plain operators: custom operators
(torch.library.custom_op) and the errors eager raises on bad indices.

* ``CustomOpTests``: a custom operator reaches the backend as a call of its own, which the
  backend must run with the operator's real kernel (its fake rule gives shapes, not values),
  with its writes into inputs (through AOTAutograd's auto_functionalized) and its registered
  gradient.
* ``HigherOrderOpTests``: torch.cond's branches, chosen by data, and activation checkpointing
  reach the backend as higher-order operators, whose subgraphs it must run (and differentiate)
  as eager does; a checkpointed block keeps none of its activations for the backward.
* ``IndexErrorTests``: an index past the end raises in eager PyTorch, and must in the compiled
  code too; a negative index counts from the end; so do the values a kernel's own check
  rejects (a target outside [0, 1], a negative beta). A kernel that skips the check returns
  garbage instead (pytorch#197554: "[PT2] Validation lost").

* ``ControlFlowTests``: while_loop, scan and map run their subgraphs as many times as the
  data says; a while_loop that never steps returns copies, not what it was given; the
  parameters a scan's body closes over get their gradients; a checkpointed block with dropout
  draws the same mask when recomputed.
* ``AutogradFunctionTests``: a torch.autograd.Function's own backward (straight-through,
  from saved inputs and outputs, once_differentiable), not its forward's derivative: each
  backward differs from the derivative on purpose; a once_differentiable backward is not
  differentiated a second time.
* ``DataDependentSizeTests``: nonzero, masked_select and .item() sizes, captured by Dynamo as
  unbacked sizes: one graph, right (gradients too) for every call's count.

The higher-order operators are compared with the same computation written with Python's if,
while and for: torch.cond, while_loop, scan and map called eagerly are themselves traced by
Dynamo (on torch 2.13), so they would share a tracing fault with the compiled side. Every
comparison outside IndexErrorTests (``_same_as_eager``) checks outputs, inputs after the call and gradients, and then the
outputs' strides, their aliasing of inputs and of each other, and their autograd metadata, as
the backend contract does (docs/checks.md, "The compile surface").

test/proofs/test_mutation_faults.py shows each family failing on a mutant that breaks its
clause (a custom operator's result perturbed, a control-flow operator's result perturbed;
indices clamped; negative indices read as 0).
test/proofs/test_compile_surface_faults.py shows the claims above failing on backends that get
one higher-order operator wrong (a Function's forward differentiated, a checkpoint's
activations kept, control flow's backward off, a loop that never steps giving back its
inputs, a scan's closure detached) and on a Dynamo that splits at data-dependent sizes.
"""

from __future__ import annotations

import contextlib
import copy
import re

import numpy as np
import torch
import torch.nn.functional as F
import torch.utils.checkpoint
from parameterized import parameterized

from harness import (
    BackendTestCase,
    assert_close,
    assert_same_aliasing,
    assert_same_autograd_metadata,
    assert_same_outputs_and_grads,
    assert_same_strides,
    capabilities,
    clone_inputs,
    compat,
    for_each_backend,
    needs,
    opcheck,
    state,
)

_NAMESPACE = "dynamo_suite_surface"


def _same_as_eager(test, fn, compiled, args) -> tuple:
    """harness's comparison of outputs, inputs after the call and gradients, then, on the same
    two calls, what the backend contract checks beyond values: the outputs' strides, which
    inputs and other outputs they alias, and their autograd metadata (grad_fn, is_leaf)."""
    calls = {}

    def recorded(side, function):
        def call(*call_args):
            calls[side] = call_args, function(*call_args)
            return calls[side][1]

        return call

    expected, actual = assert_same_outputs_and_grads(test, recorded("eager", fn), recorded("compiled", compiled), args)
    (eager_args, _), (compiled_args, _) = calls["eager"], calls["compiled"]
    assert_same_autograd_metadata(test, expected, actual)
    assert_same_strides(test, expected, actual)
    assert_same_aliasing(test, eager_args, expected, compiled_args, actual)
    return expected, actual


@torch.library.custom_op(f"{_NAMESPACE}::soft_clip", mutates_args=())
def soft_clip(x: torch.Tensor, limit: float) -> torch.Tensor:
    return limit * torch.tanh(x / limit)


@soft_clip.register_fake
def _(x, limit):
    return torch.empty_like(x)


@torch.library.custom_op(f"{_NAMESPACE}::scale_into", mutates_args=("out",))
def scale_into(x: torch.Tensor, out: torch.Tensor, factor: float) -> None:
    out.copy_(x * factor)


@scale_into.register_fake
def _(x, out, factor):
    return None


@torch.library.custom_op(f"{_NAMESPACE}::split_signs", mutates_args=())
def split_signs(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x.clamp(min=0), x.clamp(max=0)


@split_signs.register_fake
def _(x):
    return torch.empty_like(x), torch.empty_like(x)


@torch.library.custom_op(f"{_NAMESPACE}::cube", mutates_args=())
def cube(x: torch.Tensor) -> torch.Tensor:
    return x ** 3


@cube.register_fake
def _(x):
    # Shapes and dtype only; a backend that ran this instead of the kernel would give zeros.
    return torch.zeros_like(x)


def _cube_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _cube_backward(ctx, grad):
    x, = ctx.saved_tensors
    return grad * 3 * x ** 2


cube.register_autograd(_cube_backward, setup_context=_cube_setup)


@for_each_backend
class CustomOpTests(BackendTestCase):
    """Custom operators: their own kernels, writes and gradients, as eager runs them."""

    def test_functional_custom_op(self):
        def fn(x):
            return soft_clip(x * 2, 1.5) + x

        _same_as_eager(self, fn, self.compile(fn), [torch.randn(4, 5)])

    def test_custom_op_writing_into_an_input(self):
        def fn(x, out):
            scale_into(x.sin(), out, 3.0)
            return out + 1, out[::2]  # the second a view of the input written into: it must stay one

        _same_as_eager(self, fn, self.compile(fn), [torch.randn(6), torch.zeros(6)])

    def test_custom_op_with_several_outputs(self):
        def fn(x):
            positive, negative = split_signs(x)
            return (positive * 2 - negative).t(), negative.sum()  # transposed: its strides are eager's

        _same_as_eager(self, fn, self.compile(fn), [torch.randn(3, 4)])

    def test_custom_op_gradient_and_real_kernel(self):
        def fn(x):
            return cube(x).sum() + cube(x * 0.5).mean()

        _same_as_eager(self, fn, self.compile(fn), [torch.randn(5, requires_grad=True)])


def _branches(x, scale):
    return torch.cond(x.sum() > 0, lambda y, s: (y.sin() * s).cumsum(0), lambda y, s: y.cos() - s, (x, scale))


def _branches_in_python(x, scale):
    """``_branches`` with Python's if: the reference."""
    if x.sum() > 0:
        return (x.sin() * scale).cumsum(0)
    return x.cos() - scale


def _checkpointed_block(x, w):
    # Its activations ((8, 16, 32): 4096 elements) are 8 times its largest input (w, 512):
    # a backward that keeps them instead of recomputing them shows in what autograd saves.
    return (x[:, :, None] * w).tanh().sum(1)


def _checkpointed(x, w):
    return torch.utils.checkpoint.checkpoint(_checkpointed_block, x, w, use_reentrant=False).cos()


class _Flagged(torch.nn.Module):
    def __init__(self, flag: bool) -> None:
        super().__init__()
        self.flag = flag


@for_each_backend
class HigherOrderOpTests(BackendTestCase):
    """Control flow and checkpointing: subgraphs the backend runs as eager would."""

    def test_cond_takes_the_branch_the_data_chooses(self):
        # fullgraph: a backend failing to compile cond (or its backward) would otherwise have
        # Dynamo run it eagerly, and the comparison would be eager's against eager's.
        compiled = self.compile(_branches, fullgraph=True)
        for sign in (1.0, -1.0, 1.0):
            x = ((torch.rand(6) + 0.1) * sign).requires_grad_()
            _same_as_eager(self, _branches_in_python, compiled, [x, torch.tensor(1.5, requires_grad=True)])
        self.assertEqual(self.graphs_received, 1, "the branch was not chosen by the data in one graph")

    def test_nested_compile_regions_read_what_they_are_given(self):
        """A region nested in a region, each call given another object: the inner one's
        branch on its argument's attribute is guarded, not baked into the outer body
        (pytorch#192905)."""
        region = torch.compiler.nested_compile_region

        @region
        def inner(layer, x):
            return x.sin() if layer.flag else x.cos()

        @region
        def outer(layer, x):
            return inner(layer, x) + 1.0

        layers = [_Flagged(flag) for flag in (True, False, True, False)]

        def fn(x):
            return sum(outer(layer, x) for layer in layers)

        _same_as_eager(self, fn, self.compile(fn, fullgraph=True), [torch.randn(8, requires_grad=True)])

    def test_checkpointed_block_recomputes_its_forward(self):
        args = [torch.randn(8, 16, requires_grad=True), torch.randn(16, 32, requires_grad=True)]
        compiled = self.compile(_checkpointed)
        _same_as_eager(self, _checkpointed, compiled, args)
        # What the call keeps for its backward, as autograd's saved-tensor hooks see it (eager
        # keeps x alone: its checkpoint saves through hooks of its own). The block's inputs
        # may be kept; anything larger is an activation the backward should have recomputed.
        # What a backend keeps outside autograd's saved tensors is not seen here.
        saved = []
        with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(tuple(t.shape)) or t, lambda t: t):
            compiled(*clone_inputs(args))
        largest_input = max(arg.numel() for arg in args)
        kept = [shape for shape in saved if torch.Size(shape).numel() > largest_input]
        self.assertEqual(kept, [], f"the backward keeps tensors larger than the checkpointed block's inputs "
                                   f"({largest_input} elements): its activations, not recomputed (saved: {saved})")


# Each indexing call with its valid indices, then with one past the end.
_OUT_OF_RANGE = (
    ("advanced indexing", lambda x, index: x[index] * 2),
    ("index_select", lambda x, index: x.index_select(0, index) + 1),
    ("gather", lambda x, index: x.gather(0, index.unsqueeze(1).expand(-1, x.shape[1])) * 3),
    ("embedding", lambda x, index: F.embedding(index, x).sum(1)),
    ("scatter_add", lambda x, index: torch.zeros_like(x).index_add(0, index, x[: index.numel()])),
)
_INDEX_ERROR = re.compile(r"out of (range|bounds)|index .* is out|invalid index|IndexError|srcIndex < srcSelectDimSize",
                          re.IGNORECASE)


# Values eager rejects in a kernel's own check, each with values it accepts first, and the
# exception eager raises (its type, and the core of its message): the instances pytorch#197554
# ("[PT2] Validation lost") collects, and an assertion on data. Each rejected call runs the
# graph the accepted one compiled, except smooth_l1_loss's: Dynamo specializes a kernel's
# Python-number argument (beta), even read from a tensor with .item(), so a new beta is a new
# graph, which the backend must compile into code that raises eager's error.
_REJECTED_VALUES = (
    ("binary_cross_entropy_target", "binary_cross_entropy, a target outside [0, 1] (pytorch#193757)",
     lambda p, target: F.binary_cross_entropy(p, target),
     lambda: [torch.tensor([0.2, 0.7, 0.5]), torch.tensor([0.0, 1.0, 0.3])],
     lambda: [torch.tensor([0.2, 0.7, 0.5]), torch.tensor([0.0, 1.5, 0.3])],
     RuntimeError, r"target should be between 0 and 1"),
    ("smooth_l1_loss_beta", "smooth_l1_loss, a negative beta (pytorch#194501)",
     lambda x, y, beta: F.smooth_l1_loss(x, y, beta=beta),
     lambda: [torch.randn(4), torch.randn(4), 1.0],
     lambda: [torch.randn(4), torch.randn(4), -1.0],
     RuntimeError, r"negative values for beta"),
    ("bernoulli_probability", "bernoulli, a probability past 1 (pytorch#185246)",
     lambda p: torch.bernoulli(p).sum() * 0,
     lambda: [torch.tensor([0.2, 0.9])],
     lambda: [torch.tensor([0.2, 1.5])],
     RuntimeError, r"p_in >= 0 && p_in <= 1"),
    ("index_add_negative_index", "index_add, a negative index (pytorch#185885)",
     lambda x, index: torch.zeros(3).index_add(0, index, x),
     lambda: [torch.ones(2), torch.tensor([2, 0])],
     lambda: [torch.ones(2), torch.tensor([-1, 0])],
     IndexError, r"index out of range"),
    ("assert_async", "torch._assert_async on the data",
     lambda x: (torch._assert_async(x.max() < 10, "too large"), x * 2)[1],
     lambda: [torch.tensor([1.0, 3.0])],
     lambda: [torch.tensor([1.0, 30.0])],
     RuntimeError, r"too large"),
    ("normal_negative_std", "normal, a negative standard deviation (pytorch#185248)",
     lambda mean, std: torch.normal(mean, std).sum() * 0,
     lambda: [torch.zeros(4), torch.full((4,), 1.0)],
     lambda: [torch.zeros(4), torch.full((4,), -1.0)],
     RuntimeError, r"std >= 0"),
    ("upsample_bilinear_integer_input", "upsample_bilinear2d of an int32 tensor (pytorch#193811)",
     lambda x: torch.ops.aten.upsample_bilinear2d(x, [4, 6], False, None, None),
     lambda: [torch.randn(1, 2, 2, 3)],
     lambda: [torch.arange(12, dtype=torch.int32).reshape(1, 2, 2, 3)],
     NotImplementedError, r"not implemented for 'Int'"),
)
# Rejected values of another dtype fail a guard: Dynamo traces them as a new graph.
_REJECTED_IN_A_NEW_GRAPH = frozenset({"smooth_l1_loss_beta", "upsample_bilinear_integer_input"})


@for_each_backend
class IndexErrorTests(BackendTestCase):
    """Indices past the end raise as in eager; negative ones count from the end."""

    def test_indices_past_the_end_raise(self):
        x = torch.randn(5, 3)
        for name, fn in _OUT_OF_RANGE:
            with self.subTest(call=name):
                compiled = self.compile(fn)
                valid = torch.tensor([0, 4, 2])
                assert_same_outputs_and_grads(self, fn, compiled, [x, valid])  # compiles it, with valid indices
                bad = torch.tensor([0, 5, 2])
                with self.assertRaises(Exception, msg="eager raises on this index") as eager:
                    fn(x, bad)
                with self.assertRaises(Exception, msg=f"{name}: an index past the end gave a result where eager "
                                                      f"raises {type(eager.exception).__name__}") as compiled_error:
                    compiled(x, bad)
                self.assertRegex(f"{type(compiled_error.exception).__name__}: {compiled_error.exception}", _INDEX_ERROR,
                                 f"{name}: the compiled call raised something else than an index error")

    def test_negative_indices_count_from_the_end(self):
        def fn(x, index):
            return x[index] * 2, x[:, index[:2]].sum(1)

        assert_same_outputs_and_grads(self, fn, self.compile(fn),
                                      [torch.randn(6, 6, requires_grad=True), torch.tensor([-1, 0, -3, 2])])

    @parameterized.expand(_REJECTED_VALUES)
    def test_values_eager_rejects_raise(self, key, name, fn, valid, rejected, error_type, core):
        """A call compiled on values eager accepts, then called with values it rejects: the
        check is the kernel's, so the code the backend compiled must make it on every call,
        raising eager's exception (its type, its message's core), not any."""
        compiled = self.compile(fn)
        assert_same_outputs_and_grads(self, fn, compiled, valid())  # compiles it
        check_raises_as_eager(self, name, fn, compiled, rejected, error_type, core,
                              new_graph=key in _REJECTED_IN_A_NEW_GRAPH)

    def test_an_error_inside_autocast_leaves_autocast_off(self):
        """An index past the end inside ``with torch.autocast(...)``: the caller catches the
        error, and autocast must be off again, as eager's ``with`` leaves it (pytorch#195488:
        the block's exit is not run when the graph raises)."""
        def fn(x, index):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return x.index_select(0, index) @ x

        compiled = self.compile(fn, fullgraph=True)
        x = torch.randn(4, 4)
        assert_same_outputs_and_grads(self, fn, compiled, [x, torch.tensor([1, 2])])  # compiles it
        for call in range(2):
            with self.assertRaises(Exception, msg="an index past the end gave a result where eager raises"):
                compiled(x, torch.tensor([99]))
            # Exiting the block turns autocast off and leaves its nesting (whose end empties the
            # cast cache) where it was: 0.
            enabled, nesting = torch.is_autocast_enabled("cpu"), state.autocast_nesting()
            torch.set_autocast_enabled("cpu", False)  # the next test's state, whatever this one found
            for _ in range(nesting):
                torch.autocast_decrement_nesting()
            self.assertEqual((enabled, nesting), (False, 0), f"call {call + 1}: autocast (enabled, nesting) after the "
                                                             f"compiled call raised inside its with-block")

    def test_in_place_on_a_leaf_that_requires_grad_raises(self):
        """Compiled on a leaf that needs no grad, the write reaches the backend and must land;
        called with a leaf that requires grad, Dynamo's guard on requires_grad fails and its
        new trace raises eager's error (torch.compile documents no other way: the backend never
        sees that call), which must still be eager's RuntimeError."""
        def fn(x):
            x.add_(1)
            return x * 2

        with self.assertRaisesRegex(RuntimeError, _LEAF_IN_PLACE) as eager:
            fn(torch.randn(3, requires_grad=True))
        compiled = self.compile(fn)
        assert_same_outputs_and_grads(self, fn, compiled, [torch.randn(3)])  # compiles it; the write compared
        graphs = self.graphs_received
        with self.assertRaises(Exception, msg="an in-place write into a leaf that requires grad gave a result") as caught:
            compiled(torch.randn(3, requires_grad=True))
        self.assertTrue(opcheck.EagerError(RuntimeError, _LEAF_IN_PLACE, str(eager.exception)).raised_like(caught.exception),
                        f"raised something else than eager's RuntimeError: {type(caught.exception).__name__}: "
                        f"{caught.exception}")
        self.assertEqual(self.graphs_received, graphs, "Dynamo rejects this call while tracing, before any backend")


    def test_a_saved_input_modified_before_backward_raises(self):
        """An input the graph saves for backward, written in place between the call and the
        backward: eager's backward refuses the stale value (autograd's version check on saved
        tensors), and a compiled one must too, not compute gradients from the new values."""
        self.check_saved_input_modified(lambda x, w: (x * w).sum(), lambda: (torch.randn(3), torch.randn(3)))

    def test_a_saved_input_of_a_matmul_modified_before_backward_raises(self):
        # pytorch#197887: the matmul's saved input is a graph input, saved as a view of it
        self.check_saved_input_modified(lambda x, w: x @ w, lambda: (torch.randn(2, 3), torch.randn(3, 3)))

    def check_saved_input_modified(self, fn, make) -> None:
        def modified_before_backward(call):
            x, w = make()
            loss = call(x, w.requires_grad_())
            x.mul_(3)
            loss.sum().backward()

        with self.assertRaisesRegex(RuntimeError, _SAVED_MODIFIED) as eager:
            modified_before_backward(fn)
        with self.assertRaises(Exception, msg="backward used a saved input written after the call") as caught:
            modified_before_backward(self.compile(fn))
        self.assertTrue(opcheck.EagerError(RuntimeError, _SAVED_MODIFIED, str(eager.exception)).raised_like(caught.exception),
                        f"raised something else than eager's RuntimeError: {type(caught.exception).__name__}: "
                        f"{caught.exception}")


_LEAF_IN_PLACE = r"a leaf Variable that requires grad is being used in an in-place operation"
_SAVED_MODIFIED = r"one of the variables needed for gradient computation has been modified by an inplace operation"


def check_raises_as_eager(testcase, name: str, fn, compiled, rejected, error_type: type, core: str, *,
                          new_graph: bool = False) -> None:
    """``compiled`` (compiled from ``fn`` on accepted values) called with ``rejected()`` raises
    as eager does: an exception of ``error_type`` whose message matches ``core`` (through
    Dynamo's wrapping: compat.exception_chain), eager's own checked against the same. From the
    code compiled before, recompiles refused; with ``new_graph`` (the values are a new graph
    whatever the backend does), from the new graph the backend received."""
    with testcase.assertRaises(Exception, msg="eager raises on these values") as eager:
        fn(*rejected())
    testcase.assertTrue(isinstance(eager.exception, error_type) and re.search(core, str(eager.exception)),
                        f"eager raised {type(eager.exception).__name__}: {eager.exception}, not {error_type.__name__} "
                        f"matching {core!r}: the test's data is stale")
    expected = opcheck.EagerError(error_type, core, str(eager.exception))
    graphs = testcase.graphs_received
    try:
        with contextlib.nullcontext() if new_graph else compat.recompiles_refused():
            compiled(*rejected())
    except Exception as error:  # noqa: BLE001 -- eager's error, or something else
        if compat.refused_recompile(error):
            testcase.fail(f"{name}: the rejected values need a new graph (guards failed), so the code compiled "
                          f"before was not tried: {error}")
        if not expected.raised_like(error):
            raise AssertionError(f"{name}: raised something else than eager's {error_type.__name__} "
                                 f"({core}): {type(error).__name__}: {error}") from error
    else:
        testcase.fail(f"{name}: gave a result where eager raises {type(eager.exception).__name__}: {eager.exception}")
    if new_graph:
        testcase.assertGreater(testcase.graphs_received, graphs, f"{name}: Dynamo raised before the backend got the "
                                                                 "new graph, so the backend was not tried")


# -- control flow beyond cond, and checkpointing with randomness -----------------------------------


def _counted_loop(x, steps):
    while_loop = compat.control_flow_operator("while_loop")
    return while_loop(lambda i, y: i < steps, lambda i, y: (i + 1, y.sin() + y * 0.5), (torch.zeros((), dtype=torch.int64), x))


def _running_sum(x):
    scan = compat.control_flow_operator("scan")
    return scan(lambda carry, row: (carry + row, (carry * row).tanh()), torch.zeros_like(x[0]), x)


def _each_row(x, w):
    rows = compat.control_flow_operator("map")
    return rows(lambda row, weight: (row @ weight).relu(), x, w)


# The same computations with Python's while and for: the references.


def _counted_loop_in_python(x, steps):
    i, y = torch.zeros((), dtype=torch.int64), x
    while i < steps:
        i, y = i + 1, y.sin() + y * 0.5
    return i, y


def _running_sum_in_python(x):
    carry, rows = torch.zeros_like(x[0]), []
    for row in x:
        carry, out = carry + row, (carry * row).tanh()
        rows.append(out)
    return carry, torch.stack(rows)


def _each_row_in_python(x, w):
    return torch.stack([(row @ w).relu() for row in x])


def _loop_never_entered(x, steps):
    while_loop = compat.control_flow_operator("while_loop")
    h = x.sin()
    _, y, z = while_loop(lambda i, y, z: i < steps, lambda i, y, z: (i + 1, y * 2, z.cos()),
                         (torch.zeros((), dtype=torch.int64), x, h))
    # Each carried value and the tensor it was carried from written in place, the output
    # first: where an output is its input, both writes land in the one tensor.
    y.add_(1)
    x.mul_(-1)
    z.mul_(3)
    h.sub_(0.5)
    return y, z, h


def _loop_never_entered_in_python(x, steps):
    # while_loop's outputs are never its inputs, even after no step (its eager kernel copies
    # them): the copies stand for that.
    i, h = torch.zeros((), dtype=torch.int64), x.sin()
    y, z = x.clone(), h.clone()
    while i < steps:
        i, y, z = i + 1, y * 2, z.cos()
    y.add_(1)
    x.mul_(-1)
    z.mul_(3)
    h.sub_(0.5)
    return y, z, h


class _StackedRecurrence(torch.nn.Module):
    """Layers of a recurrence, each one scan over time whose body closes over that layer's
    slice of stacked parameters and over a scalar shared by all; the second layer scans the
    first's outputs (pytorch#153679), and the carry starts from zeros that need no gradient
    (pytorch#184528)."""

    def __init__(self, layers: int = 2, width: int = 4) -> None:
        super().__init__()
        self.weights = torch.nn.Parameter(torch.randn(layers, width, width) * 0.5)
        self.biases = torch.nn.Parameter(torch.randn(layers, width))
        self.decay = torch.nn.Parameter(torch.tensor(0.7))

    def step(self, layer: int, h, row):
        return torch.tanh(row @ self.weights[layer] + self.decay * h + self.biases[layer])

    def forward(self, x):
        scan = compat.control_flow_operator("scan")
        for layer in range(len(self.weights)):
            def body(h, row, layer=layer):
                h = self.step(layer, h, row)
                return h.clone(), h.clone()

            h, x = scan(body, torch.zeros_like(x[0]), x)
        return h, x

    def in_python(self, x):
        """``forward`` with Python's for: the reference."""
        for layer in range(len(self.weights)):
            h, rows = torch.zeros_like(x[0]), []
            for row in x:
                h = self.step(layer, h, row)
                rows.append(h)
            x = torch.stack(rows)
        return h, x


def _needs(name: str):
    """Skips a test where this torch has no control-flow operator called ``name``."""
    def wrap(test):
        def run(self):
            if compat.control_flow_operator(name) is None:
                self.skipTest(f"torch {torch.__version__} has no {name}")
            test(self)

        run.__name__, run.__doc__ = test.__name__, test.__doc__
        return run

    return wrap


# NumPy code in a compiled function: Dynamo traces it into torch (torch._numpy), and the
# arrays it returns must hold NumPy's own values and dtypes. Rounding toward zero, odd roots
# and the sign of NaN are where torch's and NumPy's functions part (pytorch#198052).
_NUMPY_FUNCTIONS = (
    ("fix", lambda a: np.fix(a)),
    ("cbrt", lambda a: np.cbrt(a)),
    ("sign", lambda a: np.sign(a)),
    ("trunc_and_floor", lambda a: np.trunc(a) + 10 * np.floor(a)),
    ("floor_division_by_a_float", lambda a: a // 2.0),
)
_NUMPY_VALUES = np.array([1.5, -1.5, -8.0, np.nan, 0.0, -0.0, 2.5, -2.5, np.inf], dtype=np.float32)


@for_each_backend
class NumpyCodeTests(BackendTestCase):
    """A compiled function of NumPy arrays returns what NumPy returns."""

    @parameterized.expand(_NUMPY_FUNCTIONS)
    def test_numpy_function(self, _name, fn):
        with np.errstate(all="ignore"):
            expected = fn(_NUMPY_VALUES.copy())
            actual = self.compile(fn)(_NUMPY_VALUES.copy())
        self.assertIsInstance(actual, np.ndarray, f"the result is a {type(actual).__name__}, NumPy's an ndarray")
        self.assertEqual(actual.dtype, expected.dtype, "the result's dtype")
        close = np.isclose(actual, expected, rtol=1e-6, atol=0, equal_nan=True)
        if not close.all():
            self.fail(f"NumPy gives {expected[~close].tolist()} where the compiled call gives {actual[~close].tolist()}, "
                      f"for {_NUMPY_VALUES[~close].tolist()}")


@for_each_backend
class ControlFlowTests(BackendTestCase):
    """while_loop, scan and map reach the backend as higher-order operators whose subgraphs it
    runs as many times as the data says, zero included, and differentiates with respect to
    what they close over; a checkpointed block with dropout in it is run again in the
    backward, drawing the mask it drew in the forward."""

    @_needs("while_loop")
    def test_while_loop_runs_as_many_steps_as_the_data_says(self):
        compiled = self.compile(_counted_loop)
        for steps in (3, 1, 5):
            _same_as_eager(self, _counted_loop_in_python, compiled, [torch.randn(4), torch.tensor(steps)])

    @_needs("while_loop")
    def test_while_loop_gradients_go_back_through_every_step(self):
        # fullgraph: where the backend cannot compile the loop's backward, Dynamo would run the
        # loop eagerly instead (a graph break), and the gradients compared would be eager's.
        compiled = self.compile(_counted_loop, fullgraph=True)
        for steps in (3, 1):
            _same_as_eager(self, _counted_loop_in_python, compiled,
                           [torch.randn(4, requires_grad=True), torch.tensor(steps)])

    @_needs("scan")
    def test_scan_carries_its_state_from_row_to_row(self):
        _same_as_eager(self, _running_sum_in_python, self.compile(_running_sum),
                       [torch.randn(5, 3, requires_grad=True)])

    @_needs("while_loop")
    def test_while_loop_that_never_steps_returns_copies(self):
        """A condition false on entry: the outputs are copies of the carried values, so writing
        them in place leaves the tensors they were carried from alone (pytorch#146213)."""
        compiled = self.compile(_loop_never_entered, fullgraph=True)
        for steps in (0, 2, 0):
            _same_as_eager(self, _loop_never_entered_in_python, compiled, [torch.randn(3, 2), torch.tensor(steps)])

    @_needs("scan")
    def test_scan_gradients_reach_the_parameters_its_body_closes_over(self):
        model = _StackedRecurrence()
        reference = copy.deepcopy(model)
        # fullgraph: a scan Dynamo gave up on would run eagerly, and its gradients be eager's.
        _same_as_eager(self, reference.in_python, self.compile(model, fullgraph=True), [torch.randn(5, 3, 4)])
        for (name, want), got in zip(reference.named_parameters(), model.parameters()):
            self.assertIsNotNone(got.grad, f"{name}, closed over by the scan body, got no gradient")
            assert_close(self, want.grad, got.grad, what=f"grad of {name}, closed over by the scan body")

    @_needs("map")
    def test_map_applies_its_body_to_each_row(self):
        _same_as_eager(self, _each_row_in_python, self.compile(_each_row),
                       [torch.randn(4, 3, requires_grad=True), torch.randn(3, 2, requires_grad=True)])

    def test_checkpointed_dropout_draws_the_same_mask_again(self):
        def block(x, w):
            return F.dropout(x * w, p=0.5, training=True)

        def fn(x, w):
            return torch.utils.checkpoint.checkpoint(block, x, w, use_reentrant=False)

        x, w = torch.rand(64) + 0.5, torch.rand(64, requires_grad=True)
        out = self.compile(fn)(x, w)
        out.sum().backward()
        # The gradient of w is x / (1 - p) where the forward kept an element, 0 where it
        # dropped it: a recomputation drawing another mask breaks that, whatever the draws.
        kept = out.detach() != 0
        self.assertTrue(0 < int(kept.sum()) < 64, "dropout kept all or nothing")
        torch.testing.assert_close(w.grad, torch.where(kept, x * 2, torch.zeros(())),
                                   msg=lambda text: f"the recomputed forward dropped other elements: {text}")


# -- autograd.Function ---------------------------------------------------------------------------------


class _RoundStraightThrough(torch.autograd.Function):
    """Rounds to quarters; its backward passes the gradient through as if it did not (the
    straight-through estimator): not the derivative of its forward, which is 0."""

    @staticmethod
    def forward(ctx, x):
        return torch.round(x * 4) / 4

    @staticmethod
    def backward(ctx, grad):
        return grad


# Each backward below differs from its forward's derivative on purpose, as the backwards users
# write do (estimators, clipping, reversal): a backend that differentiated the forward instead
# of running the backward gives other gradients.


class _ScaledExp(torch.autograd.Function):
    """exp(x) * scale, its backward from the output it saved: damped, out / (1 + out) where the
    derivative is out."""

    @staticmethod
    def forward(ctx, x, scale: float):
        out = torch.exp(x) * scale
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * out / (1 + out), None


class _Product(torch.autograd.Function):
    """x * y from its saved inputs, reversing y's gradient (a gradient-reversal layer's trick)."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return grad * y, -grad * x


class _OnceCubed(torch.autograd.Function):
    """x ** 3 with a clipped derivative, its backward not differentiable itself."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return (grad * 3 * x ** 2).clamp(-1, 1)


def _once_cubed(x):
    # Times x: the gradient reaching the Function depends on x, so a second backward has to
    # go through the Function's backward (with a constant factor it would not).
    return _OnceCubed.apply(x.sin()) * x


class _DoubledInPlace(torch.autograd.Function):
    """Writes its input in place and says so (mark_dirty): the input is the output. Its
    backward is its own, not the derivative: the gradient passes through unscaled."""

    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


class _SeesUnusedGradients(torch.autograd.Function):
    """Two outputs, gradients not materialized: the backward sees None for an output the loss
    did not use, and says so in what it returns."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, grad_first, grad_second):
        unused = torch.full_like(grad_first, 7.0) if grad_second is None else grad_second * 3
        return grad_first * 2 + unused


class _SinWithZeroTangent(torch.autograd.Function):
    """sin whose forward-mode derivative and backward are the user's own: zero."""

    @staticmethod
    def forward(x):
        return torch.sin(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(*inputs)
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad):
        return torch.zeros_like(grad)

    @staticmethod
    def jvp(ctx, tangent):
        return torch.zeros_like(tangent)


@for_each_backend
class AutogradFunctionTests(BackendTestCase):
    """A torch.autograd.Function's backward is its own, not the derivative of its forward:
    the backend's backward runs what the user wrote, from what the forward saved."""

    def test_in_place_forward_marked_dirty(self):
        def fn(x):
            return _DoubledInPlace.apply(x * 1).sin()

        _same_as_eager(self, fn, self.compile(fn), [torch.randn(4, requires_grad=True)])

    def test_applied_to_one_tensor_in_two_slots(self):
        # x * x by a Function that reverses its second factor's gradient: the two slots'
        # gradients cancel where one tensor fills both
        def fn(x):
            return _Product.apply(x, x).sum() + x.sum()

        _same_as_eager(self, fn, self.compile(fn), [torch.randn(4, requires_grad=True)])

    def test_gradients_not_materialized(self):
        # pytorch#118396: set_materialize_grads(False) leaves an unused output's gradient None
        def fn(x):
            first, _ = _SeesUnusedGradients.apply(x)
            return first.sum()

        _same_as_eager(self, fn, self.compile(fn), [torch.randn(4, requires_grad=True)])

    def test_forward_mode_derivative_is_the_functions_own(self):
        """torch.func.jvp of a Function with its own jvp: the tangent is that jvp's, not the
        derivative of its forward (pytorch#192985)."""
        def fn(x, tangent):
            return torch.func.jvp(_SinWithZeroTangent.apply, (x,), (tangent,))

        x, tangent = torch.randn(4), torch.randn(4)
        expected, actual = fn(x, tangent), self.compile(fn)(x, tangent)
        assert_close(self, expected[0], actual[0], what="primal output")
        assert_close(self, expected[1], actual[1], what="tangent (the Function's jvp gives zeros)")

    def test_straight_through_backward_is_the_functions_own(self):
        def fn(x):
            return (_RoundStraightThrough.apply(x) * x).sum()

        _same_as_eager(self, fn, self.compile(fn), [torch.randn(8, requires_grad=True)])

    def test_backward_from_saved_inputs_and_outputs(self):
        def fn(x, y):
            return _ScaledExp.apply(x, 0.5) + _Product.apply(x, y.cos())

        _same_as_eager(self, fn, self.compile(fn),
                       [torch.randn(3, 4, requires_grad=True), torch.randn(3, 4, requires_grad=True)])

    def test_once_differentiable_backward(self):
        _same_as_eager(self, _once_cubed, self.compile(_once_cubed), [torch.randn(6, requires_grad=True)])

    @needs(capabilities.DOUBLE_BACKWARD)
    def test_once_differentiable_backward_is_not_differentiated_again(self):
        x = torch.randn(6, requires_grad=True)
        grad, = torch.autograd.grad(_once_cubed(x).sum(), x, create_graph=True)
        with self.assertRaisesRegex(RuntimeError, compat.ONCE_DIFFERENTIABLE_ERROR, msg="eager refuses it"):
            grad.sum().backward()
        grad, = torch.autograd.grad(self.compile(_once_cubed)(x).sum(), x, create_graph=True)
        # An AOTAutograd backend refuses every second backward, with its own error; any
        # other must refuse this one as eager does, not compute a second-order gradient.
        refusal = compat.DOUBLE_BACKWARD_ERROR if self.uses_aot_autograd else compat.ONCE_DIFFERENTIABLE_ERROR
        with self.assertRaisesRegex(RuntimeError, refusal, msg="a once_differentiable backward was differentiated"):
            grad.sum().backward()


# -- sizes that depend on the data ---------------------------------------------------------------------


def _positives(x):
    picked = x[x > 0]  # masked_select: as many as the data has
    where = torch.nonzero(x > 0)
    return picked * 2, where.sum(0), picked.numel() + where.shape[0]


def _item_sized(x):
    count = (x > 0).sum().item()
    torch._check(count <= x.numel())
    return torch.arange(count, dtype=x.dtype) * x.max()


def _at_most_three(x):
    steps = x[0].int().item()
    torch._check(steps <= 3, lambda: "at most three steps")
    return x * steps


@for_each_backend
class DataDependentSizeTests(BackendTestCase):
    """nonzero, masked_select and a size read with .item() give outputs whose size the data
    decides: with Dynamo capturing them, one graph over unbacked sizes serves every call."""

    def check_calls(self, fn, inputs) -> None:
        with compat.dynamo_config_patch(capture_dynamic_output_shape_ops=True, capture_scalar_outputs=True):
            compiled = self.compile(fn)
            for x in inputs:
                _same_as_eager(self, fn, compiled, [x.requires_grad_()])
        self.assertEqual(self.graphs_received, 1, f"{len(inputs)} calls with different counts: the data-dependent "
                                                  f"size was not captured once, as an unbacked size")

    def test_nonzero_and_masked_select_sizes_from_the_data(self):
        self.check_calls(_positives, [torch.tensor([1.0, -2.0, 3.0, 0.5]), torch.tensor([-1.0, -2.0, 3.0, -0.5]),
                                      torch.tensor([2.0, 2.0, 3.0, 0.5])])

    def test_a_size_read_with_item_and_checked(self):
        self.check_calls(_item_sized, [torch.tensor([1.0, -2.0, 3.0]), torch.tensor([-1.0, -2.0, 4.0]),
                                       torch.tensor([1.0, 2.0, 3.0])])

    def test_a_check_the_data_breaks_raises(self):
        # torch._check on a data-dependent value is a runtime assert in the graph the backend
        # receives (_assert_scalar): the compiled code must make it on every call.
        with compat.dynamo_config_patch(capture_scalar_outputs=True):
            compiled = self.compile(_at_most_three)
            assert_same_outputs_and_grads(self, _at_most_three, compiled, [torch.tensor([1.0, 2.0, -1.0])])
            # Eager's message, or the checked condition where the runtime assert's message is
            # that (inductor's): a RuntimeError either way, from the graph compiled above.
            check_raises_as_eager(self, "a torch._check the data breaks", _at_most_three, compiled,
                                  lambda: [torch.tensor([4.0, 2.0, 1.0])], RuntimeError,
                                  rf"at most three steps|{compat.UNBACKED_SYMBOL} <= 3")
