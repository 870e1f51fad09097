"""The run's settings: one torch-free object, built once and passed by call.

``run_tests.py`` builds it from its command line over the environment (command line first),
hands it to the process that collects the tests (a file argument) and to every worker (a
pytest option, installed with ``use`` before a test module is imported), and writes it into
results.json for the reports. Under plain ``python -m unittest`` nothing is handed over, and
``current`` reads the environment: the environment is the interface for plain unittest, and
``from_environment`` is the one place that reads it.

Each setting is named by its environment variable, listed below once; the module that owns
a setting says what its value means (``harness.testcase.tiers`` the tier...). How a user
gives one (option, project key), its check and where it reaches (the run record, repros) are
its declaration: an axis's in ``harness.axes.registry``, any other's in
``harness.project.run_settings``.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Mapping

PREFIX = "DYNAMO_SUITE_"
# Chosen by the user: by option, by environment or in the project's pyproject.toml
# (harness.project.config; IMPORTS, SCENARIOS and MODELS have no option).
BACKENDS = "DYNAMO_SUITE_BACKENDS"  # the backend axis (harness.axes.registry)
VARIANTS = "DYNAMO_SUITE_VARIANTS"
DTYPES = "DYNAMO_SUITE_DTYPES"
DEVICE = "DYNAMO_SUITE_DEVICE"
COMPILE_OPTIONS = "DYNAMO_SUITE_COMPILE_OPTIONS"  # harness.axes.compile_options
IMPORTS = "DYNAMO_SUITE_IMPORTS"  # modules to import first: they may register backends or a device
SCENARIOS = "DYNAMO_SUITE_SCENARIOS"  # a project's own scenario files or modules (harness.project.extensions)
MODELS = "DYNAMO_SUITE_MODELS"  # a project's own models for test_models.py (harness.project.extensions)
EXPECTATIONS = "DYNAMO_SUITE_EXPECTATIONS"  # harness.testcase.expectations
UNSUPPORTED = "DYNAMO_SUITE_UNSUPPORTED"  # capabilities declared unsupported (harness.features.scope)
TIER = "DYNAMO_SUITE_TIER"  # harness.testcase.tiers
BUDGET = "DYNAMO_SUITE_BUDGET"  # harness.testcase.default_tier: seconds of a backend's time for the default tier
GRAPH_SECONDS = "DYNAMO_SUITE_GRAPH_SECONDS"  # harness.testcase.default_tier: a graph's compile, unrecorded backends
TIER_DATA = "DYNAMO_SUITE_TIER_DATA"  # harness.testcase.default_tier: the data the default tier is chosen from, or none
OP_SWEEP = "DYNAMO_SUITE_OP_SWEEP"  # test/dynamo/test_op_sweep.py
OP_SWEEP_TIERS = ("quick", "full", "none")  # its values, the first the default
GENERATED = "DYNAMO_SUITE_GENERATED"  # test/dynamo/test_generated_programs.py
MAX_EAGER_SHARE = "DYNAMO_SUITE_MAX_EAGER_SHARE"  # harness.measure.share_limit
EAGER_FALLBACK = "DYNAMO_SUITE_EAGER_FALLBACK"  # harness.measure.share_limit: report, or fail (compiles everything)
PERF_BUDGET = "DYNAMO_SUITE_PERF_BUDGET"  # harness.testcase.perf: seconds of timed rounds per perf test
PERF_THREADS = "DYNAMO_SUITE_PERF_THREADS"  # harness.testcase.perf: torch's threads while a perf test runs
MEASURE_EAGER_SHARE = "DYNAMO_SUITE_EAGER_SHARE"  # 0: measure nothing (the bench compares the two)
FORK = "DYNAMO_SUITE_FORK"  # 0: each worker starts its own interpreter (harness.worker.forkserver)
# Between the runner and its workers.
CAPTURE_DIR = "DYNAMO_SUITE_CAPTURE_DIR"  # where workers leave the graphs of failing tests (harness.measure.repro)
TIMINGS = "DYNAMO_SUITE_TIMINGS"  # where workers log the harness's time per test (bench/overhead.py)
# Set by the runner: it chose the run's tests (the default tier's share, tests named by id),
# so a worker runs each it is given (harness.testcase.default_tier).
TESTS_CHOSEN = "DYNAMO_SUITE_TESTS_CHOSEN"

FILE_OPTION = "--dynamo-suite-settings"  # the pytest option a worker gets its settings file with


@dataclass(frozen=True)
class Settings:
    """Setting name -> its value as text; a setting not given is absent (its owner's default)."""

    values: Mapping[str, str] = field(default_factory=dict)

    def get(self, name: str, default: str = "") -> str:
        value = self.values.get(name, "").strip()
        return value or default

    def given(self, name: str) -> bool:
        return bool(self.values.get(name, "").strip())

    def replace(self, **changes: str | None) -> "Settings":
        """A copy with settings changed (by environment name); None removes one."""
        values = dict(self.values)
        for name, value in changes.items():
            if value is None:
                values.pop(name, None)
            else:
                values[name] = value
        return Settings(values)

    def environment(self, names: tuple[str, ...] | None = None) -> dict[str, str]:
        """The environment a plain unittest process needs to run as these settings say (only
        ``names``, when given): what a repro or a rerun hands on."""
        return {name: value for name, value in self.values.items() if names is None or name in names}

    def write(self, path: str | os.PathLike) -> Path:
        path = Path(path)
        path.write_text(json.dumps(dict(self.values), indent=1, sort_keys=True))
        return path

    @classmethod
    def read(cls, path: str | os.PathLike) -> "Settings":
        return cls(json.loads(Path(path).read_text()))


def from_environment(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings the environment gives (``os.environ`` by default)."""
    environ = os.environ if environ is None else environ
    return Settings({name: value for name, value in environ.items() if name.startswith(PREFIX) and value.strip()})


_installed: Settings | None = None


def current() -> Settings:
    """This process's settings: those handed over by the runner, else the environment's
    (read anew each time, so a test that patches the environment sees its change)."""
    return _installed if _installed is not None else from_environment()


def use(settings: Settings | None) -> None:
    """Install ``settings`` for this process (None: back to the environment)."""
    global _installed
    _installed = settings


@contextlib.contextmanager
def using(settings: Settings) -> Iterator[Settings]:
    """``settings`` installed until the block ends."""
    before = _installed
    use(settings)
    try:
        yield settings
    finally:
        use(before)
