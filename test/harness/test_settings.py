"""harness/settings.py: the run's settings are built once, the command line over the
environment, and handed to the collecting process and the workers; the environment is read
in one place."""

from __future__ import annotations

import ast
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import settings
from harness.axes import registry
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
