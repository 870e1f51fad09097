"""Whole runs that several self-tests and proofs read, started once.

A run of ``run_tests.py`` pays for a collection, worker start-up and a canary per backend
(15 to 25 s on 2 cores) before its first test, and the proofs used to pay it once per
fault family, over the same scenarios and the same controls again and again. Here a module
declares, when it is imported, the tests it needs from a run with given options: its
backends and full-id globs (``registry.test_id`` writes them). The first module to read
starts one run of every part declared by then for those options, with the union of the
backends and globs, and each part reads back only its own tests. A part declared after its
run started gets a run with the parts still waiting.

Only faults that cannot disturb one another share a run: a backend that crashes, hangs,
breaks its worker's runtime or needs its own environment or tier declares a run of its own
options (``SharedRun("--tier", "nightly")``), which others with the same options share.
"""

from __future__ import annotations

import atexit
import fnmatch
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from test.harness.cli import read_results, run_cli
from test.harness.faulty_backends.models import FIRED_LOG_ENV


@dataclass(frozen=True)
class Finished:
    """A run that took place: what the time budgets of test/harness/budgets.py read."""

    label: str
    seconds: float
    budget_s: float


_FINISHED: list[Finished] = []


def finished() -> list[Finished]:
    return list(_FINISHED)


class SharedRun:
    """The options of a run (all but ``--backend``, ``-k`` and ``--report-dir``), and the
    parts of it that test modules declared. ``budget_s``: the seconds one run of all its
    parts may take (test/harness/budgets.py); a run of options only one module uses is
    charged to that module instead (no budget of its own)."""

    def __init__(self, *options: str, env: dict[str, str] | None = None, label: str = "",
                 budget_s: float | None = None) -> None:
        self.options = options
        self.env = env
        self.label = label or " ".join(options) or "(default options)"
        self.budget_s = budget_s
        self._waiting: list[Part] = []

    def part(self, backends: Iterable[str], patterns: Iterable[str]) -> "Part":
        """What one module needs: these backend specs, and the tests matching these full-id
        globs (each naming its backend's class, so parts add no tests to one another)."""
        part = Part(self, tuple(backends), tuple(patterns))
        if not part.patterns:
            raise ValueError("a part of a shared run needs at least one test pattern")
        self._waiting.append(part)
        return part

    def _start(self) -> None:
        parts, self._waiting = self._waiting, []
        started = time.perf_counter()
        report_dir = Path(tempfile.mkdtemp(prefix="dynamo-suite-shared-run-"))
        atexit.register(shutil.rmtree, report_dir, True)
        backends = list(dict.fromkeys(spec for part in parts for spec in part.backends))
        patterns = list(dict.fromkeys(pattern for part in parts for pattern in part.patterns))
        # Parts of backend-independent families only: the default backends, as a user's run.
        chosen = ["--backend", ",".join(backends)] if backends else []
        completed = run_cli(*chosen, *self.options,
                            *(arg for pattern in patterns for arg in ("-k", pattern)),
                            "--report-dir", str(report_dir), env=self.env)
        results = read_results(report_dir) if completed.returncode in (0, 1) else {"run": {}, "tests": []}
        for part in parts:
            part._ran = (completed, report_dir, results)
        if self.budget_s is not None:
            _FINISHED.append(Finished(self.label, time.perf_counter() - started, self.budget_s))


class Part:
    """One module's share of a run: its tests, and the run they came from."""

    def __init__(self, run: SharedRun, backends: tuple[str, ...], patterns: tuple[str, ...]) -> None:
        self.run = run
        self.backends = backends
        self.patterns = patterns
        self._ran: tuple[subprocess.CompletedProcess, Path, dict[str, Any]] | None = None

    def _get(self) -> tuple[subprocess.CompletedProcess, Path, dict[str, Any]]:
        if self._ran is None:
            self.run._start()
        return self._ran

    @property
    def completed(self) -> subprocess.CompletedProcess:
        """The whole run's exit code and output (other parts' tests included)."""
        return self._get()[0]

    @property
    def report_dir(self) -> Path:
        return self._get()[1]

    @property
    def run_record(self) -> dict[str, Any]:
        return self._get()[2]["run"]

    def tests(self) -> list[dict[str, Any]]:
        """This part's tests from the run's results.json, in its order."""
        return [test for test in self._get()[2]["tests"] if self.owns(test["id"])]

    def owns(self, test_id: str) -> bool:
        return any(fnmatch.fnmatchcase(test_id, pattern) for pattern in self.patterns)

    def describe(self) -> str:
        """The run's output tail, for a failing assertion's message."""
        return f"\n{self.completed.stdout[-4000:]}\n{self.completed.stderr[-2000:]}"


# The default tier, each test under a generous limit instead of its recorded duration (a
# faulty backend's tests were never recorded): the faults that only compute something wrong.
DEFAULT = SharedRun("--timeout", "300", label="DEFAULT", budget_s=440)  # +35 s: the mutants' proof; +80 s: the state faults; +20 s: the compile surface's

# The self-tests' run of the runner's axes: two variants, two dtypes and a device named on the
# command line, so that each shows in the ids, the reports and the run's record.
AXES = SharedRun("--variants", "static,dynamic", "--dtypes", "float32,float16", "--device", "cpu",
                 "--op-sweep", "none", label="AXES", budget_s=40)
# The perf tier, briefly measured: what its tests record, not how fast anything is.
PERF = SharedRun("--tier", "perf", "--perf-budget", "0.2", "--perf-threads", "2", label="PERF", budget_s=35)

# Where the faulty model backends note the tests in which they altered a graph
# (test/harness/faulty_backends/models.py), during the nightly run.
_FAULT_LOG = Path(tempfile.mkdtemp(prefix="dynamo-suite-fired-")) / "fired.log"
atexit.register(shutil.rmtree, _FAULT_LOG.parent, True)


def fired_faults() -> list[str]:
    """The pytest ids the faulty model backends noted, one per graph they altered."""
    return _FAULT_LOG.read_text().split() if _FAULT_LOG.exists() else []


# The nightly tier: real models and distributed training, whose ranks are contained per test.
NIGHTLY = SharedRun("--tier", "nightly", env={FIRED_LOG_ENV: str(_FAULT_LOG)}, label="NIGHTLY",
                    budget_s=570)  # +145 s: the value semantics' mutants (2026-12-06)
