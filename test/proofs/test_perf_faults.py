"""The perf tier flags a backend that is right but slow or memory-hungry, and stays quiet
about one that is not (harness.testcase.perf, harness.report.metric_changes).

aot_eager's figures on the perf tier's scenario graphs are the baseline. A second run then
measures aot_eager again beside three faulty backends built on it
(test/harness/faulty_backends/perf.py), all compared with that baseline: the faulty ones
by scenario, since the baseline holds aot_eager alone. Required:

* aot_eager against its own baseline: no change in memory, and at most one speed-up change,
  on the sub-millisecond input mutation only (both runs share the machine with others);
* ``sleeps_per_call`` and ``runs_forward_twice``: a speed-up regression on every graph, or
  too noisy to judge where a figure was noisy (the sub-millisecond input mutation often is,
  and beside the self-tests any may be), and a regression on at least ``MIN_CAUGHT`` of the
  six (half: under load eager's own time can move in the others);
* ``keeps_activation_copies``: a memory regression on each graph with a backward (the copies
  are of saved activations), and none on the others;
* ``--fail-on metrics`` exits 1, and results.json and summary.md say what regressed.

The runs use a 1 s budget per test, as cheap as the method allows (the proofs share the
machine with the self-tests, which makes them a harder test of the noise rules).
"""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path

from test.harness.cli import read_results, run_cli

# Its own seconds (test/harness/budgets.py): 97 s measured 2026-11-29.
TIME_BUDGET_S = 200

FAULTY = "test.harness.faulty_backends"
GRAPHS = "test.dynamo.test_perf.PerfTests_*.test_graph_*"
WITH_BACKWARD = ("test_graph_mlp_train", "test_graph_loss_backward")
SLOW = ("sleeps_per_call", "runs_forward_twice")
HUNGRY = "keeps_activation_copies"
# Of the six graphs, per slow backend. Beside the self-tests and the README's run a clean-clone
# .ci/run (2026-12-03, 1191 s) found runs_forward_twice's eager time moved on its own in three
# graphs (not comparable, rightly) and caught the other three: half is what load leaves.
MIN_CAUGHT = 3
BUDGET = ("--perf-budget", "1")
# The graph whose compiled call takes a fraction of a millisecond: its speed-up moves with load.
NOISIEST = "test_graph_input_mutation"


def _method(test_id: str) -> str:
    return test_id.rsplit(".", 1)[1]


def _backend(test_id: str) -> str:
    return test_id.rsplit(".", 2)[1].split("_", 1)[1]


class PerfFaultsTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        directory = tempfile.TemporaryDirectory()
        cls.addClassCleanup(directory.cleanup)
        baseline, run = Path(directory.name) / "baseline", Path(directory.name) / "run"
        cls.first = run_cli("--tier", "perf", "--backend", "aot_eager", "-k", GRAPHS, *BUDGET,
                            "--report-dir", str(baseline))
        backends = ",".join(["aot_eager", *(f"{FAULTY}:{name}" for name in (*SLOW, HUNGRY))])
        cls.second = run_cli("--tier", "perf", "--backend", backends, "-k", GRAPHS, *BUDGET,
                             "--baseline", str(baseline), "--fail-on", "metrics", "--report-dir", str(run))
        cls.results = read_results(run) if (run / "results.json").exists() else {}
        cls.summary = (run / "summary.md").read_text() if (run / "summary.md").exists() else ""

    def describe(self) -> str:
        return "".join(f"\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}" for done in (self.first, self.second))

    def changes(self, backend: str, figure: str) -> dict[str, dict]:
        return {_method(change["test"]): change for change in self.results["baseline"]["perf_changes"]
                if _backend(change["test"]) == backend and change["figure"] == figure}

    def test_every_perf_test_measured(self):
        self.assertEqual(self.first.returncode, 0, self.describe())
        tests = self.results.get("tests", [])
        self.assertEqual(len(tests), 4 * 6, self.describe())
        for test in tests:
            with self.subTest(test=test["id"]):
                self.assertEqual(test["outcome"], "PASS", test["reason"])
                self.assertGreater(test["perf"]["rounds"], 0)

    def test_aot_eager_against_its_own_figures_reports_nothing(self):
        # At most one speed-up change, either way, and only on the sub-millisecond graph: beside
        # the self-tests and the README's run either run can be the slower one (the input
        # mutation's speed-up 0.48x then 0.74x on 2026-12-02, 0.56x then 0.44x on 2026-12-03,
        # 0.61x then 0.36x on 2026-12-06 beside the README's run, every interval narrow). A
        # change on any other graph, or on two, is the rules' false alarm.
        changed = self.changes("aot_eager", "speed-up")
        self.assertLessEqual(len(changed), 1, self.describe())
        self.assertLessEqual(set(changed), {NOISIEST}, self.describe())
        self.assertEqual(self.changes("aot_eager", "peak memory"), {}, self.describe())

    def test_slow_backends_lose_speed_up_on_every_graph(self):
        graphs = {_method(test["id"]) for test in self.results["tests"]}
        for backend in SLOW:
            with self.subTest(backend=backend):
                noisy = {_method(line.split(":")[0]) for line in self.results["baseline"]["perf_too_noisy"]
                         if _backend(line.split(":")[0]) == backend}
                slower = self.changes(backend, "speed-up")
                self.assertTrue(all(change["regression"] for change in slower.values()), slower)
                # One graph may hide its loss under load: beside the self-tests and the README's
                # run, runs_forward_twice's loss backward measured like aot_eager's once
                # (clean-clone .ci/run, 2026-12-02 evening; the run before passed).
                self.assertLessEqual(len(graphs - set(slower) - noisy), 1, self.describe())
                self.assertGreaterEqual(len(slower), MIN_CAUGHT, self.describe())

    def test_memory_hungry_backend_flagged_where_activations_are_saved(self):
        hungrier = self.changes(HUNGRY, "peak memory")
        self.assertEqual(set(hungrier), set(WITH_BACKWARD), self.describe())
        for change in hungrier.values():
            self.assertTrue(change["regression"])
            self.assertGreater(change["new"], 1.2 * change["old"])

    def test_regressions_fail_the_run_and_are_reported(self):
        self.assertEqual(self.second.returncode, 1, self.describe())
        self.assertIn("perf regressions:", self.second.stdout)
        self.assertIn("**perf regressions:", self.summary)
        escaped = f"PerfTests_{HUNGRY}.test_graph_mlp_train: compiled peak memory".replace("_", "\\_")
        self.assertIn(escaped, self.summary)  # summary.md escapes Markdown's characters
