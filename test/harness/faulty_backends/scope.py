"""Backends that do not train, for the refusal contract (harness.features.scope;
test/proofs/test_scope_faults.py).

Run with ``--unsupported training``, a backend that refuses a training graph with an
error naming it keeps the contract (its training tests are REFUSED, the rest pass); one
that refuses without saying why, or that answers differently from eager (outputs without
autograd history, as ``detaches_outputs``; wrong gradients, as ``wrong_gradients``), breaks
it. Without the declaration each of them fails its training tests.
"""

from __future__ import annotations

from typing import Any, Callable

import torch


def _needs_gradients(gm: torch.fx.GraphModule) -> bool:
    """Whether a value the graph computes requires grad: Dynamo traced it for training."""
    for node in gm.graph.nodes:
        value = node.meta.get("example_value")
        if node.op != "placeholder" and isinstance(value, torch.Tensor) and value.requires_grad:
            return True
    return False


def refuses_training(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *first-order gradients*, and says so: a graph that needs gradients is refused
    at compile time with ``NotImplementedError: training is not supported``; every other
    graph is compiled as ``aot_eager`` would. Under ``--unsupported training`` it keeps the
    refusal contract."""
    if _needs_gradients(gm):
        raise NotImplementedError("training is not supported: this backend compiles inference graphs only")
    return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)


def refuses_vaguely(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *first-order gradients*, without saying so: a graph that needs gradients is
    refused with ``RuntimeError: compilation failed (code 3)``, an error a user cannot act
    on. Under ``--unsupported training`` it still breaks the refusal contract."""
    if _needs_gradients(gm):
        raise RuntimeError("compilation failed (code 3)")
    return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
