"""Shard specs, the duration-balanced partition and test selection patterns."""

from __future__ import annotations

import json
import tempfile
import unittest
from pathlib import Path

from harness.run.options import UsageError, parse_jobs
from unittest import mock

from harness import settings
from harness.run import selection
from harness.run.selection import ShardSpecError, load_durations, longest_first, matches, parse_shard, partition

# Its own seconds (test/harness/budgets.py): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10


class ShardSpecTests(unittest.TestCase):
    def test_valid_and_invalid(self):
        self.assertEqual(parse_shard("2/3"), (2, 3))
        self.assertEqual(parse_shard(" 1 / 1 "), (1, 1))
        for bad in ("0/3", "4/3", "1/0", "3", "a/b", "", "-1/2"):
            with self.subTest(bad=bad), self.assertRaises(ShardSpecError):
                parse_shard(bad)

    def test_jobs(self):
        self.assertGreaterEqual(parse_jobs("auto"), 1)
        self.assertEqual(parse_jobs("3"), 3)
        for bad in ("0", "-2", "x", "1.5"):
            with self.subTest(bad=bad), self.assertRaises(UsageError):
                parse_jobs(bad)


class PartitionTests(unittest.TestCase):
    IDS = [f"m.F.test_{index:02d}" for index in range(40)]

    def test_disjoint_complete_and_deterministic(self):
        durations = {test_id: float(index % 7) for index, test_id in enumerate(self.IDS)}
        for count in (1, 2, 3, 7, 50):
            shards = partition(self.IDS, count, durations)
            flat = [test_id for shard in shards for test_id in shard]
            self.assertEqual(sorted(flat), sorted(self.IDS))
            self.assertEqual(len(flat), len(set(flat)))
            self.assertEqual(shards, partition(list(reversed(self.IDS)), count, dict(reversed(durations.items()))))

    def test_balanced_by_recorded_time(self):
        durations = {"m.F.test_00": 60.0, **{test_id: 1.0 for test_id in self.IDS[1:]}}
        shards = partition(self.IDS, 2, durations)
        totals = sorted(sum(durations[t] for t in shard) for shard in shards)
        self.assertEqual(totals, [39.0, 60.0])  # the long test alone; the rest together
        self.assertEqual(shards[0], ["m.F.test_00"])

    def test_unknown_tests_count_as_the_median(self):
        durations = {"m.F.test_00": 10.0, "m.F.test_01": 2.0, "m.F.test_02": 4.0}
        order = longest_first(["m.F.test_03", "m.F.test_01", "m.F.test_00"], durations)
        self.assertEqual(order, ["m.F.test_00", "m.F.test_03", "m.F.test_01"])  # test_03 ~ 4 s

    def test_durations_from_results_json_or_plain_map(self):
        with tempfile.TemporaryDirectory() as tmp:
            results = Path(tmp) / "results.json"
            results.write_text(json.dumps({"schema": "dynamo-aot-suite/results", "schema_version": 1,
                                           "tests": [{"id": "a", "duration_s": 2.5}]}))
            self.assertEqual(load_durations(results), {"a": 2.5})
            self.assertEqual(load_durations(tmp), {"a": 2.5})
            plain = Path(tmp) / "plain.json"
            plain.write_text('{"b": 1}')
            self.assertEqual(load_durations(plain), {"b": 1.0})
            self.assertEqual(load_durations(Path(tmp) / "absent.json"), {})

    def test_the_full_sweep_limits_the_sweeps_tests_by_its_own_durations(self):
        sweep, other = "test.dynamo.test_op_sweep.OpSweepTests_eager.test_error_inputs", "test.dynamo.m.F_eager.test_a"
        with tempfile.TemporaryDirectory() as tmp:
            quick, full = Path(tmp) / "quick.json", Path(tmp) / "full.json"
            quick.write_text(json.dumps({sweep: 3.0, other: 1.0}))
            full.write_text(json.dumps({sweep: 300.0}))
            with mock.patch.object(selection, "DEFAULT_DURATIONS", quick), \
                    mock.patch.object(selection, "FULL_SWEEP_DURATIONS", full):
                with settings.using(settings.Settings({settings.OP_SWEEP: "full"})):
                    self.assertEqual(selection.run_durations(None), {sweep: 300.0, other: 1.0})
                    self.assertEqual(selection.run_durations(quick), {sweep: 3.0, other: 1.0})  # a file given: as it is
                with settings.using(settings.Settings({})):
                    self.assertEqual(selection.run_durations(None), {sweep: 3.0, other: 1.0})


class PatternTests(unittest.TestCase):
    IDS = {"t.m.LSTMTests_eager.test_lstm", "t.m.LSTMTests_eager.test_lstm_no_grad", "t.m.Other_eager.test_x"}

    def selected(self, pattern: str) -> set[str]:
        return {test_id for test_id in self.IDS if matches(test_id, pattern, self.IDS)}

    def test_full_id_selects_exactly_that_test(self):
        self.assertEqual(self.selected("t.m.LSTMTests_eager.test_lstm"), {"t.m.LSTMTests_eager.test_lstm"})

    def test_substring_and_glob(self):
        self.assertEqual(self.selected("LSTM"), self.IDS - {"t.m.Other_eager.test_x"})
        self.assertEqual(self.selected("*no_grad"), {"t.m.LSTMTests_eager.test_lstm_no_grad"})
        self.assertEqual(self.selected("no_grad*"), set())  # a glob matches the whole id


if __name__ == "__main__":
    unittest.main()
