"""The refusal contract, proven able to fail: with training declared unsupported, a backend
that refuses training graphs with an error naming training passes every test (its training
tests REFUSED); backends that refuse without naming it, detach their outputs or compute
wrong gradients fail the training tests, each as one problem under the refusal clause; and
a backend that trains correctly passes them all (harness.features.scope.py,
docs/scope.md).

One run of its own options (``--unsupported training``), over two contract families that mix
training and inference tests.
"""

from __future__ import annotations

import unittest

from harness.axes import registry
from harness.checks import clauses
from test.harness import shared_runs

# Its own seconds (test/harness/budgets.py), its run included: 40 s measured 2026-11-30.
TIME_BUDGET_S = 120

FAULTY_MODULE = "test.harness.faulty_backends"
FAMILIES = ("test_backend_contract.GradientContractTests.*", "test_backend_contract.OutputContractTests.*")
KEEPS = "refuses_training"
BREAKS = ("refuses_vaguely", "detaches_outputs", "wrong_gradients")
CORRECT = "aot_eager"
BACKENDS = (KEEPS, *BREAKS, CORRECT)
RUN = shared_runs.SharedRun("--unsupported", "training", label="--unsupported training").part(
    [f"{FAULTY_MODULE}:{name}" if name != CORRECT else name for name in BACKENDS],
    [registry.test_id(family, backend=name) for family in FAMILIES for name in BACKENDS])


class RefusalContractTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tests = RUN.tests()
        cls.by_backend = {name: [test for test in cls.tests if test["backend"] == name] for name in BACKENDS}

    def training(self, backend: str) -> list[dict]:
        return [test for test in self.by_backend[backend] if "training" in (test["needs"] or [])]

    def test_the_run_declared_training_and_each_backend_ran_both_kinds_of_test(self):
        self.assertEqual(RUN.run_record.get("unsupported"), ["training"], RUN.describe())
        for name in BACKENDS:
            with self.subTest(backend=name):
                tests = self.by_backend[name]
                self.assertGreaterEqual(len(self.training(name)), 10, RUN.describe())
                self.assertGreaterEqual(len(tests) - len(self.training(name)), 3)
                for test in self.training(name):
                    self.assertEqual(test["out_of_scope"], ["training"], test["id"])

    def test_a_clean_refusal_keeps_the_contract(self):
        for test in self.by_backend[KEEPS]:
            expected = "REFUSED" if test in self.training(KEEPS) else "PASS"
            self.assertEqual(test["outcome"], expected, f"{test['id']}: {test['reason']}")
        for test in self.training(KEEPS):
            self.assertEqual(test["stage"], "backend compile")
            self.assertRegex(test["reason"], r"^training declared unsupported, and the backend said so: "
                                             r"NotImplementedError: training is not supported")

    def test_a_correct_backend_gives_eagers_answer(self):
        self.assertEqual({test["outcome"] for test in self.by_backend[CORRECT]}, {"PASS"}, RUN.describe())

    def test_every_other_answer_breaks_it_as_one_problem(self):
        for name in BREAKS:
            with self.subTest(backend=name):
                unexpected = [test for test in self.by_backend[name] if test["outcome"] in ("FAIL", "ERROR")]
                self.assertTrue(unexpected, RUN.describe())
                self.assertEqual({test["clause"] for test in unexpected}, {clauses.REFUSAL})
                self.assertEqual(len({test["problem"] for test in unexpected}), 1)
                # Only tests that needed training broke it; the rest pass.
                self.assertLessEqual({test["id"] for test in unexpected}, {test["id"] for test in self.training(name)})
                self.assertEqual({test["outcome"] for test in self.by_backend[name] if test not in unexpected},
                                 {"PASS"})

    def test_wrong_gradients_fail_every_gradient_test(self):
        gradients = [test for test in self.by_backend["wrong_gradients"] if ".GradientContractTests_" in test["id"]]
        self.assertTrue(gradients)
        self.assertEqual({test["outcome"] for test in gradients}, {"FAIL"})


if __name__ == "__main__":
    unittest.main()
