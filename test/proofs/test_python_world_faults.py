"""The Python world watcher (harness/checks/observations/python_world.py) proven able to fail.

A Dynamo that traces each kind of Python side effect and does not replay it
(test/harness/side_effect_dropping_dynamo.py: container mutations, attribute stores, globals,
closure cells) fails exactly the side-effect scenarios of that kind
(test_backend_contract.PythonSideEffectTests), and the same scenarios pass without the patch.
With the watchers switched off (OBSERVATIONS emptied) the patched Dynamo passes them all: the
watcher, not the scenarios, is what sees the loss. The upstream bugs stay expected
failures whatever is dropped, and pass without the watcher.

In this process, on eager: the fault is Dynamo's, before any backend.
"""

from __future__ import annotations

import unittest
from unittest import mock

from harness.checks.observations import watched_calls
from test.dynamo import test_backend_contract
from test.harness.side_effect_dropping_dynamo import KINDS, dropping

# Its own seconds (test/harness/budgets.py): 20 s measured 2026-12-06 (26 runs of a scenario
# of about 0.4 s on eager).
TIME_BUDGET_S = 45

# Named where it runs: a TestCase class bound in this module would be collected with it.
FAMILY = "PythonSideEffectTests_eager"
# The scenarios each kind of dropped side effect must fail, and no other.
CAUGHT = {
    "containers": {"test_list_append", "test_list_extend_and_clear", "test_dict_set_del_pop"},
    "attributes": {"test_attribute_set_on_existing_object", "test_attribute_set_on_object_made_in_the_call",
                   "test_module_attribute_counter"},
    "globals": {"test_global_rebound"},
    "cells": {"test_closure_cell_rebound"},
}
# Open upstream bugs only the watcher sees (xfail): pytorch#198189, #197896, #145445 (a random.Random
# argument: the watcher compares its state), #196173.
UPSTREAM = {"test_ordered_dict_move_to_end", "test_helper_class_mutating_its_closure", "test_random_instance_passed_in",
            "test_object_identity_flipped_each_call"}
# The rest: Python protocols (iteration, descriptors, the random module) whose scenarios
# compare their own results, and pytorch#198190 (a returned generator), which the scenario sees.
OWN_CHECKS = {"test_generator_expression_with_a_filter": "passed", "test_iterator_resumed_after_next": "passed",
              "test_property_setter_and_class_reassigned": "passed", "test_random_module_shuffles_a_list": "passed",
              "test_generator_returned_to_the_caller": "expected failure"}
SCENARIOS = sorted(set().union(*CAUGHT.values()))


def _outcome(name: str) -> str:
    result = unittest.TestResult()
    getattr(test_backend_contract, FAMILY)(name).run(result)
    if result.failures or result.errors:
        return "failed: " + (result.failures + result.errors)[0][1].strip().splitlines()[-1][:300]
    if result.expectedFailures:
        return "expected failure"
    if result.unexpectedSuccesses:
        return "unexpected success"
    return "skipped" if result.skipped else "passed"


class PythonWorldFaultTests(unittest.TestCase):
    def test_every_kind_and_upstream_bug_has_its_scenario(self):
        names = {name for name in dir(getattr(test_backend_contract, FAMILY)) if name.startswith("test_")}
        self.assertEqual(set(SCENARIOS) | UPSTREAM | set(OWN_CHECKS), names)
        self.assertEqual(set(CAUGHT), set(KINDS))

    def test_the_scenarios_pass_on_dynamo_as_it_is(self):
        for name in SCENARIOS:
            with self.subTest(name):
                self.assertEqual(_outcome(name), "passed")
        for name in UPSTREAM:
            with self.subTest(name):
                self.assertEqual(_outcome(name), "expected failure")
        self.assertEqual({name: _outcome(name) for name in OWN_CHECKS}, OWN_CHECKS)

    def test_each_kind_dropped_fails_its_scenarios_and_no_other(self):
        for kind in KINDS:
            with self.subTest(kind), dropping(kind) as dropped:
                outcomes = {name: _outcome(name) for name in SCENARIOS}
                self.assertTrue(dropped, f"the patch dropped no {kind} side effect")
                failed = {name for name, outcome in outcomes.items() if outcome.startswith("failed")}
                self.assertEqual(failed, CAUGHT[kind], outcomes)
                for name in CAUGHT[kind]:
                    self.assertIn("the Python world after compiled call", outcomes[name])
                self.assertEqual({name: _outcome(name) for name in sorted(UPSTREAM)},
                                 {name: "expected failure" for name in sorted(UPSTREAM)})

    def test_without_the_watcher_each_kind_dropped_passes(self):
        with mock.patch.object(watched_calls, "OBSERVATIONS", ()):
            for kind in KINDS:
                with self.subTest(kind), dropping(kind):
                    self.assertEqual({name: _outcome(name) for name in sorted(CAUGHT[kind])},
                                     {name: "passed" for name in sorted(CAUGHT[kind])})
            for name in sorted(UPSTREAM):
                with self.subTest(name):
                    self.assertEqual(_outcome(name), "unexpected success")


if __name__ == "__main__":
    unittest.main()
