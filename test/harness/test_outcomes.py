"""harness/outcomes: an outcome is one declaration. A toy outcome declared here, and nothing
else, reaches results.json, the console's table and progress line, report.html's colours and
filters, summary.md, junit.xml, the accuracy CSVs, the baseline comparison, --accept, the
exit code and the scoreboard; and the worker reports an outcome a skip stands for as data."""

from __future__ import annotations

import io
import json
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from harness import outcomes
from harness.report import problems
from harness.report.formats.format import BoardReport
from harness.report.results import RunResults, TestResult, load
from harness.report.scoreboard import board, render
from harness.run import finish
from harness.run.progress import Progress
from harness.worker import classify

# Its own seconds (test/harness/budgets.py): under 1 s measured 2026-12-03.
TIME_BUDGET_S = 10

ROOT = Path(__file__).resolve().parents[2]

# A test that ran, and wobbled: an unexpected failure, raised somewhere, that --accept
# records as an expected failure and junit shows as an error.
TOY = outcomes.Outcome("WOBBLE", short="wobble", html=("#123456", "#fedcba"), unexpected=True,
                       ended=outcomes.FAILED, junit="error", scoreboard="fail", accepted_as="xfail", by_where=True)
MODEL = "test.dynamo.test_models.ModelTests_eager.test_tiny_train"
OTHER = "test.dynamo.test_models.ModelTests_eager.test_tiny_eval"


def _test(test_id: str, outcome: str, **fields) -> TestResult:
    module, family, method = test_id.split(".")[2:]
    return TestResult(id=test_id, scenario=f"{module}.{family.rsplit('_', 1)[0]}.{method}", backend="eager",
                      backend_spec="eager", outcome=outcome, **fields)


def _run(outcome: str) -> RunResults:
    tests = [_test(MODEL, outcome, reason="it wobbled", where="spin (top.py:3)", stage="backend run",
                   details="Traceback: wobbling", metrics={"graph_breaks": 0}),
             _test(OTHER, "PASS", metrics={"graph_breaks": 0})]
    return RunResults(run={"torch": "2.13.0", "backends": [{"name": "eager", "spec": "eager"}]}, tests=tests)


class ToyOutcomeTests(unittest.TestCase):
    def setUp(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.tmp = Path(directory.name)
        declared = mock.patch.object(outcomes, "DECLARED", [*outcomes.DECLARED, TOY])
        declared.start()
        self.addCleanup(declared.stop)

    def finish(self) -> tuple[int, str]:
        """The run's end, as the command does it: reports, console, baseline, --accept, exit code."""
        expectations = self.tmp / "expectations.toml"
        expectations.write_text("# the project's\n")
        (self.tmp / "old").mkdir()
        (self.tmp / "old" / "results.json").write_text(_run("PASS").dumps())
        args = SimpleNamespace(fail_on="unexpected", baseline=str(self.tmp / "old"), accept=True, accuracy_csv=True)
        plan = SimpleNamespace(args=args, report_dir=self.tmp / "reports", baseline=load(self.tmp / "old"),
                               expectations_file=expectations)
        out = io.StringIO()
        return finish.finish(plan, _run(TOY.name), out), out.getvalue()

    def test_every_report_and_the_exit_code_handle_it(self) -> None:
        code, console = self.finish()
        self.assertEqual(code, 1)
        reports = self.tmp / "reports"
        saved = json.loads((reports / "results.json").read_text())
        self.assertEqual((saved["summary"]["WOBBLE"], saved["summary"]["unexpected"]), (1, 1))
        self.assertEqual(load(reports / "results.json").tests[0].outcome, "WOBBLE")
        self.assertRegex(console, r"backend +PASS +XFAIL +SKIP +COLLATERAL +FAIL +ERROR +XPASS +CRASH +TIMEOUT "
                                  r"+WOBBLE +time")
        self.assertIn(f"  WOBBLE  [1] {MODEL}", console)
        self.assertIn("in spin (top.py)", console)  # a problem told apart by where it raised
        self.assertIn("new problems: 1", console)  # the baseline's: it passed there
        self.assertIn("+ test_models.ModelTests.test_tiny_train on eager: WOBBLE", console)  # --accept's
        self.assertIn('status = "xfail"\nreason = "observed WOBBLE: it wobbled"',
                      (self.tmp / "expectations.toml").read_text())
        page = (reports / "report.html").read_text()
        self.assertIn(".WOBBLE { background: #123456; color: #fedcba; }", page)
        self.assertIn('class="outcome-filter" value="WOBBLE"', page)
        self.assertIn("| WOBBLE |", (reports / "summary.md").read_text())
        suite = ET.parse(reports / "junit.xml").getroot().find("testsuite")
        self.assertEqual((suite.get("errors"), suite.get("failures"), suite.get("skipped")), ("1", "0", "0"))
        error = suite.find("testcase/error")
        self.assertEqual((error.get("type"), error.get("message"), error.text), ("WOBBLE", "it wobbled",
                                                                                 "Traceback: wobbling"))
        self.assertEqual((reports / "accuracy" / "eager_models_training.csv").read_text(),
                         "name,accuracy,graph_breaks\ntiny,fail_to_run,0\n")

    def test_the_progress_line_shows_its_word(self) -> None:
        out = io.StringIO()
        Progress(1, out, verbose=True)(_run(TOY.name).tests[0])
        self.assertRegex(out.getvalue(), rf"^\[1/1\] wobble +0\.0s  {MODEL}\n$")

    def test_the_scoreboard_judges_it(self) -> None:
        rows = []
        for label, outcome in (("steady", "PASS"), ("shaky", TOY.name)):
            results = _run(outcome)
            problems.assign(results.tests)
            rows.append(board.Row(label, label, str(self.tmp), results.run, tests=results.tests))
        data = board.to_json(rows, "today", {"outcomes": {"shaky": rows[0].outcomes}})
        shaky = data["backends"][1]["counts"]
        self.assertEqual((shaky["WOBBLE"], shaky["PASS"], shaky["unexpected"]), (1, 1, 1))
        self.assertEqual(data["interop"]["only_one_fails"]["shaky"], ["test_models.ModelTests.test_tiny_train"])
        self.assertEqual(data["changes"]["shaky"]["newly_failing"], ["test_models.ModelTests.test_tiny_train"])
        self.assertIn("| shaky |", render.summary(BoardReport(data)))

    def test_the_worker_reports_a_skip_standing_for_it_as_data(self) -> None:
        stated = outcomes.Skipped(TOY.name, "wobbled before it began")
        for testcase, raised in ((SimpleNamespace(skipped_as=stated), None),  # unittest caught the skip
                                 (None, classify.SkipAs(stated))):  # the worker raised it
            entry = _classify(testcase, f"Skipped: {stated.message}", raised)
            self.assertEqual((entry["outcome"], entry["reason"]), ("WOBBLE", "wobbled before it began"))

    def test_it_is_gone_after_its_block(self) -> None:
        self.doCleanups()
        self.assertNotIn("WOBBLE", outcomes.reported())
        with self.assertRaisesRegex(outcomes.UnknownOutcome, "unknown outcome 'WOBBLE'"):
            outcomes.named("WOBBLE")


def _classify(testcase: object, message: str, raised: BaseException | None = None) -> dict:
    """The worker's classification of a skipped test's report."""
    item = SimpleNamespace(instance=testcase)
    call = SimpleNamespace(excinfo=SimpleNamespace(value=raised) if raised is not None else None)
    report = SimpleNamespace(when="call", passed=False, skipped=True, longrepr=("test.py", 1, message))
    return classify.classify(item, call, report)


class SkipReasonTests(unittest.TestCase):
    def test_a_skip_that_only_reads_like_a_refusal_stays_a_skip(self) -> None:
        # The outcome travels as data: a reason is never parsed for one.
        entry = _classify(SimpleNamespace(skipped_as=None), "Skipped: REFUSED: my own words")
        self.assertEqual((entry["outcome"], entry["reason"]), ("SKIP", "REFUSED: my own words"))

    def test_a_refusal_keeps_its_reason_and_stage(self) -> None:
        testcase = SimpleNamespace(skipped_as=outcomes.Skipped(outcomes.REFUSED, "training declared unsupported"),
                                   failure_stage="backend compile")
        entry = _classify(testcase, "Skipped: REFUSED: training declared unsupported")
        self.assertEqual((entry["outcome"], entry["reason"], entry["stage"]),
                         ("REFUSED", "training declared unsupported", "backend compile"))


class DeclarationTests(unittest.TestCase):
    def test_each_reported_outcome_can_be_shown(self) -> None:
        for name in outcomes.reported():
            declared = outcomes.named(name)
            with self.subTest(outcome=name):
                self.assertTrue(0 < len(declared.short) <= 7, "the progress line's column is 7 wide")
                self.assertIsNotNone(declared.html)
                self.assertFalse(declared.expected and declared.unexpected)

    def test_the_results_page_documents_each_one(self) -> None:
        text = (ROOT / "docs" / "results.md").read_text()
        table = text[text.index("## Outcomes"):].split("\n\n")[1]
        rows = [[cell.strip(" `") for cell in line.split("|")[1:3]] for line in table.splitlines()[2:]]
        self.assertEqual([name for name, _ in rows], list(outcomes.reported()))
        self.assertEqual([name for name, expected in rows if expected == "yes"],
                         [name for name in outcomes.reported() if outcomes.named(name).expected])


if __name__ == "__main__":
    unittest.main()
