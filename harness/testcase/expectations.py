"""Expected failures and skips, kept as data apart from the tests.

The data file is TOML; each ``[[expect]]`` table is one entry:

    [[expect]]
    test = "test_aot_autograd.LSTMTests.test_lstm_grad_enabled"   # glob: module.Family.test
    backend = "*"            # glob over backend names in test ids (default "*")
    variant = "*"            # glob over variant names (harness.axes.variants; default "*": all)
    dtype = "*"              # glob over the test's dtype: float32, bfloat16, float16 (harness.axes.dtypes)
    device = "*"             # glob over the run's device type: cpu, cuda... (harness.axes.device; default "*")
    torch = ">=2.9"          # packaging specifier on the running torch (default: any)
    aot_autograd = true      # optional: only for backends that do / do not use AOTAutograd
    onednn_bf16 = false      # optional: only where oneDNN does / does not run bfloat16 on this CPU
    cpu_vec_isa = "avx2"     # optional: glob over the vector ISA inductor generates CPU code for here
    status = "xfail"         # "xfail" or "skip"
    reason = "why, in one line"

An ``[[eager_share]]`` table sets the most of a compiled call that may run through
PyTorch's eager kernels (harness.measure.eager_share) for the tests it matches, in place of
``--max-eager-share``; it takes the same matching keys (``test`` defaults to "*"):

    [[eager_share]]
    backend = "mybackend"
    max = 0.1                # a share: 0.1 is 10%
    reason = "everything but the extern matmuls runs in our runtime"

Every axis (harness/axes/registry.py) is a key of its own, a glob over the test's value.
Entries are validated on load; a mistake is reported as ``file:line: what is wrong``.

Two files apply, in layers: a project's own (``DYNAMO_SUITE_EXPECTATIONS``, the command's
``--expectations`` or its pyproject.toml) and beneath it the bundled ``harness/expectations.toml``,
which says what torch itself does and always applies. The first entry that matches a test
decides its expectation, the project's entries first; ``status = "pass"`` in the project's
file takes back a bundled entry for the tests it matches (they must pass).
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from harness import settings
from harness.measure import stages
from harness.axes import registry

EXPECTATIONS_ENV = settings.EXPECTATIONS
DEFAULT_FILE = Path(__file__).resolve().parents[1] / "expectations.toml"  # data beside the library, not a module
STATUSES = ("xfail", "skip", "pass")
NEW_FILE_HEADER = ("# Expected failures and skips of this project, read over dynamo-aot-suite's bundled ones;\n"
                   "# an entry here wins where both match. Every key: the suite's docs/expectations.md.\n")
_REQUIRED = ("test", "status", "reason")


def _fields() -> dict[str, type]:
    """The keys an [[expect]] entry may have: one per axis in use, among the others."""
    return {"test": str, **{axis.name: str for axis in registry.AXES}, "torch": str, "aot_autograd": bool,
            "onednn_bf16": bool, "cpu_vec_isa": str, "status": str, "stage": str, "reason": str}


def _limit_fields() -> dict[str, type]:
    return {**{key: kind for key, kind in _fields().items() if key not in ("status", "stage")}, "max": float}


def _difference_fields() -> dict[str, type]:
    return {**{key: kind for key, kind in _fields().items() if key not in ("status", "stage")}, "op": str,
            "domain": str}


TABLES = ("expect", "eager_share", "value_difference")


class ExpectationError(ValueError):
    """Malformed expectations data; the message is one line starting with file:line."""


@dataclass(frozen=True)
class Expectation:
    test: str
    status: str
    reason: str
    torch: str = ""
    aot_autograd: bool | None = None
    onednn_bf16: bool | None = None  # the CPU's bfloat16 support in oneDNN (harness.compat.onednn_has_bfloat16)
    cpu_vec_isa: str = ""  # glob over inductor's CPU vector ISA here (harness.compat.cpu_vec_isa); "" any
    # For an xfail: the stage the failure must come from (harness.measure.stages); a failure
    # from another stage is unexpected. "" accepts any.
    stage: str = ""
    source: str = ""  # file:line of the entry
    axes: tuple[tuple[str, str], ...] = ()  # (axis, glob) for each axis the entry names; the others: "*"

    @classmethod
    def of(cls, **fields: Any) -> "Expectation":
        """An entry from its keys as written in the file (``backend="aot_eager"``...)."""
        names = {axis.name for axis in registry.AXES}
        axes = tuple((key, value) for key, value in fields.items() if key in names)
        return cls(**{key: value for key, value in fields.items() if key not in names}, axes=axes)

    def pattern(self, axis_name: str) -> str:
        return dict(self.axes).get(axis_name, "*")

    def applies_to(self, test_key: str, torch_version: Version, values: Mapping[str, str | None]) -> bool:
        """Everything but the AOTAutograd condition, which needs a probe of the backend.
        ``values``: the test's value of each axis (a missing one, or None, is "")."""
        if not fnmatch.fnmatchcase(test_key, self.test):
            return False
        for axis in registry.AXES:
            pattern = self.pattern(axis.name)
            if pattern != "*" and not axis.matches(pattern, values.get(axis.name) or ""):
                return False
        if self.onednn_bf16 is not None:
            from harness import compat  # torch: only for an entry that asks about the CPU

            if compat.onednn_has_bfloat16() != self.onednn_bf16:
                return False
        if self.cpu_vec_isa:
            from harness import compat  # torch: only for an entry that asks about the CPU

            if not fnmatch.fnmatchcase(compat.cpu_vec_isa(), self.cpu_vec_isa):
                return False
        return not self.torch or SpecifierSet(self.torch).contains(torch_version, prereleases=True)


@dataclass(frozen=True)
class ShareLimit(Expectation):
    """An ``[[eager_share]]`` entry: the most of a compiled call that may run eagerly
    (harness.measure.eager_share) for the tests it matches; its ``status`` is "limit"."""

    max: float = 1.0


@dataclass(frozen=True)
class ValueDifference(Expectation):
    """A ``[[value_difference]]`` entry: where the value-domain tests (harness/checks/
    value_domains.py) of the tests it matches accept that an op (glob over OpInfo names)
    differs from eager on a domain (glob over its names, "subnormal" for a backend that
    flushes them); its ``status`` is "accept"."""

    op: str = "*"
    domain: str = "*"

    def accepts(self, op: str, domain: str) -> bool:
        return fnmatch.fnmatchcase(op, self.op) and fnmatch.fnmatchcase(domain, self.domain)


def _entry_lines(text: str, table: str) -> list[tuple[int, dict[str, int]]]:
    """For each ``[[table]]`` in order: its header line and the line of each key."""
    tables: list[tuple[str, int, dict[str, int]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if header := re.match(r"\[\[\s*([\w-]+)\s*\]\]", stripped):
            tables.append((header.group(1), number, {}))
        elif stripped.startswith("["):
            tables.append(("", number, {}))
        elif tables and (match := re.match(r"([A-Za-z_][\w-]*)\s*=", stripped)):
            tables[-1][2].setdefault(match.group(1), number)
    return [(number, keys) for name, number, keys in tables if name == table]


def _raw_entries(text: str, filename: str, table: str, fields: dict[str, type],
                 required: tuple[str, ...]) -> list[tuple[dict[str, Any], str, Callable[..., None]]]:
    """The ``[[table]]`` entries of ``text``, type-checked: (entry, file:line, fail)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line = re.search(r"line (\d+)", str(error))
        raise ExpectationError(f"{filename}:{line.group(1) if line else 1}: not valid TOML: {error}") from None
    unknown_tables = set(data) - set(TABLES)
    if unknown_tables:
        raise ExpectationError(f"{filename}:1: unknown table(s) {sorted(unknown_tables)}; entries are "
                               + " or ".join(f"[[{name}]]" for name in TABLES) + " tables")
    raw_entries = data.get(table, [])
    if not isinstance(raw_entries, list):
        raise ExpectationError(f"{filename}:1: '{table}' must be written as [[{table}]] tables")
    lines = _entry_lines(text, table)
    entries = []
    for index, raw in enumerate(raw_entries):
        header, key_lines = lines[index] if index < len(lines) else (1, {})

        def fail(message: str, key: str | None = None, key_lines=key_lines, header=header) -> None:
            raise ExpectationError(f"{filename}:{key_lines.get(key, header)}: {message}")

        if not isinstance(raw, dict):
            fail(f"entry {index + 1} is a {type(raw).__name__}; each entry must be a table written [[{table}]]")
        for key, value in raw.items():
            if key not in fields:
                fail(f"unknown key '{key}'; allowed: {', '.join(fields)}", key)
            expected = (int, float) if fields[key] is float else fields[key]
            if not isinstance(value, expected) or (fields[key] is not bool and isinstance(value, bool)):
                fail(f"'{key}' must be a {fields[key].__name__}, not {type(value).__name__}", key)
        for key in required:
            if key not in raw:
                fail(f"missing '{key}'")
        if not raw["reason"].strip():
            fail({"expect": "reason is empty; say why the test is expected to fail",
                  "eager_share": "reason is empty; say why this limit"}.get(
                      table, "reason is empty; say why the difference is acceptable"), "reason")
        try:
            SpecifierSet(raw.get("torch", ""))
        except InvalidSpecifier:
            fail(f"torch '{raw['torch']}' is not a version specifier like '>=2.9,<2.13'", "torch")
        entries.append((raw, f"{filename}:{header}", fail))
    return entries


def parse(text: str, filename: str = "<expectations>") -> list[Expectation]:
    entries = []
    for raw, source, fail in _raw_entries(text, filename, "expect", _fields(), _REQUIRED):
        if raw["status"] not in STATUSES:
            fail(f"status '{raw['status']}' is not one of {', '.join(STATUSES)}", "status")
        if "stage" in raw and raw["stage"] not in stages.STAGES:
            fail(f"stage '{raw['stage']}' is not one of {', '.join(stages.STAGES)}", "stage")
        if "stage" in raw and raw["status"] != "xfail":
            fail("stage is for an xfail entry: the stage its failure must come from", "stage")
        entries.append(Expectation.of(source=source, **raw))
    return entries


def parse_share_limits(text: str, filename: str = "<expectations>") -> list[ShareLimit]:
    entries = []
    for raw, source, fail in _raw_entries(text, filename, "eager_share", _limit_fields(), ("max", "reason")):
        if not 0 <= raw["max"] <= 1:
            fail(f"max {raw['max']} is outside 0..1 (a share: 0.2 is 20%)", "max")
        entries.append(ShareLimit.of(source=source, status="limit", **{"test": "*", **raw, "max": float(raw["max"])}))
    return entries


def parse_value_differences(text: str, filename: str = "<expectations>") -> list[ValueDifference]:
    return [ValueDifference.of(source=source, status="accept", **{"test": "*", **raw})
            for raw, source, _fail in _raw_entries(text, filename, "value_difference", _difference_fields(),
                                                   ("reason",))]


def files(project: str | os.PathLike | None = None) -> list[Path]:
    """The files that apply, the first match winning: the project's own (``project``, else
    the setting), then the bundled one."""
    project = project if project is not None else settings.current().get(EXPECTATIONS_ENV)
    chosen = ([Path(project)] if project else []) + [DEFAULT_FILE]
    return list({path.resolve(): path for path in chosen}.values())


def _read(path: str | os.PathLike) -> tuple[str, str]:
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except OSError as error:
        raise ExpectationError(f"{path}:0: cannot read expectations ({error.strerror})") from None


def load(path: str | os.PathLike | None = None, *, project: str | os.PathLike | None = None) -> list[Expectation]:
    """The [[expect]] entries of ``path`` alone, or else of every file that applies
    (``files(project)``) in order; the [[eager_share]] and [[value_difference]] entries are
    checked too."""
    entries = []
    for each in [path] if path is not None else files(project):
        text, name = _read(each)
        parse_share_limits(text, name)
        parse_value_differences(text, name)
        entries += parse(text, name)
    return entries


_LOADED: list[Expectation] | None = None
_LOADED_LIMITS: list[ShareLimit] | None = None


def active() -> list[Expectation]:
    """The expectations of this process: the project's file (DYNAMO_SUITE_EXPECTATIONS) over the bundled one."""
    global _LOADED
    if _LOADED is None:
        _LOADED = load()
    return _LOADED


def active_share_limits() -> list[ShareLimit]:
    """The [[eager_share]] entries of the same files, in the same order."""
    global _LOADED_LIMITS
    if _LOADED_LIMITS is None:
        _LOADED_LIMITS = [limit for path in files() for limit in parse_share_limits(*_read(path))]
    return _LOADED_LIMITS


_LOADED_DIFFERENCES: list[ValueDifference] | None = None


def active_value_differences() -> list[ValueDifference]:
    """The [[value_difference]] entries of the same files, in the same order."""
    global _LOADED_DIFFERENCES
    if _LOADED_DIFFERENCES is None:
        _LOADED_DIFFERENCES = [entry for path in files() for entry in parse_value_differences(*_read(path))]
    return _LOADED_DIFFERENCES


def candidates(test_key: str, torch_version: Version, values: Mapping[str, str | None],
               entries: list[Expectation] | None = None) -> list[Expectation]:
    """Entries that may apply to the test with these axis values; the AOTAutograd condition
    is left to the caller."""
    entries = active() if entries is None else entries
    return [entry for entry in entries if entry.applies_to(test_key, torch_version, values)]


def decide(options: list[Expectation], uses_aot_autograd: Any) -> Expectation | None:
    """The first candidate whose AOTAutograd condition holds; ``uses_aot_autograd`` is a
    zero-argument callable so the backend is probed only when an entry needs it."""
    for entry in options:
        if entry.aot_autograd is None or entry.aot_autograd == uses_aot_autograd():
            return entry
    return None
