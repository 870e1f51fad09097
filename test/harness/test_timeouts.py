"""Per-test time limits derived from recorded durations."""

from __future__ import annotations

import unittest

from harness.run import selection
from harness.run.collection import TestInfo

# Its own seconds (test/harness/budgets.py): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10

RECORDED = {
    "test.dynamo.m.LSTMTests_eager.test_lstm": 0.5,
    "test.dynamo.m.LSTMTests_inductor.test_lstm": 20.0,
    "test.dynamo.m.LSTMTestsMore_inductor.test_lstm": 99.0,  # another family with the same prefix

    "test.dynamo.m.Loose.test_alone": 4.0,
}


def info(test_id: str, scenario: str) -> TestInfo:
    return TestInfo(id=test_id, nodeid="", scenario=scenario, backend="x", backend_spec="x")


class DeriveTests(unittest.TestCase):
    def test_recorded_tests_get_floor_plus_margin_times_their_time(self):
        limits = selection.derive([info("test.dynamo.m.LSTMTests_inductor.test_lstm", "m.LSTMTests.test_lstm"),
                                  info("test.dynamo.m.Loose.test_alone", "m.Loose.test_alone")], RECORDED)
        self.assertEqual(limits["test.dynamo.m.LSTMTests_inductor.test_lstm"], (selection.FLOOR + 40.0, 20.0))
        self.assertEqual(limits["test.dynamo.m.Loose.test_alone"], (selection.FLOOR + 8.0, 4.0))

    def test_an_unrecorded_backend_gets_the_scenarios_slowest_recording(self):
        limits = selection.derive([info("test.dynamo.m.LSTMTests_my_backend.test_lstm", "m.LSTMTests.test_lstm")],
                                 RECORDED)
        self.assertEqual(limits["test.dynamo.m.LSTMTests_my_backend.test_lstm"], (selection.FLOOR + 40.0, 20.0))

    def test_graph_seconds_add_each_compiled_graph_to_a_borrowed_duration(self):
        # --graph-seconds 60: a backend that takes a minute per graph (MAX) is not stopped at
        # inductor's pace; its own recordings, where it has them, are left as they are.
        tests = [info("test.dynamo.m.LSTMTests_max.test_lstm", "m.LSTMTests.test_lstm"),
                 info("test.dynamo.m.LSTMTests_inductor.test_lstm", "m.LSTMTests.test_lstm")]
        limits = selection.derive(tests, RECORDED, graph_seconds=60.0)
        self.assertEqual(limits["test.dynamo.m.LSTMTests_max.test_lstm"], (selection.FLOOR + 2 * (20.0 + 60.0), 20.0))
        self.assertEqual(limits["test.dynamo.m.LSTMTests_inductor.test_lstm"], (selection.FLOOR + 40.0, 20.0))

    def test_a_scenario_never_recorded_gets_the_unknown_limit(self):
        limits = selection.derive([info("test.dynamo.m.NewTests_eager.test_new", "m.NewTests.test_new")], RECORDED)
        self.assertEqual(limits["test.dynamo.m.NewTests_eager.test_new"], (selection.UNKNOWN, None))


if __name__ == "__main__":
    unittest.main()
