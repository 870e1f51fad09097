"""How much the perf tier's figures move between runs of the same build: the measurement
behind the rules in harness/report/metric_changes.py (docs/perf.md).

    python bench/perf_noise.py reports/perf-1 reports/perf-2 reports/perf-3

Each argument is a perf-tier run (results.json, or its report directory) of the same code
on the same machine. For every pair of runs and every test measured in both, it reports:

* the speed-up's ratio between the two runs, its spread over all pairs;
* how far apart the two 95 % intervals lie (the gap the speed-up rule compares with
  SPEED_GAP; negative when they overlap), the largest over all pairs;
* how often each figure was marked noisy;
* the largest change of the compiled peak memory;
* and what the rules in metric_changes call changes among those pairs (each a false alarm).
"""

from __future__ import annotations

import itertools
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.report import metric_changes  # noqa: E402
from harness.report.results import load  # noqa: E402


def gap(old: dict, new: dict) -> float:
    """How far the intervals lie apart, as a share of the higher one's bottom (negative: overlap)."""
    if new["high"] < old["low"]:
        return 1 - new["high"] / old["low"]
    if old["high"] < new["low"]:
        return 1 - old["high"] / new["low"]
    return -min(new["high"] - old["low"], old["high"] - new["low"]) / max(old["low"], new["low"])


def main(paths: list[str]) -> int:
    runs = [load(path) for path in paths]
    ratios, gaps, memory = [], [], []
    noisy = measured = 0
    alarms: list[str] = []
    for run in runs:
        figures = [test.perf for test in run.tests if test.perf]
        measured += len(figures)
        noisy += sum(bool(figure["noisy"]) for figure in figures)
    for old, new in itertools.combinations(runs, 2):
        before = {test.id: test for test in old.tests if test.perf}
        for test in new.tests:
            previous = before.get(test.id)
            if not test.perf or previous is None:
                continue
            ratios.append(test.perf["speedup"] / previous.perf["speedup"])
            gaps.append((gap(previous.perf, test.perf), test.id))
            was, now = previous.perf["compiled_peak_bytes"], test.perf["compiled_peak_bytes"]
            if was and now:
                memory.append((abs(now - was) / was, abs(now - was), test.id))
        comparison = metric_changes.compare_perf(old, new)
        alarms += [change.line() for change in comparison.changes]
    if not ratios:
        print("no test measured in two runs")
        return 1
    quantiles = statistics.quantiles(ratios, n=20)
    print(f"{len(runs)} runs, {measured} figures, {noisy} marked noisy ({noisy / measured:.0%})")
    print(f"speed-up ratio between runs over {len(ratios)} pairs: median {statistics.median(ratios):.3f}, "
          f"5th-95th percentile {quantiles[0]:.3f}-{quantiles[-1]:.3f}, range {min(ratios):.3f}-{max(ratios):.3f}")
    overlapping = sum(value <= 0 for value, _ in gaps)
    widest = max(gaps)
    print(f"intervals overlap in {overlapping} of {len(gaps)} pairs; the widest gap {widest[0]:.1%} ({widest[1]})")
    print(f"  gaps over 0%: {sum(value > 0 for value, _ in gaps)}, over 2%: {sum(value > 0.02 for value, _ in gaps)}, "
          f"over {metric_changes.SPEED_GAP:.0%} (the rule): {sum(value > metric_changes.SPEED_GAP for value, _ in gaps)}")
    if memory:
        share, size, test_id = max(memory)
        print(f"compiled peak memory: {sum(s > 0 for s, _, _ in memory)} of {len(memory)} pairs differ; "
              f"the largest change {share:.1%} ({size} bytes, {test_id})")
    print(f"changes the rules report between these runs (false alarms): {len(alarms)}")
    for line in alarms:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
