#!/usr/bin/env python3
"""Which torch build first changed a test's outcome? Bisect over torch releases or nightlies.

    python scripts/bisect_torch.py TEST_ID --good 2.9.1 --bad 2.14.1 --backend inductor
    python scripts/bisect_torch.py TEST_ID --good 2026-11-01 --bad 2026-11-20 --pre \\
        --index-url https://download.pytorch.org/whl/nightly/cpu

Each candidate build is installed into a throw-away virtual environment of its own (with the
suite's requirements, requirements-suite.txt), the one test is run there with
``run_tests.py -k TEST_ID -j 1`` and an empty expectations file (so a failure shows as FAIL,
not as an expected one), and its outcome is compared with the outcome on --good. The
candidates are the versions between --good and --bad that the package sources offer (the
wheels in --find-links directories, or what ``pip index versions`` lists), or --candidates.
A version given as a date (2026-11-01 or 20261101) means the nightly of that date (a version
containing ``dev20261101``). ``--command CMD`` judges a build by a command instead (exit 0:
good), as ``git bisect run`` does. Every step is printed; the exit code is 0 when the first
bad build was found, 1 when --good and --bad behave the same, 2 on bad input or when a
build cannot be installed or run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parents[1]
SUITE_REQUIREMENTS = ROOT / "requirements-suite.txt"
_DATE = re.compile(r"^(\d{4})-?(\d{2})-?(\d{2})$")


class BisectError(Exception):
    """Bad input or a build that cannot be judged; the message is one line."""


@dataclass
class Step:
    version: str
    outcome: str  # the test's outcome(s), or the command's exit status
    good: bool

    def as_dict(self) -> dict:
        return {"version": self.version, "outcome": self.outcome, "good": self.good}


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scripts/bisect_torch.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("test_id", nargs="?", metavar="TEST_ID",
                        help="the test to run (as run_tests.py -k takes it); not needed with --command")
    parser.add_argument("--good", required=True, metavar="VERSION", help="a torch version (or nightly date) where it is good")
    parser.add_argument("--bad", required=True, metavar="VERSION", help="a later torch version (or nightly date) where it is not")
    parser.add_argument("--candidates", metavar="V1,V2", help="the versions to bisect over (default: those the sources offer)")
    parser.add_argument("--backend", help="run_tests.py --backend for the test")
    parser.add_argument("--command", help="judge a build by this shell command in its environment instead (exit 0: good)")
    sources = parser.add_argument_group("where builds come from (passed to pip)")
    sources.add_argument("--find-links", action="append", default=[], metavar="DIR_OR_URL")
    sources.add_argument("--index-url", metavar="URL", help="e.g. https://download.pytorch.org/whl/nightly/cpu")
    sources.add_argument("--extra-index-url", action="append", default=[], metavar="URL")
    sources.add_argument("--no-index", action="store_true", help="only --find-links (offline)")
    sources.add_argument("--pre", action="store_true", help="consider pre-releases and nightlies")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter the environments are made from; its pip (22.3 or later) installs them")
    parser.add_argument("--venv-dir", metavar="DIR", help="keep the environments here and reuse them (default: "
                                                           "a temporary directory, removed at the end)")
    parser.add_argument("--json", metavar="FILE", help="write the steps and the result as JSON")
    parser.add_argument("--timeout", type=float, default=1800, metavar="S", help="per install and per run (default: 1800)")
    args = parser.parse_args(argv)
    if not args.test_id and not args.command:
        parser.error("give TEST_ID, or --command to judge each build")
    return args


def pip_source_args(args: argparse.Namespace) -> list[str]:
    options = [item for link in args.find_links for item in ("--find-links", link)]
    if args.index_url:
        options += ["--index-url", args.index_url]
    options += [item for url in args.extra_index_url for item in ("--extra-index-url", url)]
    if args.no_index:
        options.append("--no-index")
    if args.pre:
        options.append("--pre")
    return options


def _version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise BisectError(f"'{text}' is not a torch version (like 2.13.0) or a nightly date (like 2026-11-01)") from None


def offered_versions(args: argparse.Namespace) -> list[str]:
    """The torch versions the sources offer: wheel files in local --find-links directories,
    else what pip's index lists."""
    found = set()
    for link in args.find_links:
        directory = Path(link)
        if directory.is_dir():
            for wheel in directory.glob("torch-*.whl"):
                try:
                    name, version, _, _ = parse_wheel_filename(wheel.name)
                except InvalidWheelFilename:
                    continue
                if name == "torch":
                    found.add(str(version))
    if found or args.no_index:
        return sorted(found, key=Version)
    command = [args.python, "-m", "pip", "index", "versions", "torch", *pip_source_args(args)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    listed = re.search(r"Available versions:\s*(.+)", done.stdout)
    if done.returncode != 0 or not listed:
        raise BisectError(f"cannot list torch versions ({' '.join(command[1:])}): "
                          f"{(done.stderr.strip().splitlines() or ['no versions'])[-1]}; give --candidates")
    return sorted({version.strip() for version in listed.group(1).split(",")}, key=Version)


def resolve(endpoint: str, offered: list[str]) -> str:
    """A version as given, or the nightly of a date."""
    date = _DATE.match(endpoint)
    if not date:
        _version(endpoint)
        return endpoint
    tag = "dev" + "".join(date.groups())
    matching = [version for version in offered if tag in version]
    if not matching:
        raise BisectError(f"no nightly of {endpoint} among the offered versions (looked for '{tag}')")
    return matching[-1]


def candidates(args: argparse.Namespace) -> list[str]:
    """--good, the versions between, --bad: in version order."""
    offered = [version.strip() for version in args.candidates.split(",")] if args.candidates else offered_versions(args)
    good, bad = resolve(args.good, offered), resolve(args.bad, offered)
    if _version(good) >= _version(bad):
        raise BisectError(f"--good {good} must be an earlier version than --bad {bad}")
    between = [version for version in offered if _version(good) < _version(version) < _version(bad)]
    return [good, *sorted(set(between), key=Version), bad]


class Builds:
    """One environment per torch version: made on first use, with the suite's requirements
    when a suite test is run."""

    def __init__(self, args: argparse.Namespace, directory: Path) -> None:
        self.args, self.directory = args, directory

    def python(self, version: str) -> Path:
        venv = self.directory / f"torch-{version}"
        python = venv / "bin" / "python"
        if (venv / ".installed").exists():
            return python
        shutil.rmtree(venv, ignore_errors=True)
        # Without a pip of its own (seconds saved per build): the interpreter's pip installs into it.
        self._run([self.args.python, "-m", "venv", "--without-pip", str(venv)], f"make an environment for torch {version}")
        requirements = [] if self.args.command else ["-r", str(SUITE_REQUIREMENTS)]
        self._run([self.args.python, "-m", "pip", "--python", str(python), "install", "--quiet",
                   "--disable-pip-version-check", f"torch=={version}", *requirements, *pip_source_args(self.args)],
                  f"install torch {version}")
        (venv / ".installed").write_text(version)
        return python

    def _run(self, command: list[str], what: str) -> None:
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=self.args.timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise BisectError(f"could not {what}: stopped after {self.args.timeout:g} s") from None
        if done.returncode != 0:
            last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
            raise BisectError(f"could not {what}: {last[0]}")


def judge(args: argparse.Namespace, python: Path, work: Path) -> str:
    """The test's outcome on this build (``PASS``, ``FAIL``...), or ``exit N`` for --command."""
    env = {**os.environ, "VIRTUAL_ENV": str(python.parent.parent),
           "PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    if args.command:
        done = subprocess.run(args.command, shell=True, cwd=ROOT, env=env, timeout=args.timeout,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True)
        return f"exit {done.returncode}"
    empty = work / "no-expectations.toml"
    empty.write_text("# bisect_torch.py: no expected failures, so a failure shows as FAIL\n")
    report = work / "report"
    shutil.rmtree(report, ignore_errors=True)
    command = [str(python), str(ROOT / "run_tests.py"), "-k", args.test_id, "-j", "1", "--expectations", str(empty),
               "--report-dir", str(report), *(["--backend", args.backend] if args.backend else [])]
    done = subprocess.run(command, cwd=ROOT, env=env, timeout=args.timeout, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True)
    results = report / "results.json"
    if done.returncode not in (0, 1) or not results.exists():
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
        raise BisectError(f"the test did not run (exit {done.returncode}): {last[0]}")
    tests = json.loads(results.read_text())["tests"]
    return ", ".join(sorted({test["outcome"] for test in tests}))


def bisect(args: argparse.Namespace, versions: list[str], judge_version) -> tuple[list[Step], str, str] | None:
    """(steps, last good, first bad), or None when --good and --bad behave the same."""
    steps: list[Step] = []

    def step(version: str, expected_good: str | None) -> Step:
        started = time.monotonic()
        outcome = judge_version(version)
        result = Step(version, outcome, expected_good is None or outcome == expected_good)
        steps.append(result)
        verdict = "reference" if expected_good is None else ("good" if result.good else "bad")
        print(f"step {len(steps)}: torch {version}: {outcome} ({verdict}; installed and run in "
              f"{time.monotonic() - started:.0f} s)", flush=True)
        return result

    good_outcome = step(versions[0], None).outcome
    if step(versions[-1], good_outcome).good:
        return None
    low, high = 0, len(versions) - 1
    while high - low > 1:
        middle = (low + high) // 2
        print(f"  {high - low - 1} untested build(s) between torch {versions[low]} and {versions[high]}", flush=True)
        if step(versions[middle], good_outcome).good:
            low = middle
        else:
            high = middle
    return steps, versions[low], versions[high]


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    try:
        versions = candidates(args)
        print(f"bisecting {'`' + args.command + '`' if args.command else args.test_id} over {len(versions)} torch "
              f"builds: {', '.join(versions)}", flush=True)
        directory = Path(args.venv_dir) if args.venv_dir else Path(tempfile.mkdtemp(prefix="bisect-torch-"))
        directory.mkdir(parents=True, exist_ok=True)
        builds = Builds(args, directory)
        try:
            found = bisect(args, versions, lambda version: judge(args, builds.python(version), directory))
        finally:
            if not args.venv_dir:
                shutil.rmtree(directory, ignore_errors=True)
    except BisectError as error:
        print(f"bisect_torch.py: {error}", file=sys.stderr)
        return 2
    if found is None:
        print(f"torch {versions[0]} and {versions[-1]} give the same outcome: nothing to bisect")
        return 1
    steps, last_good, first_bad = found
    print(f"first bad build: torch {first_bad} (last good: {last_good}); the change lies in {last_good}..{first_bad}")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "test": args.test_id, "command": args.command, "candidates": versions,
            "steps": [step.as_dict() for step in steps], "last_good": last_good, "first_bad": first_bad}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
