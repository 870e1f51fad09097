"""Faulty backends right for a caller that calls from one thread and leaves autograd's
saving alone, wrong for the other ways callers call (harness/axes/callers.py;
test/proofs/test_caller_faults.py)."""

from __future__ import annotations

import time
from typing import Any, Callable

import torch
from torch.utils import _pytree as pytree

# One staging buffer per (output position, shape, dtype, device), shared by every call of
# every graph in every thread: what a runtime with one static output arena does.
_STAGING: dict[tuple, torch.Tensor] = {}
# Long enough that calls from a pool of threads overlap between copying a result into the
# staging buffer and copying it back (the race is then certain), short for one caller.
_STAGED_FOR_S = 0.005


def stages_results_in_a_shared_buffer(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *calls from several threads at once*. Each result is copied into a staging
    buffer shared by all calls (one per output position, shape and dtype), and copied back
    from it before it is returned, as a runtime with one static output arena does: exact for
    one caller, but a call from another thread that overlaps overwrites the buffer in between,
    and a thread gets another thread's result. Otherwise compiles as aot_eager's."""
    compiled = torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)

    def run(*args: Any) -> Any:
        result = compiled(*args)
        staged = []
        for position, value in enumerate(pytree.tree_leaves(result)):
            if type(value) is not torch.Tensor or value.numel() == 0 or value.is_inference() \
                    or torch._debug_has_internal_overlap(value) != 0:
                continue  # nothing a staging copy could write back into
            key = (position, tuple(value.shape), value.dtype, value.device)
            buffer = _STAGING.setdefault(key, torch.empty_like(value, memory_format=torch.contiguous_format))
            buffer.copy_(value.detach())
            staged.append((value, buffer))
        if staged:
            time.sleep(_STAGED_FOR_S)
        for value, buffer in staged:
            # Through .data: the values come back from the buffer, the autograd history (and the
            # version counter of what the backward saved) stays the result's.
            value.data.copy_(buffer)
        return result

    return run


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
