"""The suite as a backend team adopts it: its wheel installed (not editable) into a fresh
virtual environment beside torch, run from directories that are not a clone, and the example
project (examples/mycc) run with only its pyproject.toml section to configure it.

Slow by nature (a wheel build and a venv: tens of seconds on 2 cores before any test runs),
so it lives with the proofs, in one shared setUpClass; the venv borrows this interpreter's
torch rather than unpacking it again.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

from test.harness.cli import REPO_ROOT, run_cli

# Its own seconds (test/harness/budgets.py): 130 s measured 2026-11-29.
TIME_BUDGET_S = 265

EXAMPLE = REPO_ROOT / "examples" / "mycc"
TORCH = "torch==2.13.0"
# A few tests of each kind the example must show, so the runs stay short.
BUNDLED = ("test.dynamo.test_python_autograd.PythonAutogradTests_{backend}.test_*",
           "test.dynamo.test_aot_autograd.ExpandMutationTests_{backend}.test_overlapping_write_through_expand_raises",
           "test.dynamo.test_backend_contract.*_{backend}.test_dtypes_*")  # float64: mycc refuses it
# An entry of the example's own expectations file.
PROJECT_XFAIL = "test.dynamo.test_aot_autograd.ParameterConstructionTests_mycc.test_parameter_from_input_returned"


def _environment() -> dict[str, str]:
    """The user's environment, without the suite's settings or this venv's paths."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    return {name: value for name, value in os.environ.items()
            if not name.startswith("DYNAMO_SUITE_") and name not in drop} | {"CI": "true"}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class InstalledPackageTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        directory = tempfile.TemporaryDirectory(prefix="dynamo-suite-installed-")
        cls.addClassCleanup(directory.cleanup)
        cls.tmp = Path(directory.name)
        source = cls.tmp / "source"
        cls._copy_sources(source)
        cls.wheel = cls._build_wheel(source, cls.tmp / "dist")
        venv = cls.tmp / "venv"
        cls._check(subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True))
        cls.bin = venv / "bin"
        cls._lend_torch(venv, cls.tmp / "lent-torch")
        cls.project = cls.tmp / "mycc"
        shutil.copytree(EXAMPLE, cls.project, ignore=shutil.ignore_patterns("suite-reports", "__pycache__"))
        cls._check(subprocess.run([str(cls.bin / "python"), "-m", "pip", "install", "--quiet", str(cls.wheel), TORCH,
                                   str(cls.project)], capture_output=True, text=True, env=_environment(),
                                  timeout=1200))
        site = subprocess.run([str(cls.bin / "python"), "-c", "import harness, pathlib; "
                               "print(pathlib.Path(harness.__file__).parents[1])"],
                              capture_output=True, text=True, cwd=cls.tmp, env=_environment())
        cls._check(site)
        cls.site_packages = Path(site.stdout.strip())
        cls.bundled_expectations = cls.site_packages / "harness" / "expectations.toml"

    @classmethod
    def _lend_torch(cls, venv: Path, lent: Path) -> None:
        """This interpreter's torch, seen by the new venv through a .pth file, so that pip
        finds torch==2.13.0 installed: unpacking its wheel again took about a minute of a
        core for nothing under test. The suite's wheel, its other dependencies and the
        example project still install as a user's would."""
        torch = importlib.metadata.distribution("torch")
        lent.mkdir()
        for top in {str(path).split("/")[0] for path in torch.files or ()} - {".."}:
            (lent / top).symlink_to(Path(torch.locate_file(top)))
        site_packages, = venv.glob("lib/python*/site-packages")
        (site_packages / "lent-torch.pth").write_text(f"{lent}\n")

    @classmethod
    def _check(cls, completed: subprocess.CompletedProcess) -> None:
        if completed.returncode != 0:
            raise AssertionError(f"{completed.args} exited {completed.returncode}:\n"
                                 f"{completed.stdout[-3000:]}\n{completed.stderr[-3000:]}")

    @classmethod
    def _copy_sources(cls, target: Path) -> None:
        """What a clone of the working tree holds: tracked files and new ones git does not ignore."""
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                cwd=REPO_ROOT, capture_output=True, check=True).stdout.decode().split("\0")
        for name in filter(None, listed):
            if (REPO_ROOT / name).is_file():
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO_ROOT / name, target / name)

    @classmethod
    def _build_wheel(cls, source: Path, dist: Path) -> Path:
        cls._check(subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist),
                                   str(source)], capture_output=True, text=True, env=_environment(), timeout=600))
        return next(dist.glob("dynamo_aot_suite-*.whl"))

    def command(self, *args: str, cwd: Path) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin / "dynamo-aot-suite"), *args], cwd=cwd, capture_output=True, text=True,
                              env=_environment(), stdin=subprocess.DEVNULL, timeout=1200)

    def empty_directory(self, name: str) -> Path:
        path = self.tmp / name
        path.mkdir()
        return path

    def results(self, report_dir: Path) -> dict[str, dict]:
        return {test["id"]: test for test in json.loads((report_dir / "results.json").read_text())["tests"]}

    def test_the_wheel_carries_the_scenarios_but_installs_no_test_package(self):
        names = set(zipfile.ZipFile(self.wheel).namelist())
        for needed in ("harness/_bundled/test/__init__.py", "harness/_bundled/test/dynamo/test_aot_autograd.py",
                       "harness/_bundled/test/dynamo/found_programs.toml", "harness/_bundled/test/durations.json",
                       "harness/expectations.toml", "harness/run/pytest.ini", "harness/report/formats/templates/report.html.j2"):
            self.assertIn(needed, names)
        self.assertFalse([name for name in names if name.startswith(("test/", "examples/"))])
        self.assertFalse((self.site_packages / "test").exists())

    def test_lists_the_same_ids_as_a_clone(self):
        # The default tier from the data the wheel ships (the self-tests' clone runs name it:
        # they take no data by default), and the whole pool.
        data = str(REPO_ROOT / "harness" / "default_tier.json")
        for tier, clone_args, at_least in (("default", ("--tier-data", data), 50), ("nightly", (), 400)):
            with self.subTest(tier=tier):
                installed = self.command("--list", "--backend", "aot_eager", "--tier", tier,
                                         cwd=self.empty_directory(f"listing-{tier}"))
                clone = run_cli("--list", "--backend", "aot_eager", "--tier", tier, *clone_args)
                self.assertEqual(installed.returncode, 0, installed.stderr)
                self.assertEqual(clone.returncode, 0, clone.stderr)
                self.assertGreater(len(installed.stdout.split()), at_least)
                self.assertEqual(installed.stdout.split(), clone.stdout.split())

    def test_runs_from_an_empty_directory_with_reports_there(self):
        here = self.empty_directory("empty")
        patterns = [arg for pattern in BUNDLED for arg in ("-k", pattern.format(backend="aot_eager"))]
        # The whole default pool of those families, whatever the default tier chose of them.
        completed = self.command("--backend", "aot_eager", "--tier-data", "none", *patterns, cwd=here)
        self.assertEqual(completed.returncode, 0, completed.stdout[-3000:] + completed.stderr[-2000:])
        results = self.results(here / "reports")
        self.assertGreater(len(results), 5)
        self.assertEqual({test["outcome"] for test in results.values()}, {"PASS", "XFAIL"})
        self.assertEqual(sorted(path.name for path in here.iterdir()), ["reports"])

    def test_the_example_project_runs_with_its_configuration_only(self):
        project = self.tmp / "mycc-run"
        shutil.copytree(self.project, project)
        patterns = [arg for pattern in BUNDLED for arg in ("-k", pattern.format(backend="mycc"))]
        # --tier-data none: the bundled families' whole default pool, whatever the tier chose.
        completed = self.command(*patterns, "-k", "MyccContractTests", "-k", "mycc_mlp", "-k", PROJECT_XFAIL,
                                 "--tier-data", "none", cwd=project)
        self.assertEqual(completed.returncode, 0, completed.stdout[-3000:] + completed.stderr[-2000:])
        results = self.results(project / "suite-reports")
        by_name = {test_id.rsplit(".", 2)[-2].split("_")[0] + "." + test_id.rsplit(".", 1)[-1]: test
                   for test_id, test in results.items()}
        # The example's own scenario module and model ran beside the bundled scenarios.
        self.assertEqual(by_name["MyccContractTests.test_linear_gelu_chain"]["outcome"], "PASS")
        self.assertEqual(by_name["ModelTests.test_mycc_mlp_train"]["outcome"], "PASS")
        self.assertEqual(by_name["PythonAutogradTests.test_backwards"]["outcome"], "PASS")
        # Its expectations apply, and so do the bundled ones.
        sources = {test["expectation"].rsplit(":", 1)[0] for test in results.values() if test["expectation"]}
        self.assertEqual(sources, {str(project / "suite-expectations.toml"), str(self.bundled_expectations)})
        self.assertEqual(results[PROJECT_XFAIL]["outcome"], "XFAIL")
        # Its declared scope applies: mycc refuses float64 with an error naming it.
        float64 = [test for test in results.values() if "float64" in (test["needs"] or [])]
        self.assertTrue(float64)
        self.assertEqual({test["outcome"] for test in float64}, {"REFUSED"})
        self.assertEqual(json.loads((project / "suite-reports" / "results.json").read_text())["scope"]["unsupported"],
                         ["float64"])

    def test_accept_writes_only_the_projects_file(self):
        project = self.tmp / "mycc-accept"
        shutil.copytree(self.project, project)
        mine = project / "suite-expectations.toml"
        mine.write_text("")
        bundled_before = _sha(self.bundled_expectations)
        float64 = BUNDLED[2].format(backend="mycc")
        # Without its declared scope, mycc's float64 refusals are failures to accept.
        # --tier-data none: the scenarios the pattern names, whatever the default tier chose of them.
        completed = self.command("-k", float64, "--tier-data", "none", "--unsupported", "none", "--accept", cwd=project)
        self.assertEqual(completed.returncode, 1, completed.stdout[-3000:] + completed.stderr[-2000:])
        self.assertIn(f"--accept: rewrote {mine}", completed.stdout)
        self.assertIn('backend = "mycc"', mine.read_text())
        self.assertEqual(_sha(self.bundled_expectations), bundled_before)
        again = self.command("-k", float64, "--tier-data", "none", "--unsupported", "none", cwd=project)
        self.assertEqual(again.returncode, 0, again.stdout[-3000:] + again.stderr[-2000:])


if __name__ == "__main__":
    unittest.main()
