"""What got slower or broke up since the baseline: per test, Dynamo's metrics compared.

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
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

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


def compare(old: RunResults, new: RunResults) -> list[MetricChange]:
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
