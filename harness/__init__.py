"""dynamo-aot-suite's scenario library: what the scenarios import.

``from harness import …`` is the public surface: the names below and the modules scenarios
use by name (``from harness import variants, dtypes, device, tiers``). Inside, the library
is in rooms, one job each, lower rooms never importing higher ones
(``test/harness/test_layout.py``):

* ``compat`` (the one place that knows torch versions), ``state`` (global state: seeding,
  snapshots, leaks), ``errors``, ``settings`` (the run's configuration, built once) and
  ``outcomes`` (every outcome a test can have, and how each report shows and judges it);
* ``features``: the catalogue of conditions a graph or a call shows, read from the graphs,
  and the scope a backend declares;
* ``measure``: what ran (graphs received, guard failures, eager share, graphs for repros);
* ``checks``: comparison with eager (values, accuracy, graphs, one operator, models);
* ``axes``: backend, variant, dtype and device, declared once;
* ``testcase``: the base TestCases, class generation, expectations and tiers;
* ``fuzz``: seeded program generators and the differential check that runs each program
  eagerly and through the backend, shrinking one that disagrees.

The machinery of ``run_tests.py`` lives in ``harness.run``, what its workers run in
``harness.worker``, the reports in ``harness.report``, the repros for upstream issues in ``harness.repros``
and what a backend project brings (its
configuration, scenarios, models) in ``harness.project``; nothing in the library imports
any of them. Names are imported on first
use, so the runner can import ``harness.testcase.tiers`` (and say that torch is missing)
without importing torch.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "harness.axes.backends": (
        "Backend", "BackendProfile", "BackendSpecError", "probe_backend", "register_backend",
        "resolve_backend", "resolve_backends", "selected_backends",
    ),
    "harness.testcase.base": ("BackendTestCase", "DynamoTestCase", "for_each_backend"),
    "harness.checks.compare": (
        "assert_close", "assert_same_aliasing", "assert_same_autograd_metadata", "assert_same_outputs_and_grads",
        "assert_same_strides", "clone_input", "clone_inputs", "rand_strided", "tolerance", "weighted_loss",
    ),
    "harness.checks.graphs": ("GraphRecorder", "graph_text", "in_place_nodes", "writes_into_inputs"),
    "harness.checks.opcheck": ("OpCheckFailure", "op_check", "random_op_check"),
    "harness.checks.updates": ("Snapshot", "assert_same_updates", "named_state"),
    "harness.axes.second_size": ("has_symbolic_sizes",),
    "harness.testcase.deadline": ("seconds_left",),
    "harness.features.recorder": ("of_values", "variants_called"),
    "harness.features.views": ("meta_of",),
    "harness.compat": ("normalize_guard_reason",),
    "harness.measure.counters": ("CompileCounter", "CompileCounterWithBackend", "count_ops"),
    "harness.testcase.expectations": ("Expectation", "ExpectationError"),
    "harness.checks.models": ("ModelSpec", "check_eval", "check_train", "missing_library"),
    "harness.measure.guards": ("GuardFailureRecorder",),
    "harness.features.scope": ("needs",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
# The modules scenarios import by their short name (``from harness import variants``), and
# every module's name from before the library was split into rooms.
_SUBMODULES = {
    "accuracy": "harness.checks.accuracy", "backends": "harness.axes.backends", "case": "harness.testcase.base",
    "callers": "harness.axes.callers", "capabilities": "harness.features.scope",
    "compare": "harness.checks.compare", "counters": "harness.measure.counters",
    "deadline": "harness.testcase.deadline", "device": "harness.axes.device",
    "distributed": "harness.testcase.distributed",
    "differential": "harness.fuzz.differential", "dtypes": "harness.axes.dtypes",
    "eager_share": "harness.measure.eager_share", "expectations": "harness.testcase.expectations",
    "graphs": "harness.checks.graphs", "guards": "harness.measure.guards", "models": "harness.checks.models",
    "opcheck": "harness.checks.opcheck", "programs": "harness.fuzz.programs", "repro": "harness.measure.repro",
    "second_size": "harness.axes.second_size", "share_limit": "harness.measure.share_limit",
    "smoke": "harness.testcase.smoke", "tiers": "harness.testcase.tiers", "variants": "harness.axes.variants",
    "value_domains": "harness.checks.value_domains", "value_semantics": "harness.checks.value_semantics",
    "catalogue": "harness.features.catalogue",
    "compute": "harness.fuzz.compute", "perf": "harness.testcase.perf", "extensions": "harness.project.extensions",
    "generator": "harness.fuzz.generator",
}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        value = importlib.import_module(_SUBMODULES[name])
    elif name in _MODULE_OF:
        value = getattr(importlib.import_module(_MODULE_OF[name]), name)
    else:
        raise AttributeError(f"module 'harness' has no attribute '{name}'")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
