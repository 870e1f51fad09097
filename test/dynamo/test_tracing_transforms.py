"""AOTAutograd's tracing transforms: what happens to a function before any backend sees it.

AOTAutograd functionalizes the traced program (input mutations become graph outputs that
its runtime writes back), builds a joint forward/backward function over the primals that
need gradients, turns module calls into functional calls with parameters and buffers as
inputs, and unwraps tensor subclasses into their inner tensors (rewrapping the results).
A regression there breaks every backend at once.

Two kinds of families pin these behaviours:

* per backend (``@for_each_backend``): what a user of ``torch.compile(backend=...)`` can
  observe -- values, mutations applied once, metadata replayed, gradients, subclass-ness,
  RNG behaviour -- for the backend under test;
* once (plain ``DynamoTestCase``): the graphs and signatures AOTAutograd's own entry points
  produce (``aot_function``, ``aot_module_simplified``, ``aot_export_module``,
  ``aot_export_joint_simple``), read with recording compilers. Graph text is compared with
  expecttest after ``harness.checks.graphs.graph_text`` renamed the values (``EXPECTTEST_ACCEPT=1``
  rewrites the expectations in place).
"""

from __future__ import annotations

import unittest
from unittest import mock

import expecttest
import torch
import torch.nn.functional as F
from parameterized import parameterized

from harness import compat
from harness import (BackendTestCase, DynamoTestCase, GraphRecorder, assert_close, for_each_backend, graph_text, graphs,
                     in_place_nodes, random_op_check, writes_into_inputs)

LEAF_IN_PLACE = r"a leaf Variable that requires grad is being used in an in-place operation"
NOT_A_TUPLE = r"Graph output must be a \(\)"
NO_MUTATIONS_IN_JOINT_SIMPLE = r"aot_export_joint_simple does not support input mutations"


def _two_tensor():
    from torch.testing._internal.two_tensor import TwoTensor

    return TwoTensor


# -- per backend: what a torch.compile user observes ----------------------------------------

def _scale_and_shift(x, y):
    x.mul_(2)
    y.add_(1)
    return x + y


def _mutate_through_views(x):
    x[1:].add_(1)
    x.view(-1)[0].mul_(3)
    return x.sum()


METADATA_MUTATIONS = [
    ("transpose_", lambda x: x.transpose_(0, 1)),
    ("t_", lambda x: x.t_()),
    ("unsqueeze_", lambda x: x.unsqueeze_(0)),
    ("squeeze_", lambda x: x[:1].squeeze_(0)),  # of a view: the input itself keeps its shape
    ("as_strided_", lambda x: x.as_strided_((3, 2), (1, 3), 0)),
]


@for_each_backend
class FunctionalizedMutationTests(BackendTestCase):
    """Input mutations come back out of the functional graph and are applied exactly once.

    Metadata-only mutations of inputs (``t_``, ``as_strided_``...) never reach the backend on
    torch 2.13: Dynamo replays them itself and hands over the rest of the function. Those
    scenarios pin what the caller sees; FunctionalizationGraphTests pins AOTAutograd's own
    replay.
    """

    def assert_same_tensor_state(self, expected: torch.Tensor, actual: torch.Tensor, what: str) -> None:
        self.assertEqual((actual.shape, actual.stride(), actual.storage_offset()),
                         (expected.shape, expected.stride(), expected.storage_offset()),
                         f"{what}: size, stride or offset differs from eager")
        assert_close(self, expected, actual, what=what)

    def test_data_mutations_applied_once_per_call(self):
        compiled = self.compile(_scale_and_shift)
        eager_args, compiled_args = (torch.arange(4.0), torch.zeros(4)), (torch.arange(4.0), torch.zeros(4))
        for call in range(2):
            expected, actual = _scale_and_shift(*eager_args), compiled(*compiled_args)
            assert_close(self, expected, actual, what=f"call {call} output")
            for index, (want, got) in enumerate(zip(eager_args, compiled_args)):
                assert_close(self, want, got, what=f"call {call} input {index}")

    def test_mutation_through_views_of_the_input(self):
        eager_x, compiled_x = torch.arange(6.0).view(2, 3), torch.arange(6.0).view(2, 3)
        assert_close(self, _mutate_through_views(eager_x), self.compile(_mutate_through_views)(compiled_x))
        assert_close(self, eager_x, compiled_x, what="input after the call")

    @parameterized.expand(METADATA_MUTATIONS)
    def test_metadata_mutation_replayed(self, _name, mutate):
        def fn(x):
            mutate(x)
            return x * 2

        eager_x, compiled_x = torch.arange(6.0).view(2, 3), torch.arange(6.0).view(2, 3)
        expected, actual = fn(eager_x), self.compile(fn)(compiled_x)
        self.assert_same_tensor_state(expected, actual, "output")
        self.assert_same_tensor_state(eager_x, compiled_x, "input after the call")

    def test_metadata_and_data_mutation_together(self):
        def fn(x):
            x.t_().mul_(2)
            return x + 1

        eager_x, compiled_x = torch.arange(6.0).view(2, 3), torch.arange(6.0).view(2, 3)
        self.assert_same_tensor_state(fn(eager_x), self.compile(fn)(compiled_x), "output")
        self.assert_same_tensor_state(eager_x, compiled_x, "input after the call")

    def test_mutation_of_input_requiring_grad_keeps_gradients(self):
        def fn(x):
            x.mul_(3)
            return x.sin()

        eager_leaf = torch.randn(4, requires_grad=True)
        compiled_leaf = eager_leaf.detach().clone().requires_grad_()
        eager_x, compiled_x = eager_leaf.clone(), compiled_leaf.clone()
        expected, actual = fn(eager_x), self.compile(fn)(compiled_x)
        assert_close(self, expected, actual)
        assert_close(self, eager_x, compiled_x, what="input after the call")
        self.assertIsNotNone(compiled_x.grad_fn, "the mutated input lost its place in the autograd graph")
        (actual.sum() + compiled_x.sum()).backward()
        (expected.sum() + eager_x.sum()).backward()
        assert_close(self, eager_leaf.grad, compiled_leaf.grad, what="gradient through the mutation")

    def test_mutation_under_no_grad_of_leaf_requiring_grad(self):
        def step(w, g):
            with torch.no_grad():
                w.sub_(0.1 * g)
            return w * 2

        eager_w = torch.randn(3, requires_grad=True)
        compiled_w = eager_w.detach().clone().requires_grad_()
        g = torch.randn(3)
        expected, actual = step(eager_w, g), self.compile(step)(compiled_w, g)
        assert_close(self, expected, actual)
        assert_close(self, eager_w, compiled_w, what="parameter after the update")
        self.assertEqual((compiled_w.is_leaf, compiled_w.requires_grad, compiled_w.grad_fn), (True, True, None))
        actual.sum().backward()
        assert_close(self, torch.full((3,), 2.0), compiled_w.grad, what="gradient after the update")

    def test_mutation_inside_inference_mode(self):
        def fn(x):
            x.mul_(3)
            return x + 1

        with torch.inference_mode():
            eager_x, compiled_x = torch.arange(3.0), torch.arange(3.0)
            expected, actual = fn(eager_x), self.compile(fn)(compiled_x)
        assert_close(self, expected, actual)
        assert_close(self, eager_x, compiled_x, what="input after the call")
        self.assertTrue(actual.is_inference(), "an output made in inference mode must be an inference tensor")

    def test_in_place_on_leaf_requiring_grad_raises(self):
        def fn(w):
            w.add_(1)
            return w

        w = torch.ones(2, requires_grad=True)
        with self.assertRaisesRegex(Exception, LEAF_IN_PLACE):
            self.compile(fn)(w)
        self.assertEqual(w.tolist(), [1.0, 1.0])
        self.expect_no_graph("Dynamo's fake-tensor run of add_ raises before a graph exists")


def _sin_of_product(a, b, c):
    return ((a * b).sin() + c).sum()


def _mixed_outputs(x):
    return x.sin(), x.argmax(), x > 0, x.detach() * 2


TANGENT_LAYOUTS = [
    ("contiguous", lambda: torch.randn(2, 3, 4, 5)),
    ("transposed", lambda: torch.randn(5, 4, 3, 2).permute(3, 2, 1, 0)),
    ("expanded", lambda: torch.randn(1).expand(2, 3, 4, 5)),
    ("channels_last", lambda: torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)),
    ("sliced", lambda: torch.randn(2, 3, 4, 10)[..., ::2]),
]

OUTPUT_VIEWS = [
    ("transpose", lambda y: y.t()),
    ("select", lambda y: y[1]),
    ("flatten", lambda y: y.view(-1)),
    ("expand", lambda y: y.unsqueeze(0).expand(3, 4, 5)),
    ("diagonal", lambda y: y.diagonal()),
]


@for_each_backend
class JointGraphGradientTests(BackendTestCase):
    """Gradients exist exactly for the inputs and outputs that take part in autograd."""

    def test_gradients_only_for_inputs_that_require_grad(self):
        def make():
            torch.manual_seed(0)
            return torch.randn(4, requires_grad=True), torch.randn(4), torch.randn(4, requires_grad=True)

        eager_args, compiled_args = make(), make()
        _sin_of_product(*eager_args).backward()
        self.compile(_sin_of_product)(*compiled_args).backward()
        for index, (want, got) in enumerate(zip(eager_args, compiled_args)):
            self.assertEqual(got.requires_grad, want.requires_grad, f"input {index}: requires_grad")
            if want.grad is None:
                self.assertIsNone(got.grad, f"input {index} does not require grad but got a gradient")
            else:
                assert_close(self, want.grad, got.grad, what=f"gradient of input {index}")

    def test_non_differentiable_outputs_get_no_tangent(self):
        x = torch.randn(5, requires_grad=True)
        expected, actual = _mixed_outputs(x), self.compile(_mixed_outputs)(x)
        self.assertEqual([out.requires_grad for out in actual], [out.requires_grad for out in expected],
                         "outputs: requires_grad differs from eager")
        assert_close(self, expected, actual)
        (grad,) = torch.autograd.grad(actual[0].sum(), x)
        assert_close(self, x.detach().cos(), grad, what="gradient")
        with self.assertRaisesRegex(RuntimeError, r"does not require grad and does not have a grad_fn"):
            torch.autograd.grad(actual[3].sum(), x)

    @parameterized.expand(TANGENT_LAYOUTS)
    def test_tangent_layout(self, _name, make_tangent):
        def fn(x, y):
            return (x * y).sin()

        x, y = torch.randn(2, 3, 4, 5, requires_grad=True), torch.randn(2, 3, 4, 5, requires_grad=True)
        tangent = make_tangent()
        expected = torch.autograd.grad(fn(x, y), (x, y), tangent)
        actual = torch.autograd.grad(self.compile(fn)(x, y), (x, y), tangent)
        assert_close(self, expected, actual, what="gradient")

    @parameterized.expand(OUTPUT_VIEWS)
    def test_tangent_of_output_that_is_a_view(self, _name, view):
        def fn(x):
            y = x.cos() * 2
            return y, view(y)

        x = torch.randn(4, 5, requires_grad=True)
        expected, actual = fn(x), self.compile(fn)(x)
        assert_close(self, expected, actual)
        self.assertTrue(actual[1]._is_view(), "an output that is a view of another output must stay a view")
        tangents = [torch.randn_like(out) for out in expected]
        assert_close(self, torch.autograd.grad(expected, x, tangents), torch.autograd.grad(actual, x, tangents),
                     what="gradient")


@for_each_backend
class RandomOpsTests(BackendTestCase):
    """Random ops under AOTAutograd: the forward's draw is the one the backward uses; the
    global generator drives compiled code as it drives eager code."""

    @staticmethod
    def dropout(x):
        return F.dropout(x, 0.5, training=True)

    def test_backward_uses_the_forward_mask(self):
        x = torch.randn(1000, requires_grad=True)
        y = self.compile(self.dropout)(x)
        y.sum().backward()
        kept = y != 0
        self.assertTrue(0.3 < kept.float().mean().item() < 0.7, "dropout(0.5) kept an implausible fraction")
        self.assertTrue(torch.equal(x.grad, kept.float() * 2), "the backward dropped other elements than the forward")

    def test_same_seed_same_draws(self):
        compiled, x = self.compile(self.dropout), torch.randn(1000)
        draws = []
        for _ in range(2):
            torch.manual_seed(7)
            draws.append((compiled(x), torch.rand(4)))
        self.assertTrue(torch.equal(draws[0][0], draws[1][0]), "the same seed gave different results")
        self.assertTrue(torch.equal(draws[0][1], draws[1][1]), "the generator ended in a different state")

    def test_successive_calls_draw_fresh_numbers(self):
        compiled, x = self.compile(self.dropout), torch.randn(1000)
        self.assertFalse(torch.equal(compiled(x), compiled(x)), "two calls drew the same dropout mask")

    @parameterized.expand([("p_0_1", 0.1), ("p_0_5", 0.5), ("p_0_9", 0.9)])
    def test_dropout_draws_from_eagers_law(self, _name, p):
        # At p = 0.5 alone, keeping and dropping are equally likely and the scale is 1 / p
        # too: a kernel that swaps them, or ignores p, would pass. Each element's draws over
        # calls against eager's (opcheck's law of the draws), with reproducibility, fresh
        # draws and the gradient through the mask.
        x = torch.randn(16, requires_grad=True)
        random_op_check(F.dropout, (x,), {"p": p, "training": True}, self.counter, testcase=self)

    @unittest.skipUnless(torch.cuda.is_available(), "philox RNG functionalization (functionalize_rng_ops) is CUDA-only")
    def test_functionalized_rng_matches_eager_on_cuda(self):
        import torch._functorch.config as functorch_config

        self.enter_context(mock.patch.object(functorch_config, "functionalize_rng_ops", True))
        x = torch.randn(1000, device="cuda", requires_grad=True)
        torch.manual_seed(3)
        expected = self.dropout(x)
        torch.manual_seed(3)
        actual = self.compile(self.dropout)(x)
        self.assertTrue(torch.equal(expected != 0, actual != 0), "functionalized RNG drew another mask than eager")


class _Doubling(torch.Tensor):
    """A subclass whose __torch_function__ post-processes torch.add's and torch.mul's results
    in plain Python, as users write them (pytorch#176679, #176686)."""

    @staticmethod
    def __new__(cls, data):
        return torch.Tensor._make_subclass(cls, data)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        result = super().__torch_function__(func, types, args, kwargs or {})
        return result * 2.0 if isinstance(result, torch.Tensor) and func in (torch.add, torch.mul) else result


@for_each_backend
class TensorSubclassTests(BackendTestCase):
    """A wrapper subclass (TwoTensor) goes through compilation and comes back as itself; so
    does a __torch_function__ subclass, its handler's work included."""

    def two_tensor(self, *shape, requires_grad=False):
        made = _two_tensor()(torch.randn(*shape), torch.randn(*shape))
        return made.requires_grad_() if requires_grad else made

    def assert_same_two_tensor(self, expected, actual, what: str) -> None:
        self.assertIsInstance(actual, _two_tensor(), f"{what} lost its subclass")
        assert_close(self, expected.a, actual.a, what=f"{what}.a")
        assert_close(self, expected.b, actual.b, what=f"{what}.b")

    def test_outputs_and_gradients(self):
        def fn(x, y):
            return x.sin() * 2 + y

        eager_x = self.two_tensor(3, 4, requires_grad=True)
        compiled_x = _two_tensor()(eager_x.a.clone(), eager_x.b.clone()).requires_grad_()
        y = torch.randn(3, 4)
        expected, actual = fn(eager_x, y), self.compile(fn)(compiled_x, y)
        self.assert_same_two_tensor(expected, actual, "output")
        self.assertTrue(actual.requires_grad)
        expected.sum().backward()
        actual.sum().backward()
        self.assert_same_two_tensor(eager_x.grad, compiled_x.grad, "gradient")

    def test_input_mutation(self):
        def fn(x):
            x.add_(1)
            return x * 2

        eager_x = self.two_tensor(4)
        compiled_x = _two_tensor()(eager_x.a.clone(), eager_x.b.clone())
        self.assert_same_two_tensor(fn(eager_x), self.compile(fn)(compiled_x), "output")
        self.assert_same_two_tensor(eager_x, compiled_x, "input after the call")

    def test_view_output(self):
        def fn(x):
            return x.t(), x.sum()

        x = self.two_tensor(3, 4)
        expected, actual = fn(x), self.compile(fn)(x)
        self.assert_same_two_tensor(expected[0], actual[0], "view output")
        self.assert_same_two_tensor(expected[1], actual[1], "reduction output")

    def test_torch_function_subclass_comes_back_as_itself(self):
        def fn(x, y):
            return torch.add(x, y), torch.mul(x, y) + 1

        x, y = _Doubling(torch.randn(4)), _Doubling(torch.randn(4))
        expected, actual = fn(x, y), self.compile(fn)(x, y)
        for position, (want, got) in enumerate(zip(expected, actual)):
            self.assertIs(type(got), type(want), f"output {position} came back as {type(got).__name__}, eager's "
                                                 f"is a {type(want).__name__}")
            assert_close(self, want.as_subclass(torch.Tensor), got.as_subclass(torch.Tensor),
                         what=f"output {position}")


# -- once: the graphs and signatures AOTAutograd's entry points produce --------------------

def _aot_function(fn, recorder: GraphRecorder, **kwargs):
    from functorch.compile import aot_function

    return aot_function(fn, fw_compiler=recorder, bw_compiler=recorder, **kwargs)


def _double_then_shift(x):
    x.mul_(2)
    return x + 1


def _sin_chain(x):
    return x.sin().sin().sin()


class FunctionalizationGraphTests(DynamoTestCase, expecttest.TestCase):
    """Functionalization as AOTAutograd's compilers see it."""

    def test_data_mutation_becomes_a_graph_output(self):
        recorder, x = GraphRecorder(), torch.ones(3)
        compiled = _aot_function(_double_then_shift, recorder)
        self.assertEqual(compiled(x).tolist(), [3.0] * 3)
        self.assertEqual(x.tolist(), [2.0] * 3, "the mutation must be applied exactly once")
        self.assertEqual(in_place_nodes(recorder.forward), [], "the graph must be functional")
        self.assertExpectedInline(graph_text(recorder.forward), """\
in0 = input
v0 = aten.mul.Tensor(in0, 2)
v1 = aten.add.Tensor(v0, 1)
return (v0, v1)""")

    def test_keep_inference_input_mutations_keeps_the_copy_in_the_graph(self):
        recorder, x = GraphRecorder(), torch.ones(3)
        compiled = _aot_function(_double_then_shift, recorder, keep_inference_input_mutations=True)
        self.assertEqual(compiled(x).tolist(), [3.0] * 3)
        self.assertEqual(x.tolist(), [2.0] * 3, "the mutation must be applied exactly once")
        self.assertEqual([str(node.target) for node in writes_into_inputs(recorder.forward)], ["aten.copy_.default"])
        self.assertEqual(len(graphs.outputs(recorder.forward)), 1, "the copy replaces the extra output")

    def test_mutation_of_input_requiring_grad_stays_an_output(self):
        def fn(x):
            x.mul_(2)
            return x.sin()

        recorder, leaf = GraphRecorder(), torch.randn(3, requires_grad=True)
        x = leaf.clone()
        out = _aot_function(fn, recorder, keep_inference_input_mutations=True)(x)
        # Autograd must see the write, so AOTAutograd's runtime applies it, not the graph.
        self.assertEqual(writes_into_inputs(recorder.forward), [])
        self.assertIn(graphs.outputs(recorder.forward)[0].target, (torch.ops.aten.mul.Tensor,))
        out.sum().backward()
        assert_close(self, 2 * (2 * leaf.detach()).cos(), leaf.grad, what="gradient")

    def test_mutation_under_no_grad_is_copied_in_graph_when_kept(self):
        def step(w, g):
            with torch.no_grad():
                w.sub_(0.1 * g)
            return w * 2

        recorder, w = GraphRecorder(), torch.randn(3, requires_grad=True)
        eager_w = w.detach().clone().requires_grad_()
        out = _aot_function(step, recorder, keep_inference_input_mutations=True)(w, torch.ones(3))
        self.assertEqual([str(node.target) for node in writes_into_inputs(recorder.forward)], ["aten.copy_.default"])
        assert_close(self, step(eager_w, torch.ones(3)), out)
        assert_close(self, eager_w, w, what="parameter after the update")

    def test_a_tensor_passed_twice_and_mutated_is_one_input(self):
        def fn(x, y):
            x.add_(1)
            return x * y

        recorder, x = GraphRecorder(), torch.arange(3.0)
        out = _aot_function(fn, recorder)(x, x)
        self.assertEqual(out.tolist(), [1.0, 4.0, 9.0], "the write through x must be seen through y")
        self.assertEqual(x.tolist(), [1.0, 2.0, 3.0], "the mutation must be applied exactly once")
        self.assertEqual(len(graphs.placeholders(recorder.forward)), 1, "the duplicate must be one graph input")

    def test_metadata_mutation_is_replayed_outside_the_graph(self):
        def fn(x):
            x.t_()
            return x * 2

        recorder, x = GraphRecorder(), torch.arange(6.0).view(2, 3)
        out = _aot_function(fn, recorder)(x)
        self.assertEqual((x.shape, x.stride()), (torch.Size([3, 2]), (1, 3)))
        self.assertEqual(out.shape, torch.Size([3, 2]))
        self.assertEqual(in_place_nodes(recorder.forward), [], "t_ must not survive functionalization")
        self.assertExpectedInline(graph_text(recorder.forward), """\
in0 = input
v0 = aten.t.default(in0)
v1 = aten.mul.Tensor(v0, 2)
return (v0, v1)""")


def _joint_of(fn, *args):
    return compat.aot_export_joint_simple()(fn, args, trace_joint=True)


def _product_sin_and_argmax(a, b):
    return (a * b).sin(), a.argmax()


class JointGraphStructureTests(DynamoTestCase, expecttest.TestCase):
    """The joint forward/backward graph and how partitioners split it."""

    def test_tangents_only_for_outputs_that_require_grad(self):
        joint = _joint_of(_product_sin_and_argmax, torch.randn(3, requires_grad=True), torch.randn(3))
        tangents = [node for node in graphs.placeholders(joint) if node.name.startswith("tangents")]
        self.assertEqual(len(tangents), 1, "argmax's integer output must not get a tangent")

    def test_gradients_only_for_primals_that_require_grad(self):
        joint = _joint_of(_product_sin_and_argmax, torch.randn(3, requires_grad=True), torch.randn(3))
        *_, grad_a, grad_b = graphs.outputs(joint)
        self.assertIsInstance(grad_a, torch.fx.Node)
        self.assertIsNone(grad_b, "b does not require grad: the joint graph must not compute its gradient")
        self.assertExpectedInline(graph_text(joint), """\
in0 = input
in1 = input
tangent0 = input
v0 = aten.mul.Tensor(in0, in1)
v1 = aten.sin.default(v0)
v2 = aten.argmax.default(in0)
v3 = aten.cos.default(v0)
v4 = aten.mul.Tensor(tangent0, v3)
v5 = aten.mul.Tensor(v4, in1)
return [v1, v2, v5, None]""")

    def test_subclass_primals_and_tangents_are_unwrapped(self):
        recorder = GraphRecorder()
        x = _two_tensor()(torch.randn(3), torch.randn(3)).requires_grad_()
        out = _aot_function(torch.sin, recorder)(x)
        self.assertIsInstance(out, _two_tensor(), "the output must be rewrapped")
        assert_close(self, x.a.detach().sin(), out.a)
        assert_close(self, x.b.detach().sin(), out.b)
        out.sum().backward()
        self.assertEqual(len(graphs.placeholders(recorder.forward)), 2, "one forward input per inner tensor")
        tangents = [node for node in graphs.placeholders(recorder.backward) if node.name.startswith("tangents")]
        self.assertEqual(len(tangents), 2, "one tangent per inner tensor of the output")
        self.assertIsInstance(x.grad, _two_tensor(), "the gradient must be rewrapped")
        assert_close(self, x.b.detach().cos(), x.grad.b, what="gradient")

    def saved_activations(self, partition) -> list[str]:
        recorder, x = GraphRecorder(), torch.randn(5, requires_grad=True)
        compiled = _aot_function(_sin_chain, recorder, partition_fn=partition)
        compiled(x).sum().backward()
        expected = torch.autograd.grad(_sin_chain(x).sum(), x)[0]
        assert_close(self, expected, x.grad, what="gradient")
        forward_outputs = graphs.outputs(recorder.forward)
        return [node.op for node in forward_outputs[1:]]  # after the one user output

    def test_min_cut_recomputes_cheap_pointwise_ops(self):
        self.assertEqual(self.saved_activations(compat.min_cut_partition()), ["placeholder"],
                         "min-cut should save only the input and recompute the sin chain")

    def test_default_partition_saves_intermediates(self):
        saved = self.saved_activations(compat.default_partition())
        self.assertEqual(saved.count("placeholder"), 1)
        self.assertEqual(saved.count("call_function"), 2, "the default partitioner saves both inner sins")


class _LinearWithCounter(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(3, 2)
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls.add_(1)
        return (self.linear(x).relu().sum(),)


class _ReturnsBareTensor(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(3))

    def forward(self, x):
        return x * self.weight


class _ReturnsTuple(_ReturnsBareTensor):
    def forward(self, x):
        return (x * self.weight,)


class FunctionalModuleCallTests(DynamoTestCase):
    """Module calls become functional calls: parameters and buffers are graph inputs."""

    def test_parameters_are_lifted_to_graph_inputs(self):
        module, recorder = _ReturnsTuple(), GraphRecorder()
        gm = torch.fx.symbolic_trace(module)
        x = torch.randn(3)
        compiled = compat.aot_module_simplified()(gm, (x,), fw_compiler=recorder, bw_compiler=recorder)
        (out,) = compiled(x)
        self.assertEqual(len(graphs.placeholders(recorder.forward)), 2, "weight and x must both be graph inputs")
        out.sum().backward()
        assert_close(self, x, module.weight.grad, what="gradient of the lifted parameter")

    def test_tensor_output_rejected(self):
        gm = torch.fx.symbolic_trace(_ReturnsBareTensor())
        recorder = GraphRecorder()
        with self.assertRaisesRegex(RuntimeError, NOT_A_TUPLE):
            compat.aot_module_simplified()(gm, (torch.randn(3),), fw_compiler=recorder, bw_compiler=recorder)
        self.assertEqual(recorder.graphs, [], "no graph may reach the compiler")

    def test_buffer_mutation_is_applied_by_the_runtime(self):
        gm = compat.dynamo_export(_LinearWithCounter(), torch.randn(4, 3))
        recorder = GraphRecorder()
        compiled = compat.aot_module_simplified()(gm, (torch.randn(4, 3),), fw_compiler=recorder, bw_compiler=recorder)
        compiled(torch.randn(4, 3))
        compiled(torch.randn(4, 3))
        self.assertEqual([buffer.item() for buffer in gm.buffers()], [2.0], "the buffer must count each call once")
        self.assertEqual(len(graphs.placeholders(recorder.forward)), 4, "weight, bias, buffer and x are graph inputs")
        self.assertEqual(in_place_nodes(recorder.forward), [], "the graph must be functional")


class _MutatesItsInput(torch.nn.Module):
    def forward(self, x, y):
        x.add_(1)
        return (x * y,)


class ExportSignatureTests(DynamoTestCase, expecttest.TestCase):
    """What ``aot_export_module`` reports about the graph it exports."""

    def export(self, trace_joint: bool):
        kwargs = {"output_loss_index": 0} if trace_joint else {}
        return compat.aot_export_module()(_LinearWithCounter(), (torch.randn(4, 3),), trace_joint=trace_joint, **kwargs)

    def test_inference_signature(self):
        gm, signature = self.export(trace_joint=False)
        self.assertEqual(signature.parameters, ["linear.weight", "linear.bias"])
        self.assertEqual(signature.buffers, ["calls"])
        self.assertEqual(sorted(signature.inputs_to_parameters.values()), ["linear.bias", "linear.weight"])
        self.assertEqual(list(signature.inputs_to_buffers.values()), ["calls"])
        self.assertEqual(list(signature.buffers_to_mutate.values()), ["calls"])
        self.assertEqual(signature.user_inputs_to_mutate, {})
        self.assertEqual(len(signature.user_inputs), 1)
        self.assertEqual(len(signature.user_outputs), 1)
        self.assertIsNone(signature.backward_signature)
        self.assertExpectedInline(graph_text(gm), """\
in0 = input
in1 = input
in2 = input
in3 = input
v0 = aten.add.Tensor(in2, 1)
v1 = aten.t.default(in0)
v2 = aten.addmm.default(in1, in3, v1)
v3 = aten.relu.default(v2)
v4 = aten.sum.default(v3)
return (v0, v4)""")

    def test_backward_signature(self):
        gm, signature = self.export(trace_joint=True)
        backward = signature.backward_signature
        self.assertEqual(sorted(backward.gradients_to_parameters.values()), ["linear.bias", "linear.weight"])
        self.assertEqual(backward.gradients_to_user_inputs, {}, "x does not require grad")
        graph_outputs = [node.name for node in graphs.outputs(gm)]
        self.assertEqual(graph_outputs[-2:], list(backward.gradients_to_parameters))
        self.assertEqual(backward.loss_output, signature.user_outputs[0], "the loss is the module's output 0")

    def test_mutated_user_input(self):
        gm, signature = compat.aot_export_module()(_MutatesItsInput(), (torch.randn(3), torch.randn(3)),
                                                   trace_joint=False)
        graph_outputs = [node.name for node in graphs.outputs(gm)]
        first_input = graphs.placeholders(gm)[0].name
        self.assertEqual(signature.user_inputs_to_mutate, {graph_outputs[0]: first_input},
                         "the new value of x comes first, named as the output that carries it")
        self.assertEqual(signature.user_outputs, graph_outputs[1:])

    def test_joint_simple_rejects_input_mutations(self):
        def mutates(x):
            x.mul_(2)
            return (x + 1,)

        with self.assertRaisesRegex(RuntimeError, NO_MUTATIONS_IN_JOINT_SIMPLE):
            compat.aot_export_joint_simple()(mutates, (torch.randn(3),), trace_joint=False)
