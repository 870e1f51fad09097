"""Every bad input to run_tests.py: exit code 2, one line on stderr saying what to fix, no
traceback, and no report written."""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path
from unittest import mock

from test.harness.cli import run_cli

# Its own seconds (test/harness/budgets.py): 22 s measured 2026-11-29.
TIME_BUDGET_S = 50


class BadInputTests(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(self.enter_tmpdir())
        self.report_dir = self.tmp / "reports"

    def enter_tmpdir(self) -> str:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        return directory.name

    def assertUsageError(self, pattern: str, *args: str, **kwargs) -> None:
        completed = run_cli(*args, "--report-dir", str(self.report_dir), **kwargs)
        lines = [line for line in completed.stderr.splitlines() if line.strip()]
        self.assertEqual(completed.returncode, 2, f"stdout: {completed.stdout}\nstderr: {completed.stderr}")
        self.assertEqual(len(lines), 1, f"expected one line on stderr, got:\n{completed.stderr}")
        self.assertRegex(lines[0], r"^run_tests\.py: error: ")
        self.assertRegex(lines[0], pattern)
        self.assertNotIn("Traceback", completed.stdout + completed.stderr)
        self.assertFalse((self.report_dir / "results.json").exists(), "a failed start wrote a report")

    def test_unknown_backend(self):
        self.assertUsageError(r"unknown backend 'no_such_backend'; registered: .*aot_eager",
                              "--backend", "no_such_backend")

    def test_bad_import_path(self):
        self.assertUsageError(r"cannot import module 'no_such_package\.compiler'",
                              "--backend", "no_such_package.compiler:backend")

    def test_missing_attribute(self):
        self.assertUsageError(r"has no attribute 'no_such_backend'",
                              "--backend", "test.harness.faulty_backends:no_such_backend")

    def test_backend_that_is_not_callable(self):
        self.assertUsageError(r"is a dict, not a callable",
                              "--backend", "test/harness/faulty_backends/contract.py:CRASH_AND_HANG_PLAN")

    def test_malformed_expectations_name_file_and_line(self):
        bad = self.tmp / "bad.toml"
        bad.write_text('[[expect]]\ntest = "x.Y.test_z"\nstatus = "maybe"\nreason = "r"\n')
        self.assertUsageError(r"bad\.toml:3: status 'maybe' is not one of xfail, skip",
                              "--expectations", str(bad))

    def test_bad_shard(self):
        self.assertUsageError(r"bad --shard '4/3': need 1 <= I <= N", "--shard", "4/3")
        self.assertUsageError(r"bad --shard 'half': write I/N", "--shard", "half")

    def test_bad_jobs(self):
        self.assertUsageError(r"bad -j '0'", "-j", "0")
        self.assertUsageError(r"bad -j 'many'", "-j", "many")

    def test_bad_operator_sweep_from_the_environment(self):
        self.assertUsageError(r"DYNAMO_SUITE_OP_SWEEP='every': expected one of quick, full, none", "--list",
                              env={"DYNAMO_SUITE_OP_SWEEP": "every"})

    def test_bad_timeout(self):
        self.assertUsageError(r"bad --timeout -1", "--timeout", "-1")

    def test_unwritable_report_dir(self):
        blocker = self.tmp / "a-file"
        blocker.write_text("not a directory")
        completed = run_cli("--report-dir", str(blocker / "reports"))
        self.assertEqual(completed.returncode, 2)
        self.assertRegex(completed.stderr.strip(), r"^run_tests\.py: error: cannot write reports to .*; choose another --report-dir$")

    def test_torch_missing(self):
        # -S leaves out site-packages, where torch is installed.
        self.assertUsageError(r"torch cannot be imported .*pip install -r requirements\.txt",
                              "--list", python=[__import__("sys").executable, "-S"])

    def test_torch_too_old(self):
        stub = self.tmp / "old_torch" / "torch"
        stub.mkdir(parents=True)
        (stub / "__init__.py").write_text('__version__ = "2.1.0"\n')
        self.assertUsageError(r"torch 2\.1\.0 is too old; dynamo-aot-suite needs torch >= 2\.9",
                              "--list", env={"PYTHONPATH": str(stub.parent)})

    def test_no_test_matched(self):
        self.assertUsageError(r"no test matched -k no_such_scenario; .*--list", "-k", "no_such_scenario",
                              "--backend", "eager")

    def test_unreadable_baseline(self):
        self.assertUsageError(r"cannot read results .*missing\.json", "--baseline", str(self.tmp / "missing.json"))

    def test_fail_on_regressions_without_baseline(self):
        self.assertUsageError(r"--fail-on regressions needs --baseline", "--fail-on", "regressions")

    def test_unknown_option(self):
        self.assertUsageError(r"unrecognized arguments: --frobnicate.*--help", "--frobnicate")

    def test_pytest_s_internal_error_keeps_its_log_where_the_line_says(self):
        # MAX, 2026-12-03: "pytest failed (INTERNAL_ERROR) ...; full log: /tmp/dynamo-suite-.../pytest.log",
        # a directory deleted as the run ended. The log now stays in the report directory.
        from harness.run import engine

        def internal_error(tests, options, *rest):
            (options.workdir / "pytest.log").write_text("INTERNALERROR> what went wrong\n")
            raise engine.EngineError(f"pytest failed (INTERNAL_ERROR): 1 failed; full log: {options.workdir}/pytest.log")

        with mock.patch("harness.run.isolation.run", internal_error):
            completed = run_cli("--backend", "eager", "-k", "test_lstm_grad_enabled", "--report-dir",
                                str(self.report_dir))
        self.assertEqual(completed.returncode, 2, completed.stderr)
        self.assertIn(f"full log: {self.report_dir}/pytest.log", completed.stderr)
        self.assertIn("what went wrong", (self.report_dir / "pytest.log").read_text())


if __name__ == "__main__":
    unittest.main()
