#!/usr/bin/env python3
"""Refresh test/durations.json (used to order and shard tests) from runs' results.json; a
run with --op-sweep full refreshes the operator sweep's tests in test/durations_full_sweep.json.

    python run_tests.py --report-dir reports && python scripts/update_durations.py reports/results.json

Tests that did not run to the end in the given runs (skipped, e.g. outside their tier,
crashed, timed out, or not selected) keep their recorded time; tests that no longer exist
are dropped. Durations from a cold-cache run order the tests best for the run that needs it
most: the first one, where inductor compiles everything.
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import outcomes  # noqa: E402
from harness.report.results import ResultsError, load  # noqa: E402
from harness.run.selection import DEFAULT_DURATIONS, FULL_SWEEP_DURATIONS, in_sweep, load_durations  # noqa: E402


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python scripts/update_durations.py RESULTS.json [RESULTS.json...]", file=sys.stderr)
        return 2
    try:
        runs = [load(path) for path in argv]
    except ResultsError as error:
        print(f"update_durations.py: {error}", file=sys.stderr)
        return 2
    files = {False: DEFAULT_DURATIONS, True: FULL_SWEEP_DURATIONS}
    durations = {full: load_durations(path) for full, path in files.items()}
    updated = 0
    for results in runs:
        full_sweep = results.run.get("op_sweep") == "full"
        # Only tests that ran to the end say how long they take.
        for test in results.tests:
            if outcomes.named(test.outcome).timed:
                durations[full_sweep and in_sweep(test.id)][test.id] = round(test.duration_s, 2)
                updated += 1
    existing = set(_collect_ids())
    for full, path in files.items():
        kept = {test_id: seconds for test_id, seconds in durations[full].items()
                if test_id in existing and (not full or in_sweep(test_id))}
        path.write_text(json.dumps(dict(sorted(kept.items())), indent=1) + "\n")
        print(f"wrote {len(kept)} durations to {path}")
    print(f"{updated} from these runs")
    return 0


def _collect_ids() -> list[str]:
    """Every test id in the suite, for every default backend, in the nightly tier with the
    full operator sweep and every variant: the tests a duration may be recorded for (a
    variant's test without a recording of its own is limited by its scenario's)."""
    from harness.axes.variants import VARIANTS

    os.environ.setdefault("DYNAMO_SUITE_OP_SWEEP", "full")
    os.environ.setdefault("DYNAMO_SUITE_VARIANTS", ",".join(VARIANTS))
    from harness.run.collection import collect_here

    return [test.id for test in collect_here().tests]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
