"""The perf tier's method (harness/measure/speed.py, harness/measure/peak_memory.py,
harness/testcase/perf.py) on functions whose cost is known, and one perf test run end to
end. The proof that slow and memory-hungry backends are flagged is
test/proofs/test_perf_faults.py."""

from __future__ import annotations

import math
import os
import random
import time
import unittest
from unittest import mock

import torch

from harness import settings
from harness.measure import peak_memory, speed
from harness.testcase import perf
from test.harness import shared_runs

# Its own seconds (test/harness/budgets.py, shared runs apart): 4 s measured 2026-11-29.
TIME_BUDGET_S = 15


def _busy(seconds: float):
    def spin():
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    return spin


class IntervalTests(unittest.TestCase):
    def test_the_median_interval_is_made_of_order_statistics(self):
        values = [float(value) for value in range(1, 101)]
        self.assertEqual(speed.median_interval(values), (41.0, 60.0))
        self.assertEqual(speed.median_interval([2.0] * 10), (2.0, 2.0))
        self.assertEqual(speed.relative_width([2.0] * 10), 0.0)

    def test_few_values_give_the_widest_interval(self):
        self.assertEqual(speed.median_interval([1.0, 3.0, 2.0]), (1.0, 3.0))


def _work(milliseconds: int):
    """Functions doing 1, 2, ... ``milliseconds`` units of a fixed computation that lasts about
    a millisecond on a quiet machine. Unlike a spin until a deadline, a preempted call of one
    is longer by the time taken from it, so two of them keep the ratio of their work on a busy
    machine (CI runs the self-tests beside the proofs)."""
    sample = 200_000
    per_item = min(speed._batch(lambda: sum(range(sample)), 1, lambda: None) for _ in range(5)) / sample
    unit = max(1, round(0.001 / per_item))
    return [lambda units=units: sum(range(units * unit)) for units in range(1, milliseconds + 1)]


class MeasureTests(unittest.TestCase):
    def test_a_function_twice_as_fast_has_a_speed_up_of_two(self):
        one_ms, two_ms = _work(2)
        timing = speed.measure(two_ms, one_ms, budget_s=1.0)
        self.assertAlmostEqual(timing.speedup, 2.0, delta=0.3)
        self.assertLessEqual(timing.low, timing.speedup)
        self.assertGreaterEqual(timing.high, timing.speedup)
        # Times per call, not per batch: batches of both last about BATCH_S, calls differ 2x.
        # (Absolute times move with the machine's load; beside three busy processes the
        # medians' ratio stayed within 1.8-2.3.)
        self.assertGreater(timing.eager_ms / timing.compiled_ms, 1.5)
        self.assertLess(timing.eager_ms / timing.compiled_ms, 2.7)
        self.assertGreaterEqual(timing.rounds, speed.MIN_ROUNDS)

    def test_one_slow_calibration_call_does_not_shrink_the_batch(self):
        # The first call lasts 20 ms (as if preempted), the next ones 2 ms: sized from the first
        # alone, a batch would hold 1 call; from the fastest, up to 5 fill BATCH_S (10 ms).
        durations = iter([0.02] + [0.002] * 100)
        calls = speed._calls_per_batch(lambda: _busy(next(durations))(), lambda: None)
        self.assertLessEqual(calls, math.ceil(speed.BATCH_S / 0.002))
        self.assertGreaterEqual(calls, 2)

    def test_rounds_stop_at_the_budget(self):
        # Each eager call costs 0.2 or 2 ms at random: a batch's mean varies by about 30%, so the
        # median ratio never gets within TIGHT in MAX_ROUNDS rounds (some 8 s); only the budget stops it.
        draw = random.Random(0)
        started = time.perf_counter()
        timing = speed.measure(lambda: _busy(draw.choice((0.0002, 0.002)))(), _busy(0.0005), budget_s=0.3)
        self.assertLess(time.perf_counter() - started, 2.0)
        self.assertGreaterEqual(timing.rounds, speed.MIN_ROUNDS)
        self.assertLess(timing.rounds, speed.MAX_ROUNDS)

    def test_garbage_collection_is_put_back(self):
        import gc

        speed.measure(lambda: None, lambda: None, budget_s=0.05)
        self.assertTrue(gc.isenabled())


class PeakMemoryTests(unittest.TestCase):
    cpu = torch.device("cpu")

    def test_the_peak_counts_what_the_call_allocated_at_its_highest(self):
        def step():
            first = torch.empty(1 << 20, dtype=torch.uint8)
            second = torch.empty(1 << 20, dtype=torch.uint8)
            del first, second
            return torch.empty(1 << 10, dtype=torch.uint8)

        self.assertEqual(peak_memory.peak_bytes(step, self.cpu), 2 << 20)

    def test_freeing_older_tensors_does_not_lower_the_level(self):
        held = [torch.empty(4 << 20, dtype=torch.uint8)]

        def step():
            held.clear()  # four MiB from before the call
            torch.empty(1 << 20, dtype=torch.uint8)

        self.assertEqual(peak_memory.peak_bytes(step, self.cpu), 1 << 20)


class SettingTests(unittest.TestCase):
    def test_defaults_and_bad_values(self):
        with settings.using(settings.Settings({})):
            self.assertEqual((perf.budget_s(), perf.threads()), (speed.DEFAULT_BUDGET_S, perf.DEFAULT_THREADS))
        with settings.using(settings.Settings({settings.PERF_BUDGET: "0.5", settings.PERF_THREADS: "2"})):
            self.assertEqual((perf.budget_s(), perf.threads()), (0.5, 2))
        for name, value in ((settings.PERF_BUDGET, "-1"), (settings.PERF_THREADS, "1.5")):
            with self.subTest(name=name), settings.using(settings.Settings({name: value})):
                with self.assertRaisesRegex(perf.PerfSettingError, f"{name}='{value}': expected a"):
                    (perf.budget_s if name == settings.PERF_BUDGET else perf.threads)()


MEASURED = shared_runs.PERF.part(["eager"], ["test.dynamo.test_perf.PerfTests_eager.test_graph_pointwise_chain"])
NOT_TIMED = shared_runs.PERF.part(["test.harness.faulty_backends:wrong_values"],
                                  ["test.dynamo.test_perf.PerfTests_wrong_values.test_graph_pointwise_chain"])


class PerfRunTests(unittest.TestCase):
    def test_a_perf_test_records_its_figures_and_its_compile_s_metrics(self):
        (test,) = MEASURED.tests()
        self.assertEqual(test["outcome"], "PASS", MEASURED.describe())
        self.assertIn("1 worker(s)", MEASURED.completed.stdout)
        self.assertEqual(MEASURED.run_record["perf"]["threads"], 2)
        figures = test["perf"]
        self.assertEqual(figures["threads"], 2)
        self.assertEqual(figures["device"], "cpu")
        self.assertGreater(figures["eager_ms"], 0)
        self.assertGreater(figures["eager_peak_bytes"], 0)
        self.assertLessEqual(figures["low"], figures["speedup"])
        # Dynamo's metrics are the compile's: one frame, whatever the number of timed calls.
        self.assertEqual(test["metrics"]["frames"], 1)
        self.assertIn("graph_pointwise_chain", MEASURED.completed.stdout)

    def test_a_step_that_computes_something_else_is_not_timed(self):
        self.assertEqual(NOT_TIMED.completed.returncode, 1, NOT_TIMED.describe())
        (test,) = NOT_TIMED.tests()
        self.assertEqual(test["outcome"], "FAIL")
        self.assertIn("the compiled step disagrees with eager, so it is not timed", test["reason"])
        self.assertIsNone(test["perf"])

    def test_threads_are_put_back_after_a_perf_test(self):
        before = torch.get_num_threads()
        with mock.patch.dict(os.environ, {settings.TIER: "perf", settings.PERF_BUDGET: "0.05",
                                          settings.PERF_THREADS: "1"}):
            from test.dynamo import test_perf

            result = unittest.TestResult()
            test_perf.PerfTests_eager("test_graph_input_mutation").run(result)
        self.assertEqual((result.failures, result.errors, result.skipped), ([], [], []))
        self.assertEqual(torch.get_num_threads(), before)


if __name__ == "__main__":
    unittest.main()
