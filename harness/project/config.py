"""A backend project's configuration: the ``[tool.dynamo-aot-suite]`` section of its
``pyproject.toml``, so that its CI job and its developers run the suite with one word.

    [tool.dynamo-aot-suite]
    backend = ["mycc.dynamo:backend", "aot_eager"]   # what --backend takes; a list or "a,b"
    imports = ["mycc.register"]                       # modules imported first (DYNAMO_SUITE_IMPORTS)
    expectations = "suite-expectations.toml"          # the project's own, read over the bundled ones
    scenarios = ["tests/suite"]                       # the project's scenario modules: paths or modules
    unsupported = ["training", "float64"]             # what the backend does not do (docs/scope.md)
    models = ["mycc.suite_models"]                    # modules whose MODELS join the model zoo
    report-dir = "build/suite-reports"

Every other key is a long option of the command without its dashes (each run setting's is
declared in ``harness.project.run_settings``: ``tier``, ``variants``,
``dtypes``, ``device``, ``max-eager-share``, ``perf-budget``, ``perf-threads``, ``op-sweep``, ``generated``, ``jobs``,
``timeout``, ``durations``, ``fail-on``). The file is the nearest ``pyproject.toml`` with the
section, from the current directory up; relative paths in it are relative to its directory.
The command line wins over the environment (``DYNAMO_SUITE_*``), which wins over the file.
A mistake is one line, ``pyproject.toml:LINE: what is wrong``.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from harness import settings
from harness.axes import registry
from harness.project import run_settings

FILE_NAME = "pyproject.toml"
SECTION = ("tool", "dynamo-aot-suite")
HEADER = "[tool.dynamo-aot-suite]"
_HEADER_LINE = re.compile(r"\[\s*tool\s*\.\s*[\"']?dynamo-aot-suite[\"']?\s*\]")  # the header as TOML allows it


class ConfigError(ValueError):
    """A mistake in the section; the message is one line starting with file:line."""


@dataclass(frozen=True)
class Key:
    """One key of the section: what it sets and what it takes."""

    name: str
    setting: str = ""  # the setting it gives (an environment name), or
    option: str = ""  # the command-line option's destination it gives a default to
    kind: str = "text"  # text | list (a TOML array or comma-separated text) | path | paths | number
    help: str = ""


def keys() -> dict[str, Key]:
    """Every key the section takes: one per axis (its option's name), one per run setting that
    declares one (harness.project.run_settings), then the runner's options."""
    axes = [Key(axis.option.lstrip("-"), setting=axis.env, kind="text" if axis.per_run else "list")
            for axis in registry.AXES]
    declared = [Key(setting.key, setting=setting.env, kind=setting.kind) for setting in run_settings.in_project()]
    options = [
        Key("report-dir", option="report_dir", kind="path"),
        Key("durations", option="durations", kind="path"),
        Key("jobs", option="jobs", kind="number"),
        Key("timeout", option="timeout", kind="number"),
        Key("fail-on", option="fail_on"),
    ]
    return {key.name: key for key in axes + declared + options}


@dataclass(frozen=True)
class ProjectConfig:
    """The section as read: settings and option defaults as text, each with its line."""

    path: Path | None = None  # None: no pyproject.toml with the section
    settings: dict[str, str] = field(default_factory=dict)  # environment name -> value
    options: dict[str, Any] = field(default_factory=dict)  # argparse destination -> value
    lines: dict[str, int] = field(default_factory=dict)  # setting or destination -> its line

    @property
    def directory(self) -> Path | None:
        return self.path.parent if self.path else None

    def where(self, name: str) -> str | None:
        """``file:line: key`` for a setting or option this file gave, else None."""
        if self.path is None or name not in self.lines:
            return None
        key = next(key.name for key in keys().values() if name in (key.setting, key.option))
        return f"{_shown(self.path)}:{self.lines[name]}: {key}"


def find(start: Path | None = None) -> Path | None:
    """The nearest pyproject.toml with the section, from ``start`` (the current directory) up."""
    directory = (start or Path.cwd()).resolve()
    for candidate in (directory, *directory.parents):
        path = candidate / FILE_NAME
        if path.is_file() and _has_section(path):
            return path
    return None


def _has_section(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    return any(_HEADER_LINE.match(line.strip()) for line in text.splitlines())


def load(path: Path | None = None) -> ProjectConfig:
    """The section of ``path`` (default: the one ``find`` finds); empty when there is none."""
    path = path if path is not None else find()
    if path is None:
        return ProjectConfig()
    text = path.read_text(encoding="utf-8")
    shown = _shown(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line = re.search(r"line (\d+)", str(error))
        raise ConfigError(f"{shown}:{line.group(1) if line else 1}: not valid TOML: {error}") from None
    section = data
    for part in SECTION:
        section = section.get(part, {}) if isinstance(section, dict) else {}
    header, key_lines = _section_lines(text)
    if not isinstance(section, dict):
        raise ConfigError(f"{shown}:{header}: {HEADER} must be a table")
    known = keys()
    config = ProjectConfig(path=path)
    for name, value in section.items():
        line = key_lines.get(name, header)
        if name not in known:
            raise ConfigError(f"{shown}:{line}: unknown key '{name}' in {HEADER}; keys: {', '.join(known)}")
        key = known[name]
        text_value = _as_text(key, value, path.parent, f"{shown}:{line}: {name}")
        target = key.setting or key.option
        if key.setting:
            config.settings[key.setting] = text_value
        else:
            config.options[key.option] = text_value
        config.lines[target] = line
    return config


def _as_text(key: Key, value: Any, directory: Path, where: str) -> str:
    """The value as the command line would give it, relative paths made absolute."""
    if key.kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ConfigError(f"{where} must be a number, not {_type(value)}")
        return str(value)
    if key.kind in ("list", "paths"):
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(item, str) for item in items):
            raise ConfigError(f"{where} must be a string or an array of strings, not {_type(value)}")
        items = [part.strip() for item in items for part in item.split(",") if part.strip()]
        if key.setting == settings.BACKENDS:
            items = [_absolute_spec(item, directory) for item in items]
        if key.kind == "paths":
            items = [_absolute_source(item, directory) for item in items]
        return ",".join(items)
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a string, not {_type(value)}")
    return str(directory / value) if key.kind == "path" and value.strip() else value


def _absolute_spec(spec: str, directory: Path) -> str:
    """``path/to/file.py:attr`` relative to the file's directory; other specs unchanged."""
    path, colon, attr = spec.rpartition(":")
    if colon and path.endswith(".py") and not Path(path).is_absolute():
        return f"{directory / path}:{attr}"
    return spec


def _absolute_source(source: str, directory: Path) -> str:
    """A scenario or model source: a path (relative to the file) or a module name."""
    path = source.partition(":")[0]
    if "/" in path or path.endswith(".py") or (directory / path).exists():
        return str(directory / source)
    return source


def _type(value: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array",
            dict: "a table"}.get(type(value), type(value).__name__)


def _section_lines(text: str) -> tuple[int, dict[str, int]]:
    """The section's header line and the line of each of its keys."""
    header, key_lines, inside = 1, {}, False
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("["):
            inside = _HEADER_LINE.match(stripped) is not None
            header = number if inside else header
        elif inside and (match := re.match(r"[\"']?([A-Za-z_][\w-]*)[\"']?\s*=", stripped)):
            key_lines.setdefault(match.group(1), number)
    return header, key_lines


def _shown(path: Path) -> str:
    """The file's path relative to the current directory when it is below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
