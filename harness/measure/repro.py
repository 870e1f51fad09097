"""The graphs a failing test handed the backend, as Python source for a standalone repro.

Each graph becomes a function that rebuilds it: the FX code Dynamo generated (as in
PyTorch's own repro files) and its inputs described by shape, stride, dtype, device and
requires_grad, with values regenerated from a seed within the range the real inputs had
(small tensors keep their exact values: indices and masks must stay valid). A graph whose
code cannot be rebuilt outside the test (it calls something that only exists there) or does
not run on the regenerated inputs is left out; the repro then runs the scenario itself.

``harness.repros.generic`` puts this source into the repro file; the runner's pytest
plugin calls ``save`` for each unexpected FAIL or ERROR.
"""

from __future__ import annotations

import builtins
import math
import operator
import os
import types
from typing import Any

import torch

from harness import state

EXACT_LIMIT = 64  # elements: tensors up to this size keep their values
MAX_GRAPHS = 8  # per test: the last ones compiled
# What FX's code names besides its inputs: a torch.device is written device(type='cpu').
GLOBALS = {"torch": torch, "operator": operator, "math": math, "builtins": builtins, "inf": math.inf,
           "nan": math.nan, "device": torch.device}


def tensor_spec(tensor: torch.Tensor) -> dict[str, Any]:
    spec: dict[str, Any] = {"shape": list(tensor.shape), "stride": list(tensor.stride()), "dtype": str(tensor.dtype),
                            "device": tensor.device.type, "requires_grad": bool(tensor.requires_grad),
                            "view": tensor._is_view()}  # a view of another tensor: a graph may show a problem on those only
    values = tensor.detach()
    if values.numel() <= EXACT_LIMIT:
        spec["values"] = values.cpu().tolist()
    elif values.numel():
        if values.dtype == torch.bool:
            spec["range"] = [0, 1]
        else:
            spec["range"] = [values.min().item(), values.max().item()]
    return spec


def make_input(spec: Any, generator: torch.Generator) -> Any:
    """The input a spec describes (the repro file carries a copy of this function)."""
    if not isinstance(spec, dict):
        return spec
    dtype = getattr(torch, spec["dtype"].removeprefix("torch."))
    broadcast = [dim for dim, (size, step) in enumerate(zip(spec["shape"], spec["stride"])) if size > 1 and not step]
    if broadcast:  # an expanded tensor: make one slice, then expand it as the original was
        shape = [1 if dim in broadcast else size for dim, size in enumerate(spec["shape"])]
        base = dict(spec, shape=shape, requires_grad=False)
        if "values" in spec:
            values = torch.tensor(spec["values"], dtype=dtype).reshape(spec["shape"])
            base["values"] = values[tuple(slice(0, 1) if dim in broadcast else slice(None)
                                          for dim in range(len(shape)))].tolist()
        return make_input(base, generator).expand(spec["shape"]).requires_grad_(spec["requires_grad"])
    if "values" in spec:
        dense = torch.tensor(spec["values"], dtype=dtype).reshape(spec["shape"])
    else:
        low, high = spec.get("range", [0, 1])
        if dtype.is_floating_point or dtype.is_complex:
            dense = torch.rand(spec["shape"], generator=generator, dtype=torch.float64) * (high - low) + low
        else:
            dense = torch.randint(int(low), int(high) + 1, spec["shape"], generator=generator)
        dense = dense.to(dtype)
    if spec.get("view", True):  # over a flat tensor of its own (a record with no "view": as it always was)
        storage = 1 + sum((size - 1) * step for size, step in zip(spec["shape"], spec["stride"]))
        flat = torch.zeros(storage if dense.numel() else 0, dtype=dtype, device=spec["device"])
        tensor = flat.as_strided(spec["shape"], spec["stride"])
    else:
        tensor = torch.empty_strided(spec["shape"], spec["stride"], dtype=dtype, device=spec["device"])
    tensor.copy_(dense.to(spec["device"]))
    return tensor.requires_grad_(spec["requires_grad"])


def build(code: str) -> types.FunctionType:
    namespace = dict(GLOBALS)
    exec(compile(code, "<graph>", "exec"), namespace)
    return namespace["forward"]


def _inputs_spec(example_inputs: list[Any]) -> list[Any] | None:
    specs = []
    for value in example_inputs:
        if isinstance(value, torch.Tensor) and type(value) is torch.Tensor or isinstance(value, torch.nn.Parameter):
            specs.append(tensor_spec(value))
        elif isinstance(value, (bool, int, float)) or value is None:
            specs.append(value)
        elif isinstance(value, torch.SymInt | torch.SymFloat | torch.SymBool):
            specs.append(value.node.hint if hasattr(value.node, "hint") else None)
        else:
            return None  # a tensor subclass or another object the repro cannot recreate
    return specs


def why_not_replayable(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> str:
    """Why the graph cannot be rebuilt and run outside the test ("" if it can)."""
    if any(node.op in ("get_attr", "call_module") for node in gm.graph.nodes):
        return "it reads the module's own attributes"
    specs = _inputs_spec(example_inputs)
    if specs is None:
        return "an input is neither a plain tensor nor a number"
    # The trial run happens after the test, in the worker that runs the next ones: a graph
    # that switches grad mode off (torch._C._set_grad_enabled(False) is in the graph of a
    # function that does) must not leave it off for them, where every gradient check would
    # compare two runs without gradients and pass.
    before = state.snapshot()
    try:
        forward = build(gm.code.strip() + "\n")
        forward(None, *[make_input(spec, torch.Generator().manual_seed(0)) for spec in specs])
    except Exception as error:
        return f"rebuilt, it raises {type(error).__name__}: {(str(error).splitlines() or [''])[0]}"
    finally:
        if state.leaked(before, state.snapshot()):
            state.restore(before)
    return ""


def replayable(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> dict[str, Any] | None:
    """The graph as {"code", "inputs"} if it rebuilds and runs outside the test, else None."""
    if why_not_replayable(gm, example_inputs):
        return None
    return {"code": gm.code.strip() + "\n", "inputs": _inputs_spec(example_inputs)}


def save(testcase: Any, path: str) -> bool:
    """Write the replayable graphs the test's counters saw to ``path`` (a Python literal);
    False when there were none."""
    pairs = [(gm, inputs) for counter in getattr(testcase, "_counters", ())
             for gm, inputs in zip(counter.graphs, counter.example_inputs)][-MAX_GRAPHS:]
    graphs = [graph for graph in (replayable(gm, inputs) for gm, inputs in pairs) if graph is not None]
    if not graphs:
        return False
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(repr(graphs))
    os.replace(temporary, path)
    return True
