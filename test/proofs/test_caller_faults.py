"""The ways callers call (harness/axes/callers.py) catch what breaks each way, and nothing else.

Each fault is right for a caller in one thread that leaves what it gets alone and uses no
hooks, and wrong for one way of calling: a backend staging results in one buffer shared by
all threads, one running its calls inside saved-tensor hooks of its own, one handing out
the same output buffers on every call (test/harness/faulty_backends), and a Dynamo whose
compiled modules skip the module's hooks (test/harness/module_hookless_dynamo.py). Each must fail
its way's test of CallerTests (the default run's) and, under its variant, a scenario of
another family; aot_eager must pass the same tests.
"""

from __future__ import annotations

import unittest
from dataclasses import dataclass

from harness.axes import registry
from test.harness import shared_runs

# Its own seconds (test/harness/budgets.py; its two runs of its own options included): 105 s alone with
# the DEFAULT part, measured 2026-12-03 on 2 cores.
TIME_BUDGET_S = 150

FAULTY_MODULE = "test.harness.faulty_backends"
CONTROL = "aot_eager"
CALLERS = "test_backend_contract.CallerTests"
CAUGHT = ("FAIL", "ERROR")


@dataclass(frozen=True)
class CallerFault:
    backend: str  # an attribute of test.harness.faulty_backends, or the control under a patched Dynamo
    way: str  # the variant of its way of calling
    caller_test: str  # CallerTests' test of that way
    scenario: str  # a scenario of another family that the variant makes fail


FAULTS = (
    CallerFault("stages_results_in_a_shared_buffer", "threads", "test_calls_from_a_pool_of_threads",
                "test_backend_contract.GradientContractTests.test_first_order_4_gather_and_where"),
    CallerFault("ignores_saved_tensor_hooks", "saved_tensor_hooks", "test_call_inside_saved_tensor_hooks",
                "test_backend_contract.GradientContractTests.test_first_order_4_gather_and_where"),
    CallerFault("reuses_output_buffers", "caller_mutates", "test_caller_writes_into_a_result_before_calling_again",
                "test_backend_contract.SideEffectContractTests.test_mutation_under_grad_free_mode_0_no_grad"),
)
# The hooks a Dynamo drops: the control's module, compiled by test.harness.module_hookless_dynamo.
HOOKS_TEST = "test_module_with_forward_and_backward_hooks"
HOOKS_SCENARIO = "test_backend_contract.GlobalStateContractTests.test_a_served_block_under_each_mode_3_deterministic"
HOOKLESS_ENV = {"DYNAMO_SUITE_IMPORTS": "test.harness.module_hookless_dynamo"}


def _faulty(name: str) -> str:
    return f"{FAULTY_MODULE}:{name}"


# CallerTests in the default run: each fault against its way's test; the control against all.
DEFAULT_PART = shared_runs.DEFAULT.part(
    [*(_faulty(fault.backend) for fault in FAULTS), CONTROL],
    [*(registry.test_id(f"{CALLERS}.{fault.caller_test}", backend=fault.backend) for fault in FAULTS),
     registry.test_id(f"{CALLERS}.*", backend=CONTROL)])
HOOKLESS_PART = shared_runs.SharedRun("--variants", "static,module_hooks", "--op-sweep", "none", env=HOOKLESS_ENV,
                                      label="hookless Dynamo").part(
    [CONTROL], [registry.test_id(f"{CALLERS}.{HOOKS_TEST}", backend=CONTROL),
                registry.test_id(HOOKS_SCENARIO, backend=CONTROL, variant="module_hooks")])
# Each fault's scenario under its variant, and the control there (module hooks: without the patch).
VARIANT_PART = shared_runs.SharedRun(
    "--variants", ",".join(dict.fromkeys([*(fault.way for fault in FAULTS), "module_hooks"])), "--op-sweep", "none",
    label="the ways callers call").part(
    [*(_faulty(fault.backend) for fault in FAULTS), CONTROL],
    [*(registry.test_id(fault.scenario, backend=name, variant=fault.way)
       for fault in FAULTS for name in (fault.backend, CONTROL)),
     registry.test_id(HOOKS_SCENARIO, backend=CONTROL, variant="module_hooks")])


def _outcomes(part: shared_runs.Part) -> dict[str, tuple[str, str]]:
    return {test["id"]: (test["outcome"], test["reason"]) for test in part.tests()}


class CallerFaultTests(unittest.TestCase):
    def outcome(self, part: shared_runs.Part, test_id: str) -> tuple[str, str]:
        found = _outcomes(part)
        self.assertIn(test_id, found, part.describe())
        return found[test_id]

    def test_each_fault_fails_its_ways_caller_test(self):
        for fault in FAULTS:
            with self.subTest(fault=fault.backend):
                outcome, reason = self.outcome(DEFAULT_PART,
                                               registry.test_id(f"{CALLERS}.{fault.caller_test}", backend=fault.backend))
                self.assertIn(outcome, CAUGHT, reason)

    def test_each_fault_fails_a_scenario_under_its_variant(self):
        for fault in FAULTS:
            with self.subTest(fault=fault.backend):
                outcome, reason = self.outcome(VARIANT_PART, registry.test_id(fault.scenario, backend=fault.backend,
                                                                              variant=fault.way))
                self.assertIn(outcome, CAUGHT, reason)
                self.assertRegex(reason, rf"compiled function \d+ \({fault.way}\)")

    def test_a_dynamo_dropping_module_hooks_fails_the_hooks_test_and_variant(self):
        for test_id in (registry.test_id(f"{CALLERS}.{HOOKS_TEST}", backend=CONTROL),
                        registry.test_id(HOOKS_SCENARIO, backend=CONTROL, variant="module_hooks")):
            with self.subTest(test=test_id):
                outcome, reason = self.outcome(HOOKLESS_PART, test_id)
                self.assertIn(outcome, CAUGHT, reason)

    def test_the_control_passes_every_way(self):
        controls = {**{test_id: result for test_id, result in _outcomes(DEFAULT_PART).items() if f"_{CONTROL}." in test_id},
                    **{test_id: result for test_id, result in _outcomes(VARIANT_PART).items()
                       if f"_{CONTROL}_" in test_id}}
        self.assertEqual(len(controls), 5 + len(FAULTS) + 1, sorted(controls))
        self.assertEqual({test_id: result for test_id, result in controls.items() if result[0] != "PASS"}, {})


if __name__ == "__main__":
    unittest.main()
