"""The tracing-transform scenarios fail when AOTAutograd itself is broken.

Each entry of test/harness/faulty_transforms.py patches one transform. One run_tests.py
run per patch (the patch is process-wide, so runs cannot share it) must fail every
scenario listed for it; unpatched, in the run the proofs share, the same scenarios must pass.
"""

from __future__ import annotations

import fnmatch
import tempfile
import unittest

import test.dynamo.test_tracing_transforms as transforms
from harness.testcase.base import BackendTestCase, DynamoTestCase
from test.harness import shared_runs
from test.harness.cli import read_results, run_cli
from test.harness.faulty_transforms import FAULT_ENV, PATCHES

# Its own seconds (test/harness/budgets.py): 81 s measured 2026-11-29.
TIME_BUDGET_S = 170

MODULE = "test.dynamo.test_tracing_transforms"
FUNCTIONALIZATION = f"{MODULE}.FunctionalizationGraphTests"
MUTATIONS_ON_AOT_EAGER = f"{MODULE}.FunctionalizedMutationTests_aot_eager"

# patch name -> ids (globs) that must fail under it
CATCHES = {
    "ignores_data_mutations": (
        f"{FUNCTIONALIZATION}.test_data_mutation_becomes_a_graph_output",
        f"{FUNCTIONALIZATION}.test_keep_inference_input_mutations_keeps_the_copy_in_the_graph",
        f"{FUNCTIONALIZATION}.test_mutation_of_input_requiring_grad_stays_an_output",
        f"{FUNCTIONALIZATION}.test_mutation_under_no_grad_is_copied_in_graph_when_kept",
        f"{MODULE}.FunctionalModuleCallTests.test_buffer_mutation_is_applied_by_the_runtime",
        f"{MODULE}.ExportSignatureTests.test_inference_signature",
        f"{MODULE}.ExportSignatureTests.test_mutated_user_input",
        f"{MODULE}.ExportSignatureTests.test_joint_simple_rejects_input_mutations",
        f"{MUTATIONS_ON_AOT_EAGER}.test_data_mutations_applied_once_per_call",
        f"{MUTATIONS_ON_AOT_EAGER}.test_mutation_of_input_requiring_grad_keeps_gradients",
    ),
    "ignores_metadata_mutations": (f"{FUNCTIONALIZATION}.test_metadata_mutation_is_replayed_outside_the_graph",),
    "partitions_without_recompute": (f"{MODULE}.JointGraphStructureTests.test_min_cut_recomputes_cheap_pointwise_ops",),
}

_ALL_PATTERNS = sorted({pattern for patterns in CATCHES.values() for pattern in patterns})


# Unpatched, the scenarios are read from the run the proofs share.
UNPATCHED = shared_runs.DEFAULT.part(["aot_eager"], _ALL_PATTERNS)


def _run(patch: str) -> tuple[dict[str, str], str]:
    env = {"DYNAMO_SUITE_IMPORTS": "test.harness.faulty_transforms", FAULT_ENV: patch}
    with tempfile.TemporaryDirectory() as report_dir:
        completed = run_cli("--backend", "aot_eager", *(arg for p in _ALL_PATTERNS for arg in ("-k", p)),
                            "--report-dir", report_dir, env=env)
        log = completed.stdout[-3000:] + completed.stderr[-2000:]
        if completed.returncode not in (0, 1):
            raise AssertionError(f"run_tests.py exited {completed.returncode}\n{log}")
        return {test["id"]: test["outcome"] for test in read_results(report_dir)["tests"]}, log


def _matching(outcomes: dict[str, str], pattern: str) -> dict[str, str]:
    return {test_id: outcome for test_id, outcome in outcomes.items() if fnmatch.fnmatchcase(test_id, pattern)}


class PatchedTransformTests(unittest.TestCase):
    def test_the_table_names_real_patches(self):
        self.assertEqual(set(CATCHES), set(PATCHES))

    def test_every_once_run_family_has_a_patch(self):
        families = {value.__name__ for value in vars(transforms).values()
                    if isinstance(value, type) and issubclass(value, DynamoTestCase)
                    and not issubclass(value, BackendTestCase) and value.__module__ == MODULE}
        covered = {pattern.split(".")[3] for patterns in CATCHES.values() for pattern in patterns}
        self.assertEqual(families - covered, set())

    def test_scenarios_pass_unpatched(self):
        outcomes, log = {test["id"]: test["outcome"] for test in UNPATCHED.tests()}, UNPATCHED.describe()
        for pattern in _ALL_PATTERNS:
            with self.subTest(pattern=pattern):
                matched = _matching(outcomes, pattern)
                self.assertTrue(matched, f"no test matches {pattern}\n{log}")
                self.assertEqual({k: v for k, v in matched.items() if v not in ("PASS", "XFAIL")}, {})

    def test_each_patch_fails_its_scenarios(self):
        for patch, patterns in CATCHES.items():
            outcomes, log = _run(patch)
            for pattern in patterns:
                with self.subTest(patch=patch, pattern=pattern):
                    matched = _matching(outcomes, pattern)
                    self.assertTrue(matched, f"no test matches {pattern}\n{log}")
                    self.assertEqual({k: v for k, v in matched.items() if v not in ("FAIL", "ERROR")}, {},
                                     f"{patch} ({PATCHES[patch].breaks}) went unnoticed")


if __name__ == "__main__":
    unittest.main()
