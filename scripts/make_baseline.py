"""Write a committed baseline (baselines/*.json) from one or more runs' results.

    python scripts/make_baseline.py OUT.json RESULTS [RESULTS...]

RESULTS are results.json files or report directories of the same torch, e.g. the default
run and full operator sweeps. A test in several of them takes its result from the last one
(so a full sweep can replace the quick sweep's entries). Tracebacks, metrics, timings and
machine paths are dropped: a baseline needs ids, outcomes and reasons, and stays small
enough to review.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.report.results import RunResults, load, write_atomic  # noqa: E402


def _load(source: str) -> RunResults:
    path = Path(source)
    return load(path / "results.json" if path.is_dir() else path)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out, sources = Path(argv[0]), argv[1:]
    runs = [_load(source) for source in sources]
    torches = {run.run.get("torch") for run in runs}
    if len(torches) != 1:
        print(f"make_baseline: the runs come from different torch versions: {sorted(map(str, torches))}", file=sys.stderr)
        return 2
    tests = {}
    for run in runs:
        for test in run.tests:
            tests[test.id] = replace(test, details="", worker="", metrics=None, expectation=None, duration_s=0.0)
    backends = []
    for run in runs:
        backends += [backend for backend in run.run.get("backends", []) if backend not in backends]
    first = runs[0].run
    baseline = RunResults(
        run={key: first[key] for key in ("torch", "python", "platform") if key in first}
        | {"backends": backends, "baseline_of": [Path(source).name for source in sources], "complete": True},
        tests=sorted(tests.values(), key=lambda test: test.id))
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, baseline.dumps())
    counts = baseline.summary()
    print(f"{out}: {counts['total']} tests from {len(sources)} runs of torch {first.get('torch')}, "
          f"{counts['unexpected']} unexpected")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
