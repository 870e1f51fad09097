"""Faulty backends for the compile surface (test/dynamo/test_compile_surface.py): each lowers one
higher-order operator Dynamo hands it wrongly, and is right on every graph without it.

* ``differentiates_autograd_function_forwards``: a torch.autograd.Function's forward inlined,
  its backward dropped (what pytorch#193279 reports of Dynamo under torch.func.grad);
* ``keeps_checkpointed_activations``: a checkpointed block run as an ordinary call, so its
  activations are saved for the backward instead of recomputed;
* ``wrong_control_flow_backward``: the backward of graphs with cond or while_loop off by 5%;
* ``returns_carried_values_from_a_loop_that_never_steps``: a while_loop whose condition is false on
  entry gives back the tensors it was given, not copies (what pytorch#146213 reports of inductor);
* ``drops_gradients_of_what_a_scan_closes_over``: a scan's body run on detached copies of the
  tensors it closes over, so the parameters it reads get no gradient from it.

test/proofs/test_compile_surface_faults.py runs each against the tests that must catch it.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

from test.harness.faulty_backends._shared import _backward_as_traced, _nudged


def _forward_only(forward_body: torch.fx.GraphModule, backward_body: torch.fx.GraphModule, *args: Any,
                  **options: Any) -> tuple:
    outputs, _saved_for_backward = forward_body(*args)
    return outputs


def _without_grad_switches(body: torch.fx.GraphModule) -> None:
    # Dynamo's forward body turns grad off around the user's forward (autograd.Function
    # runs it so); left on, autograd records the forward's operators and differentiates them.
    for node in list(body.graph.nodes):
        if node.op == "call_function" and node.target is torch._C._set_grad_enabled:
            body.graph.erase_node(node)
    body.recompile()


def differentiates_autograd_function_forwards(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *an autograd.Function's backward is its own*. Each Function Dynamo captured
    (autograd_function_apply) is replaced by its forward, run with grad on, so autograd
    differentiates the forward's operators and the user's backward never runs; a
    once_differentiable backward is thereby differentiable twice. Outputs are right."""
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.ops.higher_order.autograd_function_apply:
            _without_grad_switches(getattr(gm, node.args[0].target))
            node.target = _forward_only
    gm.recompile()
    return gm.forward


def _body_called(body: torch.fx.GraphModule, *args: Any, **options: Any) -> Any:
    return body(*args)


def _aot_as_traced(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    return aot_autograd(fw_compiler=_backward_as_traced, bw_compiler=_backward_as_traced)(gm, example_inputs)


def keeps_checkpointed_activations(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *a checkpointed block recomputes its forward in the backward*. Each block
    Dynamo captured (tag_activation_checkpoint) is called as an ordinary function before
    AOTAutograd traces the graph, so the backward keeps the block's activations; values and
    gradients are right, only the memory a checkpoint was written to save is spent."""
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.ops.higher_order.tag_activation_checkpoint:
            node.target = _body_called
    gm.recompile()
    return _aot_as_traced(gm, example_inputs)


_CONTROL_FLOW = ("cond", "while_loop")


def _has_control_flow(gm: torch.fx.GraphModule) -> bool:
    return any(node.op == "call_function" and getattr(node.target, "__name__", "") in _CONTROL_FLOW
               for module in gm.modules() for node in module.graph.nodes)


def _backward_nudged_around_control_flow(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    if not _has_control_flow(gm):
        return make_boxed_func(gm.forward)
    return make_boxed_func(lambda *args: [_nudged(value) for value in gm(*args)])


_aot_with_wrong_control_flow_backward = aot_autograd(fw_compiler=_backward_as_traced,
                                                     bw_compiler=_backward_nudged_around_control_flow)


def wrong_control_flow_backward(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *gradients through cond and while_loop*. An AOTAutograd backend whose forward
    is right and whose backward graphs holding a cond or while_loop give every gradient 5%
    (plus 0.05) off, as a lowering of the backward's control flow that gets it wrong does."""
    return _aot_with_wrong_control_flow_backward(gm, example_inputs)


def _loop_giving_back_its_inputs(cond_body: torch.fx.GraphModule, body: torch.fx.GraphModule, carried: tuple,
                                 additional: tuple, *rest: Any, **options: Any) -> tuple:
    if not cond_body(*carried, *additional):
        return tuple(carried)
    return torch.ops.higher_order.while_loop(cond_body, body, carried, additional, *rest, **options)


def returns_carried_values_from_a_loop_that_never_steps(gm: torch.fx.GraphModule,
                                                        example_inputs: list[Any]) -> Callable:
    """Breaks: *a while_loop's outputs are never its inputs*. Each while_loop Dynamo captured
    runs as it does in eager, except that where its condition is false on entry it returns the
    carried tensors themselves: values are right until the caller writes an output or the
    tensor it was carried from in place, and the write shows through the other."""
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.ops.higher_order.while_loop:
            node.target = _loop_giving_back_its_inputs
    gm.recompile()
    return gm.forward


def _scan_of_detached_closure(combine: torch.fx.GraphModule, init: list, xs: list, additional: list,
                              *rest: Any, **options: Any) -> Any:
    detached = [value.detach() if isinstance(value, torch.Tensor) else value for value in additional]
    return torch.ops.higher_order.scan(combine, init, xs, detached, *rest, **options)


def drops_gradients_of_what_a_scan_closes_over(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *the tensors a scan's body closes over get their gradients*. Each scan Dynamo
    captured runs as it does in eager, on detached copies of the tensors Dynamo lifted out of
    its body (the parameters it reads): values are right, and the gradients of its carry and
    rows, but those parameters get none through the scan."""
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.ops.higher_order.scan:
            node.target = _scan_of_detached_closure
    gm.recompile()
    return gm.forward
