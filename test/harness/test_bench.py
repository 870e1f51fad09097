"""bench/: the process-tree measurement, the overhead split, the targets, and bench.py's
usage errors (its end-to-end run, a minute long, is test/proofs/test_bench_end_to_end.py)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
import unittest
from pathlib import Path

from test.harness.cli import REPO_ROOT

# Its own seconds (test/harness/budgets.py): 14 s measured 2026-12-02 (the held-out count imports torch).
TIME_BUDGET_S = 30

BENCH = REPO_ROOT / "bench"
MB = 1024 ** 2


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"dynamo_suite_bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    sys.path.insert(0, str(BENCH))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module


proctree = _load("proctree")
overhead = _load("overhead")
bench = _load("bench")

# A parent that starts two children holding 150 MB each at the same time, one of which
# double-forks a grandchild that burns CPU after its parent has exited.
_TREE = textwrap.dedent("""
    import os, subprocess, sys, time
    HOLD = "b = bytearray(150 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096]); time.sleep(1.5)"
    ORPHAN = ("import os, time\\n"
              "if os.fork() == 0:\\n"
              "    end = time.process_time() + 0.6\\n"
              "    while time.process_time() < end: pass\\n"
              "    os._exit(0)\\n")
    children = [subprocess.Popen([sys.executable, "-c", "import time; " + HOLD]) for _ in range(2)]
    subprocess.run([sys.executable, "-c", ORPHAN])
    for child in children:
        child.wait()
""")


# Two children that map the same 120 MB file and read every page of it at the same time:
# resident once, though each child's RSS counts it.
_SHARED = textwrap.dedent("""
    import mmap, subprocess, sys, tempfile
    READ = ("import mmap, sys, time\\n"
            "f = open(sys.argv[1], 'rb'); m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\\n"
            "total = sum(m[i] for i in range(0, len(m), 4096)); time.sleep(1.5)\\n")
    with tempfile.NamedTemporaryFile() as shared:
        shared.write(b"x" * (120 * 1024 * 1024)); shared.flush()
        children = [subprocess.Popen([sys.executable, "-c", READ, shared.name]) for _ in range(2)]
        for child in children:
            child.wait()
""")

# Measured from a separate process: measuring makes the measurer a subreaper for good.
_MEASURE = textwrap.dedent("""
    import dataclasses, json, sys
    sys.path.insert(0, sys.argv[1])
    import proctree
    usage = proctree.measure([sys.executable, "-c", sys.argv[2]], interval=0.05)
    print(json.dumps(dataclasses.asdict(usage)))
""")


class ProcessTreeTests(unittest.TestCase):
    def measure(self, program: str):
        completed = subprocess.run([sys.executable, "-c", _MEASURE, str(BENCH), program],
                                   capture_output=True, text=True, timeout=120)
        self.assertEqual(completed.returncode, 0, completed.stderr)
        return proctree.Usage(**json.loads(completed.stdout))

    @unittest.skipUnless(Path("/proc/self/smaps_rollup").exists(), "needs Linux /proc")
    def test_memory_is_summed_over_the_tree_and_orphans_are_counted(self):
        usage = self.measure(_TREE)
        self.assertEqual(usage.returncode, 0)
        self.assertGreaterEqual(usage.peak_rss_bytes, 300 * MB, "both children's memory at once")
        self.assertGreaterEqual(usage.peak_pss_bytes, 300 * MB, "private pages count fully in PSS too")
        self.assertGreaterEqual(usage.peak_processes, 3)
        self.assertEqual([name for name, _ in usage.peak_breakdown[:2]], ["python", "python"])
        self.assertGreaterEqual(usage.peak_breakdown[1][1], 150 * MB)
        self.assertGreaterEqual(usage.cpu_s, 0.6, "the orphaned grandchild's CPU time is counted")
        self.assertGreaterEqual(usage.wall_s, 1.5)

    @unittest.skipUnless(Path("/proc/self/smaps_rollup").exists(), "needs Linux /proc")
    def test_pages_the_processes_share_count_once_in_pss(self):
        usage = self.measure(_SHARED)
        self.assertGreaterEqual(usage.peak_rss_bytes, 240 * MB, "each child's RSS holds the whole file")
        self.assertLess(usage.peak_pss_bytes, 200 * MB, "the file's pages are resident once")
        self.assertGreaterEqual(usage.peak_pss_bytes, 120 * MB)
        shares = [share for name, share in usage.pss_breakdown if name == "python"]
        self.assertGreaterEqual(len(shares), 2)

    def test_descendants_of_a_missing_process_is_just_itself(self):
        self.assertEqual(proctree.descendants(2 ** 22 + 1), [2 ** 22 + 1])


class OverheadSplitTests(unittest.TestCase):
    def test_split_between_scenario_harness_pytest_and_idle(self):
        lines = [
            # worker gw0: two tests back to back with a 0.1 s gap
            {"worker": "gw0", "id": "a", "start": 100.0, "end": 101.0, "run_s": 0.9, "body_s": 0.8},
            {"worker": "gw0", "id": "b", "start": 101.1, "end": 103.1, "run_s": 1.95, "body_s": 1.9},
            # gw1: a test outside DynamoTestCase, all of it the harness's
            {"worker": "gw1", "id": "c", "start": 100.5, "end": 100.52},
        ]
        split = overhead.analyse(lines, launched=95.0, exited=104.0)
        self.assertEqual(split.tests, 3)
        self.assertAlmostEqual(split.body_s, 2.7)
        self.assertAlmostEqual(split.in_test_s, 0.15)
        self.assertAlmostEqual(split.per_test_s, 0.1 + 0.05 + 0.02)
        self.assertAlmostEqual(split.idle_s, 0.1)
        self.assertAlmostEqual(split.startup_s, 5.0)
        self.assertAlmostEqual(split.finish_s, 0.9)
        self.assertAlmostEqual(split.overhead_per_test_ms, 1000 * (0.15 + 0.17 + 0.1) / 3, places=3)

    def test_timing_larger_than_the_span_is_clamped(self):
        split = overhead.analyse([{"worker": "w", "start": 0.0, "end": 1.0, "run_s": 2.0, "body_s": 3.0}], 0.0, 1.0)
        self.assertEqual((split.body_s, split.in_test_s, split.per_test_s), (1.0, 0.0, 0.0))


class TargetTests(unittest.TestCase):
    def run_record(self, name, jobs, wall, overhead_ms=5.0, pss=1.0):
        return {"name": name, "jobs": jobs, "tests": 10, "wall_s": wall, "cpu_s": wall * jobs,
                "peak_rss_gb": pss * 1.2, "peak_pss_gb": pss, "peak_processes": 3,
                "peak_breakdown_mb": [["python", 600], ["cc1plus", 190]],
                "pss_breakdown_mb": [["python", 500], ["cc1plus", 120]],
                "overhead_per_test_ms": overhead_ms, "in_test_s": 0.01, "per_test_s": 0.02,
                "idle_s": 0.0, "startup_s": 4.0}

    def test_every_target_judged(self):
        runs = {"cold": self.run_record("cold", 2, 280.0), "warm": self.run_record("warm", 2, 100.0, pss=1.6),
                "unmeasured": self.run_record("unmeasured", 2, 96.0), "serial": self.run_record("serial", 1, 150.0)}
        targets = {target["target"]: target for target in bench.evaluate(runs)}
        self.assertEqual(len(targets), 6)
        cost = targets["eager-share measurement, extra CPU time (warm)"]
        self.assertAlmostEqual(cost["value"], 100 * (100 / 96 - 1), places=2)
        self.assertTrue(cost["met"])
        self.assertTrue(targets["default run, cold caches"]["met"])
        speedup = targets["speed-up of -j JOBS over -j 1 (warm)"]
        self.assertAlmostEqual(speedup["value"], 1.5)
        self.assertFalse(speedup["met"])
        self.assertFalse(targets["peak memory of all processes (PSS, any run)"]["met"])
        table = bench.render(runs, list(targets.values()), jobs=2)
        self.assertIn("speed-up of -j 2 over -j 1 (warm)", table)
        self.assertRegex(table, r"1\.50×\s+≥ 1\.6×\s+MISSED")
        self.assertRegex(table, r"default run, cold caches\s+280\.00 s\s+≤ 300 s\s+met")
        self.assertIn("at the warm run's RSS peak: python 600 MB, cc1plus 190 MB", table)
        self.assertIn("at the warm run's PSS peak: python 500 MB, cc1plus 120 MB", table)

    def test_memory_is_judged_on_bytes_not_on_the_rounded_figure(self):
        run = self.run_record("warm", 2, 100.0, pss=1.5)
        run["peak_pss_bytes"] = int(1.5 * 1024 ** 3) + 1024 ** 2  # 1 MB over: rounds to 1.500 GB
        (memory,) = [t for t in bench.evaluate({"warm": run}) if t["target"].startswith("peak memory")]
        self.assertFalse(memory["met"])

    def test_targets_of_runs_left_out_are_not_judged(self):
        targets = bench.evaluate({"warm": self.run_record("warm", 2, 100.0)})
        self.assertEqual([target["target"] for target in targets],
                         ["default run, warm caches", "harness overhead per test (warm)",
                          "peak memory of all processes (PSS, any run)"])


class BenchCommandTests(unittest.TestCase):
    def test_bad_skip_is_a_usage_error(self):
        completed = subprocess.run([sys.executable, str(BENCH / "bench.py"), "--skip", "lukewarm"],
                                   capture_output=True, text=True, stdin=subprocess.DEVNULL)
        self.assertEqual(completed.returncode, 2)
        self.assertIn("--skip: unknown run(s) lukewarm", completed.stderr)


class HeldOutCountTests(unittest.TestCase):
    """bench/held_out.py: a fault is caught by a test unexpected on it and expected on the control."""

    def _results(self, directory: Path, tests: list[tuple[str, str, str]]) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "results.json").write_text(json.dumps({"run": {}, "tests": [
            {"id": f"test.dynamo.test_x.F_{backend}.{name}", "backend": f"bench/held_out_faults.py:{backend}",
             "outcome": outcome} for backend, name, outcome in tests]}))

    def test_caught_only_where_the_control_was_as_expected(self):
        held_out = _load("held_out")
        import tempfile

        with tempfile.TemporaryDirectory() as directory:
            self._results(Path(directory), [
                ("control", "test_a", "PASS"), ("control", "test_b", "FAIL"),
                ("remainder_as_fmod", "test_a", "FAIL"), ("remainder_as_fmod", "test_b", "FAIL"),
                ("gelu_tanh_ignored", "test_a", "PASS"), ("gelu_tanh_ignored", "test_b", "FAIL")])
            found = held_out.outcomes(Path(directory))
            self.assertEqual(found["remainder_as_fmod"], {"test.dynamo.test_x.F.test_a": "FAIL",
                                                          "test.dynamo.test_x.F.test_b": "FAIL"})
            printed = subprocess.run([sys.executable, str(BENCH / "held_out.py"), "--count", directory],
                                     capture_output=True, text=True, check=True).stdout
        self.assertIn("caught  remainder_as_fmod                1 F.test_a", printed)
        self.assertIn("missed  gelu_tanh_ignored", printed)  # test_b fails on the control too
        self.assertIn("set 2 1 of 9; 1 of 21", printed)

    def test_regressions_counted_from_a_run_per_regression(self):
        import contextlib
        import io
        import tempfile

        held_out, printed = _load("held_out"), io.StringIO()
        with tempfile.TemporaryDirectory() as directory:
            for name, outcome in (("control", "PASS"), ("detach_dropped", "FAIL"), ("scatter_lost", "PASS")):
                (Path(directory) / name).mkdir()
                (Path(directory) / name / "results.json").write_text(json.dumps({"run": {}, "tests": [
                    {"id": "test.dynamo.test_x.F_aot_eager.test_a", "backend": "aot_eager", "outcome": outcome}]}))
            with contextlib.redirect_stdout(printed):
                self.assertEqual(held_out.main(["--count", directory]), 0)
        printed = printed.getvalue()
        self.assertIn("caught  detach_dropped                   1 F.test_a", printed)
        self.assertIn("missed  scatter_lost", printed)
        self.assertIn("no run  rng_state_rewound", printed)
        self.assertIn("caught 1 of 2 regressions of torch (12 not run)", printed)


if __name__ == "__main__":
    unittest.main()
