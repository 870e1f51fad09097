"""results.json, junit.xml, report.html and the console summary, from hand-made results."""

from __future__ import annotations

import json
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path
from unittest import mock

from harness.report import console, upstream_bugs, writer
from harness.report.formats import accuracy_csv, html_report, junit, markdown
from harness.report.formats.format import BoardReport, Format, RunReport
from harness.report.baseline import difference_between
from harness.report.results import (
    SCHEMA_VERSION,
    ResultsError,
    RunResults,
    TestResult,
    from_json,
    load,
    merge,
    write_atomic,
)

# Its own seconds (test/harness/budgets.py): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10

HOSTILE = "ValueError: <script>alert('owned')</script> & \x1b[31m\x00"


SPECS = {"eager": "eager", "mine": "pkg:mine"}


def result(test_id: str, outcome: str, backend: str = "eager", reason: str = "", **fields) -> TestResult:
    module, family_backend, method = test_id.rsplit(".", 2)
    family = family_backend.rsplit("_", 1)[0]
    return TestResult(id=test_id, scenario=f"{module.rsplit('.', 1)[1]}.{family}.{method}", backend=backend,
                      backend_spec=SPECS[backend], outcome=outcome, reason=reason, **fields)


def sample_results() -> RunResults:
    return RunResults(
        run={"torch": "2.13.0", "python": "3.11", "platform": "linux", "started": "2026-11-26T00:00:00",
             "duration_s": 12.5, "backends": [{"name": "eager", "spec": "eager"}, {"name": "mine", "spec": "pkg:mine"}]},
        tests=[
            result("test.dynamo.m.LSTMTests_eager.test_lstm", "PASS", duration_s=1.5,
                   metrics={"frames": 1, "graphs": 1, "graph_breaks": 0, "recompiles": 0, "compile_s": 1.234}),
            result("test.dynamo.m.LSTMTests_mine.test_lstm", "ERROR", backend="mine", reason=HOSTILE,
                   details=f"Traceback\n{HOSTILE}\n</pre><script>alert(2)</script>"),
            result("test.dynamo.m.LSTMTests_eager.test_other", "XFAIL", reason="expected failure: known"),
            result("test.dynamo.m.LSTMTests_mine.test_other", "CRASH", backend="mine", reason="worker gw1 died: SIGSEGV"),
        ],
    )


class HtmlReportTests(unittest.TestCase):
    def setUp(self):
        self.html = html_report.render(RunReport(sample_results()))

    def test_script_in_an_exception_message_is_escaped(self):
        self.assertNotIn("<script>alert", self.html)
        self.assertNotIn("</pre><script>", self.html)
        self.assertIn("&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt; &amp; \ufffd", self.html)
        self.assertNotIn("\x1b", self.html)
        self.assertNotIn("\x00", self.html)
        # The page's own filtering script is the only script element.
        self.assertEqual(self.html.count("<script>"), 1)

    def test_matrix_has_a_row_per_scenario_and_a_column_per_backend(self):
        self.assertIn("<th>eager</th><th>mine</th>", self.html)
        self.assertEqual(self.html.count('<tr class="scenario"'), 2)
        self.assertIn('class="cell CRASH"', self.html)
        self.assertIn("frames 1 · graphs 1 · graph breaks 0 · recompiles 0 · compile 1.23 s", self.html)

    def test_unexpected_results_come_with_a_repro_command(self):
        self.assertIn("python run_tests.py --backend pkg:mine -k test.dynamo.m.LSTMTests_mine.test_lstm -j 1", self.html)


class JunitTests(unittest.TestCase):
    def test_valid_xml_even_with_control_characters(self):
        root = ET.fromstring(junit.render(RunReport(sample_results())).encode())
        suites = {suite.get("name"): suite for suite in root.iter("testsuite")}
        self.assertEqual(set(suites), {"eager", "mine"})
        self.assertEqual(suites["mine"].get("errors"), "2")
        self.assertEqual(suites["eager"].get("skipped"), "1")
        error = suites["mine"].find("testcase/error")
        self.assertIn("<script>", error.get("message"))  # escaped in the file, intact when parsed


class ConsoleTests(unittest.TestCase):
    def test_table_per_backend_and_unexpected_results(self):
        text = console.summary(sample_results())
        lines = text.splitlines()
        self.assertRegex(lines[0], r"^backend\s+PASS\s+XFAIL\s+SKIP\s+COLLATERAL\s+FAIL\s+ERROR\s+XPASS\s+CRASH\s+TIMEOUT\s+time\s+eager$")
        self.assertRegex(text, r"\neager\s+1\s+1\s+\.\s+\.")
        self.assertIn("2 unexpected results ([n]: the problem below):", text)
        self.assertIn("2 problems in 2 unexpected results, by the clause", text)
        self.assertIn("rerun: python run_tests.py --backend pkg:mine -k test.dynamo.m.LSTMTests_mine.test_other -j 1", text)
        self.assertTrue(lines[-1].startswith("4 tests, 2 unexpected"))

    def test_repro_carries_plugin_imports_and_custom_expectations(self):
        test = sample_results().tests[1]
        # The run's plugin imports, as results.json records them.
        command = console.repro_command(test, "/tmp/my expectations.toml",
                                        {"environment": {"DYNAMO_SUITE_IMPORTS": "my_plugins"}})
        self.assertEqual(command, "DYNAMO_SUITE_IMPORTS=my_plugins python run_tests.py --backend pkg:mine "
                                  "--expectations '/tmp/my expectations.toml' -k test.dynamo.m.LSTMTests_mine.test_lstm -j 1")


    def test_repro_keeps_the_tier_and_the_full_sweep(self):
        stress = sample_results().tests[1]
        op = TestResult(id="test.dynamo.test_op_sweep.OpSweepTests_eager.test_op_sinc", scenario="s", backend="eager",
                        backend_spec="eager", outcome="FAIL")
        run = {"tier": "nightly", "op_sweep": "full"}
        self.assertIn(" --tier nightly -k test.dynamo.m.LSTMTests_mine.test_lstm ", console.repro_command(stress, run=run))
        self.assertIn(" --tier nightly --op-sweep full -k test.dynamo.test_op_sweep.", console.repro_command(op, run=run))
        self.assertNotIn("--op-sweep", console.repro_command(op, run={"op_sweep": "quick"}))

    def test_repro_keeps_the_generated_budget(self):
        program = TestResult(id="test.dynamo.test_generated_programs.GeneratedProgramTests_eager.test_seed_0500",
                             scenario="s", backend="eager", backend_spec="eager", outcome="FAIL")
        self.assertIn(" --generated 1000 -k test.dynamo.test_generated_programs.",
                      console.repro_command(program, run={"generated": "1000"}))
        self.assertNotIn("--generated", console.repro_command(program, run={"generated": None}))
        self.assertNotIn("--generated", console.repro_command(sample_results().tests[1], run={"generated": "1000"}))


class ResultsFileTests(unittest.TestCase):
    def setUp(self):
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.tmp = Path(directory.name)

    def test_round_trip_through_json(self):
        original = sample_results()
        data = json.loads(original.dumps())
        self.assertEqual(data["schema_version"], SCHEMA_VERSION)
        self.assertEqual(data["summary"]["unexpected"], 2)
        self.assertEqual(from_json(data).tests, original.tests)

    def test_other_schema_versions_are_refused_in_one_line(self):
        data = json.loads(sample_results().dumps())
        data["schema_version"] = 99
        with self.assertRaisesRegex(ResultsError, "schema version 99, this runner reads versions 1, 2"):
            from_json(data, "old.json")
        (self.tmp / "broken.json").write_text("{")
        with self.assertRaisesRegex(ResultsError, r"broken\.json:1: not valid JSON"):
            load(self.tmp / "broken.json")

    def test_merge_keeps_every_test_once(self):
        whole = sample_results()
        halves = [RunResults(run={**whole.run, "shard": f"{i + 1}/2", "complete": True}, tests=whole.tests[i::2])
                  for i in range(2)]
        merged = merge([("a", halves[0]), ("b", halves[1])])
        self.assertEqual(sorted(t.id for t in merged.tests), sorted(t.id for t in whole.tests))
        self.assertIsNone(merged.run["shard"])
        with self.assertRaisesRegex(ResultsError, "shards must not overlap"):
            merge([("a", halves[0]), ("c", halves[0])])

    def test_write_all_replaces_files_whole(self):
        writer.write(RunReport(sample_results()), self.tmp)
        self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), ["junit.xml", "report.html", "results.json", "summary.md"])
        before = (self.tmp / "results.json").read_text()
        with mock.patch("harness.report.results.os.replace", side_effect=KeyboardInterrupt):
            with self.assertRaises(KeyboardInterrupt):
                write_atomic(self.tmp / "results.json", "half")
        self.assertEqual((self.tmp / "results.json").read_text(), before)
        self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), ["junit.xml", "report.html", "results.json", "summary.md"])


class MarkdownSummaryTests(unittest.TestCase):
    def test_table_and_unexpected_results(self):
        text = markdown.render(RunReport(sample_results()))
        self.assertIn("| backend | PASS |", text)
        self.assertIn("### Unexpected results (2)", text)

    def test_messages_cannot_break_the_table_or_add_markup(self):
        results = RunResults(run={"backends": [{"name": "eager", "spec": "eager"}]}, tests=[
            result("t.m.F_eager.test_a", "FAIL", reason="a | b <script>x</script> [link](http://e) \x1b[31m\n`code`")])
        line = [row for row in markdown.render(RunReport(results)).splitlines() if row.startswith("- FAIL")][0]
        self.assertNotIn("<script>", line)
        self.assertNotIn("|", line.replace("\\|", ""))
        self.assertNotIn("\x1b", line)
        self.assertIn("\\[link\\]", line)


class UpstreamBugsTests(unittest.TestCase):
    def results(self) -> RunResults:
        return RunResults(run={"torch": "2.13.0", "backends": [{"name": "eager", "spec": "eager"}]}, tests=[
            result("t.m.F_eager.test_a", "XFAIL", reason="expected failure: lost (pytorch#176679, #176686)"),
            result("t.m.F_eager.test_b", "XFAIL", reason="expected failure: again (pytorch/pytorch#176679)"),
            result("t.m.F_eager.test_c", "XFAIL", reason="expected failure: old (pytorch#195422, fixed after 2.13)"),
            result("t.m.F_eager.test_d", "XFAIL", reason="expected failure: no upstream issue found; near pytorch#1"),
            result("t.m.F_eager.test_e", "PASS", reason="pytorch#5"),
            result("t.m.F_eager.test_f", "FAIL", reason="AssertionError (pytorch#6)")])

    def test_each_issue_an_expected_failure_cites_first_is_counted_once(self):
        self.assertEqual(upstream_bugs.cited("a (pytorch#1, #2 and #3) and pytorch#4"), [1, 2, 3, 4])
        shown = {bug.number: bug for bug in upstream_bugs.shown(self.results())}
        self.assertEqual(sorted(shown), [176679, 195422])  # the first cited; no issue, passes, failures: none
        self.assertEqual(shown[176679].tests, ("t.m.F_eager.test_a", "t.m.F_eager.test_b"))
        self.assertTrue(shown[195422].fixed)

    def test_console_and_summary_name_the_open_ones_per_torch(self):
        line = upstream_bugs.line(self.results())
        self.assertIn("upstream bugs shown on torch 2.13.0: 1 open (pytorch#176679), 1 fixed in a later release",
                      line)
        self.assertIn(line, console.summary(self.results()))
        text = markdown.render(RunReport(self.results()))
        self.assertIn("[pytorch#176679](https://github.com/pytorch/pytorch/issues/176679): `t.m.F_eager.test_a`", text)
        self.assertIsNone(upstream_bugs.line(sample_results()))


class AccuracyCsvTests(unittest.TestCase):
    def test_model_tests_as_benchmarks_dynamo_reads_them(self):
        def model(name: str, outcome: str, backend: str = "eager", **fields) -> TestResult:
            return result(f"test.dynamo.test_models.ModelTests_{backend}.test_{name}", outcome, backend=backend,
                          metrics={"graph_breaks": 2}, **fields)

        results = RunResults(run={"backends": [{"name": "eager", "spec": "eager"}]}, tests=[
            model("resnet18_train", "PASS"), model("bert_train", "FAIL", stage="check"),
            model("gpt2_train", "ERROR", stage="backend compile"), model("t5_train", "XFAIL", stage="check"),
            model("llama_train", "SKIP"), model("resnet18_eval", "REFUSED", stage="backend compile"),
            model("resnet18_eval", "PASS", backend="mine"),
            result("test.dynamo.m.LSTMTests_eager.test_lstm_train", "PASS")])
        files = accuracy_csv.render(RunReport(results))
        self.assertEqual(sorted(files), ["eager_models_inference.csv", "eager_models_training.csv",
                                         "mine_models_inference.csv"])
        self.assertEqual(files["eager_models_training.csv"], "name,accuracy,graph_breaks\nbert,fail_accuracy,2\n"
                         "gpt2,fail_to_run,2\nresnet18,pass,2\nt5,fail_accuracy,2\n")
        self.assertEqual(files["eager_models_inference.csv"], "name,accuracy,graph_breaks\nresnet18,fail_to_run,2\n")

    def test_written_only_when_asked(self):
        with tempfile.TemporaryDirectory() as directory:
            written = writer.write(RunReport(sample_results()), Path(directory))
            self.assertFalse((Path(directory) / "accuracy").exists())
            written = writer.write(RunReport(sample_results(), accuracy=True), Path(directory))
            self.assertEqual(len(written), 4)  # no model tests: no file


class FormatEntryTests(unittest.TestCase):
    """A report format is one entry of writer.FORMATS: declared there, it is written for a run
    and for a scoreboard, with no other edit."""

    def test_a_toy_format_declared_once_is_written_for_a_run_and_a_scoreboard(self):
        from test.harness.cli import run_cli

        toy = Format("toy/format.txt", lambda report: f"a {type(report).__name__}\n", of=(RunReport, BoardReport))
        with tempfile.TemporaryDirectory() as directory, mock.patch.object(writer, "FORMATS", (*writer.FORMATS, toy)):
            tmp = Path(directory)
            (tmp / "run").mkdir()
            write_atomic(tmp / "run" / "results.json", sample_results().dumps())
            merged = run_cli("--merge", str(tmp / "run"), "--report-dir", str(tmp / "merged"))
            self.assertIn(str(tmp / "merged" / "toy" / "format.txt"), merged.stdout)
            self.assertEqual((tmp / "merged" / "toy" / "format.txt").read_text(), "a RunReport\n")
            board = run_cli("--scoreboard", str(tmp / "run"), "--report-dir", str(tmp / "board"))
            self.assertEqual(board.returncode, 0, board.stdout + board.stderr)
            self.assertIn(str(tmp / "board" / "toy" / "format.txt"), board.stdout)
            self.assertEqual((tmp / "board" / "toy" / "format.txt").read_text(), "a BoardReport\n")


class BaselineCompareTests(unittest.TestCase):
    def test_volatile_parts_of_reasons_do_not_count_as_changes(self):
        old = RunResults(run={}, tests=[result("t.m.F_eager.test_a", "CRASH", reason="worker gw0 died: SIGSEGV in f (x.py:12) after 3.2 s at 0x7f00")])
        new = RunResults(run={}, tests=[result("t.m.F_eager.test_a", "CRASH", reason="worker gw3 died: SIGSEGV in f (x.py:14) after 1.0 s at 0x7f99")])
        difference = difference_between(old, new)
        self.assertEqual((difference.new_failures, difference.changed, difference.new_passes), ([], [], []))

    def test_new_and_missing_tests(self):
        old = RunResults(run={}, tests=[result("t.m.F_eager.test_gone", "PASS")])
        new = RunResults(run={}, tests=[result("t.m.F_eager.test_new", "PASS"), result("t.m.F_eager.test_bad", "FAIL")])
        difference = difference_between(old, new)
        self.assertEqual([t.id for t in difference.added], ["t.m.F_eager.test_new"])
        self.assertEqual([t.id for t in difference.removed], ["t.m.F_eager.test_gone"])
        self.assertEqual([new.id for _, new in difference.new_failures], ["t.m.F_eager.test_bad"])


if __name__ == "__main__":
    unittest.main()
