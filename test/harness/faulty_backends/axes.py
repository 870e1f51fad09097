"""Faulty backends wrong on one axis only (harness/axes/variants.py, harness/axes/dtypes.py):
right under ``static`` and float32, wrong under the variant or dtype that gives the backend
what it mishandles: symbolic sizes, compiled autograd's graphs, half precision, exported
programs (test/proofs/test_variant_faults.py)."""

from __future__ import annotations

import operator
from typing import Any, Callable

import torch

from test.harness.faulty_backends._shared import _NUDGE, _nudged


def bakes_in_first_sizes(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *graphs with symbolic sizes run at any size*. A graph whose inputs include
    sizes (SymInts: the graph was captured with dynamic shapes) is compiled for the sizes
    first seen, as a backend that generates code with its example inputs' sizes as
    constants: every later call receives those first sizes, whatever its tensors are.
    Graphs with static sizes compile as aot_eager's."""
    compiled = torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
    first = {index: int(value.node.hint) for index, value in enumerate(example_inputs)
             if isinstance(value, torch.SymInt) and value.node.hint is not None}
    if not first:
        return compiled

    def run(*args: Any) -> Any:
        return compiled(*[first.get(index, arg) for index, arg in enumerate(args)])

    return run


def wrong_compiled_autograd_backward(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *gradients computed by a backward graph that compiled autograd captured*.
    In a graph compiled while compiled autograd traces a backward, every gradient handed to
    a leaf's AccumulateGrad is 5% too large; every other graph (forwards, AOTAutograd's own
    backward graphs) compiles as aot_eager's."""
    from torch._dynamo import compiled_autograd

    if compiled_autograd.in_compiled_autograd_region:
        for node in list(gm.graph.nodes):
            if node.op == "call_function" and "AccumulateGrad" in getattr(node.target, "__name__", ""):
                with gm.graph.inserting_before(node):
                    grads = [gm.graph.call_function(operator.mul, (grad, 1 + _NUDGE)) if grad is not None else None
                             for grad in node.args[0]]
                node.args = (grads, *node.args[1:])
        gm.recompile()
    return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)


def forgets_to_cast_back_half(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *outputs keep eager's dtypes in half precision* (harness/axes/dtypes.py). A graph
    with a bfloat16 or float16 input is computed in float32, as accelerator compilers do for
    accuracy, and its floating outputs are returned as float32: the cast back to the input's
    precision is forgotten. Graphs without half inputs compile as aot_eager's."""
    compiled = torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
    half = (torch.bfloat16, torch.float16)
    if not any(isinstance(value, torch.Tensor) and value.dtype in half for value in example_inputs):
        return compiled

    def run(*args: Any) -> Any:
        return gm(*[arg.float() if isinstance(arg, torch.Tensor) and arg.dtype in half else arg for arg in args])

    return run


def _is_exported(gm: torch.fx.GraphModule) -> bool:
    """An exported program's graph: its inputs carry export's ``val``, never Dynamo's ``example_value``."""
    placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
    return bool(placeholders) and not any("example_value" in node.meta for node in placeholders)


def wrong_on_exported_graphs(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *an exported program's graph compiles right* (harness/axes/export.py). A graph
    that comes from torch.export (Core ATen, parameters and buffers lifted as inputs) has
    every floating output 5% off, as an importer that mistranslates one Core ATen detail;
    Dynamo's graphs compile as aot_eager's."""
    compiled = torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
    if not _is_exported(gm):
        return compiled

    def run(*args: Any) -> Any:
        return [_nudged(value) for value in compiled(*args)]

    return run


def refuses_exported_graphs(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *takes an exported program's graph at all*. It reads Dynamo's example values
    from the graph's inputs, which an exported graph does not carry, and raises there, as a
    backend written only for torch.compile; Dynamo's graphs compile as aot_eager's."""
    if _is_exported(gm):
        raise KeyError("example_value: this backend reads Dynamo's example values from its graph's inputs")
    return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
