"""Standalone repro files: one per problem, run from outside the repository."""

from __future__ import annotations

import concurrent.futures
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from test.harness import shared_runs
from test.harness.cli import read_results

# Its own seconds (test/harness/budgets.py, shared runs apart): 47 s measured 2026-11-29.
TIME_BUDGET_S = 100

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
        return subprocess.run([sys.executable, str(path), *args], cwd=self.outside.name, capture_output=True,
                              text=True, timeout=300, env={"PATH": "/usr/bin:/bin"})

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


if __name__ == "__main__":
    unittest.main()
