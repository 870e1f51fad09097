"""What a backend project brings: its pyproject.toml section, its expectations layered on
the bundled ones, its own scenario modules and models (harness.project)."""

from __future__ import annotations

import os
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

from harness import settings
from harness.axes import registry
from harness.project import config, extensions, layout
from harness.testcase import expectations
from test.harness.cli import REPO_ROOT, outcomes, read_results, run_cli

# Its own seconds (test/harness/budgets.py): 51 s measured 2026-11-29.
TIME_BUDGET_S = 110


class TempDirTestCase(unittest.TestCase):
    def setUp(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.tmp = Path(directory.name).resolve()

    def write(self, relative: str, text: str) -> Path:
        path = self.tmp / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path


class LayoutTests(unittest.TestCase):
    def test_a_clone_runs_its_own_tree(self):
        self.assertFalse(layout.INSTALLED)
        self.assertEqual(layout.SUITE_ROOT, REPO_ROOT)
        self.assertEqual(layout.SCENARIO_DIR, REPO_ROOT / "test" / "dynamo")

    def test_the_wheel_carries_the_scenario_tree_but_no_test_package(self):
        # setup.cfg maps test/ to harness/_bundled/test: what layout.INSTALLED looks for.
        text = (REPO_ROOT / "setup.cfg").read_text()
        self.assertIn("harness._bundled.test = test", text)
        self.assertIn("harness._bundled.test.dynamo", text)
        self.assertNotRegex(text, r"(?m)^\s*test\s*$", "a top-level package named test would shadow the stdlib's")
        self.assertIn("dynamo-aot-suite = harness.run.cli:console_main", text)


class ConfigTests(TempDirTestCase):
    def load(self, section: str, name: str = "pyproject.toml") -> config.ProjectConfig:
        return config.load(self.write(name, "[project]\nname = 'mycc'\n\n[tool.dynamo-aot-suite]\n" + section))

    def assertConfigError(self, section: str, line: int, pattern: str) -> None:
        with self.assertRaises(config.ConfigError) as caught:
            self.load(section)
        self.assertRegex(str(caught.exception), rf"^(.*/)?pyproject\.toml:{line}: {pattern}")

    def test_keys_become_settings_and_option_defaults(self):
        (self.tmp / "suite").mkdir()  # a path when it exists there, else a module name
        loaded = self.load("""\
            backend = ["mycc.dynamo:backend", "tools/local.py:backend", "aot_eager"]
            imports = "mycc.register"
            expectations = "suite-expectations.toml"
            scenarios = ["suite", "mycc.extra_scenarios"]
            variants = "static,dynamic"
            max-eager-share = 0.2
            jobs = 3
            report-dir = "out/reports"
            """)
        self.assertEqual(loaded.settings[settings.BACKENDS],
                         f"mycc.dynamo:backend,{self.tmp}/tools/local.py:backend,aot_eager")
        self.assertEqual(loaded.settings[settings.IMPORTS], "mycc.register")
        self.assertEqual(loaded.settings[settings.EXPECTATIONS], str(self.tmp / "suite-expectations.toml"))
        self.assertEqual(loaded.settings[settings.SCENARIOS], f"{self.tmp}/suite,mycc.extra_scenarios")
        self.assertEqual(loaded.settings[settings.VARIANTS], "static,dynamic")
        self.assertEqual(loaded.settings[settings.MAX_EAGER_SHARE], "0.2")
        self.assertEqual(loaded.options, {"jobs": "3", "report_dir": str(self.tmp / "out/reports")})
        self.assertEqual(loaded.where(settings.VARIANTS), f"{loaded.path}:9: variants")

    def test_every_axis_is_a_key_under_its_option_name(self):
        for axis in registry.AXES:
            self.assertEqual(config.keys()[axis.option.lstrip("-")].setting, axis.env)

    def test_the_nearest_file_with_the_section_is_found(self):
        outer = self.write("pyproject.toml", "[tool.dynamo-aot-suite]\ntier = 'smoke'\n")
        self.write("pkg/pyproject.toml", "[project]\nname = 'without-the-section'\n")
        inner = self.tmp / "pkg" / "src"
        inner.mkdir()
        self.assertEqual(config.find(inner), outer)

    def test_mistakes_name_file_and_line(self):
        self.assertConfigError("tier = 'nightly'\nbackends = 'x'\n", 6, r"unknown key 'backends' in \[tool.dynamo-aot-suite\]")
        self.assertConfigError("jobs = [1]\n", 5, "jobs must be a number, not an array")
        self.assertConfigError("backend = 3\n", 5, "backend must be a string or an array of strings, not a number")
        self.assertConfigError("tier = \n", 5, "not valid TOML")

    def test_a_file_without_the_section_configures_nothing(self):
        loaded = config.load(self.write("pyproject.toml", "[project]\nname = 'mycc'\n"))
        self.assertEqual((loaded.settings, loaded.options), ({}, {}))


class LayeredExpectationTests(TempDirTestCase):
    def test_the_projects_entries_come_first_and_the_bundled_always_apply(self):
        mine = self.write("mine.toml", """\
            [[expect]]
            test = "test_x.Family.test_a"
            status = "pass"
            reason = "mycc runs it"
            """)
        entries = expectations.load(project=mine)
        bundled = expectations.load(expectations.DEFAULT_FILE)
        self.assertEqual(entries[0].source, f"{mine}:1")
        self.assertEqual(entries[1:], bundled)
        self.assertEqual(expectations.load(project=expectations.DEFAULT_FILE), bundled, "one file is read once")
        with settings.using(settings.Settings({settings.EXPECTATIONS: str(mine)})):
            self.assertEqual(expectations.files(), [mine, expectations.DEFAULT_FILE])

    def test_a_mistake_in_the_projects_file_names_it(self):
        mine = self.write("mine.toml", "[[expect]]\ntest = 'x'\nstatus = 'maybe'\nreason = 'r'\n")
        with self.assertRaisesRegex(expectations.ExpectationError, rf"^{mine}:3: status 'maybe' is not one of"):
            expectations.load(project=mine)


class ExtensionTests(TempDirTestCase):
    def setUp(self) -> None:
        super().setUp()
        path = list(sys.path)

        def restore() -> None:
            sys.path[:] = path
            for name, module in list(sys.modules.items()):  # this test's modules, not torch
                if str(getattr(module, "__file__", None) or "").startswith(str(self.tmp)) or name == "test_project":
                    del sys.modules[name]

        self.addCleanup(restore)

    def sources(self, value: str) -> settings.Settings:
        return settings.Settings({settings.SCENARIOS: value})

    def test_module_names_follow_pytests_default_import_mode(self):
        plain = self.write("suite/test_plain.py", "")
        nested = self.write("pkg/sub/test_nested.py", "")
        self.write("pkg/__init__.py", "")
        self.write("pkg/sub/__init__.py", "")
        self.assertEqual(extensions.module_name(plain), (self.tmp / "suite", "test_plain"))
        self.assertEqual(extensions.module_name(nested), (self.tmp, "pkg.sub.test_nested"))

    def test_directories_files_and_modules(self):
        self.write("suite/test_one.py", "")
        self.write("suite/helpers.py", "")
        self.write("suite/inner/__init__.py", "")
        self.write("suite/inner/test_two.py", "")
        self.write("suite/loose/test_ignored.py", "")  # not a package: unittest would not look in it
        self.write("mods/mycc_scenarios/__init__.py", "")
        self.write("mods/mycc_scenarios/test_three.py", "")
        sys.path.insert(0, str(self.tmp / "mods"))
        found = extensions.scenario_files(self.sources(f"{self.tmp}/suite,mycc_scenarios"))
        self.assertEqual([path.relative_to(self.tmp).as_posix() for path, _ in found],
                         ["suite/test_one.py", "suite/inner/test_two.py", "mods/mycc_scenarios/test_three.py"])

    def test_an_installed_packages_entry_points(self):
        site = self.tmp / "site"
        self.write("site/fake_backend-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: fake-backend\nVersion: 0.1\n")
        self.write("site/fake_backend-0.1.dist-info/entry_points.txt",
                   "[dynamo_aot_suite.scenarios]\nfake = fake_backend_suite\n\n"
                   "[dynamo_aot_suite.models]\nfake = fake_backend_suite.models:MODELS\n")
        self.write("site/fake_backend_suite/__init__.py", "")
        self.write("site/fake_backend_suite/test_fake.py", "")
        self.write("site/fake_backend_suite/models.py", "MODELS = []\n")
        sys.path.insert(0, str(site))
        found = extensions.scenario_files(settings.Settings())
        self.assertEqual([(path, where) for path, where in found],
                         [(site / "fake_backend_suite" / "test_fake.py",
                           "entry point fake (dynamo_aot_suite.scenarios, from fake-backend)")])
        self.assertEqual(extensions.models(settings.Settings()), [])

    def test_bad_sources_are_one_line(self):
        cases = {
            f"{self.tmp}/missing": "no file or directory",
            str(self.write("empty/helpers.py", "").parent): "holds no test",
            "no_such_module_anywhere": "importing 'no_such_module_anywhere' failed: ModuleNotFoundError",
        }
        for source, message in cases.items():
            with self.subTest(source=source), self.assertRaises(extensions.ExtensionError) as caught:
                extensions.scenario_modules(self.sources(source))
            self.assertIn(message, str(caught.exception))
            self.assertIn(settings.SCENARIOS, str(caught.exception))
            self.assertNotIn("\n", str(caught.exception))

    def test_a_name_taken_by_another_module_is_refused(self):
        clash = self.write("suite/test_project.py", "")
        sys.modules["test_project"] = type(sys)("test_project")
        sys.modules["test_project"].__file__ = str(self.tmp / "elsewhere.py")
        with self.assertRaisesRegex(extensions.ExtensionError, "would be imported as 'test_project', which is already"):
            extensions.import_file(clash, "scenarios")

    def test_a_model_named_like_one_of_the_zoo_is_refused(self):
        from test.dynamo import test_models

        path = self.write("tools/clash.py", """\
            import torch
            from harness import ModelSpec
            MODELS = [ModelSpec("resnet18", lambda: torch.nn.Linear(2, 2), lambda: ((torch.randn(1, 2),), None),
                                lambda out, target: out.sum())]
            """)
        with settings.using(settings.Settings({settings.MODELS: str(path)})), \
                self.assertRaisesRegex(extensions.ExtensionError, "more than one model is named resnet18"):
            test_models._all_models()

    def test_models_from_a_module_a_file_and_an_attribute(self):
        model = """\
            import torch
            from harness import ModelSpec
            MODELS = [ModelSpec("{name}", lambda: torch.nn.Linear(2, 2), lambda: ((torch.randn(1, 2),), None),
                                lambda out, target: out.sum())]
            def more():
                return MODELS[0]
            """
        self.write("mods/mycc_models.py", model.format(name="from_module"))
        path = self.write("tools/local_models.py", model.format(name="from_file"))
        sys.path.insert(0, str(self.tmp / "mods"))
        current = settings.Settings({settings.MODELS: f"mycc_models,{path},mycc_models:more"})
        self.assertEqual([spec.name for spec in extensions.models(current)], ["from_module", "from_file", "from_module"])
        with self.assertRaisesRegex(extensions.ExtensionError, "has no 'MODELS'"):
            extensions.models(settings.Settings({settings.MODELS: "os"}))
        with self.assertRaisesRegex(extensions.ExtensionError, r"os.sep must be a list of harness.ModelSpec"):
            extensions.models(settings.Settings({settings.MODELS: "os:sep"}))


PROJECT = """\
    [tool.dynamo-aot-suite]
    backend = "aot_eager"
    scenarios = ["suite"]
    models = ["suite_models.py"]
    expectations = "suite-expectations.toml"
    report-dir = "suite-reports"
    jobs = 1
    """
SCENARIO = """\
    import torch
    from harness import BackendTestCase, assert_same_outputs_and_grads, for_each_backend


    @for_each_backend
    class ProjectTests(BackendTestCase):
        def test_sin_cos(self):
            fn = lambda x: x.sin() + x.cos()
            assert_same_outputs_and_grads(self, fn, self.compile(fn), [torch.randn(4, requires_grad=True)])

        def test_known_wrong(self):
            fn = lambda x: x * 2
            self.assertEqual(self.compile(fn)(torch.ones(2)).tolist(), [3.0, 3.0])
    """
MODELS = """\
    import torch
    from harness import ModelSpec

    MODELS = [ModelSpec("project_linear", lambda: torch.nn.Linear(4, 3), lambda: ((torch.randn(2, 4),),
                        torch.randint(0, 3, (2,))), torch.nn.functional.cross_entropy)]
    """
EXPECTED = """\
    [[expect]]
    test = "test_project_scenarios.ProjectTests.test_known_wrong"
    status = "xfail"
    reason = "the project knows"
    """


class ProjectRunTests(TempDirTestCase):
    """The command run from a project's directory, configured by its pyproject.toml only."""

    @classmethod
    def setUpClass(cls) -> None:
        directory = tempfile.TemporaryDirectory()
        cls.addClassCleanup(directory.cleanup)
        cls.project = Path(directory.name).resolve()
        for name, text in {"pyproject.toml": PROJECT, "suite/test_project_scenarios.py": SCENARIO,
                           "suite_models.py": MODELS, "suite-expectations.toml": EXPECTED}.items():
            (cls.project / name).parent.mkdir(parents=True, exist_ok=True)
            (cls.project / name).write_text(textwrap.dedent(text))
        cls.selection = ("-k", "ProjectTests", "-k", "project_linear_eval",
                         "-k", "test_aot_autograd.ExpandMutationTests_aot_eager.test_overlapping_write_through_expand_raises")
        cls.completed = run_cli(*cls.selection, cwd=cls.project)
        cls.reports = cls.project / "suite-reports"

    def test_the_projects_tests_run_beside_the_bundled_ones(self):
        self.assertEqual(self.completed.returncode, 0, self.completed.stdout + self.completed.stderr)
        self.assertEqual(outcomes(self.reports), {
            "test_project_scenarios.ProjectTests_aot_eager.test_sin_cos": "PASS",
            "test_project_scenarios.ProjectTests_aot_eager.test_known_wrong": "XFAIL",
            "test.dynamo.test_models.ModelTests_aot_eager.test_project_linear_eval": "PASS",
            "test.dynamo.test_aot_autograd.ExpandMutationTests_aot_eager.test_overlapping_write_through_expand_raises":
                "XFAIL",
        })

    def test_each_expectation_names_its_file(self):
        tests = {test["id"].rsplit(".", 1)[-1]: test for test in read_results(self.reports)["tests"]}
        self.assertTrue(tests["test_known_wrong"]["expectation"].startswith(f"{self.project}/suite-expectations.toml:"))
        self.assertTrue(tests["test_overlapping_write_through_expand_raises"]["expectation"].startswith(
            str(expectations.DEFAULT_FILE)))
        run = read_results(self.reports)["run"]
        self.assertEqual(run["expectation_files"],
                         [str(self.project / "suite-expectations.toml"), str(expectations.DEFAULT_FILE)])

    def test_the_command_line_overrides_the_file(self):
        listed = run_cli("--list", "--backend", "eager", *self.selection, cwd=self.project)
        self.assertEqual(listed.returncode, 0, listed.stderr)
        self.assertIn("test_project_scenarios.ProjectTests_eager.test_sin_cos", listed.stdout.split())
        self.assertNotIn("aot_eager", listed.stdout)

    def test_a_failing_project_test_gets_a_rerun_line_and_a_repro(self):
        (self.tmp / "suite-expectations.toml").write_text("")
        completed = run_cli(*self.selection[:2], "--expectations", str(self.tmp / "suite-expectations.toml"),
                            "--report-dir", str(self.tmp / "r"), cwd=self.project)
        self.assertEqual(completed.returncode, 1, completed.stdout + completed.stderr)
        self.assertIn("-k test_project_scenarios.ProjectTests_aot_eager.test_known_wrong", completed.stdout)
        repros = sorted((self.tmp / "r" / "repros").glob("*.py"))
        self.assertEqual(len(repros), 1)
        # A project's own scenario runs from the project's directory, as the run did.
        shown = __import__("subprocess").run([sys.executable, str(repros[0])], cwd=self.project, capture_output=True,
                                             text=True, timeout=300, env={**os.environ, "CI": "true"})
        self.assertEqual(shown.returncode, 1, shown.stdout + shown.stderr)


class ProjectMistakeTests(TempDirTestCase):
    def test_a_bad_value_in_the_file_is_one_line_with_its_line(self):
        self.write("pyproject.toml", "[tool.dynamo-aot-suite]\njobs = 2\ntier = 'weekly'\n")
        completed = run_cli("--list", cwd=self.tmp)
        self.assertEqual(completed.returncode, 2, completed.stdout + completed.stderr)
        self.assertRegex(completed.stderr.strip(), r"^run_tests.py: error: pyproject.toml:3: tier: "
                                                   r"DYNAMO_SUITE_TIER='weekly': expected one of")

    def test_an_unknown_backend_in_the_file_names_its_line(self):
        self.write("pyproject.toml", "[tool.dynamo-aot-suite]\n\nbackend = 'no_such_backend'\n")
        completed = run_cli("--list", cwd=self.tmp)
        self.assertEqual(completed.returncode, 2, completed.stdout + completed.stderr)
        self.assertRegex(completed.stderr, r"pyproject.toml:3: backend: .*no_such_backend")
        self.assertEqual(len(completed.stderr.strip().splitlines()), 1, completed.stderr)

    def test_the_environment_overrides_the_file(self):
        self.write("pyproject.toml", "[tool.dynamo-aot-suite]\ntier = 'weekly'\n")
        completed = run_cli("--list", env={settings.TIER: "smoke"}, cwd=self.tmp)
        self.assertEqual(completed.returncode, 0, completed.stdout + completed.stderr)

    def test_accept_creates_the_projects_file_when_it_is_named_but_missing(self):
        from unittest import mock

        from harness.run import configure

        mine = self.tmp / "new" / "suite-expectations.toml"
        mine.parent.mkdir()
        chosen = configure._check_expectations(mock.Mock(accept=True), settings.Settings({settings.EXPECTATIONS: str(mine)}))
        self.assertEqual(chosen, mine)
        self.assertEqual(mine.read_text(), expectations.NEW_FILE_HEADER)
        with self.assertRaisesRegex(configure.UsageError, r"absent.toml:0: cannot read expectations"):
            configure._check_expectations(mock.Mock(accept=False),
                                    settings.Settings({settings.EXPECTATIONS: str(self.tmp / "absent.toml")}))

    def test_accept_in_an_installed_suite_needs_the_projects_file(self):
        # Simulated: the runner's check, with the layout of an installed wheel.
        from unittest import mock

        from harness.run import configure

        with mock.patch.object(layout, "INSTALLED", True), \
                self.assertRaisesRegex(configure.UsageError, r"--accept writes into your project's expectations file"):
            configure._check_expectations(mock.Mock(accept=True), settings.Settings())


if __name__ == "__main__":
    unittest.main()
