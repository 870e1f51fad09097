"""How fast the backend's code runs against eager: the perf tier's timing method.

A figure from a shared 2-core machine is only worth what its method makes it worth, so:

* Warm-up calls are not timed (the first compiled call compiles; caches and allocators
  settle in the next few).
* Eager and compiled run interleaved in the same process, in *rounds*: each round times a
  batch of eager calls and a batch of compiled calls, back to back, in alternating order
  (ABBA) so neither side always runs second. A disturbance (another process, a frequency
  step) hits both sides of a round alike, so the round's ratio survives it even when the
  absolute times do not.
* A batch repeats its function until it lasts ``BATCH_S``, so timer resolution and the
  clock read cost nothing measurable; the time per call is the batch's time over its calls.
* Rounds go on until the median ratio is tight enough (its 95 % confidence interval,
  distribution-free, within ``TIGHT`` of it) or the time budget runs out, and at least
  ``MIN_ROUNDS``.
* The speed-up is the median of the rounds' ratios, reported with the interval; a figure
  whose interval is wider than ``NOISY`` either way is marked noisy: small changes hide in
  it, so a comparison that finds none calls it too noisy to judge.
* Garbage collection is off while timing; the number of threads is the worker's, fixed
  by the perf test (``threads`` in the figures).

``harness.report.metric_changes`` holds the rules, measured, that call a change between two
runs a regression.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

WARMUP_CALLS = 3  # untimed calls of each side before the first round
BATCH_S = 0.01  # a batch repeats its function for at least this long
MAX_BATCH_CALLS = 10_000
CALIBRATION_CALLS = 3  # single calls timed to size a batch
MIN_ROUNDS = 10
MAX_ROUNDS = 400
TIGHT = 0.02  # stop once the median ratio's 95 % interval lies within 2 % of it
NOISY = 0.10  # an interval wider than 10 % either way: too noisy to judge
DEFAULT_BUDGET_S = 4.0  # time for the rounds of one test (warm-up and calibration beside)


@dataclass(frozen=True)
class Speed:
    eager_ms: float  # median time per call
    compiled_ms: float
    speedup: float  # median over rounds of eager time / compiled time
    low: float  # the speed-up's 95 % confidence interval
    high: float
    rounds: int
    eager_calls: int  # calls per batch
    compiled_calls: int
    noisy: bool

    def to_json(self) -> dict[str, Any]:
        return {name: round(value, 6) if isinstance(value, float) else value for name, value in asdict(self).items()}


def median_interval(values: list[float]) -> tuple[float, float]:
    """The 95 % confidence interval of the median of ``values``, from order statistics (no
    assumption about the distribution: timings have a long right tail)."""
    ordered = sorted(values)
    n = len(ordered)
    half = 1.96 * math.sqrt(n) / 2
    low_rank = max(0, int(math.floor(n / 2 - half)))
    high_rank = min(n - 1, int(math.ceil(n / 2 + half)) - 1)
    return ordered[low_rank], ordered[high_rank]


def relative_width(values: list[float]) -> float:
    """How far the median's interval reaches from the median, as a fraction of it."""
    middle = statistics.median(values)
    low, high = median_interval(values)
    return max(middle - low, high - middle) / middle if middle > 0 else math.inf


def _batch(fn: Callable[[], Any], calls: int, sync: Callable[[], None]) -> float:
    """Seconds per call over ``calls`` calls."""
    sync()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter() - start) / calls


def _calls_per_batch(fn: Callable[[], Any], sync: Callable[[], None]) -> int:
    # The fastest of a few calls: a call preempted on a busy machine would make batches short.
    one = max(min(_batch(fn, 1, sync) for _ in range(CALIBRATION_CALLS)), 1e-7)
    return max(1, min(MAX_BATCH_CALLS, math.ceil(BATCH_S / one)))


def measure(eager: Callable[[], Any], compiled: Callable[[], Any], *, budget_s: float = DEFAULT_BUDGET_S,
            sync: Callable[[], None] = lambda: None) -> Speed:
    """Time ``eager`` against ``compiled`` (each a call with no arguments that does the
    whole step), as the module says. ``sync`` waits for an accelerator's queued work."""
    for _ in range(WARMUP_CALLS):
        eager()
        compiled()
    eager_calls, compiled_calls = _calls_per_batch(eager, sync), _calls_per_batch(compiled, sync)
    eager_times: list[float] = []
    compiled_times: list[float] = []
    ratios: list[float] = []
    collecting = gc.isenabled()
    gc.collect()
    gc.disable()
    deadline = time.perf_counter() + budget_s
    try:
        while len(ratios) < MAX_ROUNDS:
            if len(ratios) % 2 == 0:
                eager_s = _batch(eager, eager_calls, sync)
                compiled_s = _batch(compiled, compiled_calls, sync)
            else:
                compiled_s = _batch(compiled, compiled_calls, sync)
                eager_s = _batch(eager, eager_calls, sync)
            eager_times.append(eager_s)
            compiled_times.append(compiled_s)
            ratios.append(eager_s / compiled_s)
            if len(ratios) >= MIN_ROUNDS and (relative_width(ratios) <= TIGHT or time.perf_counter() > deadline):
                break
    finally:
        if collecting:
            gc.enable()
    low, high = median_interval(ratios)
    speedup = statistics.median(ratios)
    return Speed(eager_ms=statistics.median(eager_times) * 1e3, compiled_ms=statistics.median(compiled_times) * 1e3,
                 speedup=speedup, low=low, high=high, rounds=len(ratios), eager_calls=eager_calls,
                 compiled_calls=compiled_calls, noisy=relative_width(ratios) > NOISY)
