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


_RANDOM_CALLS = ("rand", "randn", "rand_like", "randn_like", "randint", "bernoulli", "dropout", "normal", "multinomial")


def _calls(gm: torch.fx.GraphModule) -> list[Any]:
    return [node.target for node in gm.graph.nodes if node.op in ("call_function", "call_method")]


def _draws_random_numbers(gm: torch.fx.GraphModule) -> bool:
    return any(getattr(target, "__name__", target) in _RANDOM_CALLS or "dropout" in str(getattr(target, "__name__", target))
               for target in _calls(gm))


def _calls_custom_ops(gm: torch.fx.GraphModule) -> bool:
    return any(getattr(target, "namespace", "aten") not in ("aten", "prim", "prims") for target in _calls(gm))


# What each declared capability's graphs make it raise: the crash texts that a capability's
# words used to be found in as substrings ("Constraints", "upgrade", "degraded" held "train"
# and "grad"; "code generator" held "generator"; "unsupported operator" named custom ops),
# each with a negation in the same sentence, as a crash may have.
_CRASHES = (
    (_needs_gradients, "Constraints violated in the lowering: upgrade the compiler, the kernel degraded and cannot run"),
    (_draws_random_numbers, "the code generator cannot emit a loop for node 3"),
    (_calls_custom_ops, "unsupported operator aten::mm in the lowering table"),
)
_REFUSALS = (
    (_needs_gradients, "training is not supported: this backend compiles inference graphs only"),
    (_draws_random_numbers, "random operators are not supported by this backend"),
    (_calls_custom_ops, "this backend does not support custom operators"),
)


def _raising(table: tuple, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    for applies, message in table:
        if applies(gm):
            raise RuntimeError(message)
    return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)


def crashes_with_refusal_words(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *first-order gradients, random operators and custom operators*, with a crash
    that is no refusal: a graph that needs gradients, draws random numbers or calls a custom
    operator fails to compile with a message that holds words of those capabilities inside
    other words or phrases ("Constraints violated ... upgrade ... degraded", "code generator",
    "unsupported operator aten::mm"), never saying the capability is not supported. Under
    ``--unsupported training,random,custom-ops`` it breaks the refusal contract (it was
    REFUSED when refusals were found by substring)."""
    return _raising(_CRASHES, gm, example_inputs)


def refuses_in_form(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *first-order gradients, random operators and custom operators*, and says so
    in the refusal contract's form (``training is not supported``, ``random operators are
    not supported``, ``does not support custom operators``); every other graph is compiled as
    ``aot_eager`` would. Under ``--unsupported training,random,custom-ops`` it keeps the
    refusal contract."""
    return _raising(_REFUSALS, gm, example_inputs)
