"""Tensor hooks and defaults of test/dynamo/state_changes.py, proven able to fail.

A Dynamo that forgets the tensor hooks compiled code registers, and one that guards no
default argument a called function reads (test/harness/dynamo_faults.py: torch patched here,
not shipped): each fails exactly the state changes about it among those of hooks and
defaults, and without the fault they all pass. Run in this process on aot_eager, as
test_state_change_faults.py runs its changes.

By hand, 2026-12-06, the whole family under each fault (``DYNAMO_SUITE_IMPORTS=
test.harness.hookless_dynamo`` / ``unguarded_defaults_dynamo``, ``--tier nightly``) fails these
and nothing else; at 312002a, before these changes existed, it failed nothing (83 tests).
"""

from __future__ import annotations

import contextlib
import unittest

from test.dynamo import test_state_changes
from test.dynamo.state_changes import STATE_CHANGES
from test.harness import dynamo_faults

# Its own seconds (test/harness/budgets.py): 16 s measured 2026-12-06 on a busy machine (9 changes,
# three times each).
TIME_BUDGET_S = 40

# fault of dynamo_faults -> the state changes it must fail (every other one below passes)
FAULTS = {
    "drops_tensor_hooks": ("intermediate_hook", "hook_closure", "recording_hook", "input_hook"),
    # The tensor default reaches the graph as an input (no guard needed), and the compiled
    # function's own default is bound by Python before Dynamo sees the frame: both stay right.
    "unguarded_defaults": ("default_rebound", "keyword_default_rebound", "mutable_default"),
}
CHANGES = (*FAULTS["drops_tensor_hooks"], *FAULTS["unguarded_defaults"], "tensor_default_replaced",
           "own_default_rebound")


def _failed(fault: str | None) -> dict[str, str]:
    """The changes of CHANGES whose test fails on aot_eager under ``fault``: their first message line."""
    failed = {}
    with getattr(dynamo_faults, fault)() if fault else contextlib.nullcontext():
        for name in CHANGES:
            result = unittest.TestResult()
            test_state_changes.StateChangeTests_aot_eager(f"test_{name}").run(result)
            problems = result.failures + result.errors
            if problems or result.skipped or result.expectedFailures:
                failed[name] = problems[0][1].strip().splitlines()[-1][:200] if problems else "not run"
    return failed


class HookAndDefaultFaultTests(unittest.TestCase):
    def test_the_changes_are_declared(self):
        self.assertEqual(set(CHANGES) - {change.name for change in STATE_CHANGES}, set())

    def test_each_passes_with_dynamo_as_shipped(self):
        self.assertEqual(_failed(None), {})

    def test_each_fault_fails_exactly_the_changes_about_it(self):
        for fault, caught in FAULTS.items():
            with self.subTest(fault=fault):
                failed = _failed(fault)
                self.assertEqual(sorted(failed), sorted(caught), failed)


if __name__ == "__main__":
    unittest.main()
