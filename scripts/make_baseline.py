"""Write a committed baseline (baselines/*.json) from one or more runs' results.

    python scripts/make_baseline.py OUT.json RESULTS [RESULTS...]
    python scripts/make_baseline.py OUT.json BASELINE --metrics-from RESULTS


RESULTS are results.json files or report directories of the same torch, e.g. the default
run and full operator sweeps. A test in several of them takes its result from the last one
(so a full sweep can replace the quick sweep's entries). Tracebacks, timings, eager-share
details and machine paths are dropped: a baseline needs ids, outcomes, reasons and Dynamo's
metrics (frames, graphs, graph breaks, recompiles, compile time, which --baseline compares),
and stays small enough to review. ``--metrics-from RESULTS`` changes no outcome: it gives each
test of the sources the metrics RESULTS recorded for it, where the outcome there is the same
(to add the metrics of a default run to a baseline made of nightly-tier runs and sweeps).
"""

from __future__ import annotations

import sys
import json
from dataclasses import MISSING, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.report.results import RunResults, TestResult, load, write_atomic  # noqa: E402


def _load(source: str) -> RunResults:
    path = Path(source)
    return load(path / "results.json" if path.is_dir() else path)


def _compact(baseline: RunResults) -> str:
    """results.json without the fields a test leaves at their defaults (readers fill them in)."""
    defaults = {name: spec.default for name, spec in TestResult.__dataclass_fields__.items()
                if spec.default is not MISSING}
    data = baseline.to_json()
    data["tests"] = [{key: value for key, value in test.items() if key not in defaults or value != defaults[key]}
                     for test in data["tests"]]
    return json.dumps(data, indent=1) + "\n"


def main(argv: list[str]) -> int:
    metrics_from = None
    if "--metrics-from" in argv:
        index = argv.index("--metrics-from")
        if index + 1 >= len(argv):
            print("make_baseline: --metrics-from needs a results file", file=sys.stderr)
            return 2
        metrics_from = _load(argv[index + 1])
        argv = argv[:index] + argv[index + 2:]
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
            tests[test.id] = replace(test, details="", worker="", expectation=None, duration_s=0.0, eager_share=None)
    if metrics_from is not None:
        recorded = {test.id: test for test in metrics_from.tests}
        for test_id, test in tests.items():
            other = recorded.get(test_id)
            if other is not None and other.outcome == test.outcome and other.metrics:
                tests[test_id] = replace(test, metrics=other.metrics)
    backends = []
    for run in runs:
        backends += [backend for backend in run.run.get("backends", []) if backend not in backends]
    first = runs[0].run
    baseline = RunResults(
        # A perf baseline keeps what its figures depend on: the tier, the device, the machine.
        run={key: first[key] for key in ("torch", "python", "platform", "tier", "device", "perf") if key in first}
        | {"backends": backends, "complete": True,
           # An earlier baseline among the sources stands for the runs it was made of.
           "baseline_of": [name for source, run in zip(sources, runs)
                           for name in run.run.get("baseline_of", [Path(source).name])]},
        tests=sorted(tests.values(), key=lambda test: test.id))
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, _compact(baseline))
    counts = baseline.summary()
    print(f"{out}: {counts['total']} tests from {len(sources)} runs of torch {first.get('torch')}, "
          f"{counts['unexpected']} unexpected")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
