"""What got slower or broke up since the baseline: per test, Dynamo's metrics and the perf
tier's figures compared, each by a rule measured on the noise of identical runs.

Dynamo's metrics
----------------

A test's metrics (results.json ``tests[].metrics``) are compared when it passed in both
runs. Counts are exact, so a change is a change, except where identical runs differ:

* frames, graph_breaks, recompiles: any change. In four warm default runs of torch 2.13.0
  on this 2-core machine (5118 pairs of the same test) none of them ever differed.
* graphs: a change of 2 or more. In the same runs four tests (double backward inside the
  compiled function, storage-overlap recompiles, the joint-graph pass) captured one graph
  more or fewer from run to run; nothing else did. A new graph break also shows in
  graph_breaks and frames, so it is not lost.
* compile_s: first the two runs' overall ratio (the median of new/old over tests that
  compiled for 0.05 s or more in both: a slower machine or a busier one), then a test
  counts when its new time is more than twice the old one times that ratio, and at least
  1 s more. In those runs the 99.9th percentile of the ratio between two runs of one test
  was 12x (times of a few ms) and the largest difference 0.89 s: neither bound alone
  holds, both together never fired. Compare runs made with like caches (a cold inductor
  cache compiles each first graph for 10-17 s).

Increases are regressions; decreases are listed as improvements.

The perf tier's figures
-----------------------
results.json ``tests[].perf`` (harness.testcase.perf). A perf test is compared when it
passed in both runs with figures. Tests are matched by id; a baseline that holds a single
backend is also matched by scenario, so a backend's run can be judged against
``aot_eager``'s figures (``--baseline aot_eager-perf/results.json``). docs/perf.md has the
measurements behind these rules:

* speed-up (eager time / compiled time, both from the same rounds, so a slower or busier
  machine cancels out): a change counts when the two 95 % intervals lie more than
  ``SPEED_GAP`` apart: the new interval's top under the old one's bottom by that share (or
  the other way round). A noisy figure (harness.measure.speed) comes from a disturbed run,
  whose median can sit off a quiet run's by more than its own interval says, so the gap
  grows by each noisy figure's relative width (how far its interval reaches from its
  median). Wide intervals hide small changes, never invent them; a noisy figure in which no
  change was found is listed as too noisy to judge, since a change may hide in it. The
  compiled call must also have moved by ``SPEED_MIN_MS`` or more (after eager's own move):
  on a sub-millisecond graph, per-call overhead (guards, dispatch) moves that much between
  two quiet-looking runs on a shared machine, like memory's ``MEMORY_MIN_BYTES``.
* eager is the control: it runs the same code in both runs. When a test's eager time moved
  more than ``EAGER_DRIFT`` beside the runs' overall eager ratio (a slower or busier machine
  moves every test alike), that test's machine was disturbed and its speed-up is not
  compared (listed with both eager times).
* peak memory of the compiled step: a change counts when it differs from the old one by
  more than ``MEMORY_TOLERANCE`` and by at least ``MEMORY_MIN_BYTES``, after scaling the
  old figure by how eager's own peak changed (a torch whose eager kernels allocate more
  moves both).

A lower speed-up and a higher peak are regressions; the others are improvements.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from harness.report.results import RunResults, TestResult

COUNTS = ("frames", "graphs", "graph_breaks", "recompiles")
MIN_COUNT_CHANGE = {"graphs": 2}  # others: 1
COMPILE = "compile_s"
COMPILE_FACTOR = 2.0  # more than twice (after the runs' overall ratio)
COMPILE_MIN_S = 1.0  # and at least this many seconds more
COMPILE_FLOOR_S = 0.05  # tests faster than this do not set the runs' overall ratio


@dataclass(frozen=True)
class MetricChange:
    test: str
    metric: str
    old: float
    new: float

    @property
    def regression(self) -> bool:
        return self.new > self.old

    def line(self) -> str:
        if self.metric == COMPILE:
            return f"{self.test}: compile time {self.old:.2f} s -> {self.new:.2f} s"
        return f"{self.test}: {self.metric.replace('_', ' ')} {self.old:g} -> {self.new:g}"


def _comparable(old: TestResult, new: TestResult) -> bool:
    return old.outcome == new.outcome == "PASS" and bool(old.metrics) and bool(new.metrics)


def machine_ratio(pairs: list[tuple[TestResult, TestResult]]) -> float:
    """Median of new/old compile time over tests that compiled for a while in both runs."""
    ratios = [new.metrics[COMPILE] / old.metrics[COMPILE] for old, new in pairs
              if old.metrics.get(COMPILE, 0) >= COMPILE_FLOOR_S and new.metrics.get(COMPILE, 0) >= COMPILE_FLOOR_S]
    return statistics.median(ratios) if ratios else 1.0


def changes_between(old: RunResults, new: RunResults) -> list[MetricChange]:
    before = {test.id: test for test in old.tests}
    pairs = [(before[test.id], test) for test in new.tests if test.id in before and _comparable(before[test.id], test)]
    ratio = machine_ratio(pairs)
    changes = []
    for previous, test in pairs:
        for metric in COUNTS:
            if metric in previous.metrics and metric in test.metrics:
                was, now = previous.metrics[metric], test.metrics[metric]
                if abs(now - was) >= MIN_COUNT_CHANGE.get(metric, 1):
                    changes.append(MetricChange(test.id, metric, was, now))
        if COMPILE in previous.metrics and COMPILE in test.metrics:
            expected, now = previous.metrics[COMPILE] * ratio, test.metrics[COMPILE]
            slower = now > COMPILE_FACTOR * expected and now - expected >= COMPILE_MIN_S
            faster = expected > COMPILE_FACTOR * now and expected - now >= COMPILE_MIN_S
            if slower or faster:
                changes.append(MetricChange(test.id, COMPILE, previous.metrics[COMPILE], now))
    return changes


# -- the perf tier's figures ------------------------------------------------------------

SPEED_GAP = 0.15
SPEED_MIN_MS = 0.1  # the compiled call moved by at least this much per call
EAGER_DRIFT = 1.5  # eager's own time moved more than this factor beside the runs' overall ratio
EAGER_RATIO_MIN_PAIRS = 3  # fewer pairs: assume like machines (overall ratio 1)
MEMORY_TOLERANCE = 0.05
MEMORY_MIN_BYTES = 64 * 1024
SPEEDUP = "speed-up"
MEMORY = "peak memory"


@dataclass(frozen=True)
class PerfChange:
    test: str
    figure: str  # SPEEDUP or MEMORY
    old: float
    new: float
    against: str  # the baseline test it was compared with

    @property
    def regression(self) -> bool:
        return self.new < self.old if self.figure == SPEEDUP else self.new > self.old

    def line(self) -> str:
        vs = "" if self.against == self.test else f" (against {self.against})"
        if self.figure == SPEEDUP:
            return f"{self.test}: speed-up {self.old:.2f}x -> {self.new:.2f}x{vs}"
        return f"{self.test}: compiled peak memory {self.old / 2 ** 20:.2f} MiB -> {self.new / 2 ** 20:.2f} MiB{vs}"


@dataclass
class PerfComparison:
    changes: list[PerfChange] = field(default_factory=list)
    too_noisy: list[str] = field(default_factory=list)  # "test: why"
    compared: int = 0  # perf tests with a partner in the baseline
    # Set when the baseline's figures were measured elsewhere (another processor or device):
    # "baseline: ...; this run: ...". Speed-ups then move with the machine, not only the code.
    other_machine: str | None = None

    @property
    def regressions(self) -> list[PerfChange]:
        return [change for change in self.changes if change.regression]

    @property
    def improvements(self) -> list[PerfChange]:
        return [change for change in self.changes if not change.regression]


def _measured(test: TestResult) -> bool:
    return test.outcome == "PASS" and bool(test.perf)


def _scenario_key(test: TestResult) -> tuple:
    return test.scenario, tuple(sorted(test.axes.items()))


def _partners(old: RunResults, new: RunResults) -> list[tuple[TestResult, TestResult]]:
    before = {test.id: test for test in old.tests if _measured(test)}
    single_backend = len({test.backend for test in old.tests if test.perf}) == 1
    by_scenario = {_scenario_key(test): test for test in before.values()} if single_backend else {}
    pairs = []
    for test in new.tests:
        if not _measured(test):
            continue
        partner = before.get(test.id) or by_scenario.get(_scenario_key(test))
        if partner is not None:
            pairs.append((partner, test))
    return pairs


def _disturbance(figures: dict) -> float:
    """How far a noisy figure's interval reaches from its median, as a share of it; 0 when
    the figure is not noisy. A disturbed run can sit off another run by about that much."""
    if not figures.get("noisy") or figures["speedup"] <= 0:
        return 0.0
    return max(figures["speedup"] - figures["low"], figures["high"] - figures["speedup"]) / figures["speedup"]


def _per_call_move_ms(was: dict, now: dict) -> float:
    """How far this run's compiled call sits from where the baseline's speed-up puts it,
    in ms at this run's eager time; infinite when the figures hold no times."""
    if not now.get("eager_ms") or not was["speedup"] or not now["speedup"]:
        return float("inf")
    return abs(now["eager_ms"] / now["speedup"] - now["eager_ms"] / was["speedup"])


def _speed_change(old: TestResult, new: TestResult) -> PerfChange | None:
    was, now = old.perf, new.perf
    keep = 1 - SPEED_GAP - _disturbance(was) - _disturbance(now)  # <= 0: nothing can be told apart
    slower = now["high"] < keep * was["low"]
    faster = was["high"] < keep * now["low"]
    if (slower or faster) and _per_call_move_ms(was, now) < SPEED_MIN_MS:
        return None
    return PerfChange(new.id, SPEEDUP, was["speedup"], now["speedup"], old.id) if slower or faster else None


def _memory_change(old: TestResult, new: TestResult) -> PerfChange | None:
    was, now = old.perf.get("compiled_peak_bytes"), new.perf.get("compiled_peak_bytes")
    if was is None or now is None:
        return None
    eager_was, eager_now = old.perf.get("eager_peak_bytes"), new.perf.get("eager_peak_bytes")
    expected = was * eager_now / eager_was if eager_was and eager_now else was
    if abs(now - expected) >= max(MEMORY_MIN_BYTES, MEMORY_TOLERANCE * expected):
        return PerfChange(new.id, MEMORY, expected, now, old.id)
    return None


def _machine(results: RunResults) -> str:
    perf = results.run.get("perf") or {}
    return f"{perf.get('cpu', 'unknown processor')}, device {results.run.get('device') or 'cpu'}"


def _eager_ratio(previous: TestResult, test: TestResult) -> float | None:
    was, now = previous.perf.get("eager_ms"), test.perf.get("eager_ms")
    return now / was if was and now else None


def eager_drift(pairs: list[tuple[TestResult, TestResult]]) -> dict[str, str]:
    """Tests whose eager time moved on its own, each with why: eager runs the same code in
    both runs, so when it moves far from the runs' overall ratio (a busier or slower machine
    moves every test alike) the machine was disturbed during that test, and its speed-up
    cannot be compared."""
    ratios = {test.id: ratio for previous, test in pairs if (ratio := _eager_ratio(previous, test))}
    overall = statistics.median(ratios.values()) if len(ratios) >= EAGER_RATIO_MIN_PAIRS else 1.0
    drifted = {}
    for previous, test in pairs:
        ratio = ratios.get(test.id)
        if ratio is not None and max(ratio / overall, overall / ratio) > EAGER_DRIFT:
            drifted[test.id] = (f"eager itself took {previous.perf['eager_ms']:.2f} ms in the baseline and "
                                f"{test.perf['eager_ms']:.2f} ms in this run")
    return drifted


def compare_perf(old: RunResults, new: RunResults) -> PerfComparison:
    comparison = PerfComparison()
    if old.run.get("perf") and new.run.get("perf") and _machine(old) != _machine(new):
        comparison.other_machine = f"baseline: {_machine(old)}; this run: {_machine(new)}"
    pairs = _partners(old, new)
    comparison.compared = len(pairs)
    drifted = eager_drift(pairs)
    for previous, test in pairs:
        noisy = [label for label, figures in (("baseline", previous.perf), ("this run", test.perf))
                 if figures.get("noisy")]
        if test.id in drifted:
            comparison.too_noisy.append(f"{test.id}: speed-up not comparable, {drifted[test.id]}")
        elif (speed := _speed_change(previous, test)) is not None:
            comparison.changes.append(speed)
        elif noisy:
            comparison.too_noisy.append(f"{test.id}: speed-up too noisy to judge in {' and '.join(noisy)}")
        comparison.changes += filter(None, [_memory_change(previous, test)])
    return comparison
