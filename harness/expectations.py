"""Expected failures and skips, kept as data apart from the tests.

The data file is TOML; each ``[[expect]]`` table is one entry:

    [[expect]]
    test = "test_aot_autograd.LSTMTests.test_lstm_grad_enabled"   # glob: module.Family.test
    backend = "*"            # glob over backend names in test ids (default "*")
    variant = "*"            # glob over variant names (harness.variants; default "*": all)
    device = "*"             # glob over the run's device type: cpu, cuda... (harness.device; default "*")
    dtype = "*"              # glob over the test's dtype: float32, bfloat16, float16 (harness.dtypes)
    torch = ">=2.9"          # packaging specifier on the running torch (default: any)
    aot_autograd = true      # optional: only for backends that do / do not use AOTAutograd
    status = "xfail"         # "xfail" or "skip"
    reason = "why, in one line"

Entries are validated on load; a mistake is reported as ``file:line: what is wrong``.
The first entry that matches a test decides its expectation.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

EXPECTATIONS_ENV = "DYNAMO_SUITE_EXPECTATIONS"
DEFAULT_FILE = Path(__file__).with_name("expectations.toml")
STATUSES = ("xfail", "skip")
_FIELDS = {"test": str, "backend": str, "variant": str, "device": str, "dtype": str, "torch": str, "aot_autograd": bool, "status": str,
           "reason": str}
_REQUIRED = ("test", "status", "reason")


class ExpectationError(ValueError):
    """Malformed expectations data; the message is one line starting with file:line."""


@dataclass(frozen=True)
class Expectation:
    test: str
    status: str
    reason: str
    backend: str = "*"
    variant: str = "*"
    device: str = "*"
    dtype: str = "*"
    torch: str = ""
    aot_autograd: bool | None = None
    source: str = ""  # file:line of the entry

    def applies_to(self, test_key: str, backend_name: str | None, torch_version: Version,
                   variant_name: str = "static", device_type: str = "cpu", dtype_name: str = "float32") -> bool:
        """Everything but the AOTAutograd condition, which needs a probe of the backend."""
        if not fnmatch.fnmatchcase(test_key, self.test):
            return False
        if not fnmatch.fnmatchcase(backend_name or "", self.backend):
            return False
        if not fnmatch.fnmatchcase(variant_name, self.variant):
            return False
        if not fnmatch.fnmatchcase(device_type, self.device):
            return False
        if not fnmatch.fnmatchcase(dtype_name, self.dtype):
            return False
        return not self.torch or SpecifierSet(self.torch).contains(torch_version, prereleases=True)


def _entry_lines(text: str) -> list[tuple[int, dict[str, int]]]:
    """For each ``[[expect]]`` table in order: its header line and the line of each key."""
    tables: list[tuple[int, dict[str, int]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("[["):
            tables.append((number, {}))
        elif tables and (match := re.match(r"([A-Za-z_][\w-]*)\s*=", stripped)):
            tables[-1][1].setdefault(match.group(1), number)
    return tables


def parse(text: str, filename: str = "<expectations>") -> list[Expectation]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line = re.search(r"line (\d+)", str(error))
        raise ExpectationError(f"{filename}:{line.group(1) if line else 1}: not valid TOML: {error}") from None
    unknown_tables = set(data) - {"expect"}
    if unknown_tables:
        raise ExpectationError(f"{filename}:1: unknown table(s) {sorted(unknown_tables)}; entries are [[expect]] tables")
    raw_entries = data.get("expect", [])
    if not isinstance(raw_entries, list):
        raise ExpectationError(f"{filename}:1: 'expect' must be written as [[expect]] tables")
    lines = _entry_lines(text)
    entries = []
    for index, raw in enumerate(raw_entries):
        header, key_lines = lines[index] if index < len(lines) else (1, {})

        def fail(message: str, key: str | None = None) -> None:
            raise ExpectationError(f"{filename}:{key_lines.get(key, header)}: {message}")

        if not isinstance(raw, dict):
            fail(f"entry {index + 1} is a {type(raw).__name__}; each entry must be a table written [[expect]]")
        for key, value in raw.items():
            if key not in _FIELDS:
                fail(f"unknown key '{key}'; allowed: {', '.join(_FIELDS)}", key)
            if not isinstance(value, _FIELDS[key]):
                fail(f"'{key}' must be a {_FIELDS[key].__name__}, not {type(value).__name__}", key)
        for key in _REQUIRED:
            if key not in raw:
                fail(f"missing '{key}'")
        if raw["status"] not in STATUSES:
            fail(f"status '{raw['status']}' is not one of {', '.join(STATUSES)}", "status")
        if not raw["reason"].strip():
            fail("reason is empty; say why the test is expected to fail", "reason")
        try:
            SpecifierSet(raw.get("torch", ""))
        except InvalidSpecifier:
            fail(f"torch '{raw['torch']}' is not a version specifier like '>=2.9,<2.13'", "torch")
        entries.append(Expectation(source=f"{filename}:{header}", **raw))
    return entries


def load(path: str | os.PathLike | None = None) -> list[Expectation]:
    path = Path(path or os.environ.get(EXPECTATIONS_ENV) or DEFAULT_FILE)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ExpectationError(f"{path}:0: cannot read expectations ({error.strerror})") from None
    return parse(text, str(path))


_LOADED: list[Expectation] | None = None


def active() -> list[Expectation]:
    """The expectations of this process (DYNAMO_SUITE_EXPECTATIONS or the bundled file)."""
    global _LOADED
    if _LOADED is None:
        _LOADED = load()
    return _LOADED


def candidates(test_key: str, backend_name: str | None, torch_version: Version,
               entries: list[Expectation] | None = None, variant_name: str = "static",
               device_type: str = "cpu", dtype_name: str = "float32") -> list[Expectation]:
    """Entries that may apply; the AOTAutograd condition is left to the caller."""
    entries = active() if entries is None else entries
    return [entry for entry in entries
            if entry.applies_to(test_key, backend_name, torch_version, variant_name, device_type, dtype_name)]


def decide(options: list[Expectation], uses_aot_autograd: Any) -> Expectation | None:
    """The first candidate whose AOTAutograd condition holds; ``uses_aot_autograd`` is a
    zero-argument callable so the backend is probed only when an entry needs it."""
    for entry in options:
        if entry.aot_autograd is None or entry.aot_autograd == uses_aot_autograd():
            return entry
    return None
