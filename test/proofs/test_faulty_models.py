"""The model family's self-test: backends that break one thing only real models exercise
(an attention kernel, group_norm, transposed convolution, BatchNorm's buffer updates, graphs
past some size) must fail exactly the model tests in which their fault fired, and pass the
rest.

Each faulty backend logs the tests in which it altered a graph (``FIRED_LOG_ENV``), so "the
tests that exercise it" is measured, not assumed: a torch release that decomposes an
operator differently moves the line, and the test still holds. One ``run_tests.py`` run
(the nightly one the proofs share, test/harness/shared_runs.py) puts every fault against a
few models that give it tests to fire in and tests to spare.
"""

from __future__ import annotations

import unittest
from collections import defaultdict
from pathlib import Path

from test.harness import shared_runs

# Its own seconds (test/harness/budgets.py, shared runs apart): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10

FAULTY_MODULE = "test.harness.faulty_backends"
MODELS = ("unet_block", "resnet18", "llama", "gpt2", "lstm_language_model")
# Each fault against the models whose layers it alters and two it should spare (the cheapest,
# unet_block and lstm_language_model, where they are not among the first): resnet18 and the
# transformers take 15 to 30 s a test, and a fault they cannot fire in proves nothing there.
# Whether it fires is still measured, test by test; every model meets some fault.
MODELS_PER_FAULT = {
    "wrong_attention": ("llama", "gpt2", "unet_block", "lstm_language_model"),
    "wrong_group_norm": ("unet_block", "lstm_language_model"),
    "wrong_conv_transpose": ("unet_block", "lstm_language_model"),
    "wrong_upsampling": ("unet_block", "lstm_language_model"),
    "skips_batch_norm_stats": ("resnet18", "unet_block", "lstm_language_model"),
    "miscompiles_big_graphs": MODELS,
}
MODEL_FAULTS = tuple(MODELS_PER_FAULT)
RUN = shared_runs.NIGHTLY.part([f"{FAULTY_MODULE}:{fault}" for fault in MODEL_FAULTS],
                               [f"test.dynamo.test_models.ModelTests_{fault}.test_{model}_*"
                                for fault, models in MODELS_PER_FAULT.items() for model in models])


def _test_id(pytest_current: str) -> str:
    """``test/dynamo/test_models.py::ModelTests_x::test_y`` -> ``test.dynamo.test_models.ModelTests_x.test_y``."""
    path, cls, method = pytest_current.split("::")
    return ".".join([*Path(path).with_suffix("").parts, cls, method])


class ModelFaultsAreCaughtTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        # The nightly tier, so every model runs whichever tier the default run gives it.
        cls.results = RUN.tests()
        cls.fired = {_test_id(line) for line in shared_runs.fired_faults()} & {test["id"] for test in cls.results}

    def describe(self) -> str:
        return RUN.describe()

    def test_every_fault_ran_against_its_models(self):
        self.assertEqual(len(self.results), sum(len(models) for models in MODELS_PER_FAULT.values()) * 2,
                         self.describe())
        self.assertEqual({model for models in MODELS_PER_FAULT.values() for model in models}, set(MODELS))

    def test_tests_where_the_fault_fired_fail_on_accuracy(self):
        for test in self.results:
            if test["id"] in self.fired:
                with self.subTest(test=test["id"]):
                    self.assertEqual(test["outcome"], "FAIL", test["reason"])
                    self.assertRegex(test["reason"], r"tensors off.*: .*(RMSE vs float64|differ from eager|NaN where)")

    def test_tests_where_the_fault_never_fired_pass(self):
        for test in self.results:
            if test["id"] not in self.fired:
                with self.subTest(test=test["id"]):
                    self.assertEqual(test["outcome"], "PASS", test["reason"])

    def test_each_fault_fires_in_some_tests_and_spares_others(self):
        fired_per_fault: dict[str, set[str]] = defaultdict(set)
        for test_id in self.fired:
            fired_per_fault[test_id.split(".")[3].split("_", 1)[1]].add(test_id)
        for fault in MODEL_FAULTS:
            with self.subTest(fault=fault):
                self.assertTrue(fired_per_fault[fault], f"{fault} never fired: it proves nothing")
                self.assertLess(len(fired_per_fault[fault]), len(MODELS_PER_FAULT[fault]) * 2,
                                f"{fault} fired in every test")

    def test_buffer_fault_fires_only_in_training(self):
        # BatchNorm updates its running statistics only in train mode: eval must pass.
        fired = {test_id.rsplit(".", 1)[1] for test_id in self.fired if "skips_batch_norm_stats" in test_id}
        self.assertEqual(fired, {"test_resnet18_train"})


if __name__ == "__main__":
    unittest.main()
