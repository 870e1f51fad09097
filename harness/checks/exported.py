"""The contract of an exported program decomposed to Core ATen, as a backend that consumes
``torch.export`` receives it (harness/axes/export.py runs scenarios that way).

After ``torch.export.export(...).run_decompositions()`` a graph must be functional (no
operator that writes into an argument is left: every input mutation comes back as a named
output), hold only Core ATen operators (tagged ``core`` by torch) besides getitem, symbolic
size arithmetic and higher-order operators, and match its signature: one placeholder per
input spec (parameters, buffers and constants lifted as inputs, in front of the user's),
one output per output spec, each mutation naming a buffer or user input that exists, and
every symbolic size with a range. A breach is torch's, not the backend's; the message names
the node.
"""

from __future__ import annotations

import operator
from typing import Any

import torch

from harness import compat

# Call targets that are not ATen operators and belong in any exported graph.
_STRUCTURAL = {operator.getitem}
# export's runtime assertions (on sizes, on tensor metadata): ATen operators outside Core
# ATen that export itself inserts, and that a backend may drop.
_RUNTIME_ASSERTIONS = {"_assert_async", "_assert_scalar", "_assert_tensor_metadata", "sym_constrain_range",
                       "sym_constrain_range_for_size"}
_MUTATIONS = ("BUFFER_MUTATION", "USER_INPUT_MUTATION")


def _is_allowed_non_aten(target: Any) -> bool:
    module = getattr(target, "__module__", "") or ""
    return (target in _STRUCTURAL or compat.is_higher_order_op(target)
            or module in ("_operator", "operator", "math", "torch") or module.startswith("torch.fx.experimental"))


def violations(program: "torch.export.ExportedProgram") -> list[str]:
    """What in ``program`` (decomposed) breaks the contract above; empty when nothing does."""
    found: list[str] = []
    graph = program.graph_module.graph
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        target = node.target
        if compat.is_op_overload(target):
            if target._schema.is_mutable:
                found.append(f"in-place operator left in the graph: {node.name} = {target}")
            elif torch.Tag.core not in target.tags and target._overloadpacket.__name__ not in _RUNTIME_ASSERTIONS:
                found.append(f"not a Core ATen operator: {node.name} = {target}")
        elif not _is_allowed_non_aten(target):
            found.append(f"not an ATen operator: {node.name} = {getattr(target, '__name__', target)}")
    signature = program.graph_signature
    placeholders = [node for node in graph.nodes if node.op == "placeholder"]
    if len(placeholders) != len(signature.input_specs):
        found.append(f"signature: {len(signature.input_specs)} input specs for {len(placeholders)} graph inputs")
    outputs = next(node for node in graph.nodes if node.op == "output").args[0]
    if len(outputs) != len(signature.output_specs):
        found.append(f"signature: {len(signature.output_specs)} output specs for {len(outputs)} graph outputs")
    buffers = set(signature.buffers)
    user_inputs = set(signature.user_inputs)
    for spec in signature.output_specs:
        kind = spec.kind.name
        if kind == "BUFFER_MUTATION" and spec.target not in buffers:
            found.append(f"signature: a mutation of '{spec.target}', which is no buffer of the program")
        if kind == "USER_INPUT_MUTATION" and spec.target not in user_inputs:
            found.append(f"signature: a mutation of '{spec.target}', which is no user input of the program")
    symbols = {symbol for node in placeholders for symbol in _free_symbols(node.meta.get("val"))}
    unranged = sorted(str(symbol) for symbol in symbols if symbol not in program.range_constraints)
    if unranged:
        found.append(f"symbolic sizes without a range: {', '.join(unranged)}")
    return found


def mutated_inputs(program: "torch.export.ExportedProgram") -> int:
    """How many buffers and user inputs the program writes (as named outputs)."""
    return sum(spec.kind.name in _MUTATIONS for spec in program.graph_signature.output_specs)


def _free_symbols(value: Any) -> set:
    if isinstance(value, torch.Tensor):
        return {symbol for size in value.shape if isinstance(size, torch.SymInt)
                for symbol in size.node.expr.free_symbols}
    if isinstance(value, torch.SymInt):
        return set(value.node.expr.free_symbols)
    return set()
