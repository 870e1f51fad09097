#!/usr/bin/env python3
"""The conditional-mutation score of a tier, per group of conditions, its survivors, and the
kill matrix (test x mutant) as data.

    python scripts/mutation_score.py [--tier nightly|default [--as-backend NAME] [--tier-data FILE]] [--kills K]
                                     [--mutants GLOB,...] [--layer kernel|dynamo|aot_autograd]
                                     [-k PATTERN] [-j N] [--report-dir DIR]
    python scripts/mutation_score.py --controls-only [-k PATTERN] [-j N] [--report-dir DIR]
    python scripts/mutation_score.py --list

A mutant (test/harness/mutation/mutants.py) is a fault that fires only where a condition of
the feature catalogue holds, as real backend bugs do (``wrong_row__broadcast_middle__s0``:
an operand broadcast along a middle dimension read one place along it, in every kernel), or
a regression of Dynamo or AOTAutograd that fires only where its piece is exercised
(``drops_guard__tensor_match__s0``: no tensor guard, reached where one failed).

1. Equivalence: a mutant that computes what the control computes on every probe that
   reaches it (test/harness/mutation/probes.py) is equivalent and not counted.
2. The matrix: each test of the tier runs once as the control, in worker processes that
   stay (test/harness/mutation/worker.py), recording which mutants would rewrite one of its
   operator calls; then once per such mutant. A mutant is killed by a test when the control
   passed and the mutant's run failed, raised, timed out, passed an expected failure or
   crashed its worker. The tests the default tier may choose run first, then the others,
   each part cheapest first; once a mutant has K kills (``--kills``, default 3; 0: no limit)
   it is not run again, so the matrix names up to K killers per mutant, the cheapest the
   default tier may choose where there are some, and every test that met it without killing
   it until then.

The score is killed / non-equivalent, per group of conditions (shape, dtype, layout,
values, graph, call, module), per layer (the backend's kernels and runtime; Dynamo and
AOTAutograd, whose mutants are patches of torch: test/harness/mutation/stack_faults.py) and
in all. Writes mutation_score.json into --report-dir
(default reports/mutation): every mutant (equivalent or not, killers, the tests in which it
fired and survived), every test (control outcome, seconds, what it covered, the ATen
operators it called and the conditions each met, what it killed), and the matrix;
harness/default_tier.json is chosen from it (scripts/choose_default_tier.py). With
--controls-only, each test runs as the control only (minutes, not the matrix's hour): what it
covers, the kernels it calls and its seconds, after a change to what is recorded of them;
choose_default_tier.py --base keeps the kills the data had. Exit 0: it is
a measurement; 2 with one line: a bad argument or an unwritable report directory; 1: no
worker could start.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.features import catalogue  # noqa: E402
from harness.report.results import write_atomic  # noqa: E402
from test.harness.mutation import faults, stack_faults  # noqa: E402
from test.harness.mutation import mutants as mutant_catalogue  # noqa: E402
from test.harness.mutation.worker import LOG_ENV  # noqa: E402

SWITCH_SPEC = mutant_catalogue.spec(mutant_catalogue.SWITCH)
KILLING = frozenset({"fail", "error", "xpass", "timeout", "crash"})
# The kernel mutants' groups of conditions, then the compile stack's layers (each its own group).
GROUP_ORDER = (*catalogue.GROUPS, *stack_faults.LAYERS)
LAYER_ORDER = ("kernel", *stack_faults.LAYERS)
SHOWN = 12
WEAK = 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, as the command's own usage errors
        print(f"mutation_score.py: error: {message}", file=sys.stderr)
        sys.exit(2)


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = _Parser(prog="mutation_score.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="print every mutant (name, group, what it does) and exit")
    parser.add_argument("--controls-only", action="store_true",
                        help="run each test as the control only: what it covers, its kernels, its seconds; no mutant")
    parser.add_argument("--tier", choices=("nightly", "default"), default="nightly",
                        help="the tests to score (default: nightly, the pool the default tier is chosen from)")
    parser.add_argument("--as-backend", default="aot_eager", metavar="NAME",
                        help="with --tier default: the default tier chosen for this backend (default: aot_eager)")
    parser.add_argument("--tier-data", type=Path, default=None, metavar="FILE",
                        help="with --tier default: the data it is chosen from (default: harness/default_tier.json)")
    parser.add_argument("--kills", type=int, default=3, metavar="K",
                        help="stop running a mutant once K tests killed it (0: run every test that reaches it)")
    parser.add_argument("--mutants", default="", metavar="GLOBS",
                        help="only the mutants matching these comma-separated globs (default: all)")
    parser.add_argument("--layer", dest="layers", action="append", default=[], choices=LAYER_ORDER,
                        help="only the mutants of this layer (repeatable; default: every layer)")
    parser.add_argument("-k", dest="patterns", action="append", default=[], metavar="PATTERN",
                        help="only the tests whose id contains PATTERN (repeatable)")
    parser.add_argument("-j", "--jobs", type=int, default=len(os.sched_getaffinity(0)), help="worker processes")
    parser.add_argument("--report-dir", type=Path, default=ROOT / "reports" / "mutation",
                        help="where mutation_score.json goes (default: reports/mutation)")
    args = parser.parse_args(argv)
    if args.tier_data is not None and not args.tier_data.is_file():
        parser.error(f"--tier-data: no file {args.tier_data}")
    if args.kills < 0 or args.jobs < 1:
        parser.error("--kills must be 0 or more and -j 1 or more")
    globs = [glob.strip() for glob in args.mutants.split(",") if glob.strip()]
    args.selected = [] if args.controls_only else [
        name for name, spec in mutant_catalogue.MUTANTS.items()
        if (not globs or any(fnmatch.fnmatchcase(name, glob) for glob in globs))
        and (not args.layers or spec.layer in args.layers)]
    if not args.selected and not args.controls_only:
        parser.error(f"--mutants {args.mutants!r} (--layer {args.layers}) matches no mutant (python scripts/mutation_score.py --list)")
    return args


# -- the workers ---------------------------------------------------------------------------------


class Worker:
    """A worker process (test/harness/mutation/worker.py), started again when it dies."""

    def __init__(self, index: int, tier: str, log_dir: Path) -> None:
        self.index, self.tier, self.log_dir = index, tier, log_dir
        self.process: subprocess.Popen | None = None
        self.restarts = -1
        self.start()

    def start(self) -> None:
        environment = {key: value for key, value in os.environ.items() if not key.startswith("DYNAMO_SUITE_")}
        # The script chose the tests (settings.TESTS_CHOSEN): the workers run each it names.
        environment.update({"DYNAMO_SUITE_BACKENDS": SWITCH_SPEC, "DYNAMO_SUITE_TIER": self.tier,
                            "DYNAMO_SUITE_TESTS_CHOSEN": "1", "PYTHONPATH": str(ROOT),
                            LOG_ENV: str(self.log_dir / f"worker-{self.index}.log")})
        self.process = subprocess.Popen([sys.executable, "-m", "test.harness.mutation.worker"], cwd=ROOT,
                                        env=environment, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        bufsize=1)
        self.restarts += 1
        if self.read() is None:
            raise RuntimeError(f"worker {self.index} did not start (see {self.log_dir})")

    def send(self, message: dict[str, Any]) -> None:
        try:
            self.process.stdin.write(json.dumps(message) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def read(self) -> dict[str, Any] | None:
        """The next answer, or None when the process died (it is started again)."""
        line = self.process.stdout.readline()
        if line:
            return json.loads(line)
        self.process.wait()
        return None

    def stop(self) -> None:
        self.send({"quit": True})
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def _in_parallel(workers: list[Worker], tasks: list[Any], handle) -> None:
    """``handle(worker, task)`` for each task, on whichever worker is free."""
    pending = list(reversed(tasks))
    lock = threading.Lock()

    def loop(worker: Worker) -> None:
        while True:
            with lock:
                if not pending:
                    return
                task = pending.pop()
            handle(worker, task)

    threads = [threading.Thread(target=loop, args=(worker,)) for worker in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


# -- equivalence ----------------------------------------------------------------------------------


def equivalence(workers: list[Worker], selected: list[str]) -> dict[str, str | None]:
    """Per mutant, the first probe on which it differs from the control (None: equivalent)."""
    from test.harness.mutation import probes

    reach: dict[str, set[str]] = {}

    def control(worker: Worker, probe: str) -> None:
        worker.send({"probe": probe})
        answer = worker.read()
        if answer is None:
            worker.start()
            answer = {"reached": []}
        reach[probe] = set(answer["reached"])

    _in_parallel(workers, [probe.name for probe in probes.PROBES], control)
    differs: dict[str, str | None] = {}

    def check(worker: Worker, name: str) -> None:
        condition = mutant_catalogue.MUTANTS[name].condition.replace("-", "_")
        reaching = sorted((probe for probe in reach if name in reach[probe]),
                          key=lambda probe: (condition not in probe, len(reach[probe]), probe))
        if not reaching:
            differs[name] = None
            return
        worker.send({"equivalence": name, "probes": reaching, "limit": 120})
        answer = worker.read()
        if answer is None:
            worker.start()
            answer = {"differs": "crashed the process"}
        differs[name] = answer["differs"]

    _in_parallel(workers, selected, check)
    return differs


# -- the matrix -----------------------------------------------------------------------------------


def _collected(tier: str) -> list[Any]:
    """The tests of a tier as written on the switch (harness.run.collection, in a child)."""
    from harness import settings
    from harness.run import collection

    return collection.collect(settings.Settings({settings.BACKENDS: SWITCH_SPEC, settings.TIER: tier,
                                                 settings.TIER_DATA: "none"})).tests


def _test_ids(tier: str, patterns: list[str], as_backend: str,
              tier_data: Path | None = None) -> tuple[list[str], set[str]]:
    """The tier's tests with a backend (the default tier: those it chooses for ``as_backend``
    from ``tier_data``, harness/default_tier.json by default), and those of them the default
    tier may choose (not marked nightly, nor generated past the default tier's count)."""
    from harness.testcase import default_tier

    switch = f"_{mutant_catalogue.SWITCH}."
    collected = [test for test in _collected(tier) if switch in test.id and test.tier in ("default", tier)]
    if tier == "default":
        # Read from the file itself: the self-tests' package, imported with the mutants, takes
        # no tier data for every run of theirs (test/harness/__init__.py).
        entries = default_tier.read(str(tier_data or default_tier.DATA))
        chosen = set(default_tier.choose(entries, as_backend))
        collected = [test for test in collected if test.scenario not in entries or test.scenario in chosen]
    ids = [test.id for test in collected]
    candidates = {test.id for test in _collected("default") if test.tier == "default"}
    return [test for test in ids if not patterns or any(pattern in test for pattern in patterns)], candidates


def _durations(ids: list[str]) -> dict[str, float]:
    """Recorded aot_eager seconds of each test (test/durations.json), the median for the rest."""
    try:
        recorded = json.loads((ROOT / "test" / "durations.json").read_text())
    except (OSError, ValueError):
        recorded = {}
    switch = f"_{mutant_catalogue.SWITCH}."
    known = {test: recorded[test.replace(switch, "_aot_eager.")] for test in ids
             if test.replace(switch, "_aot_eager.") in recorded}
    fallback = statistics.median(known.values()) if known else 1.0
    return {test: known.get(test, fallback) for test in ids}


def matrix(workers: list[Worker], ids: list[str], candidates: set[str], countable: set[str],
           kills_wanted: int) -> dict[str, Any]:
    durations = _durations(ids)
    # The default tier's candidates first, each part cheapest first: a mutant's first kills are
    # by tests the default tier may choose, where there are some, and the others then run only
    # the mutants those did not kill enough.
    order = sorted(ids, key=lambda test: (test not in candidates, durations[test], test))
    tests: dict[str, dict[str, Any]] = {}
    kills: Counter[str] = Counter()
    lock = threading.Lock()
    started = time.monotonic()
    step = max(1, len(order) // 20)

    def run(worker: Worker, test: str) -> None:
        _run(worker, test)
        with lock:
            if len(tests) % step == 0:
                runs = sum(len(entry["killed"]) + len(entry["survived"]) + len(entry["not_fired"])
                           for entry in tests.values())
                print(f"  {len(tests)}/{len(order)} tests, {runs} mutant runs, {len(kills)} mutants killed "
                      f"({time.monotonic() - started:.0f} s)", flush=True)

    def _run(worker: Worker, test: str) -> None:
        limit = max(60.0, 4 * durations[test] + 30)
        worker.send({"test": test, "limit": limit})
        control = worker.read()
        if control is None:
            worker.start()
            tests[test] = {"control": "crash", "seconds": None, "covers": None, "kernels": [], "graphs": 0,
                           "reached": [], "killed": [],
                           "survived": [], "not_fired": []}
            return
        entry = {"control": control["control"], "reason": control["reason"], "seconds": control["seconds"],
                 "covers": control["covers"], "kernels": control.get("kernels", []), "graphs": control["graphs"],
                 "reached": [name for name in control["reached"] if name in countable],
                 "killed": [], "survived": [], "not_fired": []}
        tests[test] = entry
        with lock:
            chosen = [] if control["control"] != "pass" else [
                name for name in entry["reached"] if not kills_wanted or kills[name] < kills_wanted]
        worker.send({"mutants": chosen})
        limit = max(30.0, 4 * control["seconds"] + 20)
        for name in chosen:
            answer = worker.read()
            if answer is None:  # the mutant crashed the worker: a kill; the rest of its test again
                worker.start()
                answer = {"mutant": name, "outcome": "crash", "fired": True}
                _record(entry, answer, kills, lock)
                rest = chosen[chosen.index(name) + 1:]
                if rest:
                    _rerun(worker, test, rest, entry, kills, lock, limit)
                return
            _record(entry, answer, kills, lock)
        worker.read()  # done

    _in_parallel(workers, order, run)
    return {"tests": tests, "durations": durations}


def _record(entry: dict[str, Any], answer: dict[str, Any], kills: Counter, lock: threading.Lock) -> None:
    with lock:
        if answer["outcome"] in KILLING:
            entry["killed"].append(answer["mutant"])
            kills[answer["mutant"]] += 1
        elif answer.get("fired"):
            entry["survived"].append(answer["mutant"])
        else:
            entry["not_fired"].append(answer["mutant"])


def _rerun(worker: Worker, test: str, names: list[str], entry: dict[str, Any], kills: Counter, lock: threading.Lock,
           limit: float) -> None:
    worker.send({"test": test, "limit": limit})
    if worker.read() is None:
        worker.start()
        return
    worker.send({"mutants": names})
    for name in names:
        answer = worker.read()
        if answer is None:
            worker.start()
            _record(entry, {"mutant": name, "outcome": "crash"}, kills, lock)
            return
        _record(entry, answer, kills, lock)
    worker.read()


# -- the report -----------------------------------------------------------------------------------


def report(args: argparse.Namespace, differs: dict[str, str | None], measured: dict[str, Any],
           seconds: float) -> dict[str, Any]:
    tests = measured["tests"]
    killers: dict[str, list[str]] = {name: [] for name in differs}
    fired_in: dict[str, list[str]] = {name: [] for name in differs}
    for test, entry in tests.items():
        for name in entry["killed"]:
            killers[name].append(test)
        for name in entry["survived"]:
            fired_in[name].append(test)
    mutants = []
    for name in args.selected:
        spec = mutant_catalogue.MUTANTS[name]
        mutants.append({"name": name, "fault": spec.fault, "condition": spec.condition, "group": spec.group,
                        "layer": spec.layer,
                        "seed": spec.seed, "means": spec.means, "equivalent": differs[name] is None,
                        "differs_on": differs[name], "killed": bool(killers[name]), "killers": killers[name],
                        "fired_and_survived_in": fired_in[name]})
    groups: dict[str, dict[str, int]] = {}
    for entry in mutants:
        if entry["equivalent"]:
            continue
        counts = groups.setdefault(entry["group"], {"non_equivalent": 0, "killed": 0})
        counts["non_equivalent"] += 1
        counts["killed"] += entry["killed"]
    counted = [entry for entry in mutants if not entry["equivalent"]]
    killed = sum(entry["killed"] for entry in counted)
    layers: dict[str, dict[str, Any]] = {}
    for entry in counted:
        counts = layers.setdefault(entry["layer"], {"non_equivalent": 0, "killed": 0})
        counts["non_equivalent"] += 1
        counts["killed"] += entry["killed"]
    for counts in layers.values():
        counts["ratio"] = counts["killed"] / counts["non_equivalent"]
    index = {name: position for position, name in enumerate(args.selected)}
    test_ids = sorted(tests)
    return {
        "tier": args.tier, "kills_per_mutant": args.kills, "controls_only": args.controls_only, "patterns": args.patterns,
        "wall_s": round(seconds, 1),
        "score": {"killed": killed, "non_equivalent": len(counted), "equivalent": len(mutants) - len(counted),
                  "ratio": killed / len(counted) if counted else None,
                  "groups": {group: {**counts, "ratio": counts["killed"] / counts["non_equivalent"]}
                             for group, counts in sorted(groups.items(), key=lambda item: GROUP_ORDER.index(item[0]))},
                  # Whose faults: the backend's kernels and runtime, Dynamo's, AOTAutograd's.
                  "layers": {layer: layers[layer] for layer in LAYER_ORDER if layer in layers}},
        "survivors": [entry["name"] for entry in counted if not entry["killed"]],
        "mutants": mutants,
        "tests": [{"id": test, **{key: value for key, value in tests[test].items() if key != "reached"},
                   "reached": len(tests[test]["reached"])} for test in test_ids],
        # The matrix: [test index, mutant index] pairs, tests and mutants as listed above.
        "matrix": {"killed": [[row, index[name]] for row, test in enumerate(test_ids) for name in tests[test]["killed"]],
                   "survived": [[row, index[name]] for row, test in enumerate(test_ids)
                                for name in tests[test]["survived"]]},
    }


def _print(result: dict[str, Any]) -> None:
    score = result["score"]
    print(f"\n{'group':<8} {'mutants':>8} {'killed':>7} {'score':>7}")
    for group, counts in score["groups"].items():
        print(f"{group:<8} {counts['non_equivalent']:>8} {counts['killed']:>7} {100 * counts['ratio']:>6.1f}%")
    print(f"\n{'layer':<13} {'mutants':>8} {'killed':>7} {'score':>7}")
    for layer, counts in score["layers"].items():
        print(f"{layer:<13} {counts['non_equivalent']:>8} {counts['killed']:>7} {100 * counts['ratio']:>6.1f}%")
    ratio = score["ratio"]
    print(f"{'all':<8} {score['non_equivalent']:>8} {score['killed']:>7} "
          f"{100 * ratio if ratio is not None else 0:>6.1f}%   ({score['equivalent']} equivalent, not counted)")
    by_name = {entry["name"]: entry for entry in result["mutants"]}
    survivors = result["survivors"]
    if survivors:
        print(f"\n{len(survivors)} survivors:")
        for name in survivors:
            entry = by_name[name]
            met = entry["fired_and_survived_in"]
            where = f"fired in {len(met)} tests that did not see it, e.g. {met[0]}" if met else "no test reached it"
            print(f"  {name}: {where}")
    # A test in which faults that change values fired, and none failed it, may be a test that
    # cannot fail (or one whose values those faults did not reach: a result overwritten).
    every_fault = {**faults.FAULTS, **faults.CALL_FAULTS, **faults.GRAPH_FAULTS}
    quiet = {name for name, fault in every_fault.items() if not fault.shows_in_values}
    unseen = {test["id"]: [name for name in test["survived"] if name.split("__")[0] not in quiet]
              for test in result["tests"] if test["control"] == "pass" and not test["killed"]}
    weak = sorted((test for test in unseen if len(unseen[test]) >= WEAK), key=lambda test: -len(unseen[test]))
    if weak:
        print(f"\n{len(weak)} tests in which {WEAK} or more faults that change values fired, and none failed "
              "them (can they fail?):")
        for test in weak[:SHOWN]:
            print(f"  {test}: {len(unseen[test])} fired unseen, e.g. {', '.join(unseen[test][:3])}")


def main(argv: list[str]) -> int:
    args = _parse(argv)
    if args.list:
        for name, spec in mutant_catalogue.MUTANTS.items():
            print(f"{name}\t{spec.group}\t{spec.means}")
        print(f"{len(mutant_catalogue.MUTANTS)} mutants", file=sys.stderr)
        return 0
    report_dir = args.report_dir.resolve()
    try:
        report_dir.mkdir(parents=True, exist_ok=True)
        (report_dir / ".written").write_text("")
        (report_dir / ".written").unlink()
    except OSError as error:
        print(f"mutation_score.py: error: cannot write to --report-dir {report_dir}: {error.strerror}", file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        ids, candidates = _test_ids(args.tier, args.patterns, args.as_backend, args.tier_data)
    except ValueError as error:  # default_tier.TierDataError: a file that is no tier data
        print(f"mutation_score.py: error: {error}", file=sys.stderr)
        return 2
    print(f"{len(args.selected)} mutants, {len(ids)} tests of the {args.tier} tier, {args.jobs} workers; "
          f"reports in {report_dir}", flush=True)
    try:
        workers = [Worker(index, args.tier, report_dir) for index in range(args.jobs)]
    except RuntimeError as error:
        print(f"mutation_score.py: {error}", file=sys.stderr)
        return 1
    try:
        differs = equivalence(workers, args.selected) if args.selected else {}
        countable = {name for name, found in differs.items() if found is not None}
        print(f"equivalence: {len(countable)} of {len(differs)} differ from the control on a probe "
              f"({time.monotonic() - started:.0f} s)", flush=True)
        measured = matrix(workers, ids, candidates, countable, args.kills)
    finally:
        for worker in workers:
            worker.stop()
    result = report(args, differs, measured, time.monotonic() - started)
    write_atomic(report_dir / "mutation_score.json", json.dumps(result, indent=1) + "\n")
    if args.controls_only:
        passed = sum(test["control"] == "pass" for test in result["tests"])
        print(f"controls: {passed} of {len(result['tests'])} tests passed ({args.tier} tier, "
              f"{time.monotonic() - started:.0f} s); written: {report_dir / 'mutation_score.json'}")
        return 0
    _print(result)
    print(f"\nmutation score: {result['score']['killed']}/{result['score']['non_equivalent']} "
          f"({args.tier} tier, {time.monotonic() - started:.0f} s); written: {report_dir / 'mutation_score.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
