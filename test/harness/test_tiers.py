"""Tiers: stress scenarios run only in the nightly tier, skip visibly elsewhere, and do
not weigh on the default tier's ordering and shards."""

from __future__ import annotations

import os
import unittest
from unittest import mock

import torch

from harness.testcase import tiers
from harness.testcase.base import BackendTestCase
from test.harness import shared_runs
from test.harness.cli import run_cli
from test.harness.test_case import _GenerationTestBase
from test.harness.test_runner import TempDirTestCase

# Its own seconds (test/harness/budgets.py): 8 s measured 2026-11-29.
TIME_BUDGET_S = 25


class NightlyDecoratorTests(_GenerationTestBase):
    def make_family(self) -> type:
        class Family(BackendTestCase):
            __module__ = self.module.__name__

            @tiers.nightly("a long stress scenario")
            def test_stress(self):
                x = torch.randn(3)
                torch.testing.assert_close(self.compile(torch.sin)(x), torch.sin(x))

            def test_quick(self):
                self.compile(torch.sin)(torch.randn(3))

        self.generate(Family)
        return self.module.Family_eager

    def test_default_tier_skips_with_how_to_run_it(self):
        generated = self.make_family()
        with mock.patch.dict(os.environ, {tiers.TIER_ENV: "default"}):
            result = self.run_tests("Family_eager", "test_stress")
        self.assertEqual(len(result.skipped), 1, result.errors + result.failures)
        self.assertEqual(result.skipped[0][1], "nightly tier (a long stress scenario); run it with --tier nightly "
                                               "(under plain unittest: DYNAMO_SUITE_TIER=nightly)")
        self.assertEqual(tiers.tier_of(generated("test_stress")), "nightly")
        self.assertEqual(tiers.tier_of(generated("test_quick")), "default")

    def test_smoke_tier_skips_it_too(self):
        # The smoke tier is a subset of the default tier; under plain unittest it is the default tier.
        self.make_family()
        with mock.patch.dict(os.environ, {tiers.TIER_ENV: "smoke"}):
            result = self.run_tests("Family_eager")
        self.assertEqual((result.testsRun, len(result.skipped), result.failures, result.errors), (2, 1, [], []))

    def test_nightly_tier_runs_it_and_still_checks_the_graph(self):
        self.make_family()
        with mock.patch.dict(os.environ, {tiers.TIER_ENV: "nightly"}):
            result = self.run_tests("Family_eager")
        self.assertEqual((result.testsRun, result.skipped, result.failures, result.errors), (2, [], [], []))

    def test_unknown_tier_is_an_error(self):
        with mock.patch.dict(os.environ, {tiers.TIER_ENV: "weekly"}):
            with self.assertRaisesRegex(tiers.TierError, "expected one of default, nightly, smoke, perf"):
                tiers.current()


class PerfDecoratorTests(_GenerationTestBase):
    def test_perf_tests_skip_outside_the_perf_tier_and_run_in_it(self):
        class Family(BackendTestCase):
            __module__ = self.module.__name__

            @tiers.perf
            def test_speed(self):
                self.compile(torch.sin)(torch.randn(3))

        self.generate(Family)
        self.assertEqual(tiers.tier_of(self.module.Family_eager("test_speed")), tiers.PERF)
        with mock.patch.dict(os.environ, {tiers.TIER_ENV: "nightly"}):
            skipped = self.run_tests("Family_eager").skipped
        self.assertEqual([reason for _, reason in skipped],
                         ["perf tier (a speed and memory measurement); run it with --tier perf (under plain "
                          "unittest: DYNAMO_SUITE_TIER=perf)"])
        with mock.patch.dict(os.environ, {tiers.TIER_ENV: "perf"}):
            result = self.run_tests("Family_eager")
        self.assertEqual((result.testsRun, result.skipped, result.failures, result.errors), (1, [], [], []))


# A stress scenario of a family that takes no backend, in a default-tier run.
STRESS_RUN = shared_runs.AXES.part(
    [], ["test.dynamo.test_aot_autograd.AotAutogradMachineryTests.test_overlap_guards_scale_to_many_inputs"])


class RunnerTierTests(TempDirTestCase):

    def test_default_tier_reports_stress_scenarios_as_skipped(self):
        (test,) = STRESS_RUN.tests()
        self.assertEqual(test["outcome"], "SKIP", STRESS_RUN.describe())
        self.assertIn("--tier nightly", test["reason"])
        self.assertEqual(STRESS_RUN.run_record["tier"], "default")

    def test_stress_scenarios_are_listed_last_in_the_default_tier(self):
        listed = run_cli("--list", "--backend", "eager", "-k", "LSTMTests").stdout.split()
        self.assertEqual(listed[-1], "test.dynamo.test_aot_autograd.LSTMTests_eager.test_lstm_full_length_input_requires_grad")
        nightly = run_cli("--list", "--tier", "nightly", "--backend", "eager", "-k", "LSTMTests").stdout.split()
        self.assertEqual(nightly[0], listed[-1], "in its own tier the longest test goes first")

    def test_the_perf_tier_holds_the_perf_tests_and_no_other_tier_does(self):
        perf = run_cli("--list", "--tier", "perf", "--backend", "eager").stdout.split()
        self.assertTrue(perf)
        self.assertEqual([test for test in perf if ".test_perf.PerfTests_eager." not in test], [])
        self.assertIn("test.dynamo.test_perf.PerfTests_eager.test_resnet18_train", perf)
        nightly = run_cli("--list", "--tier", "nightly", "--backend", "eager").stdout.split()
        self.assertEqual([test for test in nightly if ".test_perf." in test], [])

    def test_bad_perf_settings_are_usage_errors(self):
        for option, value, message in (("--perf-budget", "soon", "--perf-budget / DYNAMO_SUITE_PERF_BUDGET='soon'"),
                                       ("--perf-threads", "0", "--perf-threads / DYNAMO_SUITE_PERF_THREADS='0'")):
            with self.subTest(option=option):
                completed = run_cli("--tier", "perf", option, value, "--list")
                self.assertEqual(completed.returncode, 2)
                self.assertTrue(completed.stderr.startswith(f"run_tests.py: error: {message}: expected a "),
                                completed.stderr)

    def test_bad_tier_is_a_usage_error(self):
        completed = run_cli("--list", env={tiers.TIER_ENV: "weekly"})
        self.assertEqual(completed.returncode, 2)
        self.assertEqual(completed.stderr.strip(),
                         "run_tests.py: error: DYNAMO_SUITE_TIER='weekly': expected one of default, nightly, smoke, perf")


if __name__ == "__main__":
    unittest.main()
