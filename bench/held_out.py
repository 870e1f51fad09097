"""Which of the held-out faulty backends (bench/held_out_faults.py) a tier catches.

    python bench/held_out.py                       # the default tier, as backends without recordings
    python bench/held_out.py --as aot_eager        # each fault registered as aot_eager, its tier
    python bench/held_out.py --count DIR           # count a run made before (its report directory)
    python bench/held_out.py -- --tier nightly     # anything after -- goes to run_tests.py
    python bench/held_out.py --regressions         # the regressions of torch (held_out_regressions.py)
    python bench/held_out.py --regressions --backend eager -- --tier nightly

A fault is caught when a test is unexpected on it and expected on ``control``, the same
backend without a fault, run beside it. Reports go under --report-dir (default
reports/held-out); the last line says how many of each set were caught.

``--regressions`` runs the backend (default aot_eager) once per regression of the compile
stack, torch patched in every process of the run (DYNAMO_SUITE_IMPORTS), and once unpatched,
the control; a regression is caught the same way. ``--count DIR`` counts either kind of run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import held_out_faults  # noqa: E402  (beside this file)
import held_out_regressions  # noqa: E402
from harness.outcomes import named, reported  # noqa: E402

FAULTS_FILE = "bench/held_out_faults.py"
CONTROL = "control"
FINE = frozenset(name for name in reported() if not named(name).unexpected)


def _run(args: list[str], report_dir: Path, env: dict[str, str] | None = None) -> None:
    command = [sys.executable, "run_tests.py", "--report-dir", str(report_dir), *args]
    print("+", " ".join(command), flush=True)
    ran = subprocess.run(command, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, check=False)
    if ran.returncode == 2:  # a usage or configuration error: no results, the fault is not run
        print(f"  run_tests.py exited 2: {report_dir} has no run", flush=True)


def run_all(report_dir: Path, extra: list[str]) -> None:
    """One run, every fault and the control a backend of it."""
    backends = ",".join(f"{FAULTS_FILE}:{name}" for name in (CONTROL, *held_out_faults.FAULTS))
    _run(["--backend", backends, *extra], report_dir)


def _importing(module: str, env_name: str, name: str) -> dict[str, str]:
    """The environment of a run whose processes import ``module`` (beside this file) with ``name``."""
    imports = ",".join(filter(None, (os.environ.get("DYNAMO_SUITE_IMPORTS"), module)))
    return {"DYNAMO_SUITE_IMPORTS": imports, env_name: name,
            "PYTHONPATH": os.pathsep.join(filter(None, (str(HERE), os.environ.get("PYTHONPATH"))))}


def run_as(backend: str, report_dir: Path, extra: list[str]) -> None:
    """A run per fault, the fault registered under ``backend``'s name."""
    for name in (CONTROL, *held_out_faults.FAULTS):
        env = _importing("held_out_faults", held_out_faults.FAULT_ENV, name)
        _run(["--backend", backend, *extra], report_dir / name, env)


def run_regressions(backend: str, report_dir: Path, extra: list[str], only: list[str]) -> None:
    """A run of ``backend`` per regression of torch (those in ``only``, if any), and one of torch
    as it is (the control)."""
    _run(["--backend", backend, *extra], report_dir / CONTROL)
    for name in only or held_out_regressions.REGRESSIONS:
        started = time.monotonic()
        _run(["--backend", backend, *extra], report_dir / name,
             _importing("held_out_regressions", held_out_regressions.REGRESSION_ENV, name))
        print(f"  {name}: {time.monotonic() - started:.0f} s", flush=True)


def outcomes(report_dir: Path) -> dict[str, dict[str, str]]:
    """fault -> test (its id without the backend) -> outcome, from one run or a run per fault."""
    found: dict[str, dict[str, str]] = {}
    for results in sorted(report_dir.glob("**/results.json")):
        per_fault = results.parent != report_dir
        for test in json.loads(results.read_text())["tests"]:
            backend = test["backend"].rsplit(":", 1)[-1]
            fault = results.parent.name if per_fault else backend
            found.setdefault(fault, {})[test["id"].replace(f"_{backend}.", ".")] = test["outcome"]
    return found


def count(report_dir: Path) -> int:
    found = outcomes(report_dir)
    control = found.pop(CONTROL, None)
    if control is None:
        print(f"{report_dir}: no run of the control backend; run bench/held_out.py first")
        return 2
    broken = sorted(test for test, outcome in control.items() if outcome not in FINE)
    print(f"control: {len(control)} tests, {len(broken)} unexpected {broken[:3]}")
    regressions = bool(found.keys() & held_out_regressions.REGRESSIONS.keys())
    names = held_out_regressions.REGRESSIONS if regressions else held_out_faults.FAULTS
    caught = {}
    for name in names:
        if regressions and name not in found:
            print(f"no run  {name}")
            continue
        shown = sorted(test.rsplit(".", 2)[-2] + "." + test.rsplit(".", 1)[-1]
                       for test, outcome in found.get(name, {}).items()
                       if outcome not in FINE and control.get(test) in FINE)
        caught[name] = bool(shown)
        print(f"{'caught' if shown else 'missed'}  {name:30} {len(shown):3} {', '.join(shown[:3])}")
    if regressions:
        left = f" ({len(names) - len(caught)} not run)" if len(caught) < len(names) else ""
        print(f"caught {sum(caught.values())} of {len(caught)} regressions of torch{left}")
        return 0
    sets = {"set 1": held_out_faults.SET1, "set 2": held_out_faults.SET2}
    print("caught " + ", ".join(f"{label} {sum(caught[name] for name in faults)} of {len(faults)}"
                                for label, faults in sets.items()) + f"; {sum(caught.values())} of {len(caught)}")
    return 0


def main(argv: list[str]) -> int:
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--as", dest="as_backend", metavar="BACKEND",
                        help="register each fault as this backend and run its default tier")
    parser.add_argument("--regressions", action="store_true",
                        help="run --backend once per regression of torch (held_out_regressions.py) and unpatched")
    parser.add_argument("--backend", default="aot_eager", help="with --regressions: the backend (default aot_eager)")
    parser.add_argument("--only", metavar="R1,R2", help="with --regressions: just these regressions")
    parser.add_argument("--count", metavar="DIR", help="only count the run in DIR")
    parser.add_argument("--report-dir",
                        help="default reports/held-out, with --regressions reports/held-out-regressions")
    options = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if options.count:
        return count(Path(options.count))
    default = "reports/held-out-regressions" if options.regressions else "reports/held-out"
    report_dir = (ROOT / (options.report_dir or default)).resolve()
    if options.regressions:
        only = list(filter(None, (options.only or "").split(",")))
        unknown = sorted(set(only) - held_out_regressions.REGRESSIONS.keys())
        if unknown:
            parser.error(f"--only: no regression {', '.join(unknown)}")
        run_regressions(options.backend, report_dir, extra, only)
    elif options.as_backend:
        run_as(options.as_backend, report_dir, extra)
    else:
        run_all(report_dir, extra)
    return count(report_dir)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
