"""The backend: Dynamo's graph goes through AOTAutograd, and the forward and backward
graphs it hands over run as they are, except that mycc's (imaginary) runtime has no
float64 kernels and refuses any graph that computes in float64."""

from __future__ import annotations

import torch
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func
from torch._functorch.partitioners import min_cut_rematerialization_partition


class UnsupportedDtype(NotImplementedError):
    """A graph uses a dtype mycc has no kernels for."""


def _compile(graph_module: torch.fx.GraphModule, example_inputs):
    for node in graph_module.graph.nodes:
        value = node.meta.get("val")
        if isinstance(value, torch.Tensor) and value.dtype == torch.float64:
            raise UnsupportedDtype(f"mycc has no float64 kernels ({node.op} {node.target})")
    return make_boxed_func(graph_module.forward)


# The partitioner torch's aot_eager uses. (With AOTAutograd's default partitioner, a training
# step with dropout draws other random numbers than eager under inductor's fallback_random,
# which the suite's model tests set: seen on torch 2.13.0 with aot_eager_default_partitioner.)
mycc = aot_autograd(fw_compiler=_compile, bw_compiler=_compile, partition_fn=min_cut_rematerialization_partition)
