"""What changes around a compiled callable between two calls (test/dynamo/state_changes.py).

A compiled function is right for the call it was compiled for and can be wrong after
something around it changed: a config value, a module's mode, a hook, parameters an eager
optimizer updated, a global mode. Dynamo guards each kind of such state; a backend or a
Dynamo that reuses a graph whose guards no longer hold, or recompiles where it should
reuse, gives a result eager does not. ``test_<change>`` visits versions 0, 1, 0 of the
state with an input that requires grad (forward and backward), and requires at every call
eager's outputs, gradients and state, and the number of graphs the backend received;
``test_<change>_no_grad`` does the same under ``no_grad``, AOTAutograd's inference graphs:
half the graphs, so where a guard of Dynamo is what the change tests, the default tier's
cover takes it for half of a compiling backend's cost.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch
from torch import nn

from harness import BackendTestCase, for_each_backend, variants
from harness import assert_close, named_state, weighted_loss
from test.dynamo.state_changes import STATE_CHANGES, StateChange, World

VERSIONS = (0, 1, 0)  # back to the first state: its graphs must be reused, not rebuilt


def _leaves(world: World) -> list[tuple[str, torch.Tensor]]:
    """The tensors whose gradients a call's backward leaves: the module's parameters."""
    program = world.program
    return list(program.named_parameters()) if isinstance(program, nn.Module) else []


def _state(world: World) -> dict[str, torch.Tensor]:
    """What a call may leave changed: the module's parameters and buffers, and the world's own."""
    program = world.program
    return {**named_state(program if isinstance(program, nn.Module) else None), **world.observed()}


@variants.opt_out("automatic_dynamic", "the state changes, not the inputs' sizes")
@variants.opt_out("compiled_autograd", "compiled autograd compiles the backwards too; this family counts the "
                                       "forwards' graphs")
@for_each_backend
class StateChangeTests(BackendTestCase):
    """``test_<change>`` for each entry of ``STATE_CHANGES``."""

    def compile_world(self, world: World, change: StateChange):
        if change.compile_in_place:
            world.program.compile(backend=self.counter, **self.compile_kwargs())
            return world.program
        return self.compile(world.program)

    def call(self, world: World, run, version: int, grad: bool) -> tuple[Any, dict[str, torch.Tensor]]:
        torch.manual_seed(5)
        x = torch.randn(4, requires_grad=grad)
        for _, param in _leaves(world):
            param.grad = None
        with contextlib.ExitStack() as stack:
            entered = world.at(version)
            if entered is not None:
                stack.enter_context(entered)
            if not grad:
                stack.enter_context(torch.no_grad())
            output = run(x)
        grads: dict[str, torch.Tensor] = {}
        loss = weighted_loss(output) if grad else None
        if loss is not None:
            loss.backward()
            grads = {"input": x.grad, **{name: param.grad for name, param in _leaves(world) if param.grad is not None}}
        return output, {**{f"grad of {name}": value for name, value in grads.items()}, **_state(world)}

    def check_change(self, change: StateChange, grad: bool) -> None:
        eager_world, compiled_world = change.build(), change.build()
        compiled = self.compile_world(compiled_world, change)
        graphs = []  # after each call: the graphs the backend received so far
        for step, version in enumerate(VERSIONS):
            where = f"call {step + 1} (state version {version}: {change.what if version else 'as first compiled'})"
            expected, expected_after = self.call(eager_world, eager_world.program, version, grad)
            actual, actual_after = self.call(compiled_world, compiled, version, grad)
            graphs.append(self.counter.frame_count)
            assert_close(self, expected, actual, what=f"{where}: output")
            self.assertEqual(sorted(expected_after), sorted(actual_after), f"{where}: which gradients exist")
            for name, value in expected_after.items():
                assert_close(self, value, actual_after[name], what=f"{where}: {name}", scale=10)
        # A program with graph breaks compiles several graphs a call: what is counted is
        # whether the change added graphs, and whether going back reused the first ones.
        first, changed, back = graphs
        if change.recompiles:
            self.assertGreater(changed, first, f"{change.what}: no new graph after the change, which needs one "
                                               f"(graphs after each call: {graphs})")
        else:
            self.assertEqual(changed, first, f"{change.what}: the state reaches the graph as an input, so the graph "
                                             f"is reused; graphs after each call: {graphs}; Dynamo's reasons: "
                                             f"{self.guard_failures.reasons}")
        self.assertEqual(back, changed, f"going back to the first state compiled again instead of reusing its graphs "
                                        f"(graphs after each call: {graphs}; Dynamo's reasons: {self.guard_failures.reasons})")


def _make_test(change: StateChange, grad: bool):
    def test(self):
        self.check_change(change, grad)

    test.__name__ = f"test_{change.name}" + ("" if grad else "_no_grad")
    test.__doc__ = f"{change.what}, between calls{'' if grad else ', under no_grad'}"
    return test


for _change in STATE_CHANGES:
    for _grad in (True, False) if _change.under_no_grad else (True,):
        _test = _make_test(_change, _grad)
        setattr(StateChangeTests, _test.__name__, _test)

for_each_backend(StateChangeTests)
