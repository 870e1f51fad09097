"""A reverse-mode autograd written in plain Python, traced by Dynamo.

The tape below is ordinary Python: objects, closures, a global list, a dict of gradients.
Dynamo must trace all of it into one graph per frame (fullgraph) and the backend must
compute the same forward values and gradients as running the Python eagerly.
"""

from __future__ import annotations

import itertools
from typing import Callable, NamedTuple

import torch

from harness import BackendTestCase, assert_close, dtypes, for_each_backend, variants

_names = itertools.count()


class Value:
    """A tensor plus the name under which the tape knows it."""

    def __init__(self, tensor: torch.Tensor, name: str | None = None) -> None:
        self.tensor = tensor
        self.name = name or f"t{next(_names)}"

    def __add__(self, other: "Value") -> "Value":
        return record_add(self, other)

    def __mul__(self, other: "Value | float") -> "Value":
        return record_mul(self, other)

    def total(self) -> "Value":
        return record_sum(self)

    def broadcast_to(self, shape) -> "Value":
        return record_expand(self, shape)


class Step(NamedTuple):
    inputs: list[str]
    output: str
    backward: Callable[[Value], list[Value]]


TAPE: list[Step] = []


def clear_tape() -> None:
    global _names
    TAPE.clear()
    _names = itertools.count()


def record_add(lhs: Value, rhs: Value) -> Value:
    out = Value(lhs.tensor + rhs.tensor)
    TAPE.append(Step([lhs.name, rhs.name], out.name, lambda g: [g * 1.0, g * 1.0]))
    return out


def record_mul(lhs: Value, rhs: Value | float) -> Value:
    if isinstance(rhs, float):
        # Scaling by a Python constant: only 1.0 ever occurs (from add's backward).
        assert rhs == 1.0
        return lhs
    out = Value(lhs.tensor * rhs.tensor)
    TAPE.append(Step([lhs.name, rhs.name], out.name, lambda g: [g * rhs, g * lhs]))
    return out


def record_sum(value: Value) -> Value:
    out = Value(value.tensor.sum())
    shape = value.tensor.shape
    TAPE.append(Step([value.name], out.name, lambda g: [g.broadcast_to(shape)]))
    return out


def record_expand(value: Value, shape) -> Value:
    out = Value(value.tensor.expand(shape))
    TAPE.append(Step([value.name], out.name, lambda g: [g.total()]))
    return out


def gradients(loss: Value, wrt: list[Value]) -> list[Value | None]:
    """Walk the tape backwards, accumulating d(loss)/d(name) for every name reached."""
    grads: dict[str, Value] = {loss.name: Value(torch.ones(()))}
    for step in reversed(list(TAPE)):
        if step.output not in grads:
            continue
        for name, grad in zip(step.inputs, step.backward(grads[step.output])):
            if name in grads:
                grads[name] = Value(grads[name].tensor + grad.tensor)
            else:
                grads[name] = grad
    return [grads.get(value.name) for value in wrt]


def model(a: Value, b: Value) -> Value:
    return ((a + b) * b).total()


def tensors(result):
    if isinstance(result, Value):
        return result.tensor
    return [None if value is None else value.tensor for value in result]


# Ops in the traced graphs: forward = add, mul, sum. Backward = ones (seed), expand (sum's
# backward), two muls (mul's backward), one add (b's two gradient contributions).
FORWARD_OPS = 3
BACKWARD_OPS = 5


def forward_loss(a, b):
    return tensors(model(Value(a, "a"), Value(b, "b")))


def forward_loss_resetting_tape(a, b):
    clear_tape()
    loss = model(Value(a, "a"), Value(b, "b"))
    clear_tape()
    return tensors(loss)


def loss_gradients(a, b):
    va, vb = Value(a, "a"), Value(b, "b")
    return tensors(gradients(model(va, vb), [va, vb]))


def loss_gradients_resetting_tape(a, b):
    clear_tape()
    va, vb = Value(a, "a"), Value(b, "b")
    grads = gradients(model(va, vb), [va, vb])
    clear_tape()
    return tensors(grads)


@for_each_backend
@variants.opt_out("compiled_autograd", "the gradients come from the scenarios' own Python tape; autograd's backward() never runs")
@dtypes.numeric
class PythonAutogradTests(BackendTestCase):
    def setUp(self) -> None:
        super().setUp()
        clear_tape()
        self.addCleanup(clear_tape)

    def check_one_frame(self, fn, expected_ops: int) -> None:
        """Compile ``fn`` whole, call it on two inputs; both match eager, one frame."""
        compiled = self.compile(fn, fullgraph=True)
        for _ in range(2):
            a, b = torch.randn(10), torch.randn(10)
            clear_tape()
            actual = compiled(a, b)
            clear_tape()
            expected = fn(a, b)
            assert_close(self, expected, actual)
        self.assertEqual(self.counter.frame_count, 1)
        self.assertEqual(self.counter.op_count, expected_ops)

    def test_forwards(self):
        self.check_one_frame(forward_loss, FORWARD_OPS)

    def test_forwards_resetting_tape(self):
        self.check_one_frame(forward_loss_resetting_tape, FORWARD_OPS)

    def test_backwards(self):
        self.check_one_frame(loss_gradients, FORWARD_OPS + BACKWARD_OPS)

    def test_backwards_resetting_tape(self):
        self.check_one_frame(loss_gradients_resetting_tape, FORWARD_OPS + BACKWARD_OPS)

    def test_forward_and_backward_in_separate_frames(self):
        a, b = Value(torch.randn(10), "a"), Value(torch.randn(10), "b")
        expected_loss = model(a, b)
        expected_grads = gradients(expected_loss, [a, b])

        clear_tape()
        loss = self.compile(model, fullgraph=True)(a, b)
        # The tape filled by the first frame is global state the second frame reads.
        grads = self.compile(gradients, fullgraph=True)(loss, [a, b])

        assert_close(self, tensors(expected_loss), tensors(loss))
        assert_close(self, tensors(expected_grads), tensors(grads))
        self.assertEqual(self.counter.frame_count, 2)
        self.assertEqual(self.counter.op_count, FORWARD_OPS + BACKWARD_OPS)
