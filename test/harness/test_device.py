"""harness/axes/device.py: the run's device (issue 19): checked before anything runs, applied
around every test, and CPU-only scenarios skipped elsewhere with their reason."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest
from unittest import mock

import torch
from packaging.version import Version

from harness.axes import device, registry
from harness.testcase import expectations
from harness.report.console import repro_command
from harness.report.results import TestResult
from test.harness import shared_runs
from test.harness.cli import run_cli

# Its own seconds (test/harness/budgets.py, shared runs apart): 7 s measured 2026-11-29.
TIME_BUDGET_S = 20

class SelectionTests(unittest.TestCase):
    def tearDown(self):
        device._checked.cache_clear()

    def test_cpu_by_default(self):
        with mock.patch.dict(os.environ, {device.DEVICE_ENV: ""}):
            self.assertEqual(device.selected(), torch.device("cpu"))
            self.assertTrue(device.on_cpu())
            self.assertFalse(device.chosen())

    def test_a_name_torch_does_not_know_is_one_line_saying_what_to_use(self):
        with mock.patch.dict(os.environ, {device.DEVICE_ENV: "gpu"}):
            with self.assertRaisesRegex(device.DeviceError, r"^DYNAMO_SUITE_DEVICE='gpu': not a device torch "
                                                            r"knows .*; use cpu, cuda") as caught:
                device.selected()
        self.assertNotIn("\n", str(caught.exception))

    def test_a_device_without_a_runtime_module_is_refused(self):
        with mock.patch.dict(os.environ, {device.DEVICE_ENV: "meta"}):
            with self.assertRaisesRegex(device.DeviceError, r"no runtime module for 'meta'"):
                device.selected()

    def test_an_out_of_tree_device_without_a_torch_module_is_counted_by_its_package(self):
        # torch_xla registers the xla device but no torch.xla module (torch-xla 2.9, 2026-12-03):
        # its package says how many there are, after DYNAMO_SUITE_IMPORTS is imported.
        with mock.patch.dict(os.environ, {device.DEVICE_ENV: "xla"}), \
                mock.patch("harness.axes.backends.import_plugins") as imported:
            for count, raises in ((1, None), (0, r"its package sees no xla device"),
                                  (None, r"no runtime module for 'xla'")):
                device._checked.cache_clear()
                with self.subTest(count=count), mock.patch("harness.compat.out_of_tree_device_count",
                                                           return_value=count):
                    if raises is None:
                        self.assertEqual(device.selected().type, "xla")
                    else:
                        with self.assertRaisesRegex(device.DeviceError, raises):
                            device.selected()
            imported.assert_called()
        device._checked.cache_clear()

    @unittest.skipIf(torch.cuda.is_available(), "this machine has a CUDA device")
    def test_an_absent_device_says_so(self):
        with mock.patch.dict(os.environ, {device.DEVICE_ENV: "cuda:0"}):
            self.assertEqual(device.selected_type(), "cuda")
            with self.assertRaisesRegex(device.DeviceError, r"no usable cuda device here \(torch.cuda.is_available"):
                device.selected()

    def test_cpu_only_needs_a_reason(self):
        with self.assertRaises(device.DeviceError):
            device.cpu_only(" ")

# A family with a CPU-only test, run as if the run's device were CUDA: the test is SKIP with
# its reason before anything would touch the device (so this runs on a CPU-only machine).
_CPU_ONLY_PROBE = """
import sys, unittest, torch
from harness import BackendTestCase, for_each_backend
from harness.axes import device, registry
from harness.axes import device as device_module

device_module._checked = lambda name: torch.device("cpu")  # pretend the device exists

class ProbeTests(BackendTestCase):
    @device.cpu_only("reads host memory through a raw pointer")
    def test_host_memory(self):
        self.compile(lambda x: x + 1)(torch.ones(2))

for_each_backend(ProbeTests)
unittest.main(argv=["probe", "-v"], exit=True)
"""

class CpuOnlyTests(unittest.TestCase):
    def test_skipped_with_its_reason_on_another_device(self):
        env = {**os.environ, "DYNAMO_SUITE_BACKENDS": "eager", device.DEVICE_ENV: "cuda"}
        done = subprocess.run([sys.executable, "-c", _CPU_ONLY_PROBE], env=env, capture_output=True, text=True,
                              timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr[-3000:])
        self.assertIn("runs on the CPU only: reads host memory through a raw pointer", done.stderr)

class ExpectationTests(unittest.TestCase):
    def test_an_entry_can_target_a_device(self):
        entry = expectations.Expectation.of(test="test_mod.Family.*", status="xfail", reason="r", device="cuda")
        self.assertTrue(entry.applies_to("test_mod.Family.test_one", Version("2.13.0"), {"backend": "eager", "device": "cuda:1"}))
        self.assertFalse(entry.applies_to("test_mod.Family.test_one", Version("2.13.0"), {"backend": "eager", "device": "cpu"}))

# Families of both scenario modules that make tensors of their own, and generated programs.
IN_THE_DEVICE_CONTEXT = shared_runs.AXES.part(["aot_eager"], [
    registry.test_id(scenario, backend="aot_eager") for scenario in (
        "test_aot_autograd.InputMutationTests.*", "test_aot_autograd.ArgDupeRecompileTests.*",
        "test_backend_contract.GradientContractTests.*", "test_generated_programs.GeneratedProgramTests.test_seed_000[0-2]")])


class RunnerTests(unittest.TestCase):
    def test_a_bad_device_stops_the_run_in_one_line(self):
        done = run_cli("--device", "gpu", "--list", timeout=300)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
        self.assertRegex(done.stderr, r"^run_tests.py: error: --device / DYNAMO_SUITE_DEVICE='gpu': not a device")

    def test_scenarios_run_inside_the_device_context_and_leave_no_state(self):
        # An explicit cpu enters the same per-test device context as cuda would: a scenario
        # that left it on (or created tensors off the default device) would fail here.
        found = {test["id"]: test["outcome"] for test in IN_THE_DEVICE_CONTEXT.tests()}
        self.assertEqual(IN_THE_DEVICE_CONTEXT.run_record["device"], "cpu")
        self.assertEqual({outcome for outcome in found.values() if outcome not in ("PASS", "SKIP")}, set(),
                         IN_THE_DEVICE_CONTEXT.describe())
        self.assertGreater(sum(outcome == "PASS" for outcome in found.values()), 20, found)
        self.assertIn("device cpu", (IN_THE_DEVICE_CONTEXT.report_dir / "summary.md").read_text())

    def test_the_rerun_command_names_the_device(self):
        test = TestResult(id="test.dynamo.test_x.F_eager.test_y", outcome="FAIL", backend="eager",
                          backend_spec="eager", scenario="test_x.F.test_y")
        self.assertIn("--device cuda", repro_command(test, run={"device": "cuda"}))
        self.assertNotIn("--device", repro_command(test, run={"device": "cpu"}))

