"""Faulty backends that only real models exercise (test/proofs/test_faulty_models.py).

Each is an AOTAutograd backend (aot_eager's partitioner and input-mutation handling) that
miscompiles one kind of ATen node of the forward graph and compiles the rest correctly.
Where a fault fires it appends the running test's id to the file named by FIRED_LOG_ENV,
so the self-test can require exactly those tests to fail.
"""

from __future__ import annotations

import operator
import os
from typing import Any, Callable

import torch
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

from test.harness.faulty_backends._shared import _NUDGE, _backward_as_traced, _nudged, _packet_name

FIRED_LOG_ENV = "DYNAMO_SUITE_FAULT_LOG"
BIG_GRAPH = 150  # ATen operators in a forward graph; the models' graphs are 100-800


def _fired() -> None:
    path = os.environ.get(FIRED_LOG_ENV)
    if path:
        with open(path, "a") as log:
            log.write(os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0] + "\n")


def _boxed(gm: torch.fx.GraphModule, altered: bool, outputs: Callable = lambda values: values) -> Callable:
    """The graph as a boxed forward; when the fault altered it, each call is logged and its
    outputs pass through ``outputs``."""
    forward = make_boxed_func(gm.forward)
    if not altered:
        return forward

    def run(args):
        _fired()
        return outputs(forward(args))

    run._boxed_call = True
    return run


def _first_results(node: torch.fx.Node) -> list[torch.fx.Node]:
    """The node itself, or for an operator returning several tensors its getitem(0) users."""
    if len(node.target._schema.returns) == 1:
        return [node]
    return [user for user in node.users if user.target is operator.getitem and user.args[1] == 0]


def _nudging(selects: Callable[[torch.fx.Node], bool]) -> Callable:
    """A forward compiler that scales the (first) result of every selected node by 1 + 5%."""

    def compile_forward(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
        results = [result for node in list(gm.graph.nodes) if selects(node) for result in _first_results(node)]
        for result in results:
            with gm.graph.inserting_after(result):
                nudged = gm.graph.call_function(torch.ops.aten.mul.Tensor, (result, 1 + _NUDGE))
            result.replace_all_uses_with(nudged, delete_user_cb=lambda user: user is not nudged)
        gm.recompile()
        return _boxed(gm, bool(results))

    return compile_forward


def _aot_with_forward(compile_forward: Callable) -> Callable:
    from functorch.compile import min_cut_rematerialization_partition

    return aot_autograd(fw_compiler=compile_forward, inference_compiler=compile_forward,
                        bw_compiler=_backward_as_traced, partition_fn=min_cut_rematerialization_partition,
                        keep_inference_input_mutations=True)


wrong_attention = _aot_with_forward(_nudging(lambda node: _packet_name(node).startswith("_scaled_dot_product")))
wrong_attention.__doc__ = """Breaks: *scaled_dot_product_attention*. Every fused attention kernel's output is 5%
too large (a bad attention kernel); the math decomposition AOTAutograd uses with dropout is
left alone."""

wrong_group_norm = _aot_with_forward(_nudging(lambda node: _packet_name(node) == "native_group_norm"))
wrong_group_norm.__doc__ = """Breaks: *group_norm*. Its normalized output is 5% too large."""

wrong_conv_transpose = _aot_with_forward(
    _nudging(lambda node: _packet_name(node) == "convolution" and bool(node.args[6])))
wrong_conv_transpose.__doc__ = """Breaks: *transposed convolution*. Its output is 5% too large;
ordinary convolutions are right."""


def _interpolates(node: torch.fx.Node) -> bool:
    name = getattr(node.target, "__name__", "")
    return (node.op == "call_function" and getattr(node.target, "__module__", "") == "torch.nn.functional"
            and (name == "interpolate" or name.startswith("upsample")))


def wrong_upsampling(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *upsampling*. Every interpolation in the graph Dynamo captured (F.interpolate,
    F.upsample_*: a converter that lowers them to its own resize op before AOTAutograd would
    decompose them into index arithmetic) returns a result 5% too large; the rest compiles
    as aot_eager's."""
    nodes = [node for node in gm.graph.nodes if _interpolates(node)]
    for node in nodes:
        with gm.graph.inserting_after(node):
            nudged = gm.graph.call_function(operator.mul, (node, 1 + _NUDGE))
        node.replace_all_uses_with(nudged, delete_user_cb=lambda user: user is not nudged)
    gm.recompile()
    compiled = torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
    if not nodes:
        return compiled

    def run(*args):
        _fired()
        return compiled(*args)

    return run


def _forward_without_batch_norm_stats(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    fired = False
    for node in list(gm.graph.nodes):
        if _packet_name(node) == "_native_batch_norm_legit_functional":
            # Results 3 and 4 are the updated running mean and variance; hand back the old ones.
            for user in list(node.users):
                if user.target is operator.getitem and user.args[1] in (3, 4):
                    user.replace_all_uses_with(node.args[3 if user.args[1] == 3 else 4])
                    fired = True
    gm.recompile()
    return _boxed(gm, fired)


skips_batch_norm_stats = _aot_with_forward(_forward_without_batch_norm_stats)
skips_batch_norm_stats.__doc__ = """Breaks: *buffer mutations of real modules*. BatchNorm's running
mean and variance are never updated in training (num_batches_tracked still is): outputs and
gradients are right, only the buffers are stale."""


def _folded_with_one_shift(input, weight, bias, mean, var, eps):
    """Eval BatchNorm as the affine map a fold into the convolution before it makes, with the
    shift in a bias of the wrong shape: one value (channel 0's) broadcast over every channel."""
    scale = torch.rsqrt(var + eps) if weight is None else weight * torch.rsqrt(var + eps)
    shift = -mean * scale if bias is None else bias - mean * scale
    per_channel = (1, -1) + (1,) * (input.dim() - 2)
    return (input * scale.view(per_channel) + shift[:1]).to(input.dtype)


def _forward_with_batch_norm_folded_wrong(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    results = [(node, result) for node in list(gm.graph.nodes)
               if _packet_name(node) == "_native_batch_norm_legit_no_training" for result in _first_results(node)]
    for node, result in results:
        input, weight, bias, mean, var, _momentum, eps = node.args
        with gm.graph.inserting_after(result):
            folded = gm.graph.call_function(_folded_with_one_shift, (input, weight, bias, mean, var, eps))
        result.replace_all_uses_with(folded, delete_user_cb=lambda user: user is not folded)
    gm.recompile()
    return _boxed(gm, bool(results))


folds_batch_norm_wrong = _aot_with_forward(_forward_with_batch_norm_folded_wrong)
folds_batch_norm_wrong.__doc__ = """Breaks: *eval-mode BatchNorm*. BatchNorm that does not train is
computed as the scale and shift a fold into the preceding convolution makes, with the shift
in a bias of the wrong shape, one value broadcast over every channel (as onnxscript's fold
did, pytorch#166797); training, with batch statistics, is right."""


def _output_nudger(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    big = sum(node.op == "call_function" for node in gm.graph.nodes) > BIG_GRAPH
    return _boxed(gm, big, lambda values: [_nudged(value) for value in values])


miscompiles_big_graphs = _aot_with_forward(_output_nudger)
miscompiles_big_graphs.__doc__ = f"""Breaks: *large graphs*. A forward graph of more than {BIG_GRAPH} ATen
operators gets every floating output (user outputs, buffer updates and the activations
saved for backward) shifted by 5%; smaller graphs are compiled correctly (a
register allocator or scheduler that only fails past some size)."""
