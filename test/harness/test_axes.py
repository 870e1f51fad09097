"""harness/axes: an axis is one declaration. A toy axis declared here, and nothing else,
gets a class per value, an option and an environment variable, an expectation key, a field
in results.json, a report column, a line in an accepted entry, a part of the rerun command
and of a repro's environment."""

from __future__ import annotations

import os
import sys
import unittest
from unittest import mock

from packaging.version import Version

from harness.axes import axis, registry
from harness.report.console import repro_command
from harness.report.results import RunResults, TestResult
from harness.run import accept
from harness.run.options import build_parser
from harness.testcase import expectations
from harness.testcase.base import BackendTestCase, for_each_backend

TOY = axis.Axis("toy", "--toys", "DYNAMO_SUITE_TOYS", "plain", "comma-separated toys", choices=("plain", "fancy"),
                behaviour="test.harness.test_axes:TOY_BEHAVIOUR")

# Its own seconds (test/harness/budgets.py): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10


class _ToyBehaviour(axis.Behaviour):
    def class_attributes(self, value: str) -> dict:
        return {"toy_name": value}

    def set_up(self, test, value: str) -> None:
        test.toy_seen = value


TOY_BEHAVIOUR = _ToyBehaviour()


class ToyAxisTests(unittest.TestCase):
    def setUp(self) -> None:
        declared = registry.declared(TOY)
        declared.__enter__()
        self.addCleanup(declared.__exit__, None, None, None)

    def test_classes_per_value_named_by_the_value_unless_default(self):
        import torch

        module = sys.modules[__name__]

        class ToyFamily(BackendTestCase):
            def test_it(self):
                self.compile(lambda x: x + 1)(torch.ones(2))

            @axis.opt_out("toy", "fancy", "not for toys")
            def test_plain_only(self):
                self.compile(lambda x: x + 1)(torch.ones(2))

        ToyFamily.__module__ = __name__
        with mock.patch.dict(os.environ, {registry.BACKEND.env: "eager", TOY.env: "plain,fancy"}):
            for_each_backend(ToyFamily)
            names = [name for name in vars(module) if name.startswith("ToyFamily_")]
            self.addCleanup(lambda: [delattr(module, name) for name in names])
            self.assertEqual(sorted(names), ["ToyFamily_eager", "ToyFamily_eager_fancy"])
            fancy = module.ToyFamily_eager_fancy
            self.assertEqual((fancy.axis_values["toy"], fancy.toy_name), ("fancy", "fancy"))
            case = fancy("test_it")
            result = unittest.TestResult()
            case.run(result)
            self.assertEqual((result.errors, result.failures), ([], []))
            self.assertEqual(case.toy_seen, "fancy")
            # An opt-out skips its value, with its reason, and only that value.
            for generated, skipped in ((fancy, ["not run under toy 'fancy': not for toys"]), (module.ToyFamily_eager, [])):
                result = unittest.TestResult()
                generated("test_plain_only").run(result)
                self.assertEqual(([reason for _, reason in result.skipped], result.errors, result.failures),
                                 (skipped, [], []))

    def test_a_negated_opt_out_covers_every_other_value(self):
        marked = axis.opt_out("toy", "!plain", "plain only")(type("F", (), {}))
        self.assertEqual(axis.opt_out_reason(marked, None, "toy", "fancy"), "plain only")
        self.assertIsNone(axis.opt_out_reason(marked, None, "toy", "plain"))

    def test_the_command_line_and_the_environment_choose_its_values(self):
        args = build_parser().parse_args(["--toys", "fancy"])
        self.assertEqual(args.axis_toy, "fancy")
        with mock.patch.dict(os.environ, {TOY.env: "fancy,plain"}):
            self.assertEqual(registry.selected(TOY), ("fancy", "plain"))
        with mock.patch.dict(os.environ, {TOY.env: "odd"}):
            with self.assertRaisesRegex(axis.AxisError, r"unknown toy odd; choose from plain, fancy"):
                registry.selected(TOY)

    def test_expectations_select_by_it(self):
        entry, = expectations.parse('[[expect]]\ntest = "m.F.test_it"\ntoy = "fan*"\nstatus = "xfail"\nreason = "r"\n')
        self.assertTrue(entry.applies_to("m.F.test_it", Version("2.13.0"), {"backend": "eager", "toy": "fancy"}))
        self.assertFalse(entry.applies_to("m.F.test_it", Version("2.13.0"), {"backend": "eager", "toy": "plain"}))

    def test_results_reports_accept_and_reruns_carry_it(self):
        test = TestResult(id="test.dynamo.test_m.F_eager_fancy.test_it", scenario="test_m.F.test_it", backend="eager",
                          backend_spec="eager", outcome="FAIL", axes={"toy": "fancy"})
        data = test.to_json()
        self.assertEqual(data["toy"], "fancy")
        self.assertEqual(TestResult.from_json(data).to_json(), data)
        self.assertEqual(test.column, "eager/fancy")
        self.assertEqual(RunResults(run={"toys": ["plain", "fancy"]}, tests=[test]).columns(), ["eager/fancy"])
        self.assertIn('toy = "fancy"', accept._new_entry(test, "2.13.0"))
        self.assertIn("--toys fancy", repro_command(test))
        self.assertEqual(registry.test_id("test_m.F.test_it", backend="eager", toy="fancy"), test.id)


class DeclaredAxesTests(unittest.TestCase):
    def test_ids_keep_their_order_and_defaults_stay_out(self):
        self.assertEqual(registry.test_id("test_m.F.test_it", backend="inductor", variant="dynamic", dtype="bfloat16"),
                         "test.dynamo.test_m.F_inductor_dynamic_bfloat16.test_it")
        self.assertEqual(registry.test_id("test_m.F.test_it", backend="eager"), "test.dynamo.test_m.F_eager.test_it")

    def test_the_device_is_one_per_run_and_matched_by_its_type(self):
        with self.assertRaisesRegex(axis.AxisError, "one device per run"):
            registry.DEVICE.parse("cpu,cuda")
        self.assertTrue(registry.DEVICE.matches("cuda", "cuda:1"))
        self.assertFalse(registry.DEVICE.shown("cuda"))

    def test_every_option_comes_from_a_declaration(self):
        options = {action.option_strings[0] for action in build_parser()._actions if action.option_strings}
        self.assertLessEqual({axis_.option for axis_ in registry.AXES}, options)


if __name__ == "__main__":
    unittest.main()
