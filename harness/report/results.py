"""The results of a run, and ``results.json``: the one file every other report is made from.

The schema is documented in docs/results.md; ``SCHEMA_VERSION`` changes whenever a field
changes meaning or disappears (adding a field does not change it).
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from harness import outcomes
from harness.axes import registry
from harness.features import catalogue
from harness.report import coverage

SCHEMA = "dynamo-aot-suite/results"
SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)  # version 1 is version 2 without COLLATERAL and its fields

OP_SWEEP_PREFIX = "test_op_sweep."  # scenario names of the operator sweep's tests
BACKEND_INDEPENDENT = registry.BACKEND_INDEPENDENT  # the backend column of tests that run once, not per backend


class ResultsError(ValueError):
    """A results file that cannot be read; the message is one line."""


def column_name(backend: str, **values: str) -> str:
    """A report column: the backend, then each further axis's value unless it is the default
    (``inductor/dynamic/bfloat16``)."""
    return registry.column({registry.BACKEND.name: backend, **values})


@dataclass
class TestResult:
    id: str  # the unittest id: module.Class.test
    scenario: str  # backend-free name, as expectations match it: module.Family.test
    backend: str  # backend name as in the id, or BACKEND_INDEPENDENT
    backend_spec: str  # what to pass to --backend to rerun it ("" for backend-independent tests)
    outcome: str
    reason: str = ""  # one line
    duration_s: float = 0.0
    metrics: dict[str, float] | None = None  # frames, graphs, graph_breaks, recompiles, compile_s
    expectation: str | None = None  # file:line of the expectations entry applied
    details: str = ""  # traceback, or the tail of a dead worker's output
    worker: str = ""
    # The earlier test whose failure this one followed in the same worker process, when this
    # one failed unexpectedly too (harness.run.isolation reran it alone).
    after: str | None = None
    # How the result was reached: None (run once), "alone" (rerun in a fresh worker; this is
    # that run's result), "not rerun" (it needed a rerun, but the rerun limits were reached).
    rerun: str | None = None
    # For errors, crashes and timeouts: the innermost frame of the code that raised or was
    # running, outside the standard library and the test runner: "function (file:line)".
    where: str = ""
    time_limit_s: float | None = None  # its own time limit (None: the run's timeout_s)
    problem: str | None = None  # harness.report.problems: the id of this unexpected result's problem
    clause: str | None = None  # and the contract clause that problem breaks (harness/checks/clauses.py)
    # For a failure (expected or not): the stage it came from (harness.measure.stages): "capture",
    # "AOTAutograd", "backend compile", "backend run" or "check".
    stage: str | None = None
    # What it asked of the backend (harness.features.scope: "training", "float64"...; None:
    # not recorded), and which of that the run declared unsupported: then it checked the
    # refusal contract.
    needs: list[str] | None = None
    out_of_scope: list[str] = field(default_factory=list)
    # The features its graphs and calls showed (harness.features.catalogue): names, and
    # ``name@family`` per operator family of an operator call's feature (None: not recorded).
    covers: list[str] | None = None
    # Its value of each per-test axis beside the backend (harness.axes.registry): the variant it
    # ran under, torch's default dtype during it... In results.json each is a field of its own.
    axes: dict[str, str] = field(default_factory=dict)
    # harness.measure.eager_share.summarize: the compute ops its compiled calls ran through PyTorch's
    # eager kernels, against the ops of the graphs themselves (None: nothing measured).
    eager_share: dict[str, Any] | None = None
    # The perf tier's figures (harness.testcase.perf.figures): eager and compiled time per call,
    # the speed-up with its interval, peak memory of each (None: not a perf test, or not measured).
    perf: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        # Only values other than an axis's default are kept, so a result read back from
        # results.json equals the one written.
        defaults = registry.defaults()
        self.axes = {name: value for name, value in self.axes.items() if value != defaults.get(name)}

    def axis(self, name: str) -> str:
        """Its value of the axis ``name`` (the axis's default when it has none)."""
        return self.axes.get(name) or registry.named(name).first

    @property
    def column(self) -> str:
        """Its column in the reports (``inductor/dynamic/bfloat16``)."""
        return column_name(self.backend, **self.axes)

    @property
    def unexpected(self) -> bool:
        return outcomes.named(self.outcome).unexpected

    def to_json(self) -> dict[str, Any]:
        fields = asdict(self)
        fields.pop("axes")
        axes = {axis.name: self.axis(axis.name) for axis in registry.beside_backend()}
        # Where the axes' fields have always been: before the eager share.
        eager = fields.pop("eager_share")
        return {**fields, **axes, "eager_share": eager}

    @classmethod
    def from_json(cls, test: dict[str, Any]) -> "TestResult":
        known = cls.__dataclass_fields__
        axes = {axis.name: test[axis.name] for axis in registry.beside_backend() if axis.name in test}
        return cls(**{key: value for key, value in test.items() if key in known and key != "axes"}, axes=axes)


@dataclass
class RunResults:
    run: dict[str, Any]  # torch, python, platform, backends, argv, shard, times, jobs...
    tests: list[TestResult] = field(default_factory=list)
    # How the run compared with --baseline (harness.report.baseline.Difference.to_json), if it was.
    baseline: dict[str, Any] | None = None

    def summary(self) -> dict[str, int]:
        counts = {outcome: 0 for outcome in outcomes.reported()}
        for test in self.tests:
            counts[test.outcome] += 1
        counts["total"] = len(self.tests)
        counts["unexpected"] = sum(test.unexpected for test in self.tests)
        return counts

    @property
    def unexpected(self) -> list[TestResult]:
        return [test for test in self.tests if test.unexpected]

    @property
    def unsupported(self) -> list[str]:
        """The capabilities the run declared unsupported (harness.features.scope)."""
        return list(self.run.get("unsupported") or [])

    def outcomes_shown(self) -> tuple[str, ...]:
        """The outcome columns of a counts table: those shown with a scope only (REFUSED) where
        a scope was declared or a test had them."""
        had = {test.outcome for test in self.tests}
        return tuple(outcome for outcome in outcomes.reported()
                     if not outcomes.named(outcome).with_scope_only or self.unsupported or outcome in had)

    def scope(self) -> dict[str, Any]:
        """The declared scope, and per report column, per capability its tests needed
        (catalogue order), how many tests needed it and how they ended."""
        order = list(catalogue.capabilities())
        columns: dict[str, dict[str, dict[str, int]]] = {}
        for test in self.tests:
            for name in test.needs or ():
                counts = columns.setdefault(test.column, {}).setdefault(
                    name, {"tests": 0, "passed": 0, "refused": 0, "expected_failures": 0, "unexpected": 0})
                counts["tests"] += 1
                outcome = {outcomes.PASS: "passed", outcomes.REFUSED: "refused",
                           outcomes.XFAIL: "expected_failures"}.get(test.outcome)
                if outcome:
                    counts[outcome] += 1
                counts["unexpected"] += test.unexpected
        rank = lambda name: order.index(name) if name in order else len(order)  # noqa: E731
        return {"unsupported": self.unsupported,
                "needed": {column: dict(sorted(columns[column].items(), key=lambda item: rank(item[0])))
                           for column in self.columns() if column in columns}}

    def left_broken(self) -> dict[str, tuple[int, int]]:
        """Per test after which others failed in its worker process, when some of those pass
        alone: (how many failed after it, how many of them are COLLATERAL)."""
        counts: dict[str, list[int]] = {}
        for test in self.tests:
            if test.after is not None:
                entry = counts.setdefault(test.after, [0, 0])
                entry[0] += 1
                entry[1] += test.outcome == outcomes.COLLATERAL
        return {test_id: (failed, collateral) for test_id, (failed, collateral) in counts.items() if collateral}

    def backends(self) -> list[str]:
        """Backend names in the order the run listed them; backend-independent last."""
        names = [backend["name"] for backend in self.run.get("backends", [])]
        for test in self.tests:
            if test.backend not in names and test.backend != BACKEND_INDEPENDENT:
                names.append(test.backend)
        if any(test.backend == BACKEND_INDEPENDENT for test in self.tests):
            names.append(BACKEND_INDEPENDENT)
        return names

    def columns(self) -> list[str]:
        """Report columns: per backend in run order, its variants in run order and under each
        its dtypes (``inductor``, ``inductor/bfloat16``, ``inductor/dynamic``...);
        backend-independent last."""
        axes = registry.beside_backend()
        orders = [list(dict.fromkeys([*self.run.get(axis.record_key, []), *(test.axis(axis.name) for test in self.tests)]))
                  or [axis.first] for axis in axes]
        present = {test.column for test in self.tests}
        columns = [column for backend in self.backends() for column in
                   dict.fromkeys(column_name(backend, **{axis.name: value for axis, value in zip(axes, values)})
                                 for values in itertools.product(*orders))]
        return [column for column in columns if column in present] or columns

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "scope": self.scope(),
            "coverage": coverage.to_json(self),
            "run": self.run,
            "summary": self.summary(),
            "tests": [test.to_json() for test in self.tests],
            **({"baseline": self.baseline} if self.baseline is not None else {}),
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1, sort_keys=False) + "\n"


def from_json(data: Any, source: str = "<results>") -> RunResults:
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ResultsError(f"{source}: not a dynamo-aot-suite results.json (no \"schema\": \"{SCHEMA}\")")
    version = data.get("schema_version")
    if version not in READABLE_VERSIONS:
        raise ResultsError(f"{source}: results schema version {version}, this runner reads versions "
                           f"{', '.join(map(str, READABLE_VERSIONS))}")
    try:
        tests = [TestResult.from_json(test) for test in data["tests"]]
    except (KeyError, TypeError) as error:
        raise ResultsError(f"{source}: malformed test entry ({error})") from None
    known = outcomes.reported()
    for test in tests:
        if test.outcome not in known:
            raise ResultsError(f"{source}: test {test.id} has unknown outcome '{test.outcome}'")
    return RunResults(run=data.get("run", {}), tests=tests)


def load(path: str | os.PathLike) -> RunResults:
    """Read a results.json, or the results.json inside a report directory; either gzipped
    (``results.json.gz``: a snapshot keeps its runs that way, docs/scoreboard/)."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.json" if (path / "results.json").exists() or not (path / "results.json.gz").exists() \
            else path / "results.json.gz"
    try:
        text = gzip.decompress(path.read_bytes()).decode("utf-8") if path.suffix == ".gz" \
            else path.read_text(encoding="utf-8")
    except (OSError, gzip.BadGzipFile) as error:
        raise ResultsError(f"cannot read results {path}: {getattr(error, 'strerror', None) or error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ResultsError(f"{path}:{error.lineno}: not valid JSON ({error.msg})") from None
    return from_json(data, str(path))


def merge(parts: Iterable[tuple[str, RunResults]]) -> RunResults:
    """One run out of shard runs; a test in two parts is an error (shards are disjoint)."""
    parts = list(parts)
    seen: dict[str, str] = {}
    tests: list[TestResult] = []
    for source, results in parts:
        for test in results.tests:
            if test.id in seen:
                raise ResultsError(f"test {test.id} is in both {seen[test.id]} and {source}; shards must not overlap")
            seen[test.id] = source
            tests.append(test)
    first = parts[0][1].run if parts else {}
    backends = []
    for _, results in parts:
        backends += [backend for backend in results.run.get("backends", []) if backend not in backends]
    run = {
        **first,
        "backends": backends,
        "shard": None,
        "merged_from": [{"source": source, "shard": results.run.get("shard")} for source, results in parts],
        "duration_s": round(max((results.run.get("duration_s", 0.0) for _, results in parts), default=0.0), 3),
        "complete": all(results.run.get("complete", False) for _, results in parts),
    }
    return RunResults(run=run, tests=sorted(tests, key=lambda test: test.id))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _umask()


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Replace ``path`` with ``text`` all at once: a reader (or a run killed midway) sees
    the old file or the new one, never a part."""
    path = Path(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(temporary, 0o666 & ~_UMASK)  # mkstemp makes it private; reports are not
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
