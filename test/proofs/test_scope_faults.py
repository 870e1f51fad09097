"""The refusal contract, proven able to fail: with training declared unsupported, a backend
that refuses training graphs with an error naming training passes every test (its training
tests REFUSED); backends that refuse without naming it, detach their outputs or compute
wrong gradients fail the training tests, each as one problem under the refusal clause; and
a backend that trains correctly passes them all (harness.features.scope.py,
docs/scope.md).

One run of its own options (``--unsupported training``), over two contract families that mix
training and inference tests.

A second run declares ``training,random,custom-ops`` unsupported: a backend that crashes on
those graphs with a message whose words belong to the capabilities only by accident
("Constraints violated ... upgrade ... degraded", "code generator", "unsupported operator
aten::mm") breaks the contract (it was REFUSED when refusals were found by substring), and
one that says each is not supported keeps it: a refusal is recognised by its form
(harness.features.scope.named_in), not by a word inside a message.
"""

from __future__ import annotations

import unittest

from harness.axes import registry
from harness.checks import clauses
from test.harness import shared_runs

# Its own seconds (test/harness/budgets.py), its runs included: 40 s measured 2026-11-30, and 7 s for
# the refusal form's run (2026-12-04).
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


# The refusal form's run: a few tests needing each of three capabilities, declared unsupported.
FORM_DECLARED = ("training", "random", "custom-ops")
FORM_TESTS = {
    "training": ("test_backend_contract.GradientContractTests.test_gradient_of_input_used_twice",),
    "random": ("test_tracing_transforms.RandomOpsTests.test_same_seed_same_draws",
               "test_backend_contract.GlobalStateContractTests.test_random_code_is_reproducible_under_a_seed"),
    "custom-ops": ("test_compile_surface.CustomOpTests.test_functional_custom_op",
                   "test_compile_surface.CustomOpTests.test_custom_op_with_several_outputs"),
}
FORM_BREAKS = "crashes_with_refusal_words"
FORM_KEEPS = "refuses_in_form"
FORM_BACKENDS = (FORM_BREAKS, FORM_KEEPS)
FORM_RUN = shared_runs.SharedRun("--unsupported", ",".join(FORM_DECLARED), "--op-sweep", "none",
                                 label="--unsupported training,random,custom-ops").part(
    [f"{FAULTY_MODULE}:{name}" for name in FORM_BACKENDS],
    [registry.test_id(scenario, backend=name) for tests in FORM_TESTS.values() for scenario in tests
     for name in FORM_BACKENDS])


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


class RefusalFormTests(unittest.TestCase):
    """A refusal is a sentence saying the capability is not supported, naming it by a whole
    word; a crash that holds such words in other words is an error, under the contract."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tests = FORM_RUN.tests()
        cls.by_backend = {name: [test for test in cls.tests if test["backend"] == name] for name in FORM_BACKENDS}

    def test_each_backend_ran_a_test_of_each_capability(self):
        self.assertEqual(FORM_RUN.run_record.get("unsupported"), list(FORM_DECLARED), FORM_RUN.describe())
        for name in FORM_BACKENDS:
            for capability in FORM_DECLARED:
                with self.subTest(backend=name, capability=capability):
                    self.assertTrue([test for test in self.by_backend[name] if capability in test["out_of_scope"]],
                                    FORM_RUN.describe())

    def test_a_crash_holding_a_capabilitys_words_is_no_refusal(self):
        tests = self.by_backend[FORM_BREAKS]
        self.assertTrue(tests, FORM_RUN.describe())
        for test in tests:
            with self.subTest(test=test["id"]):
                self.assertEqual(test["outcome"], "ERROR", f"{test['id']}: {test['reason']}")
                self.assertEqual(test["clause"], clauses.REFUSAL, test["reason"])
                self.assertRegex(test["reason"], r"Constraints violated|code generator|unsupported operator aten::mm")

    def test_a_refusal_in_the_contracts_form_is_refused(self):
        tests = self.by_backend[FORM_KEEPS]
        self.assertTrue(tests, FORM_RUN.describe())
        for test in tests:
            with self.subTest(test=test["id"]):
                self.assertEqual(test["outcome"], "REFUSED", f"{test['id']}: {test['reason']}")
                self.assertRegex(test["reason"], r"^(training|random|custom-ops) declared unsupported, and the "
                                                 r"backend said so: RuntimeError: .*not supported|does not support")


if __name__ == "__main__":
    unittest.main()
