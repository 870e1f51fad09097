"""Real models through the backend: evaluation and a training step, eager vs compiled,
judged against a float64 run (``harness.checks.accuracy``).

A ``ModelSpec`` says how to build a model with random weights and a small configuration,
how to make its inputs, what to call and what loss to train on. ``check_eval`` runs the
model in eval mode under ``no_grad``; ``check_train`` runs training steps in train mode with
dropout seeded: forward, loss and backward inside the compiled function, the optimizer step
outside it (``_optimizer_step``), as PyTorch's own accuracy runs keep it.
Three copies start from the same weights: eager float32 (the result to match), compiled
float32 (the result judged) and eager float64 (the truth both are measured against).
Compared are the outputs, the losses, every parameter's gradient, the updated parameters
and every buffer (BatchNorm's running statistics and batch counter included).
"""

from __future__ import annotations

import copy
import importlib
from dataclasses import dataclass
from typing import Any, Callable

import torch

from harness import compat, state
from harness.checks import accuracy

STEPS = 2  # the second step runs the compiled code on weights the first one updated
LEARNING_RATE = 0.01


@dataclass(frozen=True)
class ModelSpec:
    name: str
    build: Callable[[], torch.nn.Module]  # random weights, small configuration, no downloads
    inputs: Callable[[], tuple[tuple[Any, ...], Any]]  # (positional inputs, training target)
    loss: Callable[[Any, Any], torch.Tensor]  # (output, target) -> scalar
    forward: Callable[..., Any] = lambda model, *inputs: model(*inputs)  # noqa: E731
    requires: tuple[str, ...] = ()  # importable libraries the model comes from
    tol: float = 1e-3  # the allclose shortcut before the float64 judgement
    nightly_only: str | None = None  # why this model runs only in the nightly tier
    nightly_train: str | None = None  # why only its training test runs only in the nightly tier


def missing_library(spec: ModelSpec) -> str | None:
    """One line saying which library the model needs and how to get it, or None."""
    for library in spec.requires:
        try:
            compat.import_torchvision() if library == "torchvision" else importlib.import_module(library)
        except ImportError as error:
            return (f"needs {library} ({error}); `pip install -r requirements.txt` installs the release "
                    f"pinned for the suite's torch")
    return None


def _to_float64(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.double() if value.is_floating_point() else value
    if isinstance(value, (tuple, list)):
        return type(value)(_to_float64(item) for item in value)
    return value


def _named_outputs(prefix: str, value: Any) -> dict[str, torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return {prefix: value.detach()}
    if isinstance(value, (tuple, list)):
        named = {}
        for index, item in enumerate(value):
            named.update(_named_outputs(f"{prefix}[{index}]", item))
        return named
    raise TypeError(f"{prefix}: a model output must be tensors, got {type(value).__name__}")


def _module_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    named = {f"parameter {name}": param.detach() for name, param in model.named_parameters()}
    named.update({f"buffer {name}": buffer.detach() for name, buffer in model.named_buffers()})
    return named


def _copies(spec: ModelSpec) -> tuple[torch.nn.Module, torch.nn.Module, torch.nn.Module]:
    state.seed_everything()
    model = spec.build()
    return model, copy.deepcopy(model), copy.deepcopy(model).double()


def check_eval(test: Any, spec: ModelSpec) -> None:
    """Forward in eval mode under no_grad: outputs, and parameters and buffers untouched."""
    eager, compiled, reference = _copies(spec)
    inputs, _ = spec.inputs()
    results = {}
    for label, model, run in (("eager", eager, spec.forward), ("compiled", compiled, test.compile(spec.forward)),
                              ("float64", reference, spec.forward)):
        model.eval()
        state.seed_everything()
        with torch.no_grad():
            output = run(model, *(_to_float64(inputs) if label == "float64" else inputs))
        results[label] = {**_named_outputs("output", output), **_module_state(model)}
    accuracy.assert_accurate(results["eager"], results["compiled"], results["float64"], spec.tol)


@compat.dynamo_disable
def _optimizer_step(optimizer: torch.optim.Optimizer) -> None:
    # PyTorch's benchmark runner keeps the optimizer step out of Dynamo too: compiling a
    # per-parameter SGD update is many tiny kernels (on inductor about 6 of nn_transformer's
    # 46 s cold training test) and tests no contract the steps around it don't.
    # A wrong gradient or dropped update still shows in the updated parameters compared below.
    optimizer.step()


def _train_step(spec: ModelSpec) -> Callable:
    def step(model, optimizer, inputs, target):
        optimizer.zero_grad(set_to_none=True)
        output = spec.forward(model, *inputs)
        loss = spec.loss(output, target)
        loss.backward()
        _optimizer_step(optimizer)
        return output, loss.detach()

    return step


def check_train(test: Any, spec: ModelSpec) -> None:
    """``STEPS`` training steps (SGD), each compared: outputs, loss, gradients, updated
    parameters, buffers."""
    eager, compiled, reference = _copies(spec)
    inputs, target = spec.inputs()
    step = _train_step(spec)
    runs = {"eager": (eager, step), "compiled": (compiled, test.compile(step)), "float64": (reference, step)}
    results: dict[str, dict[str, torch.Tensor]] = {label: {} for label in runs}
    with compat.random_ops_as_in_eager():
        for label, (model, run) in runs.items():
            model.train()
            optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
            args = (_to_float64(inputs), _to_float64(target)) if label == "float64" else (inputs, target)
            named = results[label]
            state.seed_everything()
            for index in range(1, STEPS + 1):
                output, loss = run(model, optimizer, *args)
                named.update(_named_outputs(f"step {index} output", output))
                named[f"step {index} loss"] = loss
                named.update({f"step {index} grad of {name}": param.grad.detach().clone()
                              for name, param in model.named_parameters() if param.grad is not None})
            named.update({f"{name} after {STEPS} steps": value.clone() for name, value in _module_state(model).items()})
    accuracy.assert_accurate(results["eager"], results["compiled"], results["float64"], spec.tol)
