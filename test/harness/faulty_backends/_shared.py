"""What several catalogues of faulty backends use: the 5% nudge, the backward compiler that
runs AOTAutograd's backward graph as traced, the graph compiler that calls a faulty kernel in
place of an operator, and an FX node's ATen operator name."""

from __future__ import annotations

from typing import Any, Callable

import torch
from functorch.compile import make_boxed_func

# Far outside every tolerance in harness.checks.compare (the loosest, bfloat16, is 1.6e-2 relative
# plus 1e-2 absolute), yet small enough to leave the values plausible at a glance.
_NUDGE = 5e-2


def _nudged(value: Any) -> Any:
    if not isinstance(value, torch.Tensor) or not (value.dtype.is_floating_point or value.dtype.is_complex):
        return value
    # Out of place and through a detached offset, so inputs are untouched, requires_grad
    # is kept and gradients still reach the inputs: only the forward values are wrong.
    offset = _NUDGE * (1 + value.detach().abs())
    return value + offset.to(value.dtype)


def _backward_as_traced(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    return make_boxed_func(gm.forward)


def retargeting(new_target: Callable[[Any], Callable | None]) -> Callable:
    """A graph compiler running an ATen graph as traced, except that each call of an operator
    ``op`` for which ``new_target(op)`` gives a callable calls that instead (None: ``op``)."""

    def compile_graph(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
        for node in gm.graph.nodes:
            if node.op == "call_function" and (target := new_target(node.target)) is not None:
                node.target = target
        gm.recompile()
        return make_boxed_func(gm.forward)

    return compile_graph


def _packet_name(node: torch.fx.Node) -> str:
    packet = getattr(node.target, "_overloadpacket", None)
    return packet.__name__ if node.op == "call_function" and packet is not None else ""
