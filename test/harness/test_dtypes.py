"""harness/axes/dtypes.py: the dtype axis of the numeric families."""

from __future__ import annotations

import os
import unittest
from unittest import mock

from harness.axes import dtypes, registry
from harness.axes.axis import AxisError
from harness.report.results import column_name

DTYPES_ENV = registry.DTYPE.env
from test.harness import shared_runs
from test.harness.cli import run_cli

# Its own seconds (test/harness/budgets.py): 4 s measured 2026-11-29.
TIME_BUDGET_S = 15


class SelectionTests(unittest.TestCase):
    def test_float32_by_default(self):
        with mock.patch.dict(os.environ, {DTYPES_ENV: ""}):
            self.assertEqual(registry.selected(registry.DTYPE), ("float32",))

    def test_an_unknown_name_says_which_exist(self):
        with mock.patch.dict(os.environ, {DTYPES_ENV: "float32,bf16"}):
            with self.assertRaisesRegex(AxisError, r"unknown dtype bf16; choose from float32, bfloat16, float16"):
                registry.selected(registry.DTYPE)

    def test_only_numeric_families_get_half_copies(self):
        numeric = dtypes.numeric(type("Numeric", (), {}))
        plain = type("Plain", (), {})
        self.assertEqual(dtypes.BEHAVIOUR.values_for(numeric, ("float32", "bfloat16")), ("float32", "bfloat16"))
        self.assertEqual(dtypes.BEHAVIOUR.values_for(plain, ("float32", "bfloat16")), ("float32",))
        self.assertEqual(dtypes.BEHAVIOUR.values_for(plain, ("float16",)), ())

    def test_report_columns_leave_out_the_defaults(self):
        self.assertEqual(column_name("inductor"), "inductor")
        self.assertEqual(column_name("inductor", variant="static", dtype="bfloat16"), "inductor/bfloat16")
        self.assertEqual(column_name("inductor", variant="dynamic", dtype="float16"), "inductor/dynamic/float16")
        self.assertEqual(column_name("-", variant="dynamic", dtype="float16"), "-")


HALF_RUN = shared_runs.AXES.part(["aot_eager"], [
    registry.test_id(scenario, backend="aot_eager", dtype=dtype) for dtype in ("float32", "float16")
    for scenario in ("test_backend_contract.OutputContractTests.test_layouts_0_contiguous",
                     "test_backend_contract.GlobalStateContractTests.test_default_dtype_read_and_kept")])


class RunnerTests(unittest.TestCase):
    def test_an_unknown_dtype_is_a_usage_error(self):
        done = run_cli("--dtypes", "half", "--list", timeout=300)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertRegex(done.stderr.strip(), r"^run_tests.py: error: --dtypes / .*unknown dtype half; choose from")

    def test_ids_reports_and_the_default_dtype_carry_the_dtype(self):
        listed = run_cli("--backend", "eager", "--dtypes", "float32,bfloat16", "--list", timeout=300).stdout.split()
        self.assertIn("test.dynamo.test_backend_contract.OutputContractTests_eager_bfloat16.test_zero_dim", listed)
        self.assertIn("test.dynamo.test_aot_autograd.InputMutationTests_eager.test_slice_assignment_into_input", listed)
        self.assertFalse([test for test in listed if "InputMutationTests_eager_bfloat16" in test],
                         "a family that is not numeric has no half copy")
        tests = HALF_RUN.tests()
        self.assertEqual(sorted(test["dtype"] for test in tests), ["float16", "float16", "float32", "float32"],
                         HALF_RUN.describe())
        self.assertEqual({test["outcome"] for test in tests}, {"PASS"})
        self.assertEqual(HALF_RUN.run_record["dtypes"], ["float32", "float16"])
        self.assertIn("| aot\\_eager/float16 |", (HALF_RUN.report_dir / "summary.md").read_text())  # markdown-escaped
        self.assertIn('name="dtype" value="float16"', (HALF_RUN.report_dir / "junit.xml").read_text())


if __name__ == "__main__":
    unittest.main()
