"""dynamo-aot-suite's scenario library: what the scenarios import. Backends
(``backends``), counters, guard-failure capture (``guards``), comparison with eager
(``compare``), global-state isolation (``state``), expectations, tiers, reading AOTAutograd's
graphs (``graphs``), one-operator checks (``opcheck``), the base TestCases and per-backend
class generation (``case``), and ``compat``, the one place that knows torch versions.

The machinery of ``run_tests.py`` lives in ``harness.run`` and the reports in
``harness.report``; nothing in this package imports either (``test/harness/test_layout.py``).
Names are imported on first use, so the runner can import ``harness.tiers`` (and say that
torch is missing) without importing torch.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "harness.backends": (
        "Backend", "BackendProfile", "BackendSpecError", "probe_backend", "register_backend",
        "resolve_backend", "resolve_backends", "selected_backends",
    ),
    "harness.case": ("BackendTestCase", "DynamoTestCase", "for_each_backend"),
    "harness.compare": (
        "assert_close", "assert_same_outputs_and_grads", "clone_input", "clone_inputs",
        "rand_strided", "tolerance",
    ),
    "harness.compat": ("normalize_guard_reason",),
    "harness.counters": ("CompileCounter", "CompileCounterWithBackend", "count_ops"),
    "harness.expectations": ("Expectation", "ExpectationError"),
    "harness.guards": ("GuardFailureRecorder",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
