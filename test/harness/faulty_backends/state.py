"""Faulty backends right on the call a graph was compiled for and wrong once something
around it changed, or only in the graphs of a training loop (test/proofs/test_state_change_faults.py).

Each compiles what it is given as ``aot_eager`` would and breaks one thing: a compile
cache keyed too loosely, module state taken for constants, an optimizer step's update
scaled. The families of test_state_changes.py and
test_training_loop.py must fail on each; the op sweep and the contract families pass most
of their tests on them, which is why these families exist.
"""

from __future__ import annotations

import os
from typing import Any, Callable

import torch

_BY_STRUCTURE: dict[tuple, Callable] = {}
_BY_INPUT_NAMES: dict[tuple, Callable] = {}


def _aot_eager(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)


def _test() -> str:
    # Per test: the fault is in reusing a graph within one program's life, not across tests.
    return os.environ.get("PYTEST_CURRENT_TEST", "")


def _structure(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> tuple:
    nodes = tuple((node.op, str(node.target)) for node in gm.graph.nodes)
    inputs = tuple((tuple(value.shape), value.dtype, value.requires_grad) if isinstance(value, torch.Tensor)
                   else type(value).__name__ for value in example_inputs)
    return _test(), nodes, inputs


def caches_by_graph_structure(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *state changed between calls*. Compiled graphs are cached by their operations
    and input shapes alone, ignoring the constants and attributes Dynamo baked in: after a
    config value, a flag's branch or a closure's value changes, the recompiled graph gets
    the function compiled for the old value."""
    key = _structure(gm, example_inputs)
    if key not in _BY_STRUCTURE:
        _BY_STRUCTURE[key] = _aot_eager(gm, example_inputs)
    return _BY_STRUCTURE[key]


def reuses_graphs_by_input_names(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *state changed between calls*. A recompiled graph whose inputs have the
    names of an earlier one (the same function and module state, Dynamo's names) gets the
    earlier compiled function: a backend that caches by its own idea of "the same program"
    and so serves the graph of the state before the change."""
    key = (_test(), tuple(node.name for node in gm.graph.nodes if node.op == "placeholder"))
    if key not in _BY_INPUT_NAMES:
        _BY_INPUT_NAMES[key] = _aot_eager(gm, example_inputs)
    return _BY_INPUT_NAMES[key]


def _module_state(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> list[int]:
    """Which inputs are a module's parameters or buffers (Dynamo names them after the module)."""
    names = [node.name for node in gm.graph.nodes if node.op == "placeholder"]
    return [index for index, (name, value) in enumerate(zip(names, example_inputs))
            if isinstance(value, torch.nn.Parameter) or "_buffers_" in name]


def freezes_module_state(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *module state reaches the graph as inputs*. Parameters and buffers are taken
    as constants when the graph is compiled (an inference "freezing" pass left on): later
    calls compute with those values, though gradients still reach the live parameters, and
    the buffers a call writes (BatchNorm's running statistics) are written to the copies."""
    frozen = {index: example_inputs[index].detach().clone() for index in _module_state(gm, example_inputs)}
    compiled = _aot_eager(gm, example_inputs)

    def run(*args: Any) -> Any:
        args = list(args)
        for index, value in frozen.items():
            live = args[index]
            args[index] = value if not live.requires_grad else live + (value - live).detach()
        return compiled(*args)

    return run


def _optimizer_tensors(gm: torch.fx.GraphModule) -> list[torch.Tensor]:
    """The parameters an optimizer step's graph updates: Dynamo attaches them to the graph
    (or passes them) under names made from the optimizer's ``param_groups``."""
    named = [node.target for node in gm.graph.nodes
             if node.op == "get_attr" and "param_groups" in node.target and "params" in node.target]
    return [getattr(gm, name) for name in named]


def overshoots_optimizer_steps(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *the compiled optimizer step*. In the graphs Dynamo traced from an optimizer,
    every parameter's update comes out 1% too large (a fused update kernel with a wrong
    scale); all other graphs are right. A 1% longer step leaves the parameters within float
    tolerance of eager's; only the update, judged against its own size, shows it."""
    params = _optimizer_tensors(gm)
    compiled = _aot_eager(gm, example_inputs)
    if not params:
        return compiled

    def run(*args: Any) -> Any:
        before = [param.detach().clone() for param in params]
        result = compiled(*args)
        with torch.no_grad():
            for param, old in zip(params, before):
                param.copy_(old + (param - old) * 1.01)
        return result

    return run
