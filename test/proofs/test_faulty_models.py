"""The model family's self-test: backends that break one thing only real models exercise
(an attention kernel, group_norm, transposed convolution, BatchNorm's buffer updates, graphs
past some size) must fail exactly the model tests in which their fault fired, and pass the
rest.

Each faulty backend logs the tests in which it altered a graph (``FIRED_LOG_ENV``), so "the
tests that exercise it" is measured, not assumed: a torch release that decomposes an
operator differently moves the line, and the test still holds. One ``run_tests.py`` run
puts every fault against a handful of models that between them give each fault tests to
fire in and tests to spare.
"""

from __future__ import annotations

import tempfile
import unittest
from collections import defaultdict
from pathlib import Path

from test.harness.cli import read_results, run_cli
from test.harness.faulty_backends import FIRED_LOG_ENV

FAULTY_MODULE = "test.harness.faulty_backends"
MODEL_FAULTS = ("wrong_attention", "wrong_group_norm", "wrong_conv_transpose", "wrong_upsampling",
                "skips_batch_norm_stats", "miscompiles_big_graphs")
MODELS = ("unet_block", "resnet18", "llama", "gpt2", "lstm_language_model")


def _test_id(pytest_current: str) -> str:
    """``test/dynamo/test_models.py::ModelTests_x::test_y`` -> ``test.dynamo.test_models.ModelTests_x.test_y``."""
    path, cls, method = pytest_current.split("::")
    return ".".join([*Path(path).with_suffix("").parts, cls, method])


class ModelFaultsAreCaughtTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        directory = tempfile.TemporaryDirectory()
        cls.addClassCleanup(directory.cleanup)
        log = Path(directory.name) / "fired.log"
        backends = ",".join(f"{FAULTY_MODULE}:{fault}" for fault in MODEL_FAULTS)
        patterns = [f"test.dynamo.test_models.ModelTests_*.test_{model}_*" for model in MODELS]
        # The nightly tier, so every model runs whichever tier the default run gives it.
        cls.completed = run_cli("--backend", backends, "--tier", "nightly", "--report-dir", directory.name,
                                *(arg for pattern in patterns for arg in ("-k", pattern)),
                                env={FIRED_LOG_ENV: str(log)})
        cls.results = read_results(directory.name)["tests"] if cls.completed.returncode in (0, 1) else []
        cls.fired = {_test_id(line) for line in log.read_text().split()} if log.exists() else set()

    def describe(self) -> str:
        return f"\n{self.completed.stdout[-4000:]}\n{self.completed.stderr[-2000:]}"

    def test_every_fault_ran_against_every_model(self):
        self.assertEqual(len(self.results), len(MODEL_FAULTS) * len(MODELS) * 2, self.describe())

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
                self.assertLess(len(fired_per_fault[fault]), len(MODELS) * 2, f"{fault} fired in every test")

    def test_buffer_fault_fires_only_in_training(self):
        # BatchNorm updates its running statistics only in train mode: eval must pass.
        fired = {test_id.rsplit(".", 1)[1] for test_id in self.fired if "skips_batch_norm_stats" in test_id}
        self.assertEqual(fired, {"test_resnet18_train"})


if __name__ == "__main__":
    unittest.main()
