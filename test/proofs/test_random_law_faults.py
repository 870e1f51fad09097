"""Issue 65, findings 7 and 8: checks that a wrong backend passed. Each faulty backend here
passed the tests it is run against at c1bc596 and must fail them now, while eager and
aot_eager pass:

* random kernels that ignore a parameter (test/harness/faulty_backends/draws.py), caught by
  the law of the draws the operator checker now judges (harness/checks/opcheck.py,
  ``_check_law``): bernoulli drawing at 0.5 whatever p, normal with std 1 whatever std, in
  the operator sweep; dropout at 0.5 for every p, by the dropout test at p = 0.1 and 0.9 (and
  not at 0.5, where it is right);
* a runtime keeping a detached alias of every input and output (``keeps_detached_tensors``):
  the caller's tensor objects go, their memory stays, which the memory-release test now
  watches on the storages.
"""

from __future__ import annotations

import unittest

from harness.axes import registry
from test.harness import shared_runs

# Its own seconds (test/harness/budgets.py, shared runs apart): 0 s measured 2026-12-06.
TIME_BUDGET_S = 10

FAULTY_MODULE = "test.harness.faulty_backends"
CONTROLS = ("eager", "aot_eager")
DROPOUT = "test_tracing_transforms.RandomOpsTests.test_dropout_draws_from_eagers_law_"
LET_GO = "test_backend_contract.CallIndependenceTests.test_calls_let_go_of_their_tensors_"
# Each fault: the tests it must fail (scenario globs), and the words of the failing check.
CATCHES = {
    "bernoulli_ignores_p": (("test_op_sweep.OpSweepTests.test_op_bernoulli",), "do not follow eager's law"),
    "normal_ignores_std": (("test_op_sweep.OpSweepTests.test_op_normal",), "do not follow eager's law"),
    "dropout_ignores_p": ((f"{DROPOUT}0_p_0_1", f"{DROPOUT}2_p_0_9"), "do not follow eager's law"),
    "keeps_detached_tensors": ((f"{LET_GO}*",), "the storages of"),
}
# Run beside them: right where the fault is right (dropout at p = 0.5, and the mask test
# that tried dropout at 0.5 only before).
SPARED = {"dropout_ignores_p": (f"{DROPOUT}1_p_0_5", "test_tracing_transforms.RandomOpsTests.test_backward_uses_the_"
                                                     "forward_mask")}
SCENARIOS = sorted({scenario for caught, _ in CATCHES.values() for scenario in caught}
                   | {scenario for spared in SPARED.values() for scenario in spared})

RUN = shared_runs.DEFAULT.part(
    [*(f"{FAULTY_MODULE}:{fault}" for fault in CATCHES), *CONTROLS],
    sorted({registry.test_id(scenario, backend=backend) for fault, (caught, _) in CATCHES.items()
            for scenario in (*caught, *SPARED.get(fault, ())) for backend in (fault, *CONTROLS)}))


class RandomLawAndMemoryFaultsTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tests = RUN.tests()

    def matching(self, scenario: str, backend: str) -> list[dict]:
        import fnmatch

        pattern = registry.test_id(scenario, backend=backend)
        found = [test for test in self.tests if fnmatch.fnmatchcase(test["id"], pattern)]
        self.assertTrue(found, f"no test matches {pattern}" + RUN.describe())
        return found

    def test_each_fault_fails_its_tests_by_the_fixed_check(self):
        for fault, (caught, words) in CATCHES.items():
            for scenario in caught:
                for test in self.matching(scenario, fault):
                    with self.subTest(test=test["id"]):
                        self.assertEqual(test["outcome"], "FAIL", test["reason"])
                        self.assertIn(words, test["reason"])

    def test_each_fault_passes_where_it_is_right(self):
        for fault, spared in SPARED.items():
            for scenario in spared:
                for test in self.matching(scenario, fault):
                    with self.subTest(test=test["id"]):
                        self.assertEqual(test["outcome"], "PASS", test["reason"])

    def test_the_controls_pass_them_all(self):
        for control in CONTROLS:
            for scenario in SCENARIOS:
                for test in self.matching(scenario, control):
                    with self.subTest(test=test["id"]):
                        self.assertEqual(test["outcome"], "PASS", test["reason"])


if __name__ == "__main__":
    unittest.main()
