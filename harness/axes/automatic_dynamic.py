"""Automatic dynamic shapes: a scenario's own call, again at other sizes.

Under the ``automatic_dynamic`` variant Dynamo compiles with static sizes first and, when a
size changes, recompiles with the changed sizes symbolic. A scenario calls its compiled
function at one size, so that recompile never happens in it. Here the first call of each
function a scenario compiled is recorded (copies of its arguments, taken before the call
can mutate them) and replayed after the scenario: once with every dimension of size 2 or
more grown (the recompile must give the backend symbolic sizes) and once grown further (the
symbolic graph serves it), each time the compiled function against the function run eagerly
(harness/checks/replay.py).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

import torch

from harness.axes import second_size
from harness.checks import replay


@dataclass
class RecordedCall:
    """The first call of a function a scenario compiled, kept to replay at other sizes: once
    grown (Dynamo's automatic dynamic shapes recompile with the grown sizes symbolic) and
    once grown further (the symbolic graph serves it; recompiles only for other reasons)."""

    eager: Callable
    compiled: Callable
    counter: Any  # the CompileCounter the compiled function reports to
    args: tuple | None  # copies (an argument given twice: one copy twice); None: not replayable
    kwargs: dict
    leaves: list[bool]  # per argument: a leaf tensor in the scenario's call
    grad_enabled: bool
    returned: bool = False  # the scenario's call returned (one that raised is not replayed)

    def check(self, testcase) -> list[list[torch.fx.GraphModule]] | None:
        """Outputs, mutated inputs and gradients against eager at two other sizes; returns
        the graphs the backend received during each, or None when eager itself rejects
        other sizes (the scenario's sizes are fixed by its parameters or its code) or draws
        random numbers. A size at which no graph of the backend's ran (none compiled for it,
        none reused) fails: that replay would have compared eager with eager."""
        if self.args is None or not self.returned:
            return None
        compiled_graphs = []
        state = lambda: torch.set_grad_enabled(self.grad_enabled)  # noqa: E731
        for factor in (2, 3):
            grown = _grown_arguments(self.args, factor)
            eager = lambda *args: self.eager(*args, **self.kwargs)  # noqa: E731
            if not replay.repeats(eager, grown, self.leaves, state):
                return None
            before, calls_before = len(self.counter.graphs), self.counter.calls_run
            replay.compare_runs(testcase, eager, lambda *args: self.compiled(*args, **self.kwargs), grown,
                                self.leaves, state)
            if self.counter.calls_run == calls_before:
                # No graph of the backend's served it, new or reused: the compiled side was
                # Dynamo running the function eagerly, and the comparison eager against eager.
                raise AssertionError(
                    f"at the {'grown' if factor == 2 else 'third'} size ({_sizes(grown)}) the backend ran no graph: "
                    f"it received {len(self.counter.graphs) - before} and none it had served; Dynamo ran the "
                    "call eagerly (a recompile limit hit, a frame skipped), so nothing of the backend was replayed")
            compiled_graphs.append(self.counter.graphs[before:])
        return compiled_graphs


_PLAIN = (int, float, bool, str, type(None), torch.dtype, torch.device, torch.memory_format, torch.layout)


def record_first_call(fn: Callable, compiled: Callable, counter: Any, calls: list[RecordedCall]) -> Callable:
    """``compiled``, recording its first call's arguments (copies, taken before the call can
    mutate them) into ``calls``; replayed only if that call returned. A compiled module is
    returned as it is, with hooks. A call with arguments other than tensors and plain values
    (containers, objects) is not replayed: the tensors inside them are not grown."""
    pending: list[RecordedCall] = []

    def keep(args: tuple, kwargs: dict) -> None:
        if any(call.compiled is compiled for call in calls):
            return
        if all(type(arg) in (torch.Tensor, torch.nn.Parameter) or isinstance(arg, _PLAIN)
               for arg in (*args, *kwargs.values())):
            copies: dict[int, Any] = {}
            kept = tuple(copies.setdefault(id(arg), _snapshot(arg)) for arg in args)
            call = RecordedCall(fn, compiled, counter, kept, dict(kwargs),
                                [isinstance(arg, torch.Tensor) and arg.is_leaf for arg in args],
                                torch.is_grad_enabled())
        else:
            call = RecordedCall(fn, compiled, counter, None, {}, [], False)
        calls.append(call)
        pending.append(call)

    def returned() -> None:
        while pending:
            pending.pop().returned = True

    if isinstance(compiled, torch.nn.Module):
        compiled.register_forward_pre_hook(lambda module, args, kwargs: keep(args, kwargs), with_kwargs=True)
        compiled.register_forward_hook(lambda module, args, output: returned())
        return compiled

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        keep(args, kwargs)
        try:
            result = compiled(*args, **kwargs)
        except BaseException:
            pending.clear()
            raise
        returned()
        return result

    return call


def _sizes(args: list[Any]) -> str:
    return ", ".join("x".join(map(str, arg.shape)) or "0-d" for arg in args if isinstance(arg, torch.Tensor)) or "no tensors"


def _snapshot(value: Any) -> Any:
    if not isinstance(value, torch.Tensor):
        return value
    with torch.no_grad():
        copy = value.detach().clone()  # contiguous where the original overlaps itself (expanded)
    return copy.requires_grad_(value.requires_grad)


def _grown_arguments(args: tuple, factor: int) -> list[Any]:
    grown: dict[int, Any] = {}
    return [grown.setdefault(id(arg), _grown(arg, factor)) for arg in args]


def _grown(value: Any, factor: int) -> Any:
    """A plain tensor with every dimension of size 2 or more multiplied by ``factor`` (values
    repeated, so integer inputs stay valid indices); anything else as it is."""
    if type(value) is not torch.Tensor:
        return value
    size = [n * factor if n >= 2 else n for n in value.shape]
    contiguous = torch.empty(size, dtype=value.dtype, device=value.device).stride()
    return second_size.tiled(value.detach(), size, list(contiguous), 0).requires_grad_(value.requires_grad)
