"""Which tests run, in which shard and order, under which time limits: the -k patterns,
the tier's subset, then the recorded durations (a results.json, any earlier run's, or a
plain ``{"test id": seconds}`` map; the suite keeps one in test/durations.json).

Ordering and sharding: tests with no recorded time count as the median of the recorded
ones, so new tests still spread evenly.

Each test's time limit, derived from how long it took before.

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

import argparse
import dataclasses
import fnmatch
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path

from harness import settings
from harness.project import layout
from harness.report.results import SCHEMA
from harness.run.options import UsageError
from harness.testcase import default_tier, tiers

DEFAULT_DURATIONS = layout.DURATIONS
FULL_SWEEP_DURATIONS = layout.FULL_SWEEP_DURATIONS
_FALLBACK_SECONDS = 1.0


# ------------------------------------------------------------------------------------------
# Selection.


def matches(test_id: str, pattern: str, exact_ids: set[str]) -> bool:
    if pattern in exact_ids:
        return test_id == pattern
    if any(char in pattern for char in "*?["):
        return fnmatch.fnmatchcase(test_id, pattern)
    return pattern in test_id


def select(tests: list, patterns: list[str]) -> list:
    if not patterns:
        return tests
    ids = {test.id for test in tests}
    return [test for test in tests if any(matches(test.id, pattern, ids) for pattern in patterns)]


def choose_tests(collected: list, args: argparse.Namespace, shard: tuple[int, int] | None) -> list:
    """The selected tests of this shard, longest first."""
    smoke_tier = tiers.current() == "smoke"
    if smoke_tier:
        from harness.testcase import smoke

        # A subset, not a skip list: the other tests are left out of the run and its reports.
        collected = [test for test in collected if test.scenario in smoke.SCENARIOS]
    # The perf tier holds the perf tests alone, and no other tier holds them.
    perf_tier = tiers.current() == tiers.PERF
    collected = [test for test in collected if (test.tier == tiers.PERF) == perf_tier]
    if tiers.current() == "default" and default_tier.load():
        # The default tier's share of the pool, chosen by what each test catches
        # (harness.testcase.default_tier), for a whole-suite run; the rest run nightly, the
        # stress scenarios too, left out here as the smoke tier leaves out its others, but for a
        # test named by its id (a rerun line). What -k names runs whole (-k LSTM: every LSTM
        # test), the stress scenarios but for one named by its id.
        named = set(args.patterns)
        collected = [test for test in collected if test.id in named or test.tier == "default"
                     and (named or default_tier.includes(test.scenario, test.backend))]
    tests = select(collected, args.patterns)
    if not tests:
        tier = tiers.current()
        where, listing = (f" in the {tier} tier", f"--tier {tier} --list") if tier in ("smoke", tiers.PERF) \
            else ("", "--list")
        raise UsageError(f"no test matched -k {' -k '.join(args.patterns)}{where}; "
                         f"{args.command} {listing} shows the ids")
    durations = run_durations(args.durations)
    # Outside its tier a stress scenario only skips: it must not weigh on ordering or shards.
    durations.update({test.id: 0.0 for test in tests if test.tier not in ("default", tiers.current())})
    if shard is not None:
        mine = set(partition([test.id for test in tests], shard[1], durations)[shard[0] - 1])
        tests = [test for test in tests if test.id in mine]
    order = {test_id: index for index, test_id in enumerate(longest_first([t.id for t in tests], durations))}
    return sorted(tests, key=lambda test: order[test.id])


def time_limits(tests: list, args: argparse.Namespace) -> tuple[list, str]:
    """The tests with their own time limits (unless --timeout sets one), and how the console
    says it."""
    if args.timeout is not None:
        return tests, f"timeout {args.timeout:g} s" if args.timeout else "no timeout"
    graph_seconds = default_tier.seconds(settings.GRAPH_SECONDS)
    limits = derive(tests, run_durations(args.durations), graph_seconds)
    tests = [dataclasses.replace(test, timeout=limits[test.id][0]) for test in tests]
    seconds = [test.timeout for test in tests] or [0.0]
    slow = f", {graph_seconds:g} s per graph where another backend's were" if graph_seconds else ""
    return tests, f"time limits {min(seconds):g}-{max(seconds):g} s from recorded durations{slow}"


# ------------------------------------------------------------------------------------------
# Durations, order and shards.


class ShardSpecError(ValueError):
    """A --shard value that is not I/N with 1 <= I <= N."""


def parse_shard(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not match:
        raise ShardSpecError(f"bad --shard '{text}': write I/N, e.g. --shard 2/3 for the second of three shards")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise ShardSpecError(f"bad --shard '{text}': need 1 <= I <= N (shards are numbered from 1)")
    return index, count


def run_durations(path: str | Path | None) -> dict[str, float]:
    """The durations this run orders and limits its tests by: the file given, else the bundled
    ones of its operator sweep (the operator sweep's tests from FULL_SWEEP_DURATIONS under
    ``--op-sweep full``, the others' from DEFAULT_DURATIONS)."""
    durations = load_durations(path)
    if path or settings.current().get(settings.OP_SWEEP, "quick") != "full":
        return durations
    return {**{test_id: seconds for test_id, seconds in durations.items() if not in_sweep(test_id)},
            **load_durations(FULL_SWEEP_DURATIONS)}


def in_sweep(test_id: str) -> bool:
    """Whether a test is the operator sweep's (its durations depend on --op-sweep)."""
    return test_id.startswith(layout.SWEEP_MODULE + ".")


def load_durations(path: str | Path | None) -> dict[str, float]:
    """Seconds per test id; an absent or unreadable file gives no durations (not an error:
    they only steer ordering and balance, never which tests run)."""
    path = Path(path) if path else DEFAULT_DURATIONS
    if path.is_dir():
        path = path / "results.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if isinstance(data, dict) and data.get("schema") == SCHEMA:
        return {test["id"]: float(test.get("duration_s", 0.0)) for test in data.get("tests", [])
                if isinstance(test, dict) and "id" in test}
    if isinstance(data, dict):
        return {key: float(value) for key, value in data.items() if isinstance(value, (int, float))}
    return {}


def estimate(test_ids: list[str], durations: dict[str, float]) -> dict[str, float]:
    known = [durations[test_id] for test_id in test_ids if test_id in durations]
    fallback = statistics.median(known) if known else _FALLBACK_SECONDS
    return {test_id: durations.get(test_id, fallback) for test_id in test_ids}


def longest_first(test_ids: list[str], durations: dict[str, float]) -> list[str]:
    """Longest first, so the slow tail starts early and workers finish together; ties by id
    keep the order deterministic."""
    seconds = estimate(test_ids, durations)
    return sorted(test_ids, key=lambda test_id: (-seconds[test_id], test_id))


def partition(test_ids: list[str], count: int, durations: dict[str, float]) -> list[list[str]]:
    """Split into ``count`` disjoint shards of about equal total time.

    Greedy: each test, longest first, goes to the shard with the least time so far (the
    lowest-numbered on ties). Depends only on the ids and durations, so every machine of a
    sharded job computes the same split.
    """
    seconds = estimate(test_ids, durations)
    shards: list[list[str]] = [[] for _ in range(count)]
    totals = [0.0] * count
    for test_id in longest_first(sorted(set(test_ids)), durations):
        target = min(range(count), key=lambda index: (totals[index], len(shards[index]), index))
        shards[target].append(test_id)
        totals[target] += seconds[test_id]
    return shards


# ------------------------------------------------------------------------------------------
# Time limits.

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


def derive(tests: list, durations: dict[str, float], graph_seconds: float | None = None
           ) -> dict[str, tuple[float, float | None]]:
    """Per test id: (limit in seconds, the recorded seconds it was derived from or None). A
    duration borrowed from another backend gets ``graph_seconds`` (--graph-seconds: this
    backend's compile of one graph) for each graph the scenario compiles: a backend that takes
    a minute per graph (MAX, 2026-12-03) is otherwise stopped at aot_eager's pace."""
    by_test: dict[tuple[str, str], list[tuple[str, float]]] = defaultdict(list)
    for test_id, seconds in durations.items():
        module, cls, method = _split(test_id)
        by_test[(module, method)].append((cls, seconds))
    limits = {}
    for test in tests:
        recorded, compiling = durations.get(test.id), 0.0
        if recorded is None:
            family = test.scenario.split(".")[-2]
            recorded = reference(test.id, family, by_test)
            compiling = (graph_seconds or 0.0) * (default_tier.graphs(test.scenario) or 1)
        limit = UNKNOWN + MARGIN * compiling if recorded is None else FLOOR + MARGIN * (recorded + compiling)
        limits[test.id] = (round(limit, 1), recorded)
    return limits
