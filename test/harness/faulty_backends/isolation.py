"""Faulty backends that a runner must contain (test/harness/test_isolation.py): a runtime
that stays broken for the rest of the process, and a compiler that never returns."""

from __future__ import annotations

import time
from typing import Any, Callable

import torch
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

from test.harness.faulty_backends._shared import _packet_name

_RUNTIME_BROKEN = False  # per process, like a real runtime's global state


def _runtime_that_breaks(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    forward = make_boxed_func(gm.forward)

    def run(args):
        global _RUNTIME_BROKEN
        if _RUNTIME_BROKEN:
            raise RuntimeError("runtime error: semaphore already signaled")
        if any(isinstance(arg, torch.Tensor) and arg.dtype == torch.float64 for arg in args):
            _RUNTIME_BROKEN = True
            raise RuntimeError("float64 buffers are not supported by this runtime")
        return forward(args)

    run._boxed_call = True
    return run


def _breaks_after_float64() -> Callable:
    from functorch.compile import min_cut_rematerialization_partition

    # aot_eager's partitioner: the default one draws dropout masks unlike eager in training.
    return aot_autograd(fw_compiler=_runtime_that_breaks, bw_compiler=_runtime_that_breaks,
                        partition_fn=min_cut_rematerialization_partition, keep_inference_input_mutations=True)


breaks_after_float64 = _breaks_after_float64()
breaks_after_float64.__doc__ = """Breaks: *the process, for every later test*. Its runtime refuses
float64 inputs, and that refusal leaves it broken: every later call of any compiled graph in
the process raises (as a runtime whose error path forgets to release a semaphore would).
Alone, every graph without float64 inputs runs as captured."""


HANGING_OP = "trunc"  # 8 default-run scenarios compile a graph with aten.trunc


def _compiler_hanging_on_trunc(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    if any(_packet_name(node) == HANGING_OP for node in gm.graph.nodes):
        while True:  # a compiler stuck in a loop on one operator
            time.sleep(1)
    return make_boxed_func(gm.forward)


def _hangs_compiling_trunc() -> Callable:
    from functorch.compile import min_cut_rematerialization_partition

    return aot_autograd(fw_compiler=_compiler_hanging_on_trunc, bw_compiler=_compiler_hanging_on_trunc,
                        partition_fn=min_cut_rematerialization_partition, keep_inference_input_mutations=True)


hangs_compiling_trunc = _hangs_compiling_trunc()
hangs_compiling_trunc.__doc__ = f"""Breaks: *compiling finishes*. Compiling a graph that contains
aten.{HANGING_OP} never returns (a compiler stuck in a loop on one operator); every other
graph compiles as aot_eager's would."""
