"""No test fails because of another: followers of a failure are rerun in fresh workers."""

from __future__ import annotations

import io
import os
import tempfile
import unittest
from pathlib import Path

from harness.report.results import BACKEND_INDEPENDENT, TestResult
from harness.run import engine, isolation
from harness.run.collection import TestInfo
from harness.worker import health

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLES = "test/harness/isolation_samples.py"
NAMES = ["test_0_breaks_the_process", "test_1_a_passes_alone", "test_1_b_passes_alone", "test_1_c_fails_anyway",
         "test_1_d_passes_alone"]

# Its own seconds (test/harness/budgets.py): 38 s measured 2026-11-29.
TIME_BUDGET_S = 85


def _sample(name: str, family: str = "IsolationSamples") -> TestInfo:
    backend = ("breakable", "test.harness.isolation_samples:breakable") if family == "HealthSamples" \
        else (BACKEND_INDEPENDENT, "")
    return TestInfo(id=f"test.harness.isolation_samples.{family}.{name}",
                    nodeid=f"{SAMPLES}::{family}::{name}",
                    scenario=f"isolation_samples.{family}.{name}",
                    backend=backend[0], backend_spec=backend[1])


def _run(limits: isolation.RerunLimits, names: list[str] = NAMES,
         family: str = "IsolationSamples") -> tuple[dict[str, TestResult], str]:
    with tempfile.TemporaryDirectory() as directory:
        old_path = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = str(REPO_ROOT)
        try:
            options = engine.EngineOptions(jobs=1, timeout=60, root=REPO_ROOT, workdir=Path(directory))
            out = io.StringIO()
            results = isolation.run([_sample(name, family) for name in names], options, lambda count: lambda result: None,
                                    limits, out)
        finally:
            if old_path is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = old_path
    return {test_id.rsplit(".", 1)[1]: result for test_id, result in results.items()}, out.getvalue()


class RerunTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.results, cls.out = _run(isolation.RerunLimits())

    def test_the_breaking_test_fails_and_the_rest_are_settled_alone(self):
        self.assertEqual({name: result.outcome for name, result in self.results.items()}, {
            "test_0_breaks_the_process": "ERROR", "test_1_a_passes_alone": "COLLATERAL",
            "test_1_b_passes_alone": "COLLATERAL", "test_1_c_fails_anyway": "FAIL",
            "test_1_d_passes_alone": "COLLATERAL"})
        self.assertIn("rerun done in 2 pass(es): 3 of 4 pass alone", self.out)

    def test_collateral_names_the_test_that_broke_the_process(self):
        culprit = _sample("test_0_breaks_the_process").id
        collateral = self.results["test_1_d_passes_alone"]
        # Its first run followed test_1_c (which failed) in the broken process; traced back
        # through the collateral failures, the cause is the test that broke it.
        self.assertEqual(collateral.after, culprit)
        self.assertEqual(collateral.rerun, "alone")
        self.assertRegex(collateral.reason, rf"^ERROR only after {culprit} failed earlier in its worker "
                                            r"\(RuntimeError: runtime error: semaphore already signaled\); passes alone$")
        own = self.results["test_1_c_fails_anyway"]
        self.assertEqual((own.reason, own.rerun), ("AssertionError: 1 != 2", "alone"))

    def test_a_limit_of_zero_turns_reruns_off(self):
        results, _ = _run(isolation.RerunLimits(tests=0))
        self.assertEqual([results[name].outcome for name in NAMES], ["ERROR"] * 4 + ["ERROR"])
        self.assertEqual(results["test_1_a_passes_alone"].after, _sample("test_0_breaks_the_process").id)

    def test_tests_over_the_limit_keep_their_first_result(self):
        results, _ = _run(isolation.RerunLimits(tests=1))
        self.assertEqual(results["test_1_a_passes_alone"].outcome, "COLLATERAL")
        self.assertEqual([results[name].rerun for name in NAMES[2:]], ["not rerun"] * 3)
        self.assertEqual([results[name].outcome for name in NAMES[2:]], ["ERROR"] * 3)


class HealthCheckTests(unittest.TestCase):
    """Tests with a backend: after a failure the worker runs a canary through that backend,
    and keeps going (results its own) while the canary behaves as it did before the failure:
    genuine failures cost no rerun."""

    def test_a_broken_runtime_still_makes_its_followers_rerun(self):
        names = ["test_0_fails_on_its_own", "test_1_passes", "test_2_breaks_the_runtime", "test_3_passes_alone",
                 "test_4_fails_anyway"]
        results, out = _run(isolation.RerunLimits(), names, "HealthSamples")
        self.assertEqual({name: result.outcome for name, result in results.items()}, {
            "test_0_fails_on_its_own": "FAIL", "test_1_passes": "PASS", "test_2_breaks_the_runtime": "ERROR",
            "test_3_passes_alone": "COLLATERAL", "test_4_fails_anyway": "FAIL"})
        # test_2 followed test_0's failure, but the canary showed the worker still worked.
        self.assertIsNone(results["test_2_breaks_the_runtime"].after)
        self.assertEqual(results["test_3_passes_alone"].after, _sample("test_2_breaks_the_runtime", "HealthSamples").id)
        # Only the two tests after the canary failed are rerun, in one pass.
        self.assertIn("rerunning 2 test(s)", out)
        self.assertIn("rerun done in 1 pass(es): 1 of 2 pass alone", out)


class HealthTests(unittest.TestCase):
    """harness.worker.health's bookkeeping, with a canary whose behaviour the test sets."""

    def setUp(self):
        self.behaviour = {"a": health.Behaviour(error="ValueError: wrong"), "b": health.Behaviour(error="")}
        self.runs: list[str] = []
        self.health = health.Health(run_canary=self._canary)

    def _canary(self, backend, device):
        self.runs.append(backend.spec)
        return self.behaviour[backend.spec]

    def test_baselines_are_taken_before_any_failure_and_checked_once_per_failure(self):
        a, b = _Spec("a"), _Spec("b")
        self.assertTrue(self.health.trusted(a, "cpu") and self.health.trusted(a, "cpu"))
        self.assertEqual(self.runs, ["a"])
        self.health.failed("t1")
        self.assertTrue(self.health.trusted(a, "cpu") and self.health.trusted(a, "cpu"))
        self.assertEqual(self.runs, ["a", "a"])  # a backend wrong in its baseline is healthy when still wrong
        self.assertFalse(self.health.trusted(b, "cpu"))  # first met after a failure: nothing to compare with
        self.assertFalse(self.health.trusted(None, "cpu"))

    def test_the_worker_baselines_every_backend_of_its_tests_before_its_first_test(self):
        a, b = _Spec("a"), _Spec("b")
        self.health.backends = [a, b]
        self.health.take_baselines("cpu")
        self.assertTrue(self.health.trusted(a, "cpu"))
        self.health.failed("t1")
        self.assertTrue(self.health.trusted(b, "cpu"))
        self.assertEqual(self.runs, ["a", "b", "b"])

    def test_a_canary_that_changed_breaks_the_worker_for_good(self):
        a = _Spec("a")
        self.health.trusted(a, "cpu")
        self.health.failed("t1")
        self.behaviour["a"] = health.Behaviour(error="RuntimeError: semaphore already signaled")
        self.assertFalse(self.health.trusted(a, "cpu"))
        self.behaviour["a"] = health.Behaviour(error="ValueError: wrong")
        self.assertFalse(self.health.trusted(a, "cpu"))
        self.assertEqual(self.health.broken, "t1")

    def test_the_real_canary_is_bit_for_bit_repeatable_and_leaves_no_state(self):
        import torch

        from harness import state

        before, rng = state.snapshot(), torch.get_rng_state()
        first, second = health.canary("aot_eager", "cpu"), health.canary("aot_eager", "cpu")
        self.assertIsNotNone(first.values, first.error)
        self.assertTrue(first.same_as(second))
        self.assertFalse(first.same_as(health.Behaviour(error="RuntimeError: x")))
        nan = health.Behaviour(values=(torch.tensor([float("nan"), 1.0]),))
        self.assertTrue(nan.same_as(health.Behaviour(values=(torch.tensor([float("nan"), 1.0]),))))
        self.assertFalse(nan.same_as(health.Behaviour(values=(torch.tensor([float("nan"), 1.5]),))))
        self.assertEqual(state.leaked(before, state.snapshot()), [])
        self.assertTrue(torch.equal(rng, torch.get_rng_state()))
        self.assertEqual(first.graphs, 1)

    def test_a_dynamo_that_runs_everything_eagerly_is_a_broken_worker(self):
        # Right values and no graph: what a test that left Dynamo off leaves (ThunderCompiler's
        # row of 2026-12-07, 141 tests failing 'received no graph' after one thread-pool test).
        import torch

        healthy = health.canary("aot_eager", "cpu")
        with torch._dynamo.config.patch(disable=True):
            eager = health.canary("aot_eager", "cpu")
        self.assertEqual(eager.graphs, 0)
        self.assertFalse(eager.same_as(healthy))


class _Spec:
    def __init__(self, spec: str):
        self.spec = spec


class FollowersTests(unittest.TestCase):
    def test_only_failures_not_seen_without_an_earlier_failure_are_rerun(self):
        def result(name, outcome, reason, after=None):
            return _sample(name).result(outcome, reason, after=after)

        results = {r.id: r for r in [
            result("a", "FAIL", "AssertionError: output: values differ from eager"),  # first in its process
            result("b", "FAIL", "AssertionError: output[1]: values differ from eager", after="a"),  # same problem
            result("c", "ERROR", "RuntimeError: semaphore already signaled", after="a"),  # only after failures
            result("d", "TIMEOUT", "stopped by the 30 s time limit", after="a"),  # a rerun costs a whole limit
        ]}
        order = [_sample(name).id for name in "abcd"]
        self.assertEqual(isolation.followers(results, order), [_sample("c").id])

    def test_a_run_of_the_same_failure_in_one_process_is_rerun_though_seen_alone(self):
        def result(name, outcome, reason, after=None):  # after: the failure before it in its process
            return _sample(name).result(outcome, reason, after=after and _sample(after).id)

        broken = "ValueError: synchronous semaphore failure"
        results = {r.id: r for r in [
            result("a", "ERROR", broken),  # once alone, in another process
            result("b", "FAIL", "AssertionError: output: values differ from eager"),  # first in its process
            result("c", "ERROR", broken, after="b"),  # the runtime broke here: the next fails alike
            result("d", "ERROR", broken, after="c"),
            result("e", "ERROR", broken, after="d"),
            result("f", "FAIL", "AssertionError: output: values differ from eager", after="e"),  # b's own problem
        ]}
        order = [_sample(name).id for name in "abcdef"]
        self.assertEqual(isolation.followers(results, order), [_sample(name).id for name in "cde"])


if __name__ == "__main__":
    unittest.main()
