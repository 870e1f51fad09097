"""``--upstream-reports RUN``: each problem of a finished run as an issue for the backend's
tracker (harness/report/formats/upstream.py), its repro run first (harness.repros.generic.check).

The run is made up (results.json and repros written here), so the repros are small scripts
that end as real ones do: exit 1 with the differences printed (the problem shows), exit 0
(it does not), or never (still running at the time limit)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import types
import unittest
from pathlib import Path

from harness.report import problems
from harness.report.formats import upstream
from harness.repros import generic, prepare
from harness.report.results import RunResults, TestResult, write_atomic
from harness.report.scoreboard import board
from test.harness.cli import run_cli

# Its own seconds (test/harness/budgets.py): 3 s measured 2026-12-03.
TIME_BUDGET_S = 20

RUN = {"torch": "2.13.0+cpu", "suite": "0.5.0", "python": "3.11.7", "platform": "Linux-x86_64", "device": "cpu",
       "started": "2026-12-03T06:00:00+00:00", "command": "dynamo-aot-suite",
       "backends": [{"name": "mycc", "spec": "mycc_pkg:mycc", "package": "mycc-pkg 1.2"}]}
# Under --backend aot_eager, the control, the graphs agree.
SHOWS = ('GRAPHS = [{"code": "..."}]\nimport sys\nif "--backend" in sys.argv:\n    sys.exit(0)\n'
         'print("1 difference(s) from eager on mycc_pkg:mycc:")\n'
         'print("  graph 0: output: values differ from eager (Mismatched elements: 1 / 4); first at index (2,): '
         'compiled nan, eager 0.5")\nsys.exit(1)\n')
GONE = 'GRAPHS = []\nprint("the problem does not show on mycc_pkg:mycc")\n'
HANGS = 'GRAPHS = []\nimport time\ntime.sleep(60)\n'
RAISES = 'GRAPHS = [{"code": "..."}]\nraise NotImplementedError("no kernel for this device")\n'  # exits 1 too
# Graphs that agree with eager hand over to the suite's scenario, which shows it: not standalone.
IN_SCENARIO = ('GRAPHS = [{"code": "..."}]\nimport sys\nprint("the 1 graph(s) agree with eager on mycc_pkg:mycc; running '
               'the scenario itself")\nprint("AssertionError: recompiled 2 times, once expected")\nsys.exit(1)\n')


def _test(method: str, outcome: str, reason: str, stage: str) -> TestResult:
    return TestResult(id=f"test.dynamo.test_backend_contract.OutputContractTests_mycc.{method}",
                      scenario=f"test_backend_contract.OutputContractTests.{method}", backend="mycc",
                      backend_spec="mycc_pkg:mycc", outcome=outcome, reason=reason, stage=stage)


class KnownUpstreamTests(unittest.TestCase):
    def test_a_problem_already_open_upstream_is_named_not_written(self):
        # The bundled expectations have the argmin program fail on inductor, citing its open issue.
        scenario = "test_generated_programs.FoundProgramTests.test_argmin_of_a_transposed_sum"
        tests = [TestResult(id=f"test.dynamo.test_generated_programs.FoundProgramTests_mycc.{scenario.rsplit('.', 1)[1]}",
                            scenario=scenario, backend="mycc", backend_spec="mycc_pkg:mycc", outcome="FAIL",
                            reason="AssertionError: program disagrees with eager: output: values differ from eager",
                            stage="check"),
                 _test("test_zero_dim", "FAIL", "AssertionError: output: values differ from eager", "check")]
        problems.assign(tests)
        with tempfile.TemporaryDirectory() as directory:
            run_dir = Path(directory)
            write_atomic(run_dir / "results.json", RunResults(run=RUN, tests=tests).dumps())
            done = run_cli("--upstream-reports", str(run_dir), "--timeout", "3")
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertIn("1 issues, 0 of them ready to file", done.stdout)
            self.assertIn("1 already open upstream (named, not written)", done.stdout)
            upstream = run_dir / "upstream"
            issues = sorted(path.name for path in upstream.rglob("*.md") if path.name != "README.md")
            self.assertEqual(issues, [f"{tests[1].problem}.md"])
            self.assertIn("already open upstream", (upstream / "README.md").read_text())
            self.assertIn("[pytorch#197739](https://github.com/pytorch/pytorch/issues/197739)",
                          (upstream / "README.md").read_text())
            listed = {entry["id"]: entry for entry in json.loads((upstream / "issues.json").read_text())}
            self.assertEqual(listed[tests[0].problem]["upstream"], 197739)
            self.assertFalse(listed[tests[0].problem]["ready"])


class PlainReproWordsTests(unittest.TestCase):
    """What an issue says of its plain repro: a title naming the op, its inputs and what it
    printed; and no path of the machine that wrote it."""

    POW = {"code": "def forward(self, L_x_ : torch.Tensor, L_exponent_ : torch.Tensor):\n    l_x_ = L_x_\n"
                   "    pow_1 = torch.pow(l_x_, L_exponent_)\n    return (pow_1,)\n",
           "inputs": [{"shape": [4, 5, 5], "stride": [25, 5, 1], "dtype": "torch.float32"},
                      {"shape": [], "stride": [], "dtype": "torch.float64"}]}

    def test_a_title_names_the_op_its_inputs_and_what_the_repro_printed(self):
        printed = ("UserWarning: a warning the backend printed first\n"
                   "the compiled call raised AssertionError('Please convert all Tensors to FakeTensors first\\n"
                   "  File \"/somewhere/fake_tensor.py\", line 9')")
        self.assertEqual(prepare.title(self.POW, printed, "turbine_cpu"),
                         "pow of float32 (4, 5, 5) and a 0-d float64: AssertionError: Please convert all Tensors to "
                         'FakeTensors first (torch.compile, backend="turbine_cpu")')
        self.assertEqual(upstream.said("output: values differ from eager: Tensor-likes are not close!\n\nMismatch"),
                         "output: values differ from eager")

    def test_the_machines_paths_are_left_out(self):
        text = (f"{sys.prefix}/lib/python3.11/site-packages/torch/fx/graph.py:12 "
                f"{tempfile.gettempdir()}/dynamo-suite-repro-abc/repro.py {os.getcwd()}/runs/x "
                "/opt/clone/harness/checks/compare.py:142 /srv/runs/mycc/repros/mycc-error-x-123abc.py")
        self.assertEqual(upstream.scrubbed(text), "site-packages/torch/fx/graph.py:12 repro.py ./runs/x "
                                                  "harness/checks/compare.py:142 mycc-error-x-123abc.py")


class ReproRunTests(unittest.TestCase):
    """How the repros are run before an issue is written: by their name, in their directory,
    wherever the run's directory was given from; a backend in a file found by its name."""

    def test_a_repro_under_a_relative_run_directory_runs(self):
        with tempfile.TemporaryDirectory() as directory:
            (Path(directory) / "reports" / "repros").mkdir(parents=True)
            (Path(directory) / "reports" / "repros" / "x.py").write_text("print('ran')\n")
            here = os.getcwd()
            os.chdir(directory)
            try:
                checked = generic.check(Path("reports/repros/x.py"), 60)
            finally:
                os.chdir(here)
        self.assertEqual((checked.exit_code, checked.output), (0, "ran"))

    def test_a_backend_in_a_file_is_importable_where_the_repro_runs(self):
        self.assertIsNone(prepare.backend_environment("thunder.dynamo:ThunderCompiler()"))
        environment = prepare.backend_environment("backends/mine.py:compiler")
        self.assertEqual(environment["PYTHONPATH"].split(os.pathsep)[0], os.path.abspath("backends"))


class UpstreamReportTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        directory = tempfile.TemporaryDirectory()
        cls.addClassCleanup(directory.cleanup)
        cls.run_dir = Path(directory.name) / "run"
        cls.run_dir.mkdir()
        tests = [_test("test_nan_and_inf_propagate", "FAIL", "AssertionError: output[2]: values differ from eager",
                       "check"),
                 _test("test_zero_dim", "FAIL", "AssertionError: output: values differ from eager", "check"),
                 _test("test_layouts_0_contiguous", "ERROR", "RuntimeError: unsupported layout 7", "backend compile"),
                 _test("test_scalars", "ERROR", "ValueError: cannot lower scalar", "backend run"),
                 _test("test_dtype", "FAIL", "AssertionError: output: dtype differs from eager", "check"),
                 _test("test_recompiles", "FAIL", "AssertionError: recompiled 2 times, once expected", "check"),
                 _test("test_shape", "FAIL", "AssertionError: output: shape differs from eager", "check"),
                 _test("test_passes_unexpectedly", "XPASS", "", "check")]
        problems.assign(tests)
        cls.tests = tests
        write_atomic(cls.run_dir / "results.json", RunResults(run=RUN, tests=tests).dumps())
        found = {problem.outcome + problem.stage: problem.id for problem in problems.group(tests)
                 if not any(word in problem.signature for word in ("dtype", "recompiled", "shape"))}
        cls.ids = found
        (cls.run_dir / "repros").mkdir()
        cls.ids["dtype"] = next(problem.id for problem in problems.group(tests) if "dtype" in problem.signature)
        found["dtype"] = cls.ids["dtype"]
        cls.ids["scenario"] = found["scenario"] = next(problem.id for problem in problems.group(tests)
                                                       if "recompiled" in problem.signature)
        cls.ids["raises"] = found["raises"] = next(problem.id for problem in problems.group(tests)
                                                   if "shape" in problem.signature)
        # A repro that shows a difference, but values where the check named the dtype.
        for key, text in (("FAILcheck", SHOWS), ("ERRORbackend compile", GONE), ("ERRORbackend run", HANGS),
                          ("dtype", SHOWS), ("scenario", IN_SCENARIO), ("raises", RAISES)):
            (cls.run_dir / "repros" / f"{found[key]}.py").write_text(text)
        cls.done = run_cli("--upstream-reports", str(cls.run_dir), "--timeout", "3")
        cls.upstream = cls.run_dir / "upstream"

    PLACES = {"FAILcheck": "", "scenario": "needs-suite/", "ERRORbackend compile": "unconfirmed/",
              "ERRORbackend run": "unconfirmed/", "dtype": "unconfirmed/", "raises": "unconfirmed/"}

    def issue(self, key: str) -> str:
        return (self.upstream / f"{self.PLACES[key]}{self.ids[key]}.md").read_text()

    def test_one_issue_per_problem_and_a_list(self):
        self.assertEqual(self.done.returncode, 0, self.done.stdout + self.done.stderr)
        written = sorted(str(path.relative_to(self.upstream)) for path in self.upstream.rglob("*") if path.is_file())
        # The unexpected pass is news for the suite's expectations, not for the backend's tracker.
        self.assertEqual(written, sorted([*(f"{place}{self.ids[key]}.md" for key, place in self.PLACES.items()),
                                          "README.md", "issues.json"]))
        self.assertIn("6 issues, 1 of them ready to file (a standalone repro showed the behaviour named; 0 of them a plain-torch script), "
                      "1 needing the suite, 4 not confirmed", self.done.stdout)

    def test_an_issue_says_what_a_maintainer_needs(self):
        text = self.issue("FAILcheck")
        self.assertTrue(text.startswith('# torch.compile(backend="mycc_pkg:mycc"): output: values differ from eager '
                                        "(output contract: nan and inf propagate)\n"), text[:200])
        self.assertIn("**Versions**: torch 2.13.0+cpu, mycc-pkg 1.2, Python 3.11.7, Linux-x86_64, device cpu.", text)
        self.assertIn("clause *output values (floats, large integers, NaN and inf)*", text)
        self.assertIn("2 of its tests show it", text)
        self.assertIn(SHOWS.strip(), text)  # the repro, inline
        self.assertIn("exit 1 in", text)
        self.assertIn("first at index (2,): compiled nan, eager 0.5", text)  # what each gives
        self.assertIn("It needs torch and the backend's package only.", text)
        self.assertIn("dynamo-aot-suite --backend mycc_pkg:mycc -k test.dynamo.test_backend_contract."
                      "OutputContractTests_mycc.test_", text)

    def test_a_generic_repro_is_marked_as_the_fallback(self):
        self.assertIn("**Generic repro** (the fallback form: ", self.issue("FAILcheck"))

    def test_a_repro_that_shows_under_aot_eager_too_is_not_ready(self):
        problem = next(problem for problem in problems.group(self.tests) if problem.id == self.ids["FAILcheck"])
        shown = generic.Checked("repro.py", "", True, 1, "graph 0: output: values differ from eager", 1.0)
        self.assertTrue(upstream.ready(problem, shown))
        shown.control = 1
        self.assertFalse(upstream.ready(problem, shown))
        self.assertIn("exit 1 under --backend aot_eager too", upstream.status(shown, problem))

    def test_issues_whose_reduced_scripts_are_the_same_name_each_other(self):
        # Twenty issues of one bug are one issue to file: the reduced script tells them apart or not.
        found = {problem.id: problem for problem in problems.group(self.tests)}
        values, dtype = found[self.ids["FAILcheck"]], found[self.ids["dtype"]]
        script = "\nimport torch\nprint(torch.ones(1) + 1)\n"

        def plain(heading: str, output: str) -> generic.Checked:
            return generic.Checked("repro.py", f'"""{heading}"""{script}', True, 1, output, 1.0, form="plain",
                                   title=heading, control=0)

        report = types.SimpleNamespace(checked={
            values.id: plain("one", "output: values differ from eager"),
            dtype.id: plain("two", "output: dtype differs from eager")})
        same = upstream.same_repro([values, dtype], report)
        self.assertEqual({key: [other.id for other in others] for key, others in same.items()},
                         {values.id: [dtype.id], dtype.id: [values.id]})
        report.checked[dtype.id] = plain("two", "output: values differ from eager")  # not the dtype it names
        self.assertEqual(upstream.same_repro([values, dtype], report), {})

    def test_a_repro_that_did_not_show_or_finish_is_said_and_not_ready(self):
        self.assertIn("exit 0", self.issue("ERRORbackend compile"))
        self.assertIn("the problem did not show", self.issue("ERRORbackend compile"))
        self.assertIn("still running after", self.issue("ERRORbackend run"))
        self.assertIn("needs `pip install dynamo-aot-suite==0.5.0`", self.issue("ERRORbackend run"))
        self.assertRegex(self.issue("ERRORbackend compile"), r"# torch.compile\(backend=\"mycc_pkg:mycc\"\): "
                                                             r"compiling fails: RuntimeError: unsupported layout #")
        listing = {entry["id"]: entry for entry in json.loads((self.upstream / "issues.json").read_text())}
        self.assertEqual({key: listing[self.ids[key]]["ready"] for key in self.PLACES},
                         {key: place == "" for key, place in self.PLACES.items()})
        self.assertIn("a difference shows, but not the behaviour the title names", self.issue("dtype"))
        # A repro that raised (exit 1 as well) showed nothing: it says so, with its error.
        self.assertIn("the repro itself raised", self.issue("raises"))
        self.assertIn("NotImplementedError: no kernel for this device", self.issue("raises"))
        self.assertEqual({entry["tracker"] for entry in listing.values()}, {"mycc-pkg"})
        index = (self.upstream / "README.md").read_text()
        self.assertIn("**1 ready to file** (here)", index)
        self.assertIn(f"](unconfirmed/{self.ids['dtype']}.md)", index)
        self.assertIn("needs `pip install dynamo-aot-suite==0.5.0`", self.issue("scenario"))

    def test_the_scoreboard_counts_and_links_them(self):
        rows = board.read([str(self.run_dir)])
        out = self.run_dir.parent / "board"
        data = board.to_json(rows, "now", None, out)
        self.assertEqual(data["backends"][0]["issues"], {"written": 6, "ready": 1, "index": "../run/upstream/README.md"})
        cells = board.families(rows, out)["test_backend_contract.OutputContractTests"]["mycc"]
        issue = {problem: link for problem, _, link in cells.problems}[self.ids["FAILcheck"]]
        self.assertEqual(issue, f"../run/upstream/{self.ids['FAILcheck']}.md")

    def test_a_directory_without_results_is_one_line(self):
        done = run_cli("--upstream-reports", str(self.run_dir / "repros"))
        self.assertEqual(done.returncode, 2)
        self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)


if __name__ == "__main__":
    unittest.main()
