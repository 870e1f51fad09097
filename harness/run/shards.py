"""Ordering and sharding tests by how long they took last time.

Durations are read from a results.json (any earlier run's) or from a plain
``{"test id": seconds}`` map; the suite keeps one in test/durations.json. Tests with no
recorded time count as the median of the recorded ones, so new tests still spread evenly.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

from harness.project import layout
from harness.report.results import SCHEMA

DEFAULT_DURATIONS = layout.DURATIONS
_FALLBACK_SECONDS = 1.0


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
