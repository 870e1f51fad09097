"""Each test's time limit, derived from how long it took before.

One limit for all tests must fit the slowest cold inductor compile (minutes), so a backend
that hangs costs minutes per test it hangs in: 8 hangs over 2 workers were 40 minutes at
600 s. Recorded durations (test/durations.json, measured from a cold inductor cache on 2
cores) say what each test needs, so its limit is

    FLOOR + MARGIN * recorded seconds

* ``FLOOR`` (30 s) covers what a recording does not: the first compile in a fresh worker
  (inductor's C++ toolchain warm-up, 10-17 s cold), a rerun that lands first in its worker,
  and a machine busier than when it was recorded. It is also about what a hang costs: on
  the default run, a hang is cut after 30-45 s.
* ``MARGIN`` (2x) lets a recorded test run twice as slow before it is cut: the spread of
  cold-inductor times between runs on the same 2 cores was under 1.5x.

A backend with no recordings of its own (any backend but eager, aot_eager and inductor)
gets the scenario's slowest recording on any backend, usually inductor's cold compile. A
test with no recording at all (a new scenario) gets ``UNKNOWN`` seconds. ``--timeout S``
replaces all of this with one limit.
"""

from __future__ import annotations

from collections import defaultdict

FLOOR = 30.0
MARGIN = 2.0
UNKNOWN = 300.0


def _split(test_id: str) -> tuple[str, str, str]:
    module_class, _, method = test_id.rpartition(".")
    module, _, cls = module_class.rpartition(".")
    return module, cls, method


def reference(scenario_id: str, family: str, durations_by_test: dict[tuple[str, str], list[tuple[str, float]]]
              ) -> float | None:
    """The slowest recording of the scenario on any backend: classes named ``<family>_<backend>``."""
    module, _, method = _split(scenario_id)
    times = [seconds for cls, seconds in durations_by_test.get((module, method), ())
             if cls == family or cls.startswith(f"{family}_")]
    return max(times) if times else None


def derive(tests: list, durations: dict[str, float]) -> dict[str, tuple[float, float | None]]:
    """Per test id: (limit in seconds, the recorded seconds it was derived from or None)."""
    by_test: dict[tuple[str, str], list[tuple[str, float]]] = defaultdict(list)
    for test_id, seconds in durations.items():
        module, cls, method = _split(test_id)
        by_test[(module, method)].append((cls, seconds))
    limits = {}
    for test in tests:
        recorded = durations.get(test.id)
        if recorded is None:
            family = test.scenario.split(".")[-2]
            recorded = reference(test.id, family, by_test)
        limit = UNKNOWN if recorded is None else FLOOR + MARGIN * recorded
        limits[test.id] = (round(limit, 1), recorded)
    return limits
