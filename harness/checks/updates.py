"""Judging a training step by what it changed, relative to the change's own size.

After a step, a parameter differs from where it started by the update (``lr`` times a
gradient or an Adam direction), often a thousandth of its value or less. Compared as
values, the parameters of a step computed on the wrong weights, with a stale moment or
with the update 1% too large agree with eager within float32 tolerance; compared as
updates, they differ by that 1%. ``Snapshot`` records named tensors (parameters, buffers,
optimizer state) before a step; ``assert_same_updates`` compares what the step changed in
each, eager against compiled.

The allowance is ``rtol`` of the eager update's largest entry (the arithmetic of the step
itself, reordered), plus ``FLOOR`` of the largest update among tensors of the same role (a
bias before a BatchNorm has a gradient that is rounding noise, which a reordering changes
wholesale: noise at the scale of its neighbours' updates), plus a few units in the last
place of the values (subtracting two nearby numbers rounds at their own scale).
"""

from __future__ import annotations

from typing import Any

import torch

# Of the update's own size: a compiler may reorder the step's arithmetic (float32: about
# 1e-6 relative), not change it by the 1% a wrong weight or a stale moment makes.
UPDATE_RTOL = 1e-3
FLOOR = 1e-4
ULPS = 4


def named_state(model: torch.nn.Module | None = None, optimizer: torch.optim.Optimizer | None = None
                ) -> dict[str, torch.Tensor]:
    """The tensors a training step may change: parameters, buffers, optimizer state."""
    named: dict[str, torch.Tensor] = {}
    if model is not None:
        named.update({f"parameter {name}": param for name, param in model.named_parameters()})
        named.update({f"buffer {name}": buffer for name, buffer in model.named_buffers()})
    if optimizer is not None:
        names = {id(param): name for name, param in (model.named_parameters() if model is not None else [])}
        for group in optimizer.param_groups:
            for index, param in enumerate(group["params"]):
                label = names.get(id(param), f"#{index}")
                for key, value in optimizer.state.get(param, {}).items():
                    if isinstance(value, torch.Tensor):
                        named[f"{key} of {label}"] = value
    return named


class Snapshot:
    """Copies of named tensors, taken before a step."""

    def __init__(self, named: dict[str, torch.Tensor]) -> None:
        self.values = {name: value.detach().clone() for name, value in named.items()}

    def updates(self, named: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """What changed since: ``after - before`` per tensor (state created by the step counts
        from zero; integer tensors as they are, compared exactly)."""
        changed = {}
        for name, value in named.items():
            after = value.detach()
            before = self.values.get(name)
            if before is None or before.shape != after.shape:
                before = torch.zeros_like(after)
            changed[name] = after.double() - before.double() if after.is_floating_point() else after - before
        return changed


def _largest(update: torch.Tensor) -> float:
    return update.abs().max().item() if update.numel() else 0.0


def _role(name: str) -> str:
    """"parameter", "buffer", or the optimizer state's key ("exp_avg of fc.weight")."""
    return name.rsplit(" of ", 1)[0] if " of " in name else name.split(" ", 1)[0]


def _allowance(update: torch.Tensor, value: torch.Tensor, rtol: float, neighbours: float) -> float:
    if update.numel() == 0:
        return 0.0
    ulp = torch.finfo(value.dtype).eps * value.detach().double().abs().max().item()
    return rtol * _largest(update) + FLOOR * neighbours + ULPS * ulp


def assert_same_updates(test: Any, step: str, eager: tuple[Snapshot, dict[str, torch.Tensor]],
                        compiled: tuple[Snapshot, dict[str, torch.Tensor]], rtol: float = UPDATE_RTOL) -> None:
    """Each named tensor changed by the step as eager's did: same names, and per tensor an
    update within ``rtol`` of the eager update's size."""
    (eager_before, eager_after), (compiled_before, compiled_after) = eager, compiled
    test.assertEqual(sorted(eager_after), sorted(compiled_after), f"{step}: the state the step leaves (parameters, "
                                                                  "buffers, optimizer state) differs from eager's")
    expected, actual = eager_before.updates(eager_after), compiled_before.updates(compiled_after)
    scale: dict[str, float] = {}
    for name, want in expected.items():
        if want.is_floating_point():
            scale[_role(name)] = max(scale.get(_role(name), 0.0), _largest(want))
    for name, want in expected.items():
        got = actual[name]
        if not want.is_floating_point():
            test.assertTrue(torch.equal(want, got), f"{step}: {name} changed by {got.tolist()}, eager's by "
                                                    f"{want.tolist()}")
            continue
        allowed = _allowance(want, eager_after[name], rtol, scale[_role(name)])
        off = (got - want).abs().max().item() if want.numel() else 0.0
        if not off <= allowed:  # a NaN update fails too
            scale = want.abs().max().item()
            test.fail(f"{step}: {name} was updated differently from eager: by up to {off:.3g} off an update of "
                      f"{scale:.3g} ({off / scale if scale else float('inf'):.2%} of it; allowed {allowed:.3g})")
