"""run_tests.py end to end, in subprocesses: crashing and hanging backends, reports,
sharding and merging, baselines, repro commands."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

from test.harness.cli import REPO_ROOT, outcomes, read_results, run_cli
from test.harness.faulty_backends import CRASH_AND_HANG_PLAN

# Its own seconds (test/harness/budgets.py): 103 s measured 2026-11-29.
TIME_BUDGET_S = 215

FAULTY = "test/harness/faulty_backends/contract.py:crashes_and_hangs"
FAMILY = "test.dynamo.test_python_autograd.PythonAutogradTests_crashes_and_hangs"


class TempDirTestCase(unittest.TestCase):
    def setUp(self):
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.tmp = Path(directory.name)


class CrashAndHangTests(TempDirTestCase):
    """One run against a backend that segfaults, exits, hangs, and hangs deaf to SIGALRM."""

    @classmethod
    def setUpClass(cls):
        directory = tempfile.TemporaryDirectory()
        cls.addClassCleanup(directory.cleanup)
        cls.report_dir = Path(directory.name)
        cls.completed = run_cli("--backend", FAULTY, "-k", "PythonAutogradTests", "--timeout", "8",
                                "-j", "2", "--report-dir", str(cls.report_dir))
        cls.results = {test["id"]: test for test in read_results(cls.report_dir)["tests"]}

    def test_run_finishes_with_every_result_and_exit_code_1(self):
        self.assertEqual(self.completed.returncode, 1, self.completed.stdout + self.completed.stderr)
        expected = {f"{FAMILY}.{name}" for name in
                    ("test_forwards", "test_forwards_resetting_tape", "test_backwards",
                     "test_backwards_resetting_tape", "test_forward_and_backward_in_separate_frames")}
        self.assertEqual(set(self.results), expected)

    def test_its_workers_were_forked(self):
        # Crashes and hangs above are contained in forked workers (harness.worker.forkserver).
        self.assertEqual(read_results(self.report_dir)["run"]["worker_start"], "forked")

    def test_each_misbehaviour_gets_its_outcome(self):
        wanted = {"segfault": "CRASH", "exit": "CRASH", "hang": "TIMEOUT", "hang_ignoring_alarm": "TIMEOUT"}
        for scenario, action in CRASH_AND_HANG_PLAN.items():
            with self.subTest(scenario=scenario):
                self.assertEqual(self.results[f"{FAMILY}.{scenario}"]["outcome"], wanted[action])
        self.assertEqual(self.results[f"{FAMILY}.test_backwards"]["outcome"], "PASS")

    def test_crash_names_the_signal_and_keeps_the_output_tail(self):
        crash = self.results[f"{FAMILY}.test_forwards_resetting_tape"]
        self.assertRegex(crash["reason"],
                         r"SIGSEGV \(Segmentation fault\) in crashes_and_hangs \(.*faulty_backends/contract\.py:\d+\)")
        self.assertTrue(crash["details"].startswith("Fatal Python error: Segmentation fault"), crash["details"][:300])
        # The crashing thread's stack comes first; the extension module list is a count at the end.
        self.assertLess(crash["details"].index("Current thread"), crash["details"].index("faulty_backends/contract.py"))
        self.assertNotIn("torch._C._fft", crash["details"])
        self.assertIn("faulty_backends/contract.py", crash["details"])
        exited = self.results[f"{FAMILY}.test_forwards"]
        self.assertRegex(exited["reason"], r"exited with code 3")

    def test_hangs_are_timeouts_with_where_they_hung(self):
        soft = self.results[f"{FAMILY}.test_backwards_resetting_tape"]
        self.assertRegex(soft["reason"], r"^stopped by the 8 s time limit while the backend was compiling in crashes_and_hangs")
        self.assertGreaterEqual(soft["duration_s"], 8)
        hard = self.results[f"{FAMILY}.test_forward_and_backward_in_separate_frames"]
        self.assertRegex(hard["reason"], r"out of reach of the 8 s time limit's SIGALRM while the backend was compiling in "
                                        r"crashes_and_hangs .*worker killed")
        self.assertIn("faulty_backends/contract.py", hard["details"])

    def test_passing_test_carries_dynamo_metrics(self):
        metrics = self.results[f"{FAMILY}.test_backwards"]["metrics"]
        # Dynamo's, and the Python world observation's (its tape is a list the calls append to).
        self.assertEqual({name for name in metrics if not name.startswith("python_world_")},
                         {"frames", "graphs", "graph_breaks", "recompiles", "compile_s"})
        self.assertGreaterEqual(metrics["graphs"], 1)
        self.assertGreater(metrics["compile_s"], 0)

    def test_console_lists_unexpected_results_with_a_repro_that_selects_only_that_test(self):
        crash_id = f"{FAMILY}.test_forwards_resetting_tape"
        lines = self.completed.stdout.splitlines()
        listed = next(line for line in lines if line.startswith("  CRASH   [") and line.endswith(crash_id))
        number = listed.split("[", 1)[1].split("]", 1)[0]
        block = next(i for i, line in enumerate(lines) if line.startswith(f"  [{number}] "))
        # The problem's simplest test: either crash; the block's rerun selects just it.
        repro = next(line.strip() for line in lines[block:] if line.strip().startswith("rerun: "))
        crash_id = repro.rsplit(" -k ", 1)[1].split()[0]
        self.assertTrue(repro.startswith("rerun: python run_tests.py --backend "), repro)
        listed = run_cli(*shlex.split(repro.removeprefix("rerun: python run_tests.py "))[0:], "--list")
        self.assertEqual(listed.stdout.split(), [crash_id])

    def test_junit_is_valid_xml_with_errors_for_crashes(self):
        root = ET.parse(self.report_dir / "junit.xml").getroot()
        cases = {case.get("classname") + "." + case.get("name"): case for case in root.iter("testcase")}
        self.assertEqual(len(cases), 5)
        crash = cases[f"{FAMILY}.test_forwards_resetting_tape"].find("error")
        self.assertEqual(crash.get("type"), "CRASH")


class ShardTests(TempDirTestCase):
    SELECTION = ("--backend", "eager", "-k", "PythonAutogradTests")

    @classmethod
    def setUpClass(cls):
        # The selection listed whole, and run in two shards, shared by the tests below.
        directory = tempfile.TemporaryDirectory()
        cls.addClassCleanup(directory.cleanup)
        cls.runs = Path(directory.name)
        cls.listed = run_cli("--list", *cls.SELECTION).stdout.split()
        cls.completed = [run_cli(*cls.SELECTION, "-j", "1", "--shard", f"{index}/2",
                                 "--report-dir", str(cls.runs / f"shard{index}")) for index in (1, 2)]

    def test_shards_run_every_listed_test_exactly_once(self):
        for completed in self.completed:
            self.assertEqual(completed.returncode, 0, completed.stdout + completed.stderr)
        parts = [list(outcomes(self.runs / f"shard{index}")) for index in (1, 2)]
        self.assertTrue(all(parts), "a shard is empty")
        self.assertEqual(sorted(sum(parts, [])), sorted(self.listed))

    def test_merged_shard_reports_hold_exactly_the_unsharded_tests(self):
        merged = self.tmp / "merged"
        completed = run_cli("--merge", str(self.runs / "shard1"), str(self.runs / "shard2"), "--report-dir", str(merged))
        self.assertEqual(completed.returncode, 0, completed.stdout + completed.stderr)
        self.assertEqual(sorted(outcomes(merged)), sorted(self.listed))
        self.assertEqual(set(outcomes(merged).values()), {"PASS"})
        self.assertEqual(len(read_results(merged)["run"]["merged_from"]), 2)
        self.assertTrue((merged / "junit.xml").exists() and (merged / "report.html").exists())

    def test_merging_overlapping_shards_is_an_error(self):
        shard = self.runs / "shard1"
        completed = run_cli("--merge", str(shard), str(shard / "results.json"), "--report-dir", str(self.tmp / "m"))
        self.assertEqual(completed.returncode, 2)
        self.assertRegex(completed.stderr, r"is in both .* shards must not overlap")


class AcceptEndToEndTests(TempDirTestCase):
    def test_accept_then_rerun_is_all_expected(self):
        path = self.tmp / "expectations.toml"
        path.write_text('# mine\n\n[[expect]]\ntest = "test_python_autograd.PythonAutogradTests.*"\n'
                        'backend = "eager"\nstatus = "xfail"\nreason = "thought broken"\n')
        selection = ("--backend", "test.harness.faulty_backends:wrong_values,eager", "-k", "PythonAutogradTests",
                     "--expectations", str(path), "--report-dir", str(self.tmp / "r"))
        first = run_cli(*selection, "--accept")
        self.assertEqual(first.returncode, 1, first.stdout + first.stderr)
        self.assertIn("--accept: rewrote", first.stdout)
        self.assertIn("5 added, 1 dropped", first.stdout)
        text = path.read_text()
        self.assertTrue(text.startswith("# mine\n"))
        self.assertNotIn("thought broken", text)
        second = run_cli(*selection)
        self.assertEqual(second.returncode, 0, second.stdout + second.stderr)
        self.assertEqual(set(outcomes(self.tmp / "r").values()), {"PASS", "XFAIL"})


class InterruptTests(TempDirTestCase):
    def test_terminated_run_keeps_the_previous_reports(self):
        report_dir = self.tmp / "reports"
        report_dir.mkdir()
        (report_dir / "results.json").write_text("previous run")
        process = subprocess.Popen(
            [sys.executable, str(REPO_ROOT / "run_tests.py"), "--backend", "aot_eager", "-k", "LSTMTests",
             "--report-dir", str(report_dir)],
            cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertTrue(process.stdout.readline().startswith("running "))
        time.sleep(3)  # the workers are starting or running
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
        self.assertEqual(process.returncode, 130)
        self.assertIn("interrupted; earlier reports left as they were", stderr)
        self.assertEqual(sorted(path.name for path in report_dir.iterdir()), ["results.json"])
        self.assertEqual((report_dir / "results.json").read_text(), "previous run")


def _results_file(path: Path, outcomes_by_id: dict[str, tuple[str, str]]) -> Path:
    tests = [{"id": test_id, "scenario": test_id, "backend": "eager", "backend_spec": "eager",
              "outcome": outcome, "reason": reason} for test_id, (outcome, reason) in outcomes_by_id.items()]
    path.write_text(json.dumps({"schema": "dynamo-aot-suite/results", "schema_version": 1,
                                "run": {"torch": "2.13.0", "backends": [{"name": "eager", "spec": "eager"}]},
                                "tests": tests}))
    return path


class BaselineTests(TempDirTestCase):
    def test_difference_is_reported_and_new_failures_exit_1(self):
        old = _results_file(self.tmp / "old.json", {
            "m.A.test_stays": ("PASS", ""), "m.A.test_breaks": ("PASS", ""),
            "m.A.test_heals": ("FAIL", "AssertionError: x"), "m.A.test_changes": ("FAIL", "AssertionError: 1 != 2"),
        })
        new = _results_file(self.tmp / "new.json", {
            "m.A.test_stays": ("PASS", ""), "m.A.test_breaks": ("CRASH", "worker gw0 died: SIGSEGV"),
            "m.A.test_heals": ("PASS", ""), "m.A.test_changes": ("ERROR", "KeyError: 'w'"),
        })
        completed = run_cli("--merge", str(new), "--baseline", str(old), "--report-dir", str(self.tmp / "r"))
        self.assertEqual(completed.returncode, 1)
        out = completed.stdout
        self.assertRegex(out, r"newly failing: 1\n\s+m\.A\.test_breaks: PASS -> CRASH: worker gw0 died: SIGSEGV")
        self.assertRegex(out, r"newly passing: 1\n\s+m\.A\.test_heals: FAIL -> PASS")
        self.assertRegex(out, r"failing with a changed reason: 1\n\s+m\.A\.test_changes: FAIL 'AssertionError: 1 != 2' -> ERROR")
        self.assertIn("Changes since the baseline", (self.tmp / "r" / "report.html").read_text())

    def test_fail_on_regressions_ignores_old_unexpected_results(self):
        # A nightly torch that the expectations do not cover: its known failures are FAIL
        # instead of XFAIL, yet nothing regressed against the stable run.
        stable = _results_file(self.tmp / "stable.json", {
            "m.A.test_known": ("XFAIL", "known bug"), "m.A.test_fine": ("PASS", ""), "m.A.test_fixed": ("XFAIL", "bug"),
            "m.A.test_known_regression": ("PASS", ""),
        })
        nightly = _results_file(self.tmp / "nightly.json", {
            "m.A.test_known": ("FAIL", "AssertionError: known bug"), "m.A.test_fine": ("PASS", ""),
            "m.A.test_fixed": ("PASS", ""), "m.A.test_known_regression": ("XFAIL", "bug #1 since 2.14"),
        })
        completed = run_cli("--merge", str(nightly), "--baseline", str(stable), "--fail-on", "regressions",
                            "--report-dir", str(self.tmp / "r"))
        self.assertEqual(completed.returncode, 0, completed.stdout + completed.stderr)
        self.assertRegex(completed.stdout, r"newly failing: 0\n")
        self.assertRegex(completed.stdout, r"newly passing: 1\n\s+m\.A\.test_fixed: XFAIL -> PASS")
        self.assertRegex(completed.stdout,
                         r"newly failing as expected: 1\n\s+m\.A\.test_known_regression: PASS -> XFAIL: bug #1")
        summary = (self.tmp / "r" / "summary.md").read_text()
        self.assertIn("**newly passing: 1**", summary)
        self.assertIn("No new failures.", summary)

        broken = _results_file(self.tmp / "broken.json", {
            "m.A.test_known": ("FAIL", "AssertionError: known bug"), "m.A.test_fine": ("ERROR", "KeyError: 'w'"),
            "m.A.test_fixed": ("PASS", ""),
        })
        completed = run_cli("--merge", str(broken), "--baseline", str(stable), "--fail-on", "regressions",
                            "--report-dir", str(self.tmp / "r2"))
        self.assertEqual(completed.returncode, 1, completed.stdout + completed.stderr)
        self.assertRegex(completed.stdout, r"newly failing: 1\n\s+m\.A\.test_fine: PASS -> ERROR")

    def test_same_results_exit_0(self):
        same = _results_file(self.tmp / "same.json", {"m.A.test_a": ("PASS", ""), "m.A.test_b": ("XFAIL", "known")})
        completed = run_cli("--merge", str(same), "--baseline", str(same), "--report-dir", str(self.tmp / "r"))
        self.assertEqual(completed.returncode, 0, completed.stdout + completed.stderr)
        self.assertIn("no new failures", completed.stdout)


if __name__ == "__main__":
    unittest.main()
