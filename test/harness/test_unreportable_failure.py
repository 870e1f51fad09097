"""A failure pytest cannot describe is still a result, and the run goes on
(harness/worker/pytest_plugin.py).

On CPython 3.11, after a backend's deep recursion, pytest's traceback formatting (which
parses source with ``ast``) raised SystemError "AST constructor recursion depth mismatch" in
MAX's run (2026-12-03): the worker died of an internal error, the run ended in
"Unexpectedly no active workers available", exit 2 and no results. Here a scenario makes
pytest's source parsing raise the same way, then fails."""

from __future__ import annotations

import tempfile
import textwrap
import unittest
from pathlib import Path

from test.harness.cli import read_results, run_cli

# Its own seconds (test/harness/budgets.py): 6 s measured 2026-12-03.
TIME_BUDGET_S = 30

SCENARIO = """\
    import _pytest._code.code
    import torch
    from harness import BackendTestCase, for_each_backend

    _described = _pytest._code.code.ExceptionInfo.getrepr


    def _unparsable(self, *args, style="long", **kwargs):
        # As CPython 3.11 did: pytest's tracebacks parse source; Python's own do not.
        if style != "native":
            raise SystemError("AST constructor recursion depth mismatch (before=156, after=175)")
        return _described(self, *args, style=style, **kwargs)


    @for_each_backend
    class UnreportableTests(BackendTestCase):
        def test_a_fails_where_pytest_cannot_parse_source(self):
            _pytest._code.code.ExceptionInfo.getrepr = _unparsable
            self.assertEqual(self.compile(lambda x: x * 2)(torch.ones(2)).tolist(), [3.0, 3.0])

        def test_b_runs_after_it(self):
            self.assertEqual(self.compile(lambda x: x + 1)(torch.ones(2)).tolist(), [2.0, 2.0])
    """


class UnreportableFailureTests(unittest.TestCase):
    def test_the_failure_is_a_result_and_the_run_goes_on(self):
        with tempfile.TemporaryDirectory() as directory:
            project = Path(directory)
            (project / "suite").mkdir()
            (project / "suite" / "test_unreportable.py").write_text(textwrap.dedent(SCENARIO))
            reports = project / "reports"
            done = run_cli("--backend", "eager", "-j", "1", "-k", "UnreportableTests", "--report-dir", str(reports),
                           env={"DYNAMO_SUITE_SCENARIOS": str(project / "suite")}, cwd=project)
            self.assertEqual(done.returncode, 1, done.stdout[-3000:] + done.stderr[-2000:])
            tests = {test["id"].rsplit(".", 1)[-1]: test for test in read_results(reports)["tests"]}
            failed = tests["test_a_fails_where_pytest_cannot_parse_source"]
            self.assertEqual(failed["outcome"], "FAIL", failed["reason"])
            self.assertIn("[2.0, 2.0] != [3.0, 3.0]", failed["reason"])
            self.assertEqual(tests["test_b_runs_after_it"]["outcome"], "PASS")


if __name__ == "__main__":
    unittest.main()
