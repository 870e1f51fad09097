#!/usr/bin/env python3
"""Refresh test/durations.json (used to order and shard tests) from a run's results.json.

    python run_tests.py --report-dir reports && python scripts/update_durations.py reports/results.json
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.results import ResultsError, load  # noqa: E402
from harness.shards import DEFAULT_DURATIONS  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python scripts/update_durations.py path/to/results.json", file=sys.stderr)
        return 2
    try:
        results = load(argv[0])
    except ResultsError as error:
        print(f"update_durations.py: {error}", file=sys.stderr)
        return 2
    # Only tests that ran to the end say how long they take.
    durations = {test.id: round(test.duration_s, 2) for test in results.tests
                 if test.outcome not in ("CRASH", "TIMEOUT", "SKIP")}
    DEFAULT_DURATIONS.write_text(json.dumps(dict(sorted(durations.items())), indent=1) + "\n")
    print(f"wrote {len(durations)} durations to {DEFAULT_DURATIONS}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
