"""harness/settings.py: the run's settings are built once, the command line over the
environment, and handed to the collecting process and the workers; the environment is read
in one place. A setting is one declaration (harness/project/run_settings.py): a toy declared
here, and nothing else, gets an option, a variable, a project key, a one-line check, a field
in the run record, a place in a repro's environment and in the rerun command."""

from __future__ import annotations

import ast
import datetime
import os
import tempfile
import types
import unittest
from pathlib import Path
from unittest import mock

from harness import settings
from harness.axes import registry
from harness.project import config, run_settings
from harness.report.console import repro_command
from harness.report.results import TestResult
from harness.run import configure, finish
from harness.run.configure import _configure
from harness.run.options import UsageError, build_parser
from test.harness.cli import run_cli

# Its own seconds (test/harness/budgets.py): 4 s measured 2026-11-29.
TIME_BUDGET_S = 15

ROOT = Path(__file__).resolve().parents[2]


def _configured(*argv: str) -> settings.Settings:
    with mock.patch.dict(os.environ, {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}):
        return _configure(build_parser().parse_args(list(argv)))


class PrecedenceTests(unittest.TestCase):
    def test_the_command_line_wins_over_the_environment(self):
        with mock.patch.dict(os.environ, {settings.TIER: "nightly", settings.VARIANTS: "dynamic"}):
            built = _configured("--tier", "smoke")
        self.assertEqual(built.get(settings.TIER), "smoke")
        self.assertEqual(built.get(settings.VARIANTS), "dynamic")  # not on the command line: the environment's

    def test_a_mistake_in_either_is_one_line_naming_the_option(self):
        with mock.patch.dict(os.environ, {settings.DTYPES: "float32,bf16"}):
            with self.assertRaisesRegex(UsageError, r"^--dtypes / DYNAMO_SUITE_DTYPES='float32,bf16': unknown dtype bf16"):
                _configured()

    def test_a_list_option_given_again_adds_its_values_and_a_run_wide_one_is_refused(self):
        built = _configured("--backend", "eager", "--backend", "aot_eager,inductor", "--dtypes", "float32")
        self.assertEqual(built.get(settings.BACKENDS), "eager,aot_eager,inductor")
        with self.assertRaisesRegex(UsageError, r"^argument --device: given twice \(cpu, then meta\): give it once"):
            _configured("--device", "cpu", "--device", "meta")

    def test_configuring_a_run_leaves_the_environment_alone(self):
        def suite_environment() -> dict[str, str]:
            return {name: value for name, value in os.environ.items() if name.startswith(settings.PREFIX)}

        before = suite_environment()
        with mock.patch.dict(os.environ, {}):  # only the workers' search path changes: put it back
            _configure(build_parser().parse_args(["--variants", "dynamic", "--tier", "nightly"]))
            self.assertEqual(suite_environment(), before)
            self.assertIsNone(settings._installed)


class HandingOverTests(unittest.TestCase):
    def test_a_settings_file_round_trips(self):
        built = settings.Settings({settings.TIER: "nightly", settings.BACKENDS: "aot_eager"})
        with tempfile.TemporaryDirectory() as folder:
            self.assertEqual(settings.Settings.read(built.write(Path(folder) / "s.json")), built)

    def test_installed_settings_are_what_the_library_reads_until_put_back(self):
        with mock.patch.dict(os.environ, {settings.VARIANTS: "dynamic"}):
            with settings.using(settings.Settings({settings.VARIANTS: "compiled_autograd"})):
                self.assertEqual(registry.selected(registry.VARIANT), ("compiled_autograd",))
            self.assertEqual(registry.selected(registry.VARIANT), ("dynamic",))

    def test_the_collecting_process_gets_the_command_line_not_the_environment(self):
        done = run_cli("--backend", "eager", "--variants", "static", "--list", "-k", "ArgDupeRecompileTests",
                       env={settings.VARIANTS: "dynamic"}, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr[-2000:])
        ids = done.stdout.split()
        self.assertTrue(ids)
        self.assertFalse([test_id for test_id in ids if "_dynamic." in test_id], ids)


TOY = run_settings.Setting("DYNAMO_SUITE_TOY", "--toy", help="the toy's colour", choices=("plain", "fancy"),
                           default="plain", key="toy", record="toy", repro=True, rerun="")


class ToySettingTests(unittest.TestCase):
    def setUp(self):
        declared = mock.patch.object(run_settings, "SETTINGS", [*run_settings.SETTINGS, TOY])
        declared.start()
        self.addCleanup(declared.stop)
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.tmp = Path(directory.name)

    def project(self, value: str) -> Path:
        (self.tmp / "pyproject.toml").write_text(f'[tool.dynamo-aot-suite]\ntoy = "{value}"\n')
        return self.tmp / "pyproject.toml"

    def planned(self, *argv: str, project: Path | None = None) -> configure.Plan:
        parser = build_parser()
        parser.set_defaults(project=config.load(project) if project else config.ProjectConfig(), argv=list(argv))
        with mock.patch.dict(os.environ, {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}):
            return configure.plan(parser.parse_args(["--list", *argv]))

    def test_the_command_line_the_environment_and_the_project_file_give_it(self):
        self.assertIn("--toy {plain,fancy}", build_parser().format_help())
        with mock.patch.dict(os.environ, {TOY.env: "fancy"}):
            self.assertEqual(self.planned().settings.get(TOY.env), "fancy")
            self.assertEqual(self.planned("--toy", "plain").settings.get(TOY.env), "plain")
        self.assertEqual(self.planned(project=self.project("fancy")).settings.get(TOY.env), "fancy")

    def test_a_bad_value_is_one_line_naming_where_it_came_from(self):
        with mock.patch.dict(os.environ, {TOY.env: "odd"}):
            with self.assertRaisesRegex(UsageError, r"^--toy / DYNAMO_SUITE_TOY='odd': expected one of plain, fancy$"):
                self.planned()
        with self.assertRaisesRegex(UsageError, r"pyproject\.toml:2: toy: --toy / DYNAMO_SUITE_TOY='odd': expected"):
            self.planned(project=self.project("odd"))
        done = run_cli("--list", env={TOY.env: "odd"})
        self.assertEqual((done.returncode, done.stderr.count("\n")), (2, 1), done.stderr)
        self.assertIn("error: --toy / DYNAMO_SUITE_TOY='odd'", done.stderr)

    def test_the_run_record_repros_and_reruns_carry_it(self):
        plan = self.planned("--toy", "fancy")
        collected = types.SimpleNamespace(torch_version="2.13.0", backends=[], worker_start="forked")
        with settings.using(plan.settings):
            run = finish.record(plan, collected, [], {}, datetime.datetime.now(), 1.0).run
        self.assertEqual((run["toy"], run["environment"][TOY.env]), ("fancy", "fancy"))
        test = TestResult(id="test.dynamo.m.F_eager.test_it", scenario="m.F.test_it", backend="eager",
                          backend_spec="eager", outcome="FAIL")
        self.assertIn(" --toy fancy -k ", repro_command(test, run=run))
        self.assertNotIn("--toy", repro_command(test, run={**run, "toy": "plain"}))


class OnePlaceTests(unittest.TestCase):
    def test_only_settings_names_the_environment_variables(self):
        # Every DYNAMO_SUITE_* name is defined once, in harness/settings.py; elsewhere code
        # refers to it, so no module reads the environment behind the settings' back.
        named = []
        for path in [*ROOT.joinpath("harness").rglob("*.py"), *ROOT.joinpath("test", "dynamo").glob("*.py")]:
            if path.name == "settings.py" and path.parent.name == "harness":
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                        and node.value.startswith(settings.PREFIX):
                    named.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value}")
        self.assertEqual(named, [])


if __name__ == "__main__":
    unittest.main()
