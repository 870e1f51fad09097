"""Distributed training in two processes on this machine: a model trained under DDP or FSDP2,
eagerly and compiled by the backend under test, each rank's gradients and parameters kept for
the scenario to compare (test/dynamo/test_distributed.py).

``train(pattern, backend_spec, directory)`` starts two ranks (``python -m
harness.testcase.distributed``, contained by harness/testcase/processes.py: their own process
group, killed with the test's worker, killed at the deadline), joined by gloo over the
loopback interface through a file store. Each rank trains the same model (same seed) on its
own data for ``STEPS`` SGD steps, first eagerly under the wrapper (the reference), then with
the pattern's compile, through a counter around the backend, and saves what it saw.

The model is a module of the suite's own (``WideMLP``): Dynamo does not compile frames of
torch.nn's own files at the top level (``Sequential`` under DDP reaches no backend), and a user's
model is what the patterns are for. Its middle layer (1 MiB of weights) with
``bucket_cap_mb=1`` gives DDP two buckets, so Dynamo's DDPOptimizer splits the forward graph
in two and the backend receives each part as a graph of its own.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Callable

import torch

WORLD_SIZE = 2
STEPS = 2
BUCKET_CAP_MB = 1.0  # DDP's default first bucket is 1 MiB, and no bucket may be smaller
GROUP_TIMEOUT_S = 60  # a collective waiting on a dead or stuck peer gives up after this
LAUNCH_TIMEOUT_S = 300.0  # both ranks, imports and compiles included (inductor, cold: about 60 s)
BATCH, FEATURES, WIDTH, OUT = 8, 32, 512, 8

# How the model is compiled under the wrapper; what a user writes.
PATTERNS = {
    "compile_ddp": "torch.compile(DDP(model))",
    "ddp_of_compiled": "DDP(torch.compile(model))",
    "compiled_step": "torch.compile(step) of a step that runs DDP(model), the loss and backward()",
    "fsdp2_compiled_layers": "each layer torch.compile'd, then fully_shard on each and on the model (FSDP2)",
}
# How many graphs each rank's backend must receive in the pattern: DDP's two buckets, each a
# graph of its own; the loss and backward() of a compiled step add the loss's graph; FSDP2
# compiles each of the three layers.
GRAPHS = {"compile_ddp": 2, "ddp_of_compiled": 2, "compiled_step": 3, "fsdp2_compiled_layers": 3}


class WideMLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(FEATURES, WIDTH)
        self.fc2 = torch.nn.Linear(WIDTH, WIDTH)
        self.fc3 = torch.nn.Linear(WIDTH, OUT)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


@dataclass
class RankRun:
    """What one rank saw: graphs its backend received (and their calls), gradients after
    the first step and parameters after the last, eager and compiled, and the gradients of
    its own data alone (what it would have without the all-reduce)."""

    rank: int
    graphs: int
    graph_ops: list[int]
    eager_grads: dict[str, torch.Tensor]
    compiled_grads: dict[str, torch.Tensor]
    eager_params: dict[str, torch.Tensor]
    compiled_params: dict[str, torch.Tensor]
    local_grads: dict[str, torch.Tensor]


def train(pattern: str, backend_spec: str, directory: Path, environment: dict[str, str],
          timeout_s: float = LAUNCH_TIMEOUT_S) -> list[RankRun]:
    """Both ranks' runs of ``pattern`` (processes.ProcessesFailed if a rank died, failed or hung)."""
    from harness.testcase import processes

    plan = {"pattern": pattern, "backend": backend_spec, "store": str(directory / "store"),
            "parent": os.getpid(), "environment": environment}
    plan_path = directory / "plan.json"
    plan_path.write_text(json.dumps(plan))
    processes.run_all(__name__, [[str(plan_path), str(rank)] for rank in range(WORLD_SIZE)], directory, timeout_s,
                      {**environment, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1"})
    return [RankRun(**torch.load(directory / f"rank-{rank}.pt")) for rank in range(WORLD_SIZE)]


# -- in a rank -------------------------------------------------------------------------------


def _batches(rank: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(1000 + rank)  # each rank its own data
    return [(torch.randn(BATCH, FEATURES, generator=generator), torch.randn(BATCH, OUT, generator=generator))
            for _ in range(STEPS)]


def _full(tensor: torch.Tensor) -> torch.Tensor:
    """A DTensor's (FSDP2's sharded parameters and gradients) whole value; a tensor itself."""
    return (tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor).detach().clone()


def _wrapped(pattern: str, compiler: Callable | None) -> tuple[torch.nn.Module, Callable]:
    """The model under the pattern's wrapper (compiled with ``compiler`` unless None), and the
    training step to call."""
    from torch.nn.parallel import DistributedDataParallel

    torch.manual_seed(0)
    model = WideMLP()

    def step(module: Callable, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        loss = torch.nn.functional.mse_loss(module(x), y)
        loss.backward()
        return loss

    compile_ = (lambda fn: torch.compile(fn, backend=compiler)) if compiler is not None else (lambda fn: fn)
    if pattern == "fsdp2_compiled_layers":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        mesh = init_device_mesh("cpu", (WORLD_SIZE,))
        for name in ("fc1", "fc2", "fc3"):
            layer = compile_(getattr(model, name))
            setattr(model, name, layer)
            fully_shard(layer, mesh=mesh)
        fully_shard(model, mesh=mesh)
        return model, lambda x, y: step(model, x, y)
    if pattern == "ddp_of_compiled":
        ddp = DistributedDataParallel(compile_(model), bucket_cap_mb=BUCKET_CAP_MB)
        return model, lambda x, y: step(ddp, x, y)
    ddp = DistributedDataParallel(model, bucket_cap_mb=BUCKET_CAP_MB)
    if pattern == "compile_ddp":
        compiled = compile_(ddp)
        return model, lambda x, y: step(compiled, x, y)
    if pattern == "compiled_step":
        compiled_step = compile_(step)
        return model, lambda x, y: compiled_step(ddp, x, y)
    raise ValueError(f"unknown pattern {pattern!r}; known: {', '.join(PATTERNS)}")


def _names(model: torch.nn.Module) -> list[str]:
    # torch.compile'd layers add "_orig_mod." to the names; the comparison wants the model's own.
    return [name.replace("_orig_mod.", "") for name, _ in model.named_parameters()]


def _run(pattern: str, rank: int, compiler: Callable | None) -> tuple[dict, dict]:
    model, step = _wrapped(pattern, compiler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    first_grads: dict[str, torch.Tensor] = {}
    for index, (x, y) in enumerate(_batches(rank)):
        optimizer.zero_grad(set_to_none=True)
        step(x, y)
        if index == 0:
            first_grads = {name: _full(parameter.grad) for name, parameter in zip(_names(model), model.parameters())
                           if parameter.grad is not None}
        optimizer.step()
    return first_grads, {name: _full(parameter) for name, parameter in zip(_names(model), model.parameters())}


def _local_grads(rank: int) -> dict[str, torch.Tensor]:
    torch.manual_seed(0)
    model = WideMLP()
    x, y = _batches(rank)[0]
    torch.nn.functional.mse_loss(model(x), y).backward()
    return {name: parameter.grad.detach().clone() for name, parameter in model.named_parameters()}


def main(argv: list[str]) -> int:
    plan, rank = json.loads(Path(argv[0]).read_text()), int(argv[1])
    if os.getppid() != plan["parent"]:
        return 3  # the test's worker died before this rank could tie its life to it
    import torch.distributed as dist

    from harness import settings
    from harness.axes.backends import import_plugins, resolve_backend
    from harness.measure.counters import CompileCounterWithBackend

    settings.use(settings.Settings(plan["environment"]))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{plan['store']}", rank=rank, world_size=WORLD_SIZE,
                            timeout=timedelta(seconds=GROUP_TIMEOUT_S))
    try:
        import_plugins()
        eager_grads, eager_params = _run(plan["pattern"], rank, None)
        counter = CompileCounterWithBackend(resolve_backend(plan["backend"]))
        compiled_grads, compiled_params = _run(plan["pattern"], rank, counter)
        run = RankRun(rank, counter.frame_count, [len(list(graph.graph.nodes)) for graph in counter.graphs],
                      eager_grads, compiled_grads, eager_params, compiled_params, _local_grads(rank))
        written = Path(plan["store"]).parent / f"rank-{rank}.pt"
        torch.save(vars(run), f"{written}.tmp")
        os.replace(f"{written}.tmp", written)
    finally:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
