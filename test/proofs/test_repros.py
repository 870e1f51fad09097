"""Standalone repro files: one per problem, run from outside the repository; and the plain-torch
repros of the issues ``--upstream-reports`` writes from them, reduced."""

from __future__ import annotations

import concurrent.futures
import json
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from test.harness import shared_runs
from test.harness.cli import REPO_ROOT, read_results, run_cli

# Its own seconds (test/harness/budgets.py, shared runs apart): 47 s measured 2026-11-29; with the
# upstream issues' reduced repros and their audit, 67 s of CPU 2026-12-07.
TIME_BUDGET_S = 150

FAULTY = "test.harness.faulty_backends"
TESTS = ("test.dynamo.test_backend_contract.OutputContractTests_{}.test_zero_dim",
         "test.dynamo.test_aot_autograd.InputMutationTests_{}.test_input_mutation_visible_to_caller_0_add")


BACKENDS = ("wrong_values", "drops_input_mutations")
RUN = shared_runs.DEFAULT.part([f"{FAULTY}:{name}" for name in BACKENDS],
                               [test.format(name) for name in BACKENDS for test in TESTS])


class ReproFileTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.report_dir = RUN.report_dir
        cls.tests = RUN.tests()
        cls.problems = {test["problem"] for test in cls.tests if test["problem"]}
        cls.outside = tempfile.TemporaryDirectory()  # run the repros away from the suite
        cls.addClassCleanup(cls.outside.cleanup)

    def repro(self, path: Path, *args: str) -> subprocess.CompletedProcess:
        # The faulty backends are importable, as a backend a maintainer installed is: nothing else of the suite.
        return subprocess.run([sys.executable, str(path), *args], cwd=self.outside.name, capture_output=True,
                              text=True, timeout=300, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT)})

    def test_one_repro_per_problem(self):
        # The shared run holds other proofs' problems too: each has its own file.
        problems = {test["problem"] for test in read_results(self.report_dir)["tests"] if test["problem"]}
        files = {path.stem for path in (self.report_dir / "repros").glob("*.py")}
        self.assertEqual(files, problems, RUN.describe())
        self.assertEqual(len(self.tests), len(BACKENDS) * len(TESTS), RUN.describe())
        self.assertTrue(self.problems, RUN.describe())
        self.assertIn("repro: python ", RUN.completed.stdout)

    def test_each_repro_shows_the_problem_on_its_backend_and_not_on_aot_eager(self):
        # Two at a time: each is a process of its own that imports torch, and this one waits.
        paths = [self.report_dir / "repros" / f"{problem}.py" for problem in sorted(self.problems)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            shown = list(pool.map(self.repro, paths))
            fixed = list(pool.map(lambda path: self.repro(path, "--backend", "aot_eager"), paths))
        for path, on_backend, on_aot_eager in zip(paths, shown, fixed):
            with self.subTest(repro=path.name):
                self.assertEqual(on_backend.returncode, 1, on_backend.stdout[-2000:] + on_backend.stderr[-2000:])
                self.assertRegex(on_backend.stdout, r"difference\(s\) from eager on test\.harness\.faulty_backends:")
                self.assertEqual(on_aot_eager.returncode, 0, on_aot_eager.stdout[-2000:] + on_aot_eager.stderr[-2000:])

    def test_a_repro_holds_the_graph_and_imports_nothing_of_the_suite_for_it(self):
        path = next(self.report_dir / "repros" / f"{problem}.py" for problem in sorted(self.problems)
                    if problem.startswith("wrong_values-"))
        text = path.read_text()
        self.assertIn("def forward(self, L_", text)
        self.assertNotIn("import harness", text)
        self.assertNotIn("from harness", text.split("def run_scenario")[0])


class PlainUpstreamReproTests(unittest.TestCase):
    """``--upstream-reports`` over these faulty backends' problems of the shared run: each issue's
    repro is the plain form, reduced, and alone in an empty directory it shows the problem on the
    faulty backend it came from and agrees with eager under ``--backend aot_eager``."""

    @classmethod
    def setUpClass(cls):
        directory = tempfile.TemporaryDirectory()
        cls.addClassCleanup(directory.cleanup)
        cls.run_dir = Path(directory.name) / "run"
        (cls.run_dir / "repros").mkdir(parents=True)
        # Only this module's tests: the shared run holds other proofs' problems too.
        ids = {test["id"] for test in RUN.tests()}
        data = read_results(RUN.report_dir)
        data["tests"] = [test for test in data["tests"] if test["id"] in ids]
        (cls.run_dir / "results.json").write_text(json.dumps(data))
        cls.problems = sorted({test["problem"] for test in data["tests"] if test["problem"]})
        for problem in cls.problems:
            shutil.copy(RUN.report_dir / "repros" / f"{problem}.py", cls.run_dir / "repros")
        # The faulty backends are a module of the suite: importable, as a maintainer's installed backend is.
        cls.env = {"PYTHONPATH": str(REPO_ROOT)}
        cls.done = run_cli("--upstream-reports", str(cls.run_dir), "--timeout", "120", "--reduce-seconds", "20",
                           env=cls.env)
        cls.outside = tempfile.TemporaryDirectory()
        cls.addClassCleanup(cls.outside.cleanup)

    def test_each_issue_gives_its_plain_repro_first(self):
        self.assertEqual(self.done.returncode, 0, self.done.stdout + self.done.stderr)
        self.assertTrue(self.problems, RUN.describe())
        self.assertIn(f"{len(self.problems)} of them ready to file (a standalone repro showed the behaviour named; "
                      f"{len(self.problems)} of them a plain-torch script)", self.done.stdout)
        for problem in self.problems:
            with self.subTest(problem=problem):
                issue = (self.run_dir / "upstream" / f"{problem}.md").read_text()
                script = (self.run_dir / "repros" / f"{problem}.plain.py").read_text()
                self.assertTrue(issue.split("\n", 2)[2].startswith("```python\n" + script), issue[:600])
                self.assertLessEqual(len(script.splitlines()), 40, script)
                self.assertIn("It was reduced in ", issue)
                for machine_path in (str(REPO_ROOT), str(self.run_dir), tempfile.gettempdir() + "/"):
                    self.assertNotIn(machine_path, issue)

    def test_each_shows_the_problem_on_its_backend_and_agrees_on_aot_eager(self):
        # scripts/upstream_audit.py: each ready issue's repro alone in an empty directory, and its control.
        audit = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "upstream_audit.py"), "--python",
                                sys.executable, "--machine-paths", "|".join(re.escape(path) for path in (
                                    str(REPO_ROOT), str(self.run_dir.parent))), str(self.run_dir)],
                               capture_output=True, text=True, timeout=600, env={"PATH": "/usr/bin:/bin", **self.env})
        self.assertEqual(audit.returncode, 0, audit.stderr)
        totals = json.loads(audit.stdout.splitlines()[-1])
        self.assertEqual(totals["ready"], len(self.problems), audit.stdout)
        self.assertEqual(totals["plain_within_40_lines_showing"], len(self.problems), audit.stdout)
        self.assertEqual(totals["controls"], {"0": len(self.problems)}, audit.stdout)
        self.assertEqual(totals["files_with_machine_paths"], 0, audit.stdout)


if __name__ == "__main__":
    unittest.main()
