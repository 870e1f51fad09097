"""What changes between calls, proven able to fail.

A Dynamo that lost a kind of guard (torch patched here, not shipped): for each state change
that needs a graph of its own, building none of the guards its declaration names
(test/dynamo/state_changes.py) makes its test fail, and with them it passes. So each
declared kind of guard is one the family depends on, not one it merely meets.

The faulty backends of faulty_backends/state.py are in test_faulty_backends.FAULTS; the
model faults that used to reach only the nightly models, and eval-mode BatchNorm folded
wrong, are caught by the default run's module tests here (from the run the proofs share).
"""

from __future__ import annotations

import unittest

from harness import compat
from harness.axes import registry
from test.dynamo import test_state_changes
from test.dynamo.state_changes import STATE_CHANGES
from test.harness import shared_runs

# Its own seconds (test/harness/budgets.py, shared runs apart): 40 s measured 2026-11-29 (each
# change run twice on aot_eager, with and without its guards).
TIME_BUDGET_S = 90

FAULTY_MODULE = "test.harness.faulty_backends"
MODULES = "test_training_loop.ModuleStateTests"
# The module faults of faulty_backends/models.py and the module test each must fail.
# folds_batch_norm_wrong is wrong only in the eval step, the one BatchNorm that does not train.
MODULE_FAULTS = {"skips_batch_norm_stats": "test_batch_norm_trains_then_evaluates",
                 "folds_batch_norm_wrong": "test_batch_norm_trains_then_evaluates",
                 "miscompiles_big_graphs": "test_big_graph_forward_and_backward"}
MODULE_RUN = shared_runs.DEFAULT.part(
    [f"{FAULTY_MODULE}:{fault}" for fault in MODULE_FAULTS],
    [registry.test_id(f"{MODULES}.{test}", backend=fault) for fault, test in MODULE_FAULTS.items()])


def _run(test_name: str, disabled: tuple[str, ...] = ()) -> tuple[unittest.TestResult, set[str]]:
    """A change's test on aot_eager, in this process, with the ``disabled`` kinds of guard
    never built; and the kinds Dynamo built."""
    test = test_state_changes.StateChangeTests_aot_eager(test_name)
    result = unittest.TestResult()
    with compat.guard_kinds_called(disabled=disabled) as called:
        test.run(result)
    return result, set(called)


def _outcome(result: unittest.TestResult) -> str:
    if result.failures or result.errors:
        return "failed: " + (result.failures + result.errors)[0][1].strip().splitlines()[-1][:200]
    return "expected failure" if result.expectedFailures else "passed"


class GuardKindTests(unittest.TestCase):
    def test_each_change_fails_without_the_guards_it_declares(self):
        known = set(compat.guard_kinds())
        for change in STATE_CHANGES:
            declared = tuple(kind for kind in change.guards if kind in known)
            if not (change.recompiles and declared):
                continue  # a reused graph needs no guard to fail; nothing declared, nothing to take away
            # The _no_grad twin too: the default tier takes it, where it costs less, as a
            # killer of the same guards' faults.
            twins = (f"test_{change.name}_no_grad",) if change.under_no_grad else ()
            for test_name in (f"test_{change.name}", *twins):
                with self.subTest(test=test_name):
                    result, called = _run(test_name)
                    if result.expectedFailures:
                        continue  # a torch limitation on record (harness/expectations.toml)
                    self.assertEqual(_outcome(result), "passed")
                    self.assertEqual(set(declared) - called, set(), "declared kinds of guard Dynamo did not build")
                    without, _ = _run(test_name, declared)
                    self.assertTrue(_outcome(without).startswith("failed"),
                                    f"without {declared} guards the change still went noticed: {_outcome(without)}")


class ModuleFaultTests(unittest.TestCase):
    def test_module_faults_fail_the_default_module_tests(self):
        outcomes = {test["backend"]: test["outcome"] for test in MODULE_RUN.tests()}
        self.assertEqual(outcomes, {fault: "FAIL" for fault in MODULE_FAULTS}, MODULE_RUN.describe())


if __name__ == "__main__":
    unittest.main()
