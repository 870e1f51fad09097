#!/usr/bin/env python3
"""What each test of the nightly pool runs of PyTorch's compile stack: the lines of
torch/_dynamo, torch/_functorch, torch/_subclasses, torch/fx, torch/_higher_order_ops and
torch/_inductor it executes, per backend, measured with coverage.py.

    python scripts/stack_coverage.py [--backend NAME ...] [-k PATTERN ...] [-j N] [--out FILE]

A regression anywhere in the compile stack fires only in a test that runs the broken line;
the default tier wants every line the pool runs to be run by one of its tests, as it wants
every kernel condition (harness/testcase/default_tier.py). This measures what each test
runs; scripts/choose_default_tier.py --stack-coverage FILE keeps it in the tier data.

Each worker process runs a chunk of the tests (unittest, in process, as
test/harness/mutation/worker.py does), each under a coverage context of its own, after a
warm-up compile that is not measured: lines every process runs once (lazy registrations)
are nobody's. The lines are kept as blocks: lines run by exactly the same scenarios are one
block, which is all the cover needs to know of them (a few thousand blocks, not a hundred
thousand lines). A worker that crashes loses its chunk's lines: the test it was running is
named, and the chunk runs again without it.

Costs tens of minutes per backend on 2 cores (coverage's tracer slows Dynamo's Python about
twofold): a nightly measurement, not part of any run. Needs coverage.py
(``pip install coverage==7.6.1``). Exit 2 with one line on a bad argument or a missing
coverage.py.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PACKAGES = ("_dynamo", "_functorch", "_subclasses", "fx", "_higher_order_ops", "_inductor")
BACKENDS = ("eager", "aot_eager", "inductor")
CHUNK = 25  # tests per worker process: a crash loses at most this many tests' lines
WORKER_FLAG = "--worker"


def _fail(message: str) -> None:
    print(f"stack_coverage.py: error: {message}", file=sys.stderr)
    sys.exit(2)


# -- a worker: one chunk of tests, each in its own coverage context ---------------------------------


def _warm_up(backend: str) -> None:
    """A compile, forward and backward on ``backend``: what every process runs once is then
    run before anything is measured."""
    import torch

    try:
        compiled = torch.compile(lambda x: (x.sin() * 2).sum(), backend=backend)
        compiled(torch.randn(4, requires_grad=True)).backward()
    except Exception:  # noqa: BLE001 -- a backend torch does not know by name warms up in its first test
        pass
    torch._dynamo.reset()


def worker(backend: str, out: Path) -> int:
    """Run the test ids on stdin; write {"done": [...], "outcomes": {...}, "lines": {file: {line: [test index]}}}."""
    import coverage
    import torch

    from test.harness.mutation.worker import run_test

    requests = [json.loads(line) for line in sys.stdin if line.strip()]
    _warm_up(backend)
    root = Path(torch.__file__).resolve().parent
    measured = coverage.Coverage(data_file=None, include=[str(root / package / "*") for package in PACKAGES],
                                 config_file=False)
    measured.start()
    outcomes: dict[str, str] = {}
    progress = out.with_suffix(".progress")
    for index, request in enumerate(requests):
        with progress.open("a") as log:  # the parent names the test a crash happened in
            log.write(request["id"] + "\n")
        measured.switch_context(str(index))
        outcome, *_ = run_test(request["id"], request["limit"])
        outcomes[request["id"]] = outcome
    measured.switch_context("")
    measured.stop()
    data = measured.get_data()
    lines: dict[str, dict[int, list[int]]] = {}
    for path in data.measured_files():
        by_line = data.contexts_by_lineno(path)
        name = Path(path).resolve().relative_to(root.parent).as_posix()
        lines[name] = {line: sorted(int(context) for context in contexts if context)
                       for line, contexts in by_line.items() if any(contexts)}
    out.write_text(json.dumps({"done": [request["id"] for request in requests], "outcomes": outcomes,
                               "lines": lines}))
    return 0


# -- the parent: chunks on workers, then the lines per scenario as blocks ------------------------------


def _tests(backend: str, patterns: list[str]) -> list[Any]:
    """The nightly pool's tests on ``backend`` whose scenarios the tier data names (all of
    them without data)."""
    from harness import settings
    from harness.run import collection
    from harness.testcase import default_tier

    collected = collection.collect(settings.Settings({settings.BACKENDS: backend, settings.TIER: "nightly",
                                                      settings.TIER_DATA: default_tier.NO_DATA})).tests
    named = default_tier.read(str(default_tier.DATA))
    return [test for test in collected
            if (not named or test.scenario in named) and (not patterns or any(pattern in test.id for pattern in patterns))]


def _durations(ids: list[str]) -> dict[str, float]:
    try:
        recorded = json.loads((ROOT / "test" / "durations.json").read_text())
    except (OSError, ValueError):
        recorded = {}
    fallback = statistics.median(recorded.values()) if recorded else 1.0
    return {test: float(recorded.get(test, fallback)) for test in ids}


def _run_chunk(backend: str, chunk: list[str], durations: dict[str, float], work: Path, number: int,
               results: list[dict[str, Any]], crashed: list[str], lock: threading.Lock) -> None:
    while chunk:
        out = work / f"chunk-{number}.json"
        progress = out.with_suffix(".progress")
        out.unlink(missing_ok=True)
        progress.unlink(missing_ok=True)
        environment = {key: value for key, value in os.environ.items() if not key.startswith("DYNAMO_SUITE_")}
        environment.update({"DYNAMO_SUITE_BACKENDS": backend, "DYNAMO_SUITE_TIER": "nightly",
                            "DYNAMO_SUITE_TESTS_CHOSEN": "1", "PYTHONPATH": str(ROOT)})
        requests = "".join(json.dumps({"id": test, "limit": max(120.0, 4 * durations[test] + 60)}) + "\n"
                           for test in chunk)
        with open(work / f"chunk-{number}.log", "ab") as log:
            subprocess.run([sys.executable, str(Path(__file__).resolve()), WORKER_FLAG, "--backend", backend,
                            "--out", str(out)], input=requests.encode(), cwd=ROOT, env=environment,
                           stdout=log, stderr=log, check=False)
        if out.is_file():
            with lock:
                results.append({**json.loads(out.read_text()), "ids": chunk})
            return
        started = progress.read_text().split() if progress.is_file() else []
        culprit = started[-1] if started else chunk[0]
        with lock:
            crashed.append(culprit)
            print(f"  {culprit} ended its worker; its chunk goes on without it", flush=True)
        chunk = [test for test in chunk if test != culprit]  # the tests before it again: their lines were lost
        number += 100000


def measure(backend: str, tests: list[Any], jobs: int, work: Path) -> dict[str, Any]:
    """Per scenario of ``backend``'s tests, the compile-stack lines it ran, as blocks."""
    ids = [test.id for test in tests]
    scenario_of = {test.id: test.scenario for test in tests}
    durations = _durations(ids)
    # Longest first, dealt round-robin into chunks: the chunks cost about the same.
    ordered = sorted(ids, key=lambda test: -durations[test])
    count = max(jobs, -(-len(ordered) // CHUNK))
    chunks = [ordered[index::count] for index in range(count)]
    results: list[dict[str, Any]] = []
    crashed: list[str] = []
    lock = threading.Lock()
    pending = list(enumerate(chunks))
    started = time.monotonic()

    def loop() -> None:
        while True:
            with lock:
                if not pending:
                    return
                number, chunk = pending.pop(0)
            _run_chunk(backend, chunk, durations, work, number, results, crashed, lock)
            with lock:
                print(f"  {backend}: {len(results)}/{len(chunks)} chunks ({time.monotonic() - started:.0f} s)",
                      flush=True)

    threads = [threading.Thread(target=loop) for _ in range(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    reached: dict[tuple[str, int], set[str]] = collections.defaultdict(set)
    outcomes: dict[str, str] = {}
    for result in results:
        for path, by_line in result["lines"].items():
            for line, indexes in by_line.items():
                reached[(path, int(line))].update(scenario_of[result["done"][index]] for index in indexes)
        outcomes.update(result["outcomes"])
    return {**blocks(reached), "tests": len(ids), "crashed": crashed,
            "not_passed": sorted(test for test, outcome in outcomes.items() if outcome not in ("pass", "xfail")),
            "wall_s": round(time.monotonic() - started, 1)}


def blocks(reached: dict[tuple[str, int], set[str]]) -> dict[str, Any]:
    """Lines run by the same scenarios, as one block: {"lines": all lines, "files": lines per
    file, "blocks": [[lines, [scenario, ...]], ...]}, the biggest block first."""
    by_scenarios: collections.Counter[frozenset[str]] = collections.Counter()
    files: collections.Counter[str] = collections.Counter()
    for (path, _), scenarios in reached.items():
        by_scenarios[frozenset(scenarios)] += 1
        files[path] += 1
    return {"lines": len(reached), "files": dict(sorted(files.items())),
            "blocks": [[size, sorted(scenarios)] for scenarios, size in
                       sorted(by_scenarios.items(), key=lambda item: (-item[1], sorted(item[0])))]}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="stack_coverage.py", description=__doc__.split("\n\n")[0])
    parser.add_argument(WORKER_FLAG, action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--backend", dest="backends", action="append", default=[], metavar="NAME",
                        help=f"a backend to measure (default: {', '.join(BACKENDS)})")
    parser.add_argument("-k", dest="patterns", action="append", default=[], metavar="PATTERN",
                        help="only tests whose id contains PATTERN")
    parser.add_argument("-j", "--jobs", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "stack_coverage" / "stack_coverage.json")
    args = parser.parse_args(argv)
    try:
        import coverage  # noqa: F401
    except ImportError:
        _fail("coverage.py is not installed: pip install coverage==7.6.1")
    if args.worker:
        return worker(args.backends[0], args.out)
    if args.jobs < 1:
        _fail("-j must be 1 or more")
    from harness.report.results import write_atomic

    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        _fail(f"cannot write {args.out}: {error.strerror}")
    import torch

    measured: dict[str, Any] = {}
    for backend in args.backends or BACKENDS:
        tests = _tests(backend, args.patterns)
        print(f"{backend}: {len(tests)} tests, {args.jobs} workers", flush=True)
        with tempfile.TemporaryDirectory(prefix=f"stack-coverage-{backend}-") as work:
            measured[backend] = measure(backend, tests, args.jobs, Path(work))
        print(f"{backend}: {measured[backend]['lines']} lines in {len(measured[backend]['blocks'])} blocks, "
              f"{len(measured[backend]['crashed'])} tests crashed their worker "
              f"({measured[backend]['wall_s']:.0f} s)", flush=True)
        # After each backend: a later one that fails loses only its own measurement.
        write_atomic(args.out, json.dumps({"torch": torch.__version__, "packages": [f"torch/{name}" for name in PACKAGES],
                                           "patterns": args.patterns, "backends": measured}) + "\n")
        print(f"written: {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
