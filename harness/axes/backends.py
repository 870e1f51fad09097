"""Turning what the user typed into a backend, and finding out what kind of backend it is.

A backend spec is one of:

* a name registered with torch (``aot_eager``, ``inductor``, a ``torch_dynamo_backends``
  entry point, or anything a plugin module registered),
* ``package.module:attr`` -- an importable callable,
* ``path/to/file.py:attr`` -- a callable defined in a file anywhere on disk;
* either ending in ``()`` (``thunder.dynamo:ThunderCompiler()``): a class, or a factory,
  called with no arguments once, whose result is the backend.

Registered names are looked up in torch's registry each time the backend compiles, so a
plugin that re-registers ``aot_eager`` is the one that runs.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from harness import compat, settings
from harness.axes import axis
from harness.axes.registry import BACKEND

BACKENDS_ENV = BACKEND.env
IMPORTS_ENV = settings.IMPORTS
DEFAULT_BACKENDS = tuple(BACKEND.default.split(","))


class BackendSpecError(ValueError):
    """A backend spec that cannot be turned into a backend; the message is one line."""


@dataclass(frozen=True)
class Backend:
    """A backend under test.

    ``name`` is the identifier used in test ids (``MutationTests_<name>``); ``spec`` is what
    the user wrote and what a repro command needs.
    """

    spec: str
    name: str
    _load: Callable[[], Callable] = field(repr=False, compare=False)

    def compiler_fn(self) -> Callable:
        return self._load()

    def __call__(self, gm, example_inputs, **kwargs):
        # A registered name goes as a name: with options, torch wraps some backends (inductor).
        backend = self.spec if self.spec in compat.OPTION_WRAPPED_BACKENDS else self.compiler_fn()
        return compat.with_options(backend, kwargs)(gm, example_inputs)


@dataclass(frozen=True)
class BackendProfile:
    """What probing a backend on a tiny function revealed."""

    received_graph: bool
    uses_aot_autograd: bool


def _identifier(text: str) -> str:
    return re.sub(r"\W", "_", text).strip("_") or "backend"


def _load_attr(obj: Any, attr_path: str, spec: str) -> Any:
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise BackendSpecError(
                f"backend '{spec}': '{getattr(obj, '__name__', obj)}' has no attribute '{part}'"
            ) from None
    return obj


def _callable_or_error(obj: Any, spec: str) -> Callable:
    if not callable(obj):
        raise BackendSpecError(
            f"backend '{spec}' is a {type(obj).__name__}, not a callable taking (graph_module, example_inputs)"
        )
    return obj


def _from_file(spec: str, path_text: str, attr: str) -> Backend:
    path = Path(path_text).expanduser().resolve()
    if not path.is_file():
        raise BackendSpecError(f"backend '{spec}': no file {path}; give path/to/file.py:attr")
    module_name = f"_dynamo_suite_backend_{_identifier(str(path))}"
    module = sys.modules.get(module_name)
    if module is None:
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_name] = module
        try:
            module_spec.loader.exec_module(module)
        except Exception as error:
            del sys.modules[module_name]
            raise BackendSpecError(f"backend '{spec}': importing {path} failed: {error!r}") from None
    fn = _callable_or_error(_made(_load_attr(module, attr.removesuffix("()"), spec), attr, spec), spec)
    return Backend(spec=spec, name=_identifier(attr.removesuffix("()").split(".")[-1]), _load=lambda: fn)


def _made(obj: Any, attr: str, spec: str) -> Any:
    """``obj`` itself, or what calling it with no arguments makes, when ``attr`` ends in ``()``."""
    if not attr.endswith("()"):
        return obj
    try:
        return _callable_or_error(obj, spec)()
    except BackendSpecError:
        raise
    except Exception as error:
        raise BackendSpecError(f"backend '{spec}': calling {attr} raised {error!r}") from None


def _from_module(spec: str, module_name: str, attr: str) -> Backend:
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise BackendSpecError(
            f"backend '{spec}': cannot import module '{module_name}' ({error}); is it on PYTHONPATH?"
        ) from None
    except Exception as error:  # a package that breaks on import (on this torch)
        raise BackendSpecError(f"backend '{spec}': importing module '{module_name}' raised {error!r}") from None
    made = _made(_load_attr(module, attr.removesuffix("()"), spec), attr, spec)
    fn = _callable_or_error(made, spec)
    return Backend(spec=spec, name=_identifier(attr.removesuffix("()").split(".")[-1]), _load=lambda: fn)


def _from_registry(spec: str) -> Backend:
    known = compat.registered_backend_names()
    if spec not in known:
        raise BackendSpecError(
            f"unknown backend '{spec}'; registered: {', '.join(known)}; "
            "or give package.module:attr or path/to/file.py:attr"
        )
    _callable_or_error(compat.lookup_backend(spec), spec)
    return Backend(spec=spec, name=_identifier(spec), _load=lambda: compat.lookup_backend(spec))


def resolve_backend(spec: str) -> Backend:
    """Resolve one backend spec, or raise BackendSpecError saying what is wrong."""
    spec = spec.strip()
    if not spec:
        raise BackendSpecError("empty backend spec; give a registered name, package.module:attr or path/to/file.py:attr")
    if ":" in spec:
        target, _, attr = spec.rpartition(":")
        if not target or not attr:
            raise BackendSpecError(f"backend '{spec}': expected package.module:attr or path/to/file.py:attr")
        if target.endswith(".py") or os.sep in target or "/" in target:
            return _from_file(spec, target, attr)
        return _from_module(spec, target, attr)
    return _from_registry(spec)


def import_plugins(text: str | None = None) -> None:
    """Import the modules named in DYNAMO_SUITE_IMPORTS, which may register backends."""
    text = settings.current().get(IMPORTS_ENV) if text is None else text
    for module_name in filter(None, (part.strip() for part in text.split(","))):
        try:
            importlib.import_module(module_name)
        except ImportError as error:
            raise BackendSpecError(f"{IMPORTS_ENV}: cannot import '{module_name}' ({error})") from None


def resolve_backends(text: str) -> list[Backend]:
    """Resolve a comma-separated list of specs; names in test ids are kept unique."""
    backends: list[Backend] = []
    used: set[str] = set()
    for spec in filter(None, (part.strip() for part in text.split(","))):
        backend = resolve_backend(spec)
        name, n = backend.name, 2
        while name in used:
            name, n = f"{backend.name}_{n}", n + 1
        used.add(name)
        backends.append(Backend(spec=backend.spec, name=name, _load=backend._load))
    if not backends:
        raise BackendSpecError(f"{BACKENDS_ENV} names no backend; e.g. {','.join(DEFAULT_BACKENDS)}")
    return backends


def selected_backends() -> tuple[Backend, ...]:
    """The backends under test in this run (harness.settings), or the defaults."""
    current = settings.current()
    return _resolved(current.get(BACKENDS_ENV, BACKEND.default), current.get(IMPORTS_ENV))


@functools.cache
def _resolved(specs: str, imports: str) -> tuple[Backend, ...]:
    import_plugins(imports)
    return tuple(resolve_backends(specs))


def package_of(backend: Backend) -> str:
    """``name version`` of the installed distribution that provides the backend
    (``openvino 2026.4.1``; ``torch 2.13.0+cpu`` for torch's own); "" when none does (a file,
    a module on the path that no distribution installed): from the entry point that registers
    its name, the module its spec names, or the module of its compiler."""
    import importlib.metadata

    spec = backend.spec
    for entry_point in importlib.metadata.entry_points(group="torch_dynamo_backends"):
        if entry_point.name == spec and entry_point.dist is not None:
            return f"{entry_point.dist.name} {entry_point.dist.version}"
    if ":" in spec and not spec.split(":")[0].endswith(".py"):
        module = spec.split(":")[0]
    elif ":" in spec:
        return ""
    else:
        try:
            compiler = backend.compiler_fn()
        except Exception:  # a backend that cannot load says so when its tests run
            return ""
        target = getattr(compiler, "func", compiler)  # a functools.partial
        module = getattr(target, "__module__", None) or type(target).__module__ or ""
    top = module.split(".")[0]
    try:
        distributions = importlib.metadata.packages_distributions().get(top, [])
    except Exception:
        distributions = []
    for name in distributions:
        try:
            return f"{name} {importlib.metadata.version(name)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return ""


class _BackendBehaviour(axis.Behaviour):
    """A class per backend under test, named by the backend's name and carrying it."""

    def values_for(self, family: type, selected: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(backend.name for backend in selected_backends())

    def class_attributes(self, value: str) -> dict[str, Any]:
        return {"backend": next(backend for backend in selected_backends() if backend.name == value)}


BEHAVIOUR = _BackendBehaviour()


def register_backend(compiler_fn: Callable, name: str) -> Callable:
    """Register ``compiler_fn`` under ``name`` with torch, replacing any backend of that name."""
    compat.replace_registered_backend(name, compiler_fn)
    return compiler_fn


_PROFILES: dict[str, BackendProfile] = {}


def _probe_target(x):
    return (x.sin() * 2).sum()


def probe_backend(backend: Backend) -> BackendProfile:
    """Compile a tiny differentiable function with ``backend`` and look at what came back.

    A backend uses AOTAutograd when the compiled output's autograd node is AOTAutograd's
    compiled function rather than the eager op's. Cached per spec for the process.
    """
    profile = _PROFILES.get(backend.spec)
    if profile is None:
        import torch

        from harness.measure.counters import CompileCounterWithBackend

        counter = CompileCounterWithBackend(backend)
        compiled = torch.compile(_probe_target, backend=counter, fullgraph=True)
        with torch.enable_grad():
            out = compiled(torch.ones(3, requires_grad=True))
        node_name = type(out.grad_fn).__name__ if out.grad_fn is not None else ""
        profile = BackendProfile(
            received_graph=counter.frame_count > 0,
            uses_aot_autograd="CompiledFunction" in node_name,
        )
        _PROFILES[backend.spec] = profile
    return profile
