"""The compile stack's mutants (test/harness/mutation/stack_faults.py), without a run of the
suite: each is listed with its layer; each changes what its probe sees, and says it fired;
the control reaches a guard's mutant only where a guard failed; a stack mutant used as a
backend of its own patches only what Dynamo compiles for it, not another backend's code in
the same process.
"""

from __future__ import annotations

import unittest

import torch

from harness.axes.backends import resolve_backend
from test.harness.mutation import mutants, probes, stack_faults

# Its own seconds (test/harness/budgets.py): 9 s measured 2026-12-06; with issue 67's further
# mutants 28 s on a machine loaded about 6 times its 2 cores (17 s of CPU), each probe's control
# run once.
TIME_BUDGET_S = 30

PROBES = {probe.name: probe for probe in probes.PROBES}
# A mutant of each stack fault, and a probe it must change.
DIFFERS_ON = {
    "drops_guard__tensor_match__s0": "stack_guarded_tensors",
    "stuck_guard__global_state__s0": "stack_guards_judged_twice",
    "drops_guards_on__defaults__s0": "stack_guarded_values",
    "tensor_match_ignores__strides__s0": "stack_guarded_tensors",
    "tensor_match_ignores__requires_grad__s0": "stack_guarded_tensors",
    "recompile_limit__one__s0": "stack_growing_sizes",
    "automatic_dynamic__forgets__s0": "stack_growing_sizes",
    "fake_data_ptr__unchecked__s0": "stack_data_ptr",
    "forgets_tensor_hooks__in_compiled_code__s0": "stack_hooks",
    "skips_module_hooks__compiled_modules__s0": "stack_hooks",
    "drops_side_effects__globals__s0": "stack_side_effects",
    "drops_input_mutation__data__s0": "stack_runtime",
    "copies_aliased_outputs__runtime__s0": "stack_runtime",
    "forgets_grad_mode_change__inside__s0": "stack_runtime",
    "hides_saved_tensors__caller_hooks__s0": "stack_hooks",
    "drops_input_mutation__metadata__s0": "stack_runtime_inputs",
    "distinct_duplicates__mutated__s0": "stack_runtime_inputs",
    "copies_synthetic_base__runtime__s0": "stack_runtime_inputs",
    "skips_version_check__saved_tensors__s0": "stack_runtime_inputs",
}


def _run(probe: str, name: str | None) -> probes.Outcome:
    return probes.run_on_switch(probe, name)


class StackMutantTests(unittest.TestCase):
    def test_every_stack_fault_is_a_mutant_of_its_layer(self):
        listed = {name: spec for name, spec in mutants.MUTANTS.items() if spec.stack}
        self.assertEqual(set(listed), set(stack_faults.FAULTS))
        self.assertEqual({spec.layer for spec in listed.values()}, set(stack_faults.LAYERS))
        self.assertEqual({name.split("__")[0] for name in DIFFERS_ON}, {fault.fault for fault in stack_faults.FAULTS.values()})
        self.assertEqual(resolve_backend(mutants.spec("drops_guard__tensor_match__s0")).name, "drops_guard__tensor_match__s0")

    def test_each_stack_fault_changes_what_its_probe_sees(self):
        controls: dict[str, probes.Outcome] = {}  # a probe's control, run once for its mutants
        for name, probe in DIFFERS_ON.items():
            with self.subTest(mutant=name):
                if probe not in controls:
                    controls[probe] = _run(probe, None)
                self.assertIsNotNone(probes.difference(controls[probe], _run(probe, name)))
                self.assertIn(name, mutants.fired())

    def test_the_control_reaches_a_guard_mutant_only_where_a_guard_failed(self):
        mutants.start_test()
        mutants.use(None)
        probes.run(PROBES["stack_growing_sizes"], mutants.mutant(mutants.SWITCH))
        reached = mutants.reached_mutants()
        self.assertLessEqual({"drops_guard__tensor_match__s0", "tensor_match_ignores__sizes__s0",
                              "recompile_limit__one__s0", "automatic_dynamic__forgets__s0"}, reached)
        self.assertNotIn("tensor_match_ignores__strides__s0", reached)  # the size failed, not the stride
        mutants.start_test()
        probes.run(PROBES["broadcast_middle"], mutants.mutant(mutants.SWITCH))  # compiled once, called three times
        self.assertFalse({name for name in mutants.reached_mutants() if name in stack_faults.FAULTS})

    def test_a_stack_mutant_as_a_backend_patches_only_what_is_compiled_for_it(self):
        name = "drops_side_effects__containers__s0"
        mutants.use(None)
        for backend, appended in ((mutants.mutant(name), []), (mutants.mutant(mutants.CONTROL), [1]),
                                  ("aot_eager", [1])):
            with self.subTest(backend=str(backend)):
                torch._dynamo.reset()
                seen: list[int] = []

                def appends(x: torch.Tensor) -> torch.Tensor:
                    seen.append(1)
                    return x * 2

                torch.compile(appends, backend=backend)(torch.ones(2))
                self.assertEqual(seen, appended)
        torch._dynamo.reset()


if __name__ == "__main__":
    unittest.main()
