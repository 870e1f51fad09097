"""Faulty backends right for a caller that calls from one thread and leaves autograd's
saving alone, wrong for the other ways callers call (harness/axes/callers.py;
test/proofs/test_caller_faults.py)."""

from __future__ import annotations

from typing import Any, Callable

import torch

from test.harness.mutation import faults


def stages_results_in_a_shared_buffer(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *calls from several threads at once*. Each result is copied into a staging
    buffer shared by all calls (one per output position, shape and dtype), and copied back
    from it before it is returned, as a runtime with one static output arena does: exact for
    one caller, but a call from another thread that overlaps overwrites the buffer in between,
    and a thread gets another thread's result. Otherwise compiles as aot_eager's."""
    compiled = torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
    # The kill matrix's mutant of the same bug (staged_in_shared_buffer), firing on every call.
    return faults.CALL_FAULTS["staged_in_shared_buffer"].wrap(compiled, lambda: True, lambda: None)


def _identity(value: Any) -> Any:
    return value


def ignores_saved_tensor_hooks(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *the caller's saved-tensor hooks see what the backward saves*. Each call runs
    inside saved-tensor hooks of the backend's own (which keep the tensors as they are), as a
    runtime that manages its activations' memory itself does: every value and gradient is
    right, but a caller's ``saved_tensors_hooks`` (activation offloading, compression) never
    sees a compiled call's saved tensors. Otherwise compiles as aot_eager's."""
    compiled = torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)

    def run(*args: Any) -> Any:
        with torch.autograd.graph.saved_tensors_hooks(_identity, _identity):
            return compiled(*args)

    return run
