"""One perf test's figures: the compiled step checked once against eager, then timed
against it (harness.measure.speed) and its peak memory taken beside eager's
(harness.measure.peak_memory), with torch's threads fixed while it runs.

Settings (harness.settings; options ``--perf-budget`` and ``--perf-threads``):

* ``DYNAMO_SUITE_PERF_BUDGET``: seconds of timed rounds per test (default 4). The rounds
  stop earlier once the estimate is tight.
* ``DYNAMO_SUITE_PERF_THREADS``: torch's intra-op threads during the test (default 1: a
  figure that does not depend on how many cores the machine has or what else runs on
  them; the perf tier runs one worker). Inductor's CPU code takes its thread count when it
  compiles, so this is set before the first compile.
"""

from __future__ import annotations

from typing import Any, Callable

from harness import settings
from harness.axes import device
from harness.measure import speed

DEFAULT_THREADS = 1


class PerfSettingError(ValueError):
    pass


def _number(name: str, default: float, kind: type) -> Any:
    text = settings.current().get(name)
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or value <= 0:
        raise PerfSettingError(f"{name}={text!r}: expected a {'whole ' if kind is int else ''}number above 0")
    return value


def budget_s() -> float:
    return _number(settings.PERF_BUDGET, speed.DEFAULT_BUDGET_S, float)


def threads() -> int:
    return _number(settings.PERF_THREADS, DEFAULT_THREADS, int)


def fix_threads(test: Any) -> int:
    """Set torch's threads for the rest of ``test`` (put back when it ends)."""
    import torch

    before = torch.get_num_threads()
    wanted = threads()
    torch.set_num_threads(wanted)
    test.addCleanup(torch.set_num_threads, before)
    return wanted


def _sync(where) -> Callable[[], None]:
    import torch

    from harness import compat

    module = getattr(torch, where.type, None)
    if where.type == "cpu":
        return lambda: None
    if module is None or not hasattr(module, "synchronize"):
        return compat.out_of_tree_synchronize(where.type) or (lambda: None)
    return module.synchronize


def figures(eager: Callable[[], Any], compiled: Callable[[], Any]) -> dict[str, Any]:
    """Speed and memory of ``compiled`` against ``eager``, each a call without arguments
    that runs one whole step, both already called at least once (compiled)."""
    import torch

    from harness import compat
    from harness.measure import peak_memory

    where = device.selected()
    # The test's Dynamo metrics are its compile's: the hundreds of calls measured here would
    # add to some counts (a step with a graph break counts a frame at each call).
    counted = {name: counter.copy() for name, counter in compat.dynamo_counters().items()}
    timing = speed.measure(eager, compiled, budget_s=budget_s(), sync=_sync(where))
    eager_peak = peak_memory.peak_bytes(eager, where)
    compiled_peak = peak_memory.peak_bytes(compiled, where)
    compat.dynamo_counters().clear()
    compat.dynamo_counters().update(counted)
    return {**timing.to_json(), "threads": torch.get_num_threads(), "device": str(where),
            "eager_peak_bytes": eager_peak, "compiled_peak_bytes": compiled_peak}
