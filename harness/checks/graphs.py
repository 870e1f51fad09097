"""Reading the FX graphs AOTAutograd produces: inputs, outputs, in-place nodes, and a text
form that survives harmless renames (for expecttest's inline expectations)."""

from __future__ import annotations

from typing import Any, Callable

import torch
import torch.fx

from harness import compat


def placeholders(gm: torch.fx.GraphModule) -> list[torch.fx.Node]:
    return [node for node in gm.graph.nodes if node.op == "placeholder"]


def outputs(gm: torch.fx.GraphModule) -> list[Any]:
    """The graph's flat outputs (``None`` for a gradient the graph does not compute)."""
    (output,) = [node for node in gm.graph.nodes if node.op == "output"]
    return _flatten(output.args[0])


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return [item for element in value for item in _flatten(element)]
    return [value]


def _is_mutable(target: Any) -> bool:
    schema = getattr(target, "_schema", None)
    return schema is not None and schema.is_mutable


def in_place_nodes(gm: torch.fx.GraphModule) -> list[torch.fx.Node]:
    """Calls of operators that write into one of their arguments (``copy_``, ``add_``...)."""
    return [node for node in gm.graph.nodes if node.op == "call_function" and _is_mutable(node.target)]


def writes_into_inputs(gm: torch.fx.GraphModule) -> list[torch.fx.Node]:
    """In-place calls whose destination is a graph input."""
    return [node for node in in_place_nodes(gm)
            if isinstance(node.args[0], torch.fx.Node) and node.args[0].op == "placeholder"]


def _target_name(target: Any) -> str:
    if compat.is_op_overload(target):
        return str(target)  # "aten.mul.Tensor"
    return getattr(target, "__name__", repr(target))


def graph_text(gm: torch.fx.GraphModule) -> str:
    """One line per node, with values renamed by order of appearance.

    Inputs become ``in0, in1...`` (tangents ``tangent0...``), computed values ``v0, v1...``.
    FX's own names and the lines that free values (``x = None``) depend on naming details
    that change between torch versions without changing what the graph computes.
    """
    names: dict[torch.fx.Node, str] = {}
    counts = {"in": 0, "tangent": 0, "v": 0}

    def fresh(kind: str) -> str:
        counts[kind] += 1
        return f"{kind}{counts[kind] - 1}"

    def show(value: Any) -> str:
        if isinstance(value, torch.fx.Node):
            return names[value]
        if isinstance(value, (list, tuple)):
            inner = ", ".join(show(item) for item in value)
            return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
        if isinstance(value, torch.dtype):
            return str(value)
        return repr(value)

    lines = []
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            names[node] = fresh("tangent" if node.name.startswith("tangents") else "in")
            lines.append(f"{names[node]} = input")
        elif node.op == "output":
            lines.append(f"return {show(node.args[0])}")
        else:
            names[node] = fresh("v")
            arguments = [show(arg) for arg in node.args]
            arguments += [f"{key}={show(value)}" for key, value in sorted(node.kwargs.items())]
            callee = _target_name(node.target) if node.op == "call_function" else f"{node.op}:{node.target}"
            lines.append(f"{names[node]} = {callee}({', '.join(arguments)})")
    return "\n".join(lines)


class GraphRecorder:
    """A compiler for AOTAutograd's entry points that keeps every graph it is given.

    ``graphs`` lists them in order (forward or inference graph first, then the backward
    graph if one was compiled); the graph runs as traced.
    """

    def __init__(self) -> None:
        self.graphs: list[torch.fx.GraphModule] = []

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
        from functorch.compile import make_boxed_func

        self.graphs.append(gm)
        return make_boxed_func(gm.forward)

    @property
    def forward(self) -> torch.fx.GraphModule:
        return self.graphs[0]

    @property
    def backward(self) -> torch.fx.GraphModule:
        return self.graphs[1]
