"""Faulty backends that fall back to eager silently (harness/measure/eager_share.py): every
result is right, so only the eager share shows that the backend's own runtime did not run
the graph (test/proofs/test_eager_share_faults.py). Where they do compile, they compile
with inductor."""

from __future__ import annotations

import logging
from typing import Any, Callable

import torch
from functorch.compile import make_boxed_func

_fallback_log = logging.getLogger("dynamo_suite.faulty_backends")


def _strict_converter(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """A converter to a runtime that supports nothing yet: it fails on every graph."""
    raise NotImplementedError(f"no conversion for {next(iter(gm.graph.nodes)).name}'s graph")


def swallows_errors_runs_eagerly(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *the backend runs what it received*. Its converter fails on every graph; the
    error is caught, logged at DEBUG level, and the graph runs with PyTorch's eager kernels,
    as a third-party backend's fallback does. Every result is right."""
    try:
        return _strict_converter(gm, example_inputs)
    except Exception as error:
        _fallback_log.debug("conversion failed, running the graph eagerly: %s", error)
        return gm.forward


def _multiplies(gm: torch.fx.GraphModule) -> bool:
    return any(node.op in ("call_function", "call_method")
               and getattr(node.target, "__name__", str(node.target)).strip("_").removeprefix("i") == "mul"
               for node in gm.graph.nodes)


def falls_back_on_some_graphs(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *the backend compiles every graph it received*. It compiles with inductor,
    but its lowering of a multiplication raises; the error is caught, logged at DEBUG level,
    and that graph runs as handed over (``gm.forward``) with PyTorch's eager kernels. Every
    result is right; graphs without a multiplication are inductor's."""
    try:
        if _multiplies(gm):
            raise NotImplementedError("no lowering for mul")
        return torch._dynamo.lookup_backend("inductor")(gm, example_inputs)
    except Exception as error:
        _fallback_log.debug("lowering failed, running the graph eagerly: %s", error)
        return gm.forward


def _has_symbolic_sizes(example_inputs: list[Any]) -> bool:
    return any(isinstance(value, torch.SymInt) or (isinstance(value, torch.Tensor) and any(
        isinstance(size, torch.SymInt) for size in value.shape)) for value in example_inputs)


def eager_for_symbolic_sizes(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *the backend runs graphs with symbolic sizes*. A graph whose inputs include
    sizes (captured with dynamic shapes) makes its converter fail, which it swallows and
    runs the graph eagerly; graphs with static sizes compile with inductor."""
    if not _has_symbolic_sizes(example_inputs):
        return torch._dynamo.lookup_backend("inductor")(gm, example_inputs)
    try:
        return _strict_converter(gm, example_inputs)
    except Exception as error:
        _fallback_log.debug("no symbolic sizes in this runtime, running the graph eagerly: %s", error)
        return gm.forward


EAGER_OP = torch.ops.aten.mul.Tensor  # the op one_op_eagerly's runtime has no kernel for


@torch.library.custom_op("suite_faulty::mul_eagerly", mutates_args=())
def _mul_eagerly(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.mul(a, b)


@torch.library.custom_op("suite_faulty::mul_scalar_eagerly", mutates_args=())
def _mul_scalar_eagerly(a: torch.Tensor, b: float) -> torch.Tensor:
    return torch.mul(a, b)


@_mul_eagerly.register_fake
def _(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.mul(a, b)


@_mul_scalar_eagerly.register_fake
def _(a: torch.Tensor, b: float) -> torch.Tensor:
    return torch.mul(a, b)


def _mul_in_eager_kernels(gm: torch.fx.GraphModule) -> None:
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target is not EAGER_OP or node.kwargs:
            continue
        if all(isinstance(arg, torch.fx.Node) for arg in node.args):
            node.target = torch.ops.suite_faulty.mul_eagerly.default
        elif isinstance(node.args[0], torch.fx.Node) and type(node.args[1]) in (int, float):
            node.target = torch.ops.suite_faulty.mul_scalar_eagerly.default
    gm.recompile()


def _inductor_except(gm: torch.fx.GraphModule, example_inputs: list[Any], inner: Callable) -> Callable:
    """Inductor, with ``inner(graph, inputs, compile_inner, **kwargs)`` in place of its inner
    compile of each forward and backward graph. Its caches are off: a graph inductor compiled
    before must not be reused."""
    from torch._inductor.compile_fx import compile_fx, compile_fx_inner

    with torch._functorch.config.patch(enable_autograd_cache=False), \
            torch._inductor.config.patch(fx_graph_cache=False):
        return compile_fx(gm, example_inputs, inner_compile=lambda graph, inputs, **kwargs: inner(
            graph, inputs, compile_fx_inner, **kwargs))


def _forward_mul_eagerly(graph: torch.fx.GraphModule, inputs: list[Any], compile_inner: Callable,
                         **kwargs: Any) -> Callable:
    if not kwargs.get("is_backward", False):
        _mul_in_eager_kernels(graph)
    return compile_inner(graph, inputs, **kwargs)


def one_op_eagerly(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *the backend runs every op of its graph*. Compiles with inductor, except that
    its partitioner declines aten.mul in forward graphs: each runs as a call into PyTorch's
    eager kernel."""
    return _inductor_except(gm, example_inputs, _forward_mul_eagerly)


def _backward_eagerly(graph: torch.fx.GraphModule, inputs: list[Any], compile_inner: Callable,
                      **kwargs: Any) -> Callable:
    if kwargs.get("is_backward", False):
        return make_boxed_func(graph.forward)
    return compile_inner(graph, inputs, **kwargs)


def backward_eagerly(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *the backend runs the backward of what it received*. Forward graphs compile
    with inductor; backward graphs, which its runtime cannot train yet, run with PyTorch's
    eager kernels, as an inference-first backend's do. Every gradient is right."""
    return _inductor_except(gm, example_inputs, _backward_eagerly)
