"""Backends that each break one clause of the backend contract on purpose.

The suite's scenarios claim to catch a backend that computes something a user could tell
apart from eager. These backends are how the suite proves that claim about itself: run a
scenario family against the matching faulty backend and every scenario must fail.

Use them like any other backend spec, e.g.
``DYNAMO_SUITE_BACKENDS=test.harness.faulty_backends:wrong_values``.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

# Far outside every tolerance in harness.compare (the loosest, bfloat16, is 1.6e-2 relative
# plus 1e-2 absolute), yet small enough to leave the values plausible at a glance.
_NUDGE = 5e-2


def _nudged(value: Any) -> Any:
    if not isinstance(value, torch.Tensor) or not (value.dtype.is_floating_point or value.dtype.is_complex):
        return value
    # Out of place and through a detached offset, so inputs are untouched, requires_grad
    # is kept and gradients still reach the inputs: only the forward values are wrong.
    offset = _NUDGE * (1 + value.detach().abs())
    return value + offset.to(value.dtype)


def wrong_values(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *compiled outputs equal eager outputs*.

    Runs Dynamo's graph as captured (no AOTAutograd), then shifts every floating-point
    output by 5% of its magnitude (at least 0.05). Shapes, dtypes, requires_grad, input
    mutations and gradients stay correct, so only a value comparison can notice.
    """

    def run(*args: Any) -> Any:
        return pytree.tree_map(_nudged, gm(*args))

    return run


def _writes_into_input(node: torch.fx.Node) -> bool:
    return (
        node.op == "call_function"
        and node.target is torch.ops.aten.copy_.default
        and isinstance(node.args[0], torch.fx.Node)
        and node.args[0].op == "placeholder"
    )


def _forward_without_input_writes(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    for node in [node for node in gm.graph.nodes if _writes_into_input(node)]:
        # Whoever read the result of the write (an output aliasing the input) now gets the
        # new value without the input having received it.
        node.replace_all_uses_with(node.args[1])
        gm.graph.erase_node(node)
    gm.recompile()
    return make_boxed_func(gm.forward)


def _backward_as_traced(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    return make_boxed_func(gm.forward)


# keep_inference_input_mutations asks AOTAutograd to express mutations of inputs that do
# not require grad as aten.copy_(input, new_value) inside the forward graph (inference and
# training graphs alike), which is where the forward compiler can lose them.
_aot_dropping_input_writes = aot_autograd(
    fw_compiler=_forward_without_input_writes,
    bw_compiler=_backward_as_traced,
    keep_inference_input_mutations=True,
)


def drops_input_mutations(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *in-place changes to the function's inputs are visible after the call*.

    A real AOTAutograd backend (outputs and gradients are right) whose forward compiler
    deletes the ``aten.copy_`` nodes that write new values back into graph inputs. After
    ``compiled(x)`` with ``x.add_(1)`` inside, ``x`` is unchanged. Mutations AOTAutograd
    applies outside the graph (metadata changes such as ``t_()``, data changes of inputs
    that require grad) still happen.
    """
    return _aot_dropping_input_writes(gm, example_inputs)


# Which scenario of PythonAutogradTests each misbehaviour of `crashes_and_hangs` hits.
CRASH_AND_HANG_PLAN = {
    "test_forwards_resetting_tape": "segfault",
    "test_forwards": "exit",
    "test_backwards_resetting_tape": "hang",
    "test_forward_and_backward_in_separate_frames": "hang_ignoring_alarm",
}


def _current_scenario() -> str:
    # pytest names the running test here; under plain unittest there is none, and the
    # backend behaves.
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    return current.split("::")[-1].split(" ")[0]


def crashes_and_hangs(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *compiling returns* -- the failures a runner must survive.

    Under pytest, on the PythonAutogradTests scenarios named in CRASH_AND_HANG_PLAN, it
    dereferences NULL (SIGSEGV), calls ``os._exit(3)``, sleeps forever, or sleeps forever
    with SIGALRM ignored (as a native loop that never returns to Python would). Every other
    scenario gets the graph run as captured.
    """
    action = CRASH_AND_HANG_PLAN.get(_current_scenario())
    if action == "segfault":
        ctypes.string_at(0)
    elif action == "exit":
        os._exit(3)
    elif action in ("hang", "hang_ignoring_alarm"):
        if action == "hang_ignoring_alarm":
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
        while True:
            time.sleep(1)
    return gm.forward
