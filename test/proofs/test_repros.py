"""Standalone repro files: one per problem, run from outside the repository."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from test.harness.cli import read_results, run_cli

FAULTY = "test.harness.faulty_backends"
TESTS = ("test.dynamo.test_backend_contract.OutputContractTests_{}.test_zero_dim",
         "test.dynamo.test_aot_autograd.InputMutationTests_{}.test_input_mutation_visible_to_caller_0_add")


class ReproFileTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        directory = tempfile.TemporaryDirectory()
        cls.addClassCleanup(directory.cleanup)
        cls.report_dir = Path(directory.name)
        backends = ("wrong_values", "drops_input_mutations")
        patterns = [arg for name in backends for test in TESTS for arg in ("-k", test.format(name))]
        cls.completed = run_cli("--backend", ",".join(f"{FAULTY}:{name}" for name in backends), *patterns,
                                "-j", "2", "--report-dir", str(cls.report_dir))
        cls.results = read_results(cls.report_dir)
        cls.outside = tempfile.TemporaryDirectory()  # run the repros away from the suite
        cls.addClassCleanup(cls.outside.cleanup)

    def repro(self, path: Path, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(path), *args], cwd=self.outside.name, capture_output=True,
                              text=True, timeout=300, env={"PATH": "/usr/bin:/bin"})

    def test_one_repro_per_problem(self):
        problems = {test["problem"] for test in self.results["tests"] if test["problem"]}
        files = {path.stem for path in (self.report_dir / "repros").glob("*.py")}
        self.assertEqual(files, problems, self.completed.stdout[-3000:])
        self.assertIn("repro: python ", self.completed.stdout)

    def test_each_repro_shows_the_problem_on_its_backend_and_not_on_aot_eager(self):
        for path in sorted((self.report_dir / "repros").glob("*.py")):
            with self.subTest(repro=path.name):
                shown = self.repro(path)
                self.assertEqual(shown.returncode, 1, shown.stdout[-2000:] + shown.stderr[-2000:])
                self.assertRegex(shown.stdout, r"difference\(s\) from eager on test\.harness\.faulty_backends:")
                fixed = self.repro(path, "--backend", "aot_eager")
                self.assertEqual(fixed.returncode, 0, fixed.stdout[-2000:] + fixed.stderr[-2000:])

    def test_a_repro_holds_the_graph_and_imports_nothing_of_the_suite_for_it(self):
        path = next((self.report_dir / "repros").glob("wrong_values-*.py"))
        text = path.read_text()
        self.assertIn("def forward(self, L_", text)
        self.assertNotIn("import harness", text)
        self.assertNotIn("from harness", text.split("def run_scenario")[0])


if __name__ == "__main__":
    unittest.main()
