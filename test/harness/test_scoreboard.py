"""The scoreboard (harness/report/scoreboard/): runs of two faulty backends and a correct one,
recorded as three runs in their own directories, put side by side: the clause matrix, the
interop view, the family cells with their repros, what changed since an earlier board, a
backend that did not install, and the runs it refuses in one line."""

from __future__ import annotations

import io
import json
import tempfile
import unittest
from pathlib import Path

from harness.checks import clauses
from harness.report import problems
from harness.report.results import RunResults, TestResult, write_atomic
from harness.report.scoreboard import board, render
from test.harness.cli import run_cli

# Its own seconds (test/harness/budgets.py): 2 s measured 2026-11-30.
TIME_BUDGET_S = 15

CONTRACT = "test_backend_contract"
# scenario -> outcome on each backend: wrong_values fails value checks, drops_input_mutations
# fails mutation checks, aot_eager passes all; one scenario fails everywhere (torch's).
SCENARIOS = {
    f"{CONTRACT}.OutputContractTests.test_layouts_0_contiguous": ("FAIL", "PASS", "PASS"),
    f"{CONTRACT}.OutputContractTests.test_zero_dim": ("FAIL", "PASS", "PASS"),
    f"{CONTRACT}.SideEffectContractTests.test_mutation_through_views": ("PASS", "FAIL", "PASS"),
    f"{CONTRACT}.GradientContractTests.test_first_order_1_softmax": ("PASS", "PASS", "PASS"),
    "test_aot_autograd.LSTMTests.test_lstm": ("XFAIL", "XFAIL", "XFAIL"),
    "test_aot_autograd.LSTMTests.test_lstm_nightly": ("SKIP", "SKIP", "SKIP"),
}
BACKENDS = ("wrong_values", "drops_input_mutations", "aot_eager")


def _run(backend: str, index: int, torch: str = "2.13.0+cpu", scenarios=SCENARIOS) -> RunResults:
    tests = []
    for scenario, outcomes in scenarios.items():
        module, family, method = scenario.split(".")
        outcome = outcomes[index]
        tests.append(TestResult(id=f"test.dynamo.{module}.{family}_{backend}.{method}", scenario=scenario,
                                backend=backend, backend_spec=backend, outcome=outcome,
                                reason={"FAIL": "AssertionError: output: values differ",
                                        "XFAIL": "expected failure: a known bug (pytorch#12345)"}.get(outcome, ""),
                                stage="check" if outcome in ("FAIL", "XFAIL") else None))
    problems.assign(tests)
    return RunResults(run={"torch": torch, "suite": "0.5.0", "backends": [
        {"name": backend, "spec": backend, "package": f"{backend}-pkg 1.0"}]}, tests=tests)


class ScoreboardTests(unittest.TestCase):
    def setUp(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.tmp = Path(directory.name)
        self.runs = []
        for index, backend in enumerate(BACKENDS):
            path = self.tmp / backend
            path.mkdir()
            write_atomic(path / "results.json", _run(backend, index).dumps())
            self.runs.append(str(path))
        # The wrong-values run wrote a repro for its problem.
        (self.tmp / "wrong_values" / "repros").mkdir()
        problem = problems.group(_run("wrong_values", 0).tests)[0].id
        (self.tmp / "wrong_values" / "repros" / f"{problem}.py").write_text("# repro\n")
        self.problem = problem

    def build(self, *extra: str) -> dict:
        out = self.tmp / "board"
        completed = run_cli("--scoreboard", *self.runs, *extra, "--report-dir", str(out))
        self.assertEqual(completed.returncode, 0, completed.stdout + completed.stderr)
        self.out = out
        return json.loads((out / "scoreboard.json").read_text())

    def test_rows_carry_versions_and_the_counts_of_their_runs(self):
        data = self.build()
        self.assertEqual([backend["label"] for backend in data["backends"]], list(BACKENDS))
        first = data["backends"][0]
        self.assertEqual(first["versions"], {"torch": "2.13.0+cpu", "package": "wrong_values-pkg 1.0", "suite": "0.5.0"})
        self.assertEqual(first["counts"]["tests"], 6)
        self.assertEqual(first["counts"]["PASS"], 2)
        self.assertEqual(first["counts"]["unexpected"], 2)
        self.assertEqual(first["counts"]["problems"], 1)

    def test_each_row_names_the_open_upstream_bugs_its_expected_failures_showed(self):
        data = self.build()
        self.assertEqual([backend["upstream_bugs"] for backend in data["backends"]], [[12345]] * 3)
        self.assertIn("| 1: [#12345](https://github.com/pytorch/pytorch/issues/12345) |",
                      (self.out / "summary.md").read_text())

    def test_clause_matrix_is_pass_rate_per_clause_of_the_scenario(self):
        matrix = self.build()["clauses"]
        values = clauses.of_scenario(f"{CONTRACT}.OutputContractTests.test_zero_dim")
        mutations = clauses.of_scenario(f"{CONTRACT}.SideEffectContractTests.test_mutation_through_views")
        # Under the values clause: the two output tests, the gradient test and the LSTM (an
        # expected failure, which counts as failing); the skipped test counts nowhere.
        self.assertEqual([clauses.of_scenario(name) for name in SCENARIOS].count(values), 5)
        self.assertEqual(matrix[values], {"wrong_values": [1, 4], "drops_input_mutations": [3, 4],
                                          "aot_eager": [3, 4]})
        self.assertEqual(matrix[mutations], {"wrong_values": [1, 1], "drops_input_mutations": [0, 1],
                                             "aot_eager": [1, 1]})

    def test_interop_says_who_fails_alone_and_what_fails_everywhere(self):
        shared = self.build()["interop"]
        self.assertEqual(shared["common"], 5)
        self.assertEqual(shared["all_pass"], 1)
        self.assertEqual(shared["all_fail"], ["test_aot_autograd.LSTMTests.test_lstm"])
        self.assertEqual(shared["only_one_fails"], {
            "wrong_values": [f"{CONTRACT}.OutputContractTests.test_layouts_0_contiguous",
                             f"{CONTRACT}.OutputContractTests.test_zero_dim"],
            "drops_input_mutations": [f"{CONTRACT}.SideEffectContractTests.test_mutation_through_views"],
            "aot_eager": []})

    def test_the_page_links_each_problem_to_its_repro(self):
        self.build()
        page = (self.out / "index.html").read_text()
        self.assertIn(f"href='../wrong_values/repros/{self.problem}.py'", page)
        self.assertIn("hsl(", page)  # the heat map
        self.assertIn("wrong_values-pkg 1.0", page)
        self.assertIn("| clause | wrong\\_values | drops\\_input\\_mutations | aot\\_eager |",
                      (self.out / "summary.md").read_text())

    def test_the_page_escapes_the_way_report_html_does(self):
        # One HTML escape for every page (harness/report/formats/pages.py): markup shown as
        # text, terminal colour codes taken out.
        hostile = _run("aot_eager", 2)
        hostile.run["backends"][0]["package"] = "<script>alert('x')</script> \x1b[31mred"
        write_atomic(Path(self.runs[2]) / "results.json", hostile.dumps())
        self.build()
        page = (self.out / "index.html").read_text()
        self.assertIn("<td>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; red</td>", page)
        self.assertNotIn("<script>", page)

    def test_tomorrow_is_compared_with_today(self):
        self.build()
        previous = self.tmp / "previous.json"
        previous.write_text((self.out / "scoreboard.json").read_text())
        # aot_eager now fails one test, and wrong_values passes one it failed.
        fixed = {name: (outcomes if name != f"{CONTRACT}.OutputContractTests.test_zero_dim" else ("PASS", "PASS", "FAIL"))
                 for name, outcomes in SCENARIOS.items()}
        for index, backend in enumerate(BACKENDS):
            write_atomic(Path(self.runs[index]) / "results.json", _run(backend, index, scenarios=fixed).dumps())
        changed = self.build("--baseline", str(previous))["changes"]
        self.assertEqual(changed["aot_eager"]["newly_failing"], [f"{CONTRACT}.OutputContractTests.test_zero_dim"])
        self.assertEqual(changed["wrong_values"]["newly_passing"], [f"{CONTRACT}.OutputContractTests.test_zero_dim"])
        self.assertEqual(changed["drops_input_mutations"], {"newly_failing": [], "newly_passing": []})

    def test_a_backend_that_did_not_install_is_a_row(self):
        failed = self.tmp / "thunder"
        failed.mkdir()
        (failed / board.INSTALL_FAILED).write_text(json.dumps({"backend": "thunder.dynamo:ThunderCompiler()",
                                                               "package": "lightning-thunder",
                                                               "reason": "import thunder: AttributeError"}))
        self.runs.append(str(failed))
        data = self.build()
        row = data["backends"][-1]
        self.assertEqual((row["label"], row["install_failed"]), ("ThunderCompiler", "import thunder: AttributeError"))
        self.assertNotIn("ThunderCompiler", data["outcomes"])
        self.assertIn("not run: import thunder: AttributeError", (self.out / "index.html").read_text())

    def test_the_same_backend_on_two_torches_is_told_apart(self):
        other = self.tmp / "aot_eager_nightly"
        other.mkdir()
        write_atomic(other / "results.json", _run("aot_eager", 2, torch="2.14.0.dev20261129+cpu").dumps())
        self.runs.append(str(other))
        labels = [backend["label"] for backend in self.build()["backends"]]
        self.assertEqual(labels[2:], ["aot_eager (torch 2.13.0+cpu)", "aot_eager (torch 2.14.0.dev20261129+cpu)"])

    def test_runs_that_share_no_test_are_refused_in_one_line(self):
        other = self.tmp / "other"
        other.mkdir()
        write_atomic(other / "results.json", _run("eager", 0, scenarios={"test_x.Family.test_y": ("PASS",)}).dumps())
        completed = run_cli("--scoreboard", self.runs[0], str(other), "--report-dir", str(self.tmp / "board"))
        self.assertEqual(completed.returncode, 2)
        self.assertRegex(completed.stderr.strip(), r"^run_tests\.py: error: the runs share no test: wrong_values .*$")

    def test_a_run_of_an_unknown_schema_is_refused_in_one_line(self):
        data = json.loads((Path(self.runs[0]) / "results.json").read_text())
        data["schema_version"] = 99
        (Path(self.runs[0]) / "results.json").write_text(json.dumps(data))
        completed = run_cli("--scoreboard", *self.runs, "--report-dir", str(self.tmp / "board"))
        self.assertEqual(completed.returncode, 2)
        self.assertEqual(len(completed.stderr.strip().splitlines()), 1)
        self.assertIn("results schema version 99", completed.stderr)

    def test_eager_share_and_perf_speed_up_per_row(self):
        run = _run("aot_eager", 2)
        run.tests[0].eager_share = {"share": 0.5}
        run.tests[1].eager_share = {"share": 0.1}
        run.tests[2].eager_share = {"share": 0.2}
        run.tests[0].perf = {"speedup": 2.0}
        run.tests[1].perf = {"speedup": 0.5}
        run.tests[3].perf = {"speedup": 8.0}
        write_atomic(Path(self.runs[2]) / "results.json", run.dumps())
        row = self.build()["backends"][2]
        self.assertEqual(row["eager_share"], 0.2)  # the median
        self.assertEqual(row["speedup"], 2.0)  # the geometric mean of 2, 0.5 and 8
        self.assertIn("2.00x", (self.out / "index.html").read_text())

    def test_a_perf_tier_run_beside_the_default_tier_fills_its_row(self):
        # Each real backend runs the default tier and the perf tier separately: one row.
        perf_dir = self.tmp / "aot_eager-perf"
        perf_dir.mkdir()
        perf = _run("aot_eager", 2, scenarios={"test_perf.PerfTests.test_graph_mlp_train": ("PASS",) * 3,
                                               "test_perf.PerfTests.test_graph_attention": ("PASS",) * 3})
        perf.tests[0].perf, perf.tests[1].perf = {"speedup": 0.5}, {"speedup": 0.8}
        write_atomic(perf_dir / "results.json", perf.dumps())
        self.runs.append(str(perf_dir))
        data = self.build()
        row = data["backends"][2]
        self.assertEqual([backend["label"] for backend in data["backends"]], list(BACKENDS))
        self.assertEqual((row["sources"], row["counts"]["tests"]), ([self.runs[2], str(perf_dir)], 8))
        self.assertEqual(row["speedup"], 0.632)
        self.assertIn("<td>0.63x (slower than eager)</td>", (self.out / "index.html").read_text())
        self.assertEqual(row["perf_tests"], {"ran": 2, "measured": 2})
        for test in perf.tests:  # a backend that fails every perf test: the board says so
            test.perf, test.outcome = None, "ERROR"
        write_atomic(perf_dir / "results.json", perf.dumps())
        self.build()
        self.assertIn("<td>none measured: its 2 perf tests failed</td>", (self.out / "index.html").read_text())
        # A second run of tests the row already has stays a row of its own.
        again = self.tmp / "aot_eager-again"
        again.mkdir()
        write_atomic(again / "results.json", _run("aot_eager", 2).dumps())
        self.runs.append(str(again))
        self.assertEqual(self.build()["backends"][-1]["label"], "aot_eager #2")

    def test_a_snapshot_s_gzipped_runs_are_read(self):
        # docs/scoreboard/<date>/runs/<row>/results.json.gz: a snapshot's board can be rebuilt.
        import gzip

        path = Path(self.runs[0])
        (path / "results.json.gz").write_bytes(gzip.compress((path / "results.json").read_bytes()))
        (path / "results.json").unlink()
        self.assertEqual(self.build()["backends"][0]["counts"]["tests"], 6)

    def test_console_lines(self):
        rows = board.read(self.runs)
        lines = render.console_lines(board.to_json(rows, "now"))
        self.assertEqual(lines[0], "wrong_values (wrong_values-pkg 1.0, torch 2.13.0+cpu): 6 tests, 2 passed, "
                                   "2 unexpected in 1 problems, open upstream bugs shown: 1")
        stream = io.StringIO()
        stream.write("\n".join(lines))
        self.assertIn("5 tests ran on every backend", stream.getvalue())


if __name__ == "__main__":
    unittest.main()
