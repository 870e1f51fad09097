"""Every call of a function a scenario compiled, watched by the observations every scenario
goes through.

A scenario compares what it chose to compare (its outputs, its inputs after the call, its
gradients). What a caller can observe besides (the Python objects the call can reach, what
earlier calls returned, gradients kept from earlier passes) is observed here once, for every
scenario, by watchers: each is told before and after every call of every function the
scenario compiled through ``BackendTestCase.compile``, and once more after the scenario's
body (``finish``), where it fails the test with a message that says what it saw.

An observation is a ``Watcher`` subclass in a module of its own, named in ``OBSERVATIONS``;
a test makes one of each (``watchers(test)``) before its body runs.
"""

from __future__ import annotations

import functools
import importlib
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

# Modules each holding a ``WATCHER``: a Watcher subclass (one observation).
OBSERVATIONS: tuple[str, ...] = ("harness.checks.observations.python_world", "harness.checks.observations.kept_results")


@dataclass
class Call:
    """One call of a compiled function: what the scenario compiled (its function, bound
    method or module, run eagerly where a watcher needs eager's behaviour), the arguments
    as the caller passed them, and which call of that compiled function this is."""

    eager: Callable
    compiled: Callable
    args: tuple
    kwargs: dict
    index: int
    notes: dict[str, Any] = field(default_factory=dict)  # a watcher's own per-call data


class Watcher:
    """One observation: told of every compiled call of one test; raises AssertionError (from
    ``after`` or ``finish``) when what it observes differs from eager."""

    def __init__(self, test: Any) -> None:
        self.test = test

    def before(self, call: Call) -> None:
        """Just before the compiled call runs."""

    def after(self, call: Call, result: Any) -> None:
        """Just after the compiled call returned ``result`` (not called when it raised)."""

    def finish(self) -> None:
        """After the scenario's body passed."""


def watchers(test: Any) -> list[Watcher]:
    return [importlib.import_module(name).WATCHER(test) for name in OBSERVATIONS]


def watched(test: Any, eager: Callable, compiled: Callable, watching: list[Watcher]) -> Callable:
    """``compiled``, each call of it told to ``watching``. A compiled module stays the module
    it is (its parameters, attributes and hooks), watched through hooks of its own."""
    if not watching:
        return compiled
    # Counted, not kept: a call's arguments are the caller's to let go of (CallIndependenceTests
    # test_calls_let_go_of_their_tensors); a watcher keeps what it needs itself.
    calls = itertools.count()

    def before(args: tuple, kwargs: dict) -> Call:
        call = Call(eager, compiled, args, kwargs, next(calls))
        for watcher in watching:
            watcher.before(call)
        return call

    def after(call: Call, result: Any) -> None:
        for watcher in watching:
            watcher.after(call, result)

    if isinstance(compiled, torch.nn.Module):
        started: list[Call] = []
        compiled.register_forward_pre_hook(lambda module, args, kwargs: started.append(before(args, kwargs)),
                                           with_kwargs=True, prepend=True)
        compiled.register_forward_hook(lambda module, args, output: after(started.pop(), output))
        return compiled

    @functools.wraps(eager)
    def call(*args: Any, **kwargs: Any) -> Any:
        watched_call = before(args, kwargs)
        result = compiled(*args, **kwargs)
        after(watched_call, result)
        return result

    return call
