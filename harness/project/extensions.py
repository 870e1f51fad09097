"""A backend project's own scenarios and models, run beside the bundled ones in the same
run, reports, isolation, problems and repros.

Where they come from:

* ``scenarios`` (``DYNAMO_SUITE_SCENARIOS``, comma-separated): each a ``.py`` file, a
  directory (its ``test*.py`` files, and those of its packages), or an importable module or
  package; and every entry point of the group ``dynamo_aot_suite.scenarios`` (its module).
* ``models`` (``DYNAMO_SUITE_MODELS``): each a module whose ``MODELS`` is a list of
  ``harness.ModelSpec``, ``module:attr`` or ``path/to/file.py[:attr]`` (a list, one spec, or a
  function returning either); and the entry points of ``dynamo_aot_suite.models``.

A scenario file is imported under the name pytest's default import mode gives it (the
dotted path from the first directory above it without ``__init__.py``, which goes first on
the import path), so the collecting process and the workers agree on its test ids.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from harness import settings

SCENARIO_GROUP = "dynamo_aot_suite.scenarios"
MODEL_GROUP = "dynamo_aot_suite.models"
MODEL_ATTR = "MODELS"


class ExtensionError(ValueError):
    """A project source that cannot be used; the message is the one line the user sees."""


def _sources(setting: str, group: str, current: settings.Settings | None) -> list[tuple[str, str]]:
    """(source, where it was named) from the setting, then from installed entry points."""
    current = settings.current() if current is None else current
    named = [(part.strip(), setting) for part in current.get(setting).split(",") if part.strip()]
    points = sorted(importlib.metadata.entry_points(group=group), key=lambda point: point.name)
    return named + [(point.value, f"entry point {point.name} ({group}, from {_distribution(point)})") for point in points]


def _distribution(point: importlib.metadata.EntryPoint) -> str:
    dist = getattr(point, "dist", None)  # Python 3.10's entry points may not know it
    return dist.name if dist is not None else "an installed package"


def module_name(path: Path) -> tuple[Path, str]:
    """(the directory that goes on the import path, the dotted module name) of a file."""
    path = path.resolve()
    parts = [path.stem] if path.name != "__init__.py" else []
    directory = path.parent
    while (directory / "__init__.py").is_file():
        parts.insert(0, directory.name)
        directory = directory.parent
    return directory, ".".join(parts)


def import_file(path: Path, where: str) -> ModuleType:
    """Import a file under its module name (``module_name``)."""
    base, name = module_name(path)
    if str(base) not in sys.path:
        sys.path.insert(0, str(base))
    module = _import(name, where)
    found = Path(getattr(module, "__file__", "") or "").resolve()
    if found != path.resolve():
        raise ExtensionError(f"{where}: {path} would be imported as '{name}', which is already {found}; "
                             "rename one of them")
    return module


def import_dirs(sources: str) -> list[str]:
    """The directories the scenario files among ``sources`` (a SCENARIOS value) are
    imported from: what a standalone repro puts on its path to find them."""
    dirs = []
    for source in filter(None, (part.strip() for part in sources.split(","))):
        path = Path(source)
        if path.is_file():
            dirs.append(str(module_name(path)[0]))
        elif path.is_dir():
            dirs.append(str(module_name(path / "__init__.py")[0] if (path / "__init__.py").is_file() else path))
    return list(dict.fromkeys(dirs))


def _import(name: str, where: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except Exception as error:  # the user's module: anything it raises is the user's to fix
        raise ExtensionError(f"{where}: importing '{name}' failed: {type(error).__name__}: {error}") from None


def _test_files(directory: Path) -> list[Path]:
    """The files unittest's discovery would load: test*.py here and in packages below."""
    found = sorted(directory.glob("test*.py"))
    for child in sorted(path for path in directory.iterdir() if path.is_dir()):
        if (child / "__init__.py").is_file():
            found += _test_files(child)
    return found


def scenario_files(current: settings.Settings | None = None) -> list[tuple[Path, str]]:
    """Every scenario file of the project, with where it was named."""
    files: list[tuple[Path, str]] = []
    for source, where in _sources(settings.SCENARIOS, SCENARIO_GROUP, current):
        path = Path(source)
        if source.endswith(".py") or "/" in source or path.exists():
            if not path.exists():
                raise ExtensionError(f"{where}: no file or directory {source}")
            chosen = _test_files(path) if path.is_dir() else [path]
            if not chosen:
                raise ExtensionError(f"{where}: {source} holds no test*.py file")
        else:
            module = _import(source.partition(":")[0], where)
            file = Path(getattr(module, "__file__", "") or "")
            chosen = _test_files(file.parent) if file.name == "__init__.py" else [file]
            if not chosen:
                raise ExtensionError(f"{where}: package {source} holds no test*.py module")
        files += [(file.resolve(), where) for file in chosen]
    return list(dict((file, where) for file, where in files).items())


def scenario_modules(current: settings.Settings | None = None) -> list[ModuleType]:
    """The project's scenario modules, imported."""
    return [import_file(path, where) for path, where in scenario_files(current)]


def models(current: settings.Settings | None = None) -> list:
    """The project's models (``harness.ModelSpec``), in the order they were named."""
    from harness.checks.models import ModelSpec

    found: list = []
    for source, where in _sources(settings.MODELS, MODEL_GROUP, current):
        target, _, attr = source.partition(":") if not source.endswith(".py") else (source, "", "")
        if target.endswith(".py") or "/" in target:
            if not Path(target).is_file():
                raise ExtensionError(f"{where}: no file {target}")
            module = import_file(Path(target), where)
        else:
            module = _import(target, where)
        attr = attr or MODEL_ATTR
        if not hasattr(module, attr):
            raise ExtensionError(f"{where}: {module.__name__} has no '{attr}' (a list of harness.ModelSpec)")
        value: Any = getattr(module, attr)
        value = value() if callable(value) and not isinstance(value, ModelSpec) else value
        specs = [value] if isinstance(value, ModelSpec) else value
        if not isinstance(specs, (list, tuple)) or not all(isinstance(spec, ModelSpec) for spec in specs):
            raise ExtensionError(f"{where}: {module.__name__}.{attr} must be a list of harness.ModelSpec")
        found += specs
    return found
