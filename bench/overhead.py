"""The harness's own time per test, from the timing lines the workers write
(``DYNAMO_SUITE_TIMINGS``; one JSON line per test: start, end, run_s, body_s).

A worker's time from its first test's start to its last test's end is split into

* ``body``: the scenario itself (compiling and running, in the test method),
* ``in_test``: the rest of the TestCase (expectations, Dynamo reset, seeding, state
  snapshot and leak check, guard-failure capture),
* ``per_test``: pytest and xdist around each test (reports, classification, hooks),
* ``idle``: between one test's end and the next one's start (scheduling).

Overhead per test is everything but ``body``, over the number of tests. Start-up (run
launched to first test) and finish (last test to exit) are fixed costs, reported apart.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass
class Overhead:
    tests: int
    body_s: float
    in_test_s: float
    per_test_s: float
    idle_s: float
    startup_s: float
    finish_s: float

    @property
    def overhead_per_test_ms(self) -> float:
        return 1000 * (self.in_test_s + self.per_test_s + self.idle_s) / max(1, self.tests)

    def as_dict(self) -> dict:
        return {**asdict(self), "overhead_per_test_ms": round(self.overhead_per_test_ms, 2)}


def read_lines(directory: Path) -> list[dict]:
    lines = []
    for path in sorted(directory.glob("*.jsonl")):
        lines += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return lines


def analyse(lines: list[dict], launched: float, exited: float) -> Overhead:
    by_worker: dict[str, list[dict]] = defaultdict(list)
    for line in lines:
        by_worker[line["worker"]].append(line)
    body = in_test = per_test = idle = 0.0
    for worker_lines in by_worker.values():
        worker_lines.sort(key=lambda line: line["start"])
        previous_end = None
        for line in worker_lines:
            span = line["end"] - line["start"]
            # A test outside DynamoTestCase has no split: all of it counts as the harness's.
            run = min(line.get("run_s", 0.0), span)
            scenario = min(line.get("body_s", 0.0), run)
            body += scenario
            in_test += run - scenario
            per_test += span - run
            if previous_end is not None:
                idle += max(0.0, line["start"] - previous_end)
            previous_end = line["end"]
    first = min((line["start"] for line in lines), default=launched)
    last = max((line["end"] for line in lines), default=exited)
    return Overhead(tests=len(lines), body_s=round(body, 3), in_test_s=round(in_test, 3),
                    per_test_s=round(per_test, 3), idle_s=round(idle, 3),
                    startup_s=round(first - launched, 3), finish_s=round(exited - last, 3))
