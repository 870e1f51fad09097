"""Metric regressions against a baseline (harness/report/metric_changes.py): the rules on
made-up results. The proof that a Dynamo patched to graph-break on an op it used to trace
shows as a metric regression is test/proofs/test_patched_dynamo.py."""

from __future__ import annotations

import unittest

from harness.report import metric_changes
from harness.report.baseline import compare
from harness.report.results import RunResults, TestResult


def _run(*tests: tuple[str, dict, str]) -> RunResults:
    return RunResults(run={}, tests=[TestResult(id=name, scenario=name, backend="b", backend_spec="b", outcome=outcome,
                                                metrics=metrics) for name, metrics, outcome in tests])


def _metrics(frames=1, graphs=1, graph_breaks=0, recompiles=0, compile_s=0.5) -> dict:
    return {"frames": frames, "graphs": graphs, "graph_breaks": graph_breaks, "recompiles": recompiles,
            "compile_s": compile_s}


class RuleTests(unittest.TestCase):
    def changes(self, old: dict, new: dict, outcome: str = "PASS", others: int = 0) -> list[str]:
        filler = [(f"other{index}", _metrics(), "PASS") for index in range(others)]
        return [change.line() for change in metric_changes.compare(_run(("t", old, outcome), *filler),
                                                                   _run(("t", new, outcome), *filler))]

    def test_any_change_in_frames_graph_breaks_or_recompiles(self):
        self.assertEqual(self.changes(_metrics(), _metrics(frames=2, graph_breaks=1, recompiles=1)),
                         ["t: frames 1 -> 2", "t: graph breaks 0 -> 1", "t: recompiles 0 -> 1"])

    def test_graphs_differ_by_one_between_identical_runs(self):
        self.assertEqual(self.changes(_metrics(graphs=2), _metrics(graphs=3)), [])
        self.assertEqual(self.changes(_metrics(graphs=2), _metrics(graphs=4)), ["t: graphs 2 -> 4"])

    def test_compile_time_must_double_and_grow_a_second(self):
        # Beside five tests whose compile time stayed (the runs' overall ratio is 1).
        self.assertEqual(self.changes(_metrics(compile_s=0.01), _metrics(compile_s=0.5), others=5), [])  # 50x, 0.49 s
        self.assertEqual(self.changes(_metrics(compile_s=3.0), _metrics(compile_s=5.0), others=5), [])  # +2 s, 1.7x
        self.assertEqual(self.changes(_metrics(compile_s=1.0), _metrics(compile_s=3.5), others=5),
                         ["t: compile time 1.00 s -> 3.50 s"])
        self.assertEqual(self.changes(_metrics(compile_s=3.5), _metrics(compile_s=1.0), others=5),
                         ["t: compile time 3.50 s -> 1.00 s"])

    def test_compile_time_is_judged_after_the_runs_overall_ratio(self):
        # A machine three times slower: every test compiles three times longer, none regressed.
        old = [(f"t{index}", _metrics(compile_s=1.0), "PASS") for index in range(5)]
        new = [(f"t{index}", _metrics(compile_s=3.0), "PASS") for index in range(5)]
        self.assertEqual(metric_changes.compare(_run(*old), _run(*new)), [])

    def test_only_tests_that_passed_in_both_are_compared(self):
        self.assertEqual(self.changes(_metrics(), _metrics(frames=3), outcome="FAIL"), [])

    def test_the_difference_lists_regressions_and_improvements(self):
        difference = compare(_run(("a", _metrics(), "PASS"), ("b", _metrics(recompiles=2), "PASS")),
                             _run(("a", _metrics(graph_breaks=1), "PASS"), ("b", _metrics(), "PASS")))
        sections = dict(difference.sections())
        self.assertEqual(sections["metric regressions"], ["a: graph breaks 0 -> 1"])
        self.assertEqual(sections["metric improvements"], ["b: recompiles 2 -> 0"])


if __name__ == "__main__":
    unittest.main()
