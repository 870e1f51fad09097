"""What users reach through torch.compile beyond plain operators: custom operators
(torch.library.custom_op) and the errors eager raises on bad indices.

* ``CustomOpTests``: a custom operator reaches the backend as a call of its own, which the
  backend must run with the operator's real kernel (its fake rule gives shapes, not values),
  with its writes into inputs (through AOTAutograd's auto_functionalized) and its registered
  gradient.
* ``HigherOrderOpTests``: torch.cond's branches, chosen by data, and activation checkpointing
  reach the backend as higher-order operators, whose subgraphs it must run as eager does.
* ``IndexErrorTests``: an index past the end raises in eager PyTorch, and must in the compiled
  code too; a negative index counts from the end. A kernel that skips the check returns
  garbage instead (pytorch#197554: "[PT2] Validation lost").

test/proofs/test_mutation_faults.py shows each family failing on a mutant that breaks its
clause (a custom operator's result perturbed, a control-flow operator's result perturbed;
indices clamped; negative indices read as 0).
"""

from __future__ import annotations

import re

import torch
import torch.nn.functional as F
import torch.utils.checkpoint

from harness import BackendTestCase, assert_same_outputs_and_grads, for_each_backend

_NAMESPACE = "dynamo_suite_surface"


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

        assert_same_outputs_and_grads(self, fn, self.compile(fn), [torch.randn(4, 5)])

    def test_custom_op_writing_into_an_input(self):
        def fn(x, out):
            scale_into(x.sin(), out, 3.0)
            return out + 1

        assert_same_outputs_and_grads(self, fn, self.compile(fn), [torch.randn(6), torch.zeros(6)])

    def test_custom_op_with_several_outputs(self):
        def fn(x):
            positive, negative = split_signs(x)
            return positive * 2 - negative, negative.sum()

        assert_same_outputs_and_grads(self, fn, self.compile(fn), [torch.randn(3, 4)])

    def test_custom_op_gradient_and_real_kernel(self):
        def fn(x):
            return cube(x).sum() + cube(x * 0.5).mean()

        assert_same_outputs_and_grads(self, fn, self.compile(fn), [torch.randn(5, requires_grad=True)])


def _branches(x, scale):
    return torch.cond(x.sum() > 0, lambda y, s: (y.sin() * s).cumsum(0), lambda y, s: y.cos() - s, (x, scale))


@for_each_backend
class HigherOrderOpTests(BackendTestCase):
    """Control flow and checkpointing: subgraphs the backend runs as eager would."""

    def test_cond_takes_the_branch_the_data_chooses(self):
        compiled = self.compile(_branches)
        for sign in (1.0, -1.0, 1.0):
            x = (torch.rand(6) + 0.1) * sign
            assert_same_outputs_and_grads(self, _branches, compiled, [x, torch.tensor(1.5)])

    def test_checkpointed_block_recomputes_its_forward(self):
        def block(x, w):
            return (x @ w).tanh() * x.sum()

        def fn(x, w):
            return torch.utils.checkpoint.checkpoint(block, x, w, use_reentrant=False).sum()

        assert_same_outputs_and_grads(self, fn, self.compile(fn),
                                      [torch.randn(3, 3, requires_grad=True), torch.randn(3, 3, requires_grad=True)])


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

    def test_in_place_on_a_leaf_that_requires_grad_raises(self):
        def fn(x):
            x.add_(1)
            return x * 2

        with self.assertRaisesRegex(RuntimeError, "leaf Variable that requires grad"):
            fn(torch.randn(3, requires_grad=True))
        with self.assertRaisesRegex(Exception, "leaf Variable that requires grad",
                                    msg="an in-place write into a leaf that requires grad gave a result"):
            self.compile(fn)(torch.randn(3, requires_grad=True))
        self.compile(lambda x: x.sin() + 1)(torch.randn(3))  # a graph of its own, to show the backend ran
