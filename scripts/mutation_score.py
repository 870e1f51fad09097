"""The mutation score of the default run: the share of mutants it kills, with the survivors.

    python scripts/mutation_score.py --seeds 0-4 [--operators perturb,swap_args]
                                     [--backend-base aot_eager] [-j N] [--report-dir DIR]

A mutant (test/harness/faulty_backends/mutants.py) is a backend that rewrites one node of
each graph it compiles with one mutation operator, the node drawn by its seed; one mutant
per operator and seed. For each:

1. equivalence: a mutant that computes what its unmutated base computes on every probe
   (test/harness/faulty_backends/mutant_probes.py) is equivalent and not counted;
2. killed or not: the default run (``python run_tests.py --backend <mutant>``) kills it when
   a test has an unexpected result. The tests that killed earlier mutants run first, alone
   (``-k``); only when none of them fails does the whole default run decide, so the score
   is the one whole runs give, for less. A test that is unexpected on the control
   (``unmutated``, the same pipeline with nothing rewritten, run once first) kills nothing:
   the base's known failures are expected under its own name only. Nor does a test the
   control did not run (one added to the tree while the measurement ran).

The score is killed / non-equivalent. Prints a table and the survivors, with the nodes each
survivor rewrote in the run (a survivor that only ever hit nodes where its rewrite changes
nothing is a weak mutant, not a gap); writes the same as mutation_score.json, and every
run's reports, into --report-dir. Exit 0: it is a measurement. Exit 2, with one line: a bad
argument or an unwritable report directory. Exit 1: the control run could not run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.report.results import BACKEND_INDEPENDENT, ResultsError, TestResult, load  # noqa: E402
from test.harness.faulty_backends import mutant_probes, mutants  # noqa: E402

# Of the tests that killed a mutant in a whole run, how many (the quickest) join the tests
# run first for the next mutants: enough to cover what kills most mutants of one kind, few
# enough that running them stays much cheaper than a whole run.
KILLERS_KEPT = 5
SHOWN_KILLERS = 3
SHOWN_SITES = 5
PREFIX = "test.dynamo."


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, as the command's own usage errors
        print(f"mutation_score.py: error: {message}", file=sys.stderr)
        sys.exit(2)


def _seeds(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        if not low.isdigit() or (high and not high.isdigit()) or (high and int(high) < int(low)):
            raise argparse.ArgumentTypeError(f"'{text}': give seeds as 0-4, 0,2,5 or 1-3,7 (non-negative integers)")
        seeds += [seed for seed in range(int(low), int(high or low) + 1) if seed not in seeds]
    return seeds


def _jobs(text: str) -> str:
    if text != "auto" and not (text.isdigit() and int(text) > 0):
        raise argparse.ArgumentTypeError(f"'{text}': a positive number of workers, or 'auto'")
    return text


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = _Parser(prog="mutation_score.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=_seeds, required=True, help="seeds of each operator: 0-4, 0,2,5")
    parser.add_argument("--operators", default="",
                        help=f"comma-separated, of {', '.join(mutants.OPERATORS)} (default: every one the base runs)")
    parser.add_argument("--backend-base", default=mutants.BASES[0], choices=mutants.BASES,
                        help="the backend each mutant compiles like (default: aot_eager)")
    parser.add_argument("-j", "--jobs", type=_jobs, default=None, help="run_tests.py's -j (default: its own)")
    parser.add_argument("--report-dir", type=Path, default=ROOT / "reports" / "mutation",
                        help="where mutation_score.json and each run's reports go (default: reports/mutation)")
    args = parser.parse_args(argv)
    unsupported = mutants.UNSUPPORTED.get(args.backend_base, ())
    if not args.operators:
        args.operators = [name for name in mutants.OPERATORS if name not in unsupported]
    else:
        args.operators = [name.strip() for name in args.operators.split(",") if name.strip()]
        unknown = [name for name in args.operators if name not in mutants.OPERATORS]
        if unknown or not args.operators:
            parser.error(f"--operators: unknown operator '{','.join(unknown)}'; "
                         f"known: {', '.join(mutants.OPERATORS)}")
        refused = [name for name in args.operators if name in unsupported]
        if refused:
            parser.error(f"--operators: {', '.join(refused)} cannot run on {args.backend_base} "
                         "(its graph compiler takes no extra input)")
    return args


# -- one run of the suite ---------------------------------------------------------------------


def _template(test: TestResult) -> str:
    """The test's id with its backend's name as ``{backend}``: the same test for another mutant."""
    if test.backend == BACKEND_INDEPENDENT:
        return test.id
    module, family, method = test.id.rsplit(".", 2)
    return f"{module}.{family.replace('_' + test.backend, '_{backend}', 1)}.{method}"


def _short(test_id: str) -> str:
    return test_id.removeprefix(PREFIX)


class Run:
    """One run of run_tests.py against one backend, its reports in ``directory``."""

    def __init__(self, name: str, directory: Path, tests: list[str], jobs: str | None) -> None:
        self.name, self.directory, self.tests = name, directory, tests
        directory.mkdir(parents=True, exist_ok=True)
        for stale in ("results.json", "sites.log"):  # an earlier invocation's, never read as this one's
            (directory / stale).unlink(missing_ok=True)
        command = [sys.executable, str(ROOT / "run_tests.py"), "--backend", mutants.spec(name),
                   "--report-dir", str(directory)]
        command += ["-j", jobs] if jobs else []
        command += [argument for test in tests for argument in ("-k", test)]
        # The default run: none of the suite's settings from this shell (a tier, a sweep, a
        # count of generated programs) may change what runs.
        environment = {key: value for key, value in os.environ.items() if not key.startswith("DYNAMO_SUITE_")}
        environment[mutants.MUTATION_LOG_ENV] = str(directory / "sites.log")
        started = time.monotonic()
        with open(directory / "run.log", "w") as log:
            self.returncode = subprocess.run(command, cwd=ROOT, env=environment, stdout=log,
                                             stderr=subprocess.STDOUT).returncode
        self.seconds = time.monotonic() - started
        self.results: list[TestResult] | None = None
        self.error = ""
        try:
            self.results = load(directory / "results.json").tests
        except (OSError, ResultsError) as error:
            lines = (directory / "run.log").read_text(errors="replace").strip().splitlines()
            self.error = lines[-1] if lines else f"no results ({error})"

    def unexpected(self, judged: set[str] | None = None) -> list[TestResult]:
        """Its unexpected results among ``judged`` (templates; None: all), quickest first."""
        return sorted((test for test in self.results or []
                       if test.unexpected and (judged is None or _template(test) in judged)),
                      key=lambda test: test.duration_s)

    def sites(self) -> list[str]:
        """The nodes its backend rewrote, each once, the most often rewritten first."""
        path = self.directory / "sites.log"
        counts: dict[str, int] = {}
        for line in path.read_text().splitlines() if path.exists() else []:
            site = line.split("\t")[-1]
            counts[site] = counts.get(site, 0) + 1
        return sorted(counts, key=lambda site: -counts[site])

    def summary(self, kind: str) -> dict[str, Any]:
        return {"kind": kind, "report_dir": str(self.directory), "returncode": self.returncode,
                "seconds": round(self.seconds, 1), "tests": len(self.results or []), "error": self.error or None}


# -- the measurement ----------------------------------------------------------------------------


def _equivalence(name: str, base: str) -> str | None:
    """Where the mutant first differs from its base, or None: equivalent."""
    # On aot_eager the base computes what eager computes (test_mutants checks it): compare
    # with eager, which costs no second compile.
    reference = None if base == mutants.BASES[0] else mutants.mutant(mutants.mutant_name(None, base=base))
    found = mutant_probes.first_difference(mutants.mutant(name), reference)
    return None if found is None else f"{found[0]}: {found[1]}"


def _decide(entry: dict[str, Any], directory: Path, jobs: str | None, judged: set[str],
            killers: dict[str, float]) -> None:
    """Whether the default run kills the mutant: its earlier killers first, then the whole run.
    Only ``judged`` tests kill: those the control ran and found as expected."""
    name = entry["name"]
    if killers:
        run = Run(name, directory / "killers", [template.replace("{backend}", name) for template in killers], jobs)
        entry["runs"].append(run.summary("killer tests"))
        found = run.unexpected(judged) if run.results is not None else []
        if found:
            entry.update(killed=True, decided_by="killer tests", killers=[test.id for test in found],
                         sites=run.sites())
            return
    run = Run(name, directory / "full", [], jobs)
    entry["runs"].append(run.summary("default run"))
    if run.results is None:
        entry.update(killed=None, decided_by=f"not measured: {run.error}")
        return
    found = run.unexpected(judged)
    entry.update(killed=bool(found), decided_by="default run", killers=[test.id for test in found], sites=run.sites())
    for test in found[:KILLERS_KEPT]:
        killers.setdefault(_template(test), test.duration_s)


def _row(cells: list[str], widths: list[int]) -> str:
    return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip()


def _table(entries: list[dict[str, Any]]) -> list[str]:
    header = ["mutant", "equivalent", "killed", "decided by", "s", "killed by (first 3)"]
    rows = []
    for entry in entries:
        killed = {True: "yes", False: "NO", None: "-"}[entry["killed"]]
        rows.append([entry["name"], "yes" if entry["equivalent"] else "no", killed,
                     (entry["decided_by"] or "-").split(":")[0], f"{entry['seconds']:.0f}",
                     ", ".join(_short(test) for test in entry["killers"][:SHOWN_KILLERS])])
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header) - 1)] + [0]
    return [_row(header, widths)] + [_row(row, widths) for row in rows]


def main(argv: list[str]) -> int:
    args = _parse(argv)
    report_dir = args.report_dir.resolve()
    try:
        report_dir.mkdir(parents=True, exist_ok=True)
        (report_dir / ".written").write_text("")
        (report_dir / ".written").unlink()
    except OSError as error:
        print(f"mutation_score.py: error: cannot write to --report-dir {report_dir}: {error.strerror}", file=sys.stderr)
        return 2
    started = time.monotonic()
    base = args.backend_base
    names = [mutants.mutant_name(operator, seed, base) for operator in args.operators for seed in args.seeds]
    print(f"{len(names)} mutants ({len(args.operators)} operators x seeds "
          f"{','.join(map(str, args.seeds))}) on {base}; reports in {report_dir}", flush=True)

    control_name = mutants.mutant_name(None, base=base)
    control = Run(control_name, report_dir / control_name, [], args.jobs)
    if control.results is None:
        print(f"mutation_score.py: the control run ({control_name}) gave no results: {control.error}", file=sys.stderr)
        return 1
    noise = {_template(test) for test in control.unexpected()}
    # A test the control did not run has no known answer without the mutation (the tree
    # changed during the measurement, say): it kills nothing either.
    judged = {_template(test) for test in control.results} - noise
    print(f"control {control_name}: {len(control.results)} tests, {len(noise)} unexpected (ignored for every "
          f"mutant), {control.seconds:.0f} s", flush=True)

    entries: list[dict[str, Any]] = []
    killers: dict[str, float] = {}  # templates of the tests that killed a mutant in a whole run
    for name in names:
        mutant_started = time.monotonic()
        mutant = mutants.mutant(name)
        differs = _equivalence(name, base)
        entry: dict[str, Any] = {"name": name, "spec": mutants.spec(name), "operator": mutant.operator,
                                 "seed": mutant.seed, "equivalent": differs is None, "differs_on": differs,
                                 "killed": None, "decided_by": None, "killers": [], "sites": [], "runs": []}
        if differs is not None:
            _decide(entry, report_dir / name, args.jobs, judged, killers)
        entry["seconds"] = round(time.monotonic() - mutant_started, 1)
        entries.append(entry)
        outcome = ("equivalent" if differs is None else "killed" if entry["killed"] else
                   "SURVIVED" if entry["killed"] is False else entry["decided_by"])
        print(f"  {name}: {outcome} ({entry['seconds']:.0f} s)", flush=True)

    counted = [entry for entry in entries if not entry["equivalent"] and entry["killed"] is not None]
    killed = [entry for entry in counted if entry["killed"]]
    survivors = [entry for entry in counted if not entry["killed"]]
    score = len(killed) / len(counted) if counted else None
    wall = time.monotonic() - started
    headline = (f"mutation score: {len(killed)}/{len(counted)} = {100 * score:.1f} %" if score is not None
                else "mutation score: no non-equivalent mutant measured")
    headline += (f" (base {base}, seeds {','.join(map(str, args.seeds))}, "
                 f"{sum(entry['equivalent'] for entry in entries)} equivalent not counted; {wall:.0f} s)")
    print()
    print("\n".join(_table(entries)))
    print()
    print(headline)
    for entry in survivors:
        sites = entry["sites"]
        print(f"survivor {entry['name']} (differs on probe {entry['differs_on']}); rewrote {len(sites)} distinct nodes"
              + (": " + "; ".join(sites[:SHOWN_SITES]) + (" ..." if len(sites) > SHOWN_SITES else "") if sites else ""))
    for entry in entries:
        if not entry["equivalent"] and entry["killed"] is None:
            print(f"not measured {entry['name']}: {entry['decided_by']}")
    report = {
        "base": base, "seeds": args.seeds, "operators": args.operators, "wall_s": round(wall, 1),
        "control": {**control.summary("default run"), "name": control_name,
                    "unexpected": sorted(noise)},
        "score": {"killed": len(killed), "non_equivalent": len(counted), "ratio": score, "headline": headline},
        "survivors": [entry["name"] for entry in survivors],
        "killer_tests": sorted(killers),
        "mutants": entries,
    }
    (report_dir / "mutation_score.json").write_text(json.dumps(report, indent=1) + "\n")
    print(f"written: {report_dir / 'mutation_score.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
