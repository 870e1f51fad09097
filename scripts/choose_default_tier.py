#!/usr/bin/env python3
"""Write harness/default_tier.json: what each test of the nightly pool catches and costs, from
which the default tier is chosen per backend (harness/testcase/default_tier.py).

    python scripts/choose_default_tier.py MUTATION_SCORE_JSON [MORE_JSON ...] [--real-runs DIR ...]
                                          [--durations FILE] [--stack-coverage FILE] [--out FILE]
    python scripts/choose_default_tier.py --base harness/default_tier.json [MORE_JSON ...] [...]

* MUTATION_SCORE_JSON: scripts/mutation_score.py's report of the nightly tier: per test, the
  mutants it killed, the features it covered, the ATen operators it called and the conditions
  each met, and the graphs it compiled; MORE_JSON: reports of some tests only (``-k``), whose
  tests replace the first's (a test written or changed since, measured without the hour the
  whole matrix takes) or of some layers only (``--layer dynamo``), whose tests replace the
  first's and keep the kills of the mutants they did not run; a report of ``--controls-only``
  replaces what tests cover, the kernels they call and their seconds, and keeps their kills.
  The score is kept per layer (kernel, dynamo, aot_autograd): a whole-pool report's layers
  replace the data's;
* --base: data this script wrote before, in place of the whole matrix's report: what it
  holds of each test is where later reports start (the matrix's report is scratch; its kills
  live on in the data);
* --real-runs: report dirs (or results.json[.gz]) of real backends' runs (the scoreboard's
  snapshot by default): per problem of each run, the tests that showed it; the default tier
  keeps one of each;
* --durations: recorded seconds per test id (test/durations.json by default), for each
  backend's cost;
* --stack-coverage: scripts/stack_coverage.py's output: per backend, the lines of PyTorch's
  compile stack each scenario runs, as blocks (lines run by the same scenarios); a backend it
  did not measure keeps the base's.

The data names the tests the default tier may choose: those of the default tier as written
(not the stress scenarios marked nightly, nor the generated programs past the default tier's
count), the backend-independent ones too (they catch no backend's fault: nightly). Prints,
per default backend, the default tier's size and
recorded seconds against the pool's, and every problem of the real runs with the test
that keeps it. Exit 2 with one line on a file it cannot read.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.report import problems  # noqa: E402
from harness.report.results import ResultsError, from_json, write_atomic  # noqa: E402
from harness.testcase import default_tier  # noqa: E402
from test.harness.mutation import faults  # noqa: E402
from test.harness.mutation import mutants as mutant_catalogue  # noqa: E402

SNAPSHOT = ROOT / "docs" / "scoreboard" / "2026-11-30" / "runs"
EXPECTATIONS = ROOT / "harness" / "expectations.toml"


def _fail(message: str) -> None:
    print(f"choose_default_tier.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def _family(class_name: str, backend: str) -> str:
    return class_name[: -len(backend) - 1] if class_name.endswith("_" + backend) else class_name


def _scenario(test_id: str, backend: str) -> str:
    module, family, method = test_id.rsplit(".", 2)
    return f"{module.rsplit('.', 1)[-1]}.{_family(family, backend)}.{method}"


def _read_results(path: Path) -> Any:
    if path.is_dir():
        path = next((candidate for candidate in (path / "results.json", path / "results.json.gz") if candidate.exists()),
                    path / "results.json")
    try:
        raw = gzip.open(path, "rt").read() if path.suffix == ".gz" else path.read_text()
        return from_json(json.loads(raw), str(path))
    except (OSError, ValueError, ResultsError) as error:
        _fail(f"cannot read real-backend run {path}: {error}")


def real_problems(paths: list[Path]) -> dict[str, set[str]]:
    """Scenario -> the problems ("<backend>: <stage>: <problem signature>") real runs showed in
    it: a problem as a report counts it (one error in capture and in the check are two)."""
    shown: dict[str, set[str]] = {}
    for path in paths:
        results = _read_results(path)
        for problem in problems.group(results.tests):
            for test in problem.tests:
                shown.setdefault(test.scenario, set()).add(f"{problem.backend}: {problem.stage}: {problem.signature[:160]}")
    return shown


def upstream_bugs(path: Path = EXPECTATIONS) -> dict[str, set[str]]:
    """Scenario -> the open upstream bug it shows on every backend: an expected failure with no
    backend of its own whose reason cites pytorch#N. Such a test shows a real problem, as a real
    backend's run does, and the cover weighs it so (the default run shows the bug, and the
    nightly job's XPASS the day it is fixed)."""
    try:
        entries = tomllib.loads(path.read_text(encoding="utf-8")).get("expect", [])
    except (OSError, ValueError) as error:
        _fail(f"cannot read {path}: {error}")
    shown: dict[str, set[str]] = {}
    for entry in entries:
        cited = re.findall(r"pytorch#\d+", entry.get("reason", ""))
        if entry.get("status") == "xfail" and "backend" not in entry and cited and "test" in entry:
            shown.setdefault(entry["test"], set()).update(f"every backend: open upstream bug {bug}" for bug in cited)
    return shown


def _pool() -> list[tuple[str, str]]:
    """(test id, backend) of the default tier as written (not the tests marked nightly), on
    aot_eager, backend-independent ones too."""
    from harness import settings
    from harness.run import collection

    try:
        collected = collection.collect(settings.Settings({settings.BACKENDS: "aot_eager", settings.TIER: "default",
                                                          settings.TIER_DATA: "none"}))
    except collection.CollectionError as error:
        _fail(f"collecting the default tier failed: {error}")
    return [(test.id, test.backend) for test in collected.tests if test.tier == "default"]


def _from_base(base: Any, path: Path) -> dict[str, dict[str, Any]]:
    """What data written before holds of each scenario, as a report's test reads."""
    try:
        base["mutation_score"]["score"]["killed"]  # noqa: B018 -- the summary the data is written with
        return {scenario: {"killed": entry["kills"], "covers": entry["covers"], "kernels": entry["kernels"],
                           "graphs": entry["graphs"], "seconds": entry["seconds"].get("aot_eager")}
                for scenario, entry in base["scenarios"].items()}
    except (KeyError, TypeError, AttributeError) as error:
        _fail(f"--base {path}: not data this script wrote ({error!r} missing)")


def _partial(report: Any) -> bool:
    """Whether a report ran some tests only (-k): its score counts only the mutants they reached."""
    return bool(report.get("patterns"))


def _layers(report: Any) -> dict[str, dict[str, Any]]:
    """Per layer, the mutants a whole-pool report counted and killed (one written before layers
    were: all of them the kernel mutants)."""
    score = report["score"]
    return score.get("layers") or {"kernel": {key: score[key] for key in ("killed", "non_equivalent", "ratio")}}


def _stack_lines(measured: Any, base: Any, scenarios: set[str], path: Path | None) -> dict[str, Any]:
    """The data's compile-stack lines (scripts/stack_coverage.py's blocks, of the scenarios the
    data names), from ``measured`` where given (a backend it did not measure keeps the base's)."""
    kept = dict((base or {}).get("stack_lines", {}))
    about = dict((base or {}).get("stack_coverage", {}))
    if measured is not None:
        try:
            for backend, found in measured["backends"].items():
                blocks: dict[tuple[str, ...], int] = {}
                for size, names in found["blocks"]:
                    named = tuple(sorted(set(names) & scenarios))
                    if named:
                        blocks[named] = blocks.get(named, 0) + int(size)
                kept[backend] = {"lines": sum(blocks.values()),
                                 "blocks": [[size, list(names)] for names, size in
                                            sorted(blocks.items(), key=lambda item: (-item[1], item[0]))]}
                about[backend] = {"torch": measured["torch"], "packages": measured["packages"],
                                  "tests": found["tests"], "wall_s": found["wall_s"],
                                  "written": datetime.date.today().isoformat()}
        except (KeyError, TypeError, ValueError) as error:
            _fail(f"--stack-coverage {path}: not scripts/stack_coverage.py's output ({error!r})")
    return {"stack_coverage": about, "stack_lines": kept} if kept else {}


def one_way_flags(kernels: set[str]) -> list[str]:
    """``op: flag=value`` for each flag of an operator (harness.features.views.argument_variants)
    that the kernel conditions met hold one way only: the variant no test asks for."""
    values: dict[str, set[str]] = {}
    for name in kernels:
        flag, _, value = name.partition("=")
        if value in ("True", "False"):
            values.setdefault(flag, set()).add(value)
    return sorted(f"{flag}={'False' if seen == {'True'} else 'True'}" for flag, seen in values.items() if len(seen) == 1)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="choose_default_tier.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("scores", type=Path, nargs="*", metavar="score")
    parser.add_argument("--base", type=Path, default=None, metavar="DATA")
    parser.add_argument("--real-runs", type=Path, nargs="*",
                        default=[SNAPSHOT / "openvino", SNAPSHOT / "iree"])
    parser.add_argument("--durations", type=Path, default=ROOT / "test" / "durations.json")
    parser.add_argument("--stack-coverage", type=Path, default=None, metavar="FILE")
    parser.add_argument("--out", type=Path, default=default_tier.DATA)
    args = parser.parse_args(argv)
    if not args.scores and args.base is None:
        _fail("give a mutation_score.json of the nightly tier, or --base DATA written before")
    try:
        reports = [json.loads(path.read_text()) for path in args.scores]
        durations = json.loads(args.durations.read_text())
        base = json.loads(args.base.read_text()) if args.base is not None else None
        lines = json.loads(args.stack_coverage.read_text()) if args.stack_coverage is not None else None
    except (OSError, ValueError) as error:
        _fail(str(error))
    for path, report in zip(args.scores, reports):
        if report.get("tier") != "nightly":
            _fail(f"{path} scores the {report.get('tier')} tier: the default tier is chosen from the nightly pool")
    measured = _from_base(base, args.base) if base is not None else {}
    # The mutants the matrix counted, per layer: the data's (a layer it predates: the kernel
    # mutants'), then each report's that ran a layer's every mutant over the whole pool.
    layers = dict(base["mutation_score"].get("layers") or {"kernel": base["mutation_score"]["score"]}) \
        if base is not None else {}
    for report in reports:
        ran = {entry["name"] for entry in report.get("mutants", ())}
        for test in report["tests"]:
            scenario = _scenario(test["id"], "switch")
            before = measured.get(scenario, {}).get("killed", [])
            if report.get("controls_only"):
                test = {**test, "killed": before}
            else:  # the kills of the mutants this report did not run stay (a report of one layer)
                test = {**test, "killed": sorted({*(name for name in before if name not in ran), *test["killed"]})}
            measured[scenario] = test
        if not report.get("controls_only") and not _partial(report):
            layers.update({layer: counts for layer, counts in _layers(report).items()})
    full = [report for report in reports if not report.get("controls_only")]
    if not layers:
        layers = _layers(full[0])
    score = {"non_equivalent": sum(counts["non_equivalent"] for counts in layers.values())}
    kills_per_mutant = full[0]["kills_per_mutant"] if full else base["mutation_score"]["kills_per_mutant"]
    shown = real_problems(args.real_runs)
    for scenario, bugs in upstream_bugs().items():
        shown.setdefault(scenario, set()).update(bugs)
    seconds: dict[str, dict[str, float]] = {}
    for test_id, value in durations.items():
        family = test_id.rsplit(".", 2)[1]
        # A backend-independent test runs once in a run, whichever the backends: it costs that.
        backends = [name for name in default_tier.RECORDED if family.endswith("_" + name)] or default_tier.RECORDED
        for backend in backends:
            seconds.setdefault(_scenario(test_id, backend), {})[backend] = round(float(value), 3)
    scenarios: dict[str, Any] = {}
    for test_id, backend in _pool():
        scenario = _scenario(test_id, backend)
        test = measured.get(scenario, {})
        if backend != "-" and scenario not in measured:
            continue  # not measured (added since): the default tier runs it until it is
        # A test whose control did not pass killed nothing; it still covered what it covered.
        covers = sorted(name for name in test.get("covers") or () if "@" not in name)
        recorded = seconds.get(scenario, {})
        if "aot_eager" not in recorded and test.get("seconds") is not None:
            recorded = {**recorded, "aot_eager": test["seconds"]}
        scenarios[scenario] = {"kills": sorted(test.get("killed", ())), "covers": covers,
                               "kernels": sorted(test.get("kernels") or ()),
                               "shows": sorted(shown.get(scenario, ())), "graphs": test.get("graphs", 0),
                               "seconds": recorded}
    killed = sum(counts["killed"] for counts in layers.values())
    score = {"killed": killed, "non_equivalent": score["non_equivalent"],
             "ratio": killed / score["non_equivalent"] if score["non_equivalent"] else 0.0}
    data = {"written": datetime.date.today().isoformat(),
            "command": "python scripts/choose_default_tier.py " + " ".join(argv),
            "mutation_score": {"tier": "nightly", "kills_per_mutant": kills_per_mutant,
                               "score": {key: score[key] for key in ("killed", "non_equivalent", "ratio")},
                               "layers": layers},
            # Every default tier keeps two killers of each: Dynamo's and AOTAutograd's mutants, and
            # the backend's faults of whole calls (what every call is watched for).
            "kept_mutants": sorted(name for name, spec in mutant_catalogue.MUTANTS.items()
                                   if spec.stack or spec.fault in {*faults.CALL_FAULTS, *faults.GRAPH_FAULTS}),
            "scenarios": dict(sorted(scenarios.items())),
            **_stack_lines(lines, base, set(scenarios), args.stack_coverage)}
    write_atomic(args.out, json.dumps(data, indent=1) + "\n")
    default_tier.read.cache_clear()
    entries = default_tier.read(str(args.out))
    print(f"{len(entries)} scenarios the default tier may choose; written: {args.out}")
    kills = {name for entry in entries.values() for name in entry.kills}
    kernels = {name for entry in entries.values() for name in entry.kernels}
    for backend in default_tier.RECORDED:
        chosen = default_tier.choose(entries, backend)
        total = sum(entry.cost(backend, default_tier.GRAPH_SECONDS) for entry in entries.values())
        spent = sum(entries[name].cost(backend, default_tier.GRAPH_SECONDS) for name in chosen)
        killed = {name for scenario in chosen for name in entries[scenario].kills}
        met = {name for scenario in chosen for name in entries[scenario].kernels}
        reached = default_tier.reach(entries, chosen, backend)
        lines_met = (" {} of {} compile-stack lines".format(*reached["stack_lines"])
                     + (f" (measured on {reached['lines_from']})" if reached["lines_from"] != backend else "")
                     if "stack_lines" in reached else "")
        print(f"  {backend}: default tier {len(chosen)} scenarios, {spent:.0f} s of {total:.0f} s recorded; "
              f"{len(killed)} of {len(kills)} mutants killed, {len(met)} of {len(kernels)} kernel conditions met; "
              "{} of {} ATen operators;".format(*reached["operators"]) + lines_met)
    unknown = default_tier.choose(entries, "a backend without recordings")
    print(f"  a backend without recordings: {len(unknown)} scenarios")
    unasked = one_way_flags(kernels)
    print(f"{len(unasked)} flags of an operator no test of the pool sets the other way (kernel variants none "
          f"asks for): {', '.join(unasked)}")
    problems_kept = sorted({problem for entry in entries.values() for problem in entry.shows})
    print(f"{len(problems_kept)} problems of real backends, each kept by its cheapest test")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
