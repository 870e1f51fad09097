"""Each self-test module's time, against a budget written beside it.

A module says what it may cost, ``TIME_BUDGET_S = 20`` at its top: seconds of its own on
the machine the budgets were measured on (2 cores, AMD EPYC, torch 2.13.0 CPU, warm inductor
cache; CONTRIBUTING.md has the figures). ``unittest discover`` over test/harness or
test/proofs ends each module with one more test, ``<module>.TimeBudget.test_within_budget``,
which reports when the module took longer than its budget, scaled by how much slower this
machine is (``machine_factor``: a fixed piece of Python, timed when the machine runs it
fastest, against the reference machine's time) and by how busy it was while it ran
(``load_factor``: the load per core over the module's span, as when CI runs the self-tests
beside the proofs),
each never below 1, so a faster or idler machine gets no tighter budget. A budget informs:
over it, the check prints what it measured and passes, so that a newcomer's first run on a
slower machine is never red for a timing. Only with ENFORCE_ENV set (``.ci/run`` sets it)
does a module fail, and only past HEADROOM times its scaled budget: a change that makes a
module much slower pays for it in that module, where it was written. A module without a
budget fails wherever it runs: that is a missing line, not a timing.

A module's own time runs from its first test's class set-up to its last test's tear-down,
less the time of the shared runs it was the first to read (test/harness/shared_runs.py):
those are charged to the run, whose own budget is written beside its definition, and
checked in the same test.

Run one module (``python -m unittest test.harness.test_runner``) and no budget is checked.
"""

from __future__ import annotations

import math
import os
import sys
import time
import unittest
from types import ModuleType
from typing import Callable

# The fastest time of ``_workload`` on the machine the budgets were measured on, idle.
REFERENCE_WORKLOAD_S = 0.0100
BUDGET_NAME = "TIME_BUDGET_S"
ENFORCE_ENV = "DYNAMO_SUITE_ENFORCE_BUDGETS"
HEADROOM = 2.0


def _workload() -> float:
    started = time.perf_counter()
    total = 0
    for value in range(100_000):
        total += value * value % 7
    return time.perf_counter() - started


_factor: float | None = None


def machine_factor() -> float:
    """How many times slower than the reference machine this one runs the workload, at
    least 1: the fastest of seven tries, which is the processor's speed rather than its load."""
    global _factor
    if _factor is None:
        _factor = max(1.0, min(_workload() for _ in range(7)) / REFERENCE_WORKLOAD_S)
    return _factor


# The spans, in seconds, of the kernel's three load averages (1, 5 and 15 minutes).
_LOAD_WINDOWS_S = (60.0, 300.0, 900.0)
LoadSample = tuple[float, tuple[float, float, float]]  # when, and the three load averages then


def load_sample() -> LoadSample | None:
    try:
        return time.monotonic(), os.getloadavg()
    except OSError:  # no load average on this platform
        return None


def load_factor(since: LoadSample | None = None) -> float:
    """How many processes wanted each core while the module ran (since ``since``), at least 1:
    a module whose processes share the cores with others' takes that many times longer.

    The load average read at the end alone misses the load of a module's first minutes (in CI
    the self-tests and the README's run end while a proof module runs, and its check read
    x1.00 after a long busy stretch). Each load average is a mean decaying over its window, so
    the mean load over the module's span can be solved from its values at both ends; the
    highest of the three solutions and the last minute's value is taken, so that a busy
    stretch is never missed (a short span's solution is rough, and only ever too high)."""
    now = load_sample()
    if now is None:
        return 1.0
    estimates = [now[1][0]]
    if since is not None:
        span = now[0] - since[0]
        for window, before, after in zip(_LOAD_WINDOWS_S, since[1], now[1]):
            kept = math.exp(-span / window)  # the share of the earlier value still in the average
            if kept < 0.99:
                estimates.append((after - before * kept) / (1.0 - kept))
    return max(1.0, max(estimates) / (os.cpu_count() or 1))


class _Clock:
    """When a module started, and the shared runs it started since."""

    def __init__(self) -> None:
        self.started = 0.0
        self.load: LoadSample | None = None  # the load averages when it started
        self.shared_before = 0  # how many shared runs had finished when the module started


def with_budgets(loader: unittest.TestLoader, start_dir: str, top_level_dir: str, pattern: str | None,
                 shared_runs: Callable[[], list]) -> unittest.TestSuite:
    """The tests ``discover`` finds under ``start_dir``, each module's followed by its budget
    check. ``shared_runs`` lists the shared runs finished so far, in order, each with
    ``label``, ``seconds`` and ``budget_s``."""
    found = loader.discover(start_dir, pattern=pattern or "test*.py", top_level_dir=top_level_dir)
    suite = unittest.TestSuite()
    for module_suite in found:
        module = _module_of(module_suite)
        if module is None:  # an import error, reported by the loader's own test
            suite.addTest(module_suite)
            continue
        clock = _Clock()
        suite.addTest(_Started(clock, shared_runs))
        suite.addTest(module_suite)
        suite.addTest(_budget_check(module, clock, shared_runs))
    return suite


def _module_of(suite: unittest.TestSuite) -> ModuleType | None:
    import sys

    for test in _flatten(suite):
        if isinstance(test, unittest.TestCase) and type(test).__module__ in sys.modules \
                and not type(test).__module__.startswith("unittest."):
            return sys.modules[type(test).__module__]
    return None


def _flatten(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _flatten(item)
        else:
            yield item


class _Started(unittest.TestSuite):
    """Not a test: starts the module's clock when the run reaches it."""

    def __init__(self, clock: _Clock, shared_runs: Callable[[], list]) -> None:
        super().__init__()
        self.clock, self.shared_runs = clock, shared_runs

    def run(self, result, debug=False):
        self.clock.started = time.perf_counter()
        self.clock.load = load_sample()
        self.clock.shared_before = len(self.shared_runs())
        return result


def _budget_check(module: ModuleType, clock: _Clock, shared_runs: Callable[[], list]) -> unittest.TestCase:
    budget = getattr(module, BUDGET_NAME, None)

    class TimeBudget(unittest.TestCase):
        def test_within_budget(self) -> None:
            elapsed = time.perf_counter() - clock.started
            started_here = shared_runs()[clock.shared_before:]
            own = elapsed - sum(run.seconds for run in started_here)
            if budget is None:
                self.fail(f"{module.__name__} states no {BUDGET_NAME} (the seconds its tests may take); "
                          f"this time it took {own:.0f} s")
            factor = machine_factor() * load_factor(clock.load)
            over = [(f"{module.__name__} took {own:.0f} s, over its {BUDGET_NAME} = {budget} "
                     f"(x{factor:.2f} for this machine and its load)", own / (budget * factor))] \
                if own > budget * factor else []
            over += [(f"shared run {run.label} took {run.seconds:.0f} s, over its budget of {run.budget_s} s "
                      f"(x{factor:.2f} for this machine and its load)", run.seconds / (run.budget_s * factor))
                     for run in started_here if run.seconds > run.budget_s * factor]
            for text, _ in over:
                print(f"\ntime budget: {text}", file=sys.stderr)
            enforced = [text for text, ratio in over if os.environ.get(ENFORCE_ENV) and ratio > HEADROOM]
            self.assertFalse(enforced, "; ".join(enforced) + f", more than {HEADROOM:g} times over: make it faster "
                                                              "or raise the budget, saying why")

    TimeBudget.__module__ = module.__name__
    TimeBudget.__qualname__ = "TimeBudget"
    return TimeBudget("test_within_budget")
