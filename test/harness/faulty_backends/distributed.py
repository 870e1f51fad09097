"""Faulty backends wrong only under torch.distributed (test/dynamo/test_distributed.py;
test/proofs/test_distributed_faults.py): right in a single process, where they compile as
aot_eager does. One loses a DDP bucket's gradients; two kill or hang one rank, for the
containment of a distributed run's processes."""

from __future__ import annotations

import os
import signal
import time
from typing import Any, Callable

import torch

from test.harness.faulty_backends._shared import _backward_as_traced

_compiled_in_a_process_group = [0]


def drops_one_ddp_bucket(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *every DDP bucket's gradients reach the all-reduce*. In a process group, the
    second graph it compiles in the process (DDP's second bucket when Dynamo's DDPOptimizer
    splits the forward, or the second compiled layer under FSDP2) gets a backward whose
    parameter gradients are zeros, as a backend that loses a bucket's gradients; the
    gradient flowing back to earlier buckets stays right. Outside a process group, and for
    every other graph, it compiles as aot_eager."""
    from torch._dynamo.backends.common import aot_autograd

    index = None
    if _rank() is not None:
        index = _compiled_in_a_process_group[0]
        _compiled_in_a_process_group[0] += 1
    if index != 1:
        return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
    parameters = [position for position, node in enumerate(gm.graph.find_nodes(op="placeholder"))
                  if "_parameters_" in node.name]

    def backward(graph: torch.fx.GraphModule, inputs: list[Any]) -> Callable:
        def run(args: list[Any]) -> list[Any]:
            grads = list(graph(*args))
            return [torch.zeros_like(grad) if position in parameters and grad is not None else grad
                    for position, grad in enumerate(grads)]

        run._boxed_call = True
        return run

    return aot_autograd(fw_compiler=_backward_as_traced, bw_compiler=backward)(gm, example_inputs)


def _rank() -> int | None:
    import torch.distributed as dist

    return dist.get_rank() if dist.is_available() and dist.is_initialized() else None


def crashes_one_rank(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *compiles what it is given without killing its process*, in one rank of a
    process group: rank 1 is killed (SIGKILL) when handed its first graph, as a compiler that
    segfaults on one machine of a job; rank 0 is left waiting in the all-reduce. Elsewhere it
    compiles as aot_eager."""
    if _rank() == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)


def hangs_one_rank(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *compiles what it is given in finite time*, in one rank of a process group:
    rank 1 never returns from its first graph, as a compiler stuck on one machine of a job;
    rank 0 waits in the all-reduce until the group's timeout. Elsewhere it compiles as
    aot_eager."""
    if _rank() == 1:
        while True:
            time.sleep(1)
    return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
