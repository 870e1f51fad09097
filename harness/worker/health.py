"""Is a worker still healthy after a failure? A canary answers in a fraction of a second.

A failing test can break its worker for every later test (a runtime that stays broken, a
lock left held), so a result after a failure is only trusted once the worker has shown it
still works. Restarting the worker after every failure would show it, but a fresh worker
costs an interpreter, torch and the test modules: seconds each, and a new backend fails a
hundred tests. Instead each worker compiles a small canary program through each backend its
tests use, before its first test (its *baseline*: how the canary behaves in a healthy
process, right or wrong; outside any test's time and time limit). After a failure, before the next
test of a backend, the canary runs again through that backend; the worker is healthy for
that backend when the canary behaves exactly as in its baseline (as many graphs received,
the same values bit for bit or the same error: a test that left Dynamo running everything
eagerly leaves right values and no graph). Then that test's result is its own.

When the canary behaves otherwise the worker is broken for good: every later result in it
is a *follower* of the failure, which ``harness.run.isolation`` reruns in a fresh worker.
A test with no baseline to compare against (no backend, or a backend the worker did not
know of before the failure) is a follower too, as every test after a failure was before
the canary.

The canary leaves the state the tests see as it found it: Dynamo reset, global state
restored, random streams untouched.

``HealthCheck`` is the worker's pytest side of it: the baselines before the first test, the
canary before each test after a failure, and on each report whether the worker showed it.
"""

from __future__ import annotations

import faulthandler
import re
import sys
from dataclasses import dataclass
from typing import Any

import pytest

from harness import outcomes
from harness.axes import device as run_device  # the module; ``device`` below is a device's name
from harness.worker.classify import SkipAs
from harness.worker.protocol import PROPERTY

# A failure's message can carry what differs between two runs of the same failure.
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


@dataclass(frozen=True)
class Behaviour:
    """What the canary did: its outputs and gradients, or the error it raised."""

    values: tuple | None = None  # CPU tensors
    error: str = ""
    graphs: int = 0  # the backend received: none where Dynamo ran the program eagerly (a broken Dynamo)

    def same_as(self, other: Behaviour) -> bool:
        import torch

        if self.graphs != other.graphs:
            return False
        if self.values is None or other.values is None:
            return self.values is other.values and self.error == other.error
        return len(self.values) == len(other.values) and all(
            # NaN where the baseline had NaN is the same behaviour (a backend wrong that way).
            mine.dtype == theirs.dtype and mine.shape == theirs.shape
            and torch.allclose(mine, theirs, rtol=0.0, atol=0.0, equal_nan=True)
            for mine, theirs in zip(self.values, other.values))


def _program(x, w, bias):
    hidden = (x @ w + bias).relu()
    return hidden.sum(dim=0), hidden.mean().exp()


def canary(backend: Any, device: str) -> Behaviour:
    """Compile and run the canary (forward and backward) through ``backend`` on ``device``."""
    import torch

    from harness import compat, state  # in the worker only: the runner never imports torch
    from harness.measure.counters import CompileCounterWithBackend

    before = state.snapshot()
    compat.reset_dynamo()
    counted = CompileCounterWithBackend(backend)  # as the tests hand it graphs, counted
    try:
        with torch.random.fork_rng(devices=[]), torch.enable_grad():
            x = torch.linspace(-1.0, 1.0, 12, device=device).reshape(3, 4)
            w = torch.linspace(-0.5, 0.5, 8, device=device).reshape(4, 2).requires_grad_()
            bias = torch.tensor([0.25, -0.125], device=device, requires_grad=True)
            outputs = torch.compile(_program, backend=counted)(x, w, bias)
            (outputs[0].sum() + outputs[1]).backward()
            values = (*outputs, w.grad, bias.grad)
            return Behaviour(values=tuple(value.detach().to("cpu", copy=True) for value in values),
                             graphs=counted.frame_count)
    except Exception as error:  # the canary's failure is data: compared with the baseline's
        message = (str(error).strip().splitlines() or [""])[0]
        return Behaviour(error=f"{type(error).__name__}: {_ADDRESS.sub('0x?', message)}", graphs=counted.frame_count)
    finally:
        compat.reset_dynamo()
        if state.leaked(before, state.snapshot()):  # a faulty backend's leak is no later test's
            state.restore(before)


class Health:
    """One worker's record: the canary's baselines, the last failure, and for which
    backends the worker has shown it is healthy since."""

    def __init__(self, run_canary=canary) -> None:
        self._run_canary = run_canary
        self.backends: list[Any] = []  # those the worker's tests use (take_baselines)
        self.baselines: dict[str, Behaviour] = {}  # backend spec -> the canary in a healthy worker
        self.failure: str | None = None  # the latest failing test in this worker
        self.healthy_since_failure: set[str] = set()  # specs whose canary matched since then
        self.broken: str | None = None  # the failure after which a canary misbehaved

    def take_baselines(self, device: str) -> None:
        """The canary through each of ``self.backends``, in a worker where nothing failed yet."""
        if self.failure is None:
            for backend in self.backends:
                if backend.spec not in self.baselines:
                    self.baselines[backend.spec] = self._run_canary(backend, device)

    def trusted(self, backend: Any, device: str) -> bool:
        """Before a test of ``backend`` (None: a test without one): can its result be taken
        as its own? Runs the canary when that is what tells."""
        spec = getattr(backend, "spec", None)
        if self.failure is None:
            if spec is not None and spec not in self.baselines:
                self.baselines[spec] = self._run_canary(backend, device)
            return True
        if self.broken is not None or spec is None or spec not in self.baselines:
            return False
        if spec not in self.healthy_since_failure:
            if not self._run_canary(backend, device).same_as(self.baselines[spec]):
                self.broken = self.failure
                return False
            self.healthy_since_failure.add(spec)
        return True

    def failed(self, test: str) -> None:
        """``test`` failed (or failed as expected): every backend must show its health again."""
        self.failure = test
        self.healthy_since_failure.clear()


_TRUSTED = pytest.StashKey[bool]()


class HealthCheck:
    """After a failure, a test's result is its own only once the worker has shown it still
    works for that test's backend (``Health``): each report says whether it did.
    In a rerun, a test it cannot be shown for is handed back unrun (DEFERRED), for a fresh
    worker to run."""

    def __init__(self, defer: bool, watchdog: float) -> None:
        self.health = Health()
        self.defer = defer
        self.watchdog = watchdog

    @pytest.hookimpl(trylast=True)  # after the selection
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        backends = {backend.spec: backend for item in items
                    if (backend := getattr(getattr(item, "cls", None), "backend", None)) is not None}
        self.health.backends = list(backends.values())

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtestloop(self, session: pytest.Session):
        # Before the first test, outside every test's time limit; a canary stuck for good
        # ends the worker as a stuck test would, its stack in the worker log.
        if self.watchdog > 0:
            faulthandler.dump_traceback_later(self.watchdog, exit=True, file=sys.__stderr__)
        try:
            self.health.take_baselines(run_device.selected_name())
        finally:
            if self.watchdog > 0:
                faulthandler.cancel_dump_traceback_later()
        yield

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        trusted = self.health.trusted(getattr(getattr(item, "cls", None), "backend", None), run_device.selected_name())
        item.stash[_TRUSTED] = trusted
        if self.defer and not trusted:
            raise SkipAs(outcomes.Skipped(outcomes.DEFERRED, f"{self.health.failure} failed earlier in this worker"))

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)  # outermost: after the classification
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        outcome = yield
        data = dict(outcome.get_result().user_properties).get(PROPERTY)
        if data:
            data["trusted"] = item.stash.get(_TRUSTED, False)
            if outcomes.ended(data["outcome"], outcomes.FAILED):
                self.health.failed(item.nodeid)
