"""Metric regressions against a baseline (harness/report/metric_changes.py): the rules on
made-up results. The proof that a Dynamo patched to graph-break on an op it used to trace
shows as a metric regression is test/proofs/test_patched_dynamo.py."""

from __future__ import annotations

import unittest

from harness.report import metric_changes
from harness.report.baseline import difference_between
from harness.report.results import RunResults, TestResult

# Its own seconds (test/harness/budgets.py): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10


def _run(*tests: tuple[str, dict, str]) -> RunResults:
    return RunResults(run={}, tests=[TestResult(id=name, scenario=name, backend="b", backend_spec="b", outcome=outcome,
                                                metrics=metrics) for name, metrics, outcome in tests])


def _metrics(frames=1, graphs=1, graph_breaks=0, recompiles=0, compile_s=0.5) -> dict:
    return {"frames": frames, "graphs": graphs, "graph_breaks": graph_breaks, "recompiles": recompiles,
            "compile_s": compile_s}


class RuleTests(unittest.TestCase):
    def changes(self, old: dict, new: dict, outcome: str = "PASS", others: int = 0) -> list[str]:
        filler = [(f"other{index}", _metrics(), "PASS") for index in range(others)]
        return [change.line() for change in metric_changes.changes_between(_run(("t", old, outcome), *filler),
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
        self.assertEqual(metric_changes.changes_between(_run(*old), _run(*new)), [])

    def test_only_tests_that_passed_in_both_are_compared(self):
        self.assertEqual(self.changes(_metrics(), _metrics(frames=3), outcome="FAIL"), [])

    def test_the_difference_lists_regressions_and_improvements(self):
        difference = difference_between(_run(("a", _metrics(), "PASS"), ("b", _metrics(recompiles=2), "PASS")),
                             _run(("a", _metrics(graph_breaks=1), "PASS"), ("b", _metrics(), "PASS")))
        sections = dict(difference.sections())
        self.assertEqual(sections["metric regressions"], ["a: graph breaks 0 -> 1"])
        self.assertEqual(sections["metric improvements"], ["b: recompiles 2 -> 0"])


if __name__ == "__main__":
    unittest.main()


def _perf(speedup=1.0, spread=0.02, eager_peak=1 << 20, compiled_peak=1 << 20, noisy=False) -> dict:
    return {"speedup": speedup, "low": speedup * (1 - spread), "high": speedup * (1 + spread), "noisy": noisy,
            "eager_peak_bytes": eager_peak, "compiled_peak_bytes": compiled_peak}


def _perf_run(backend: str, cpu: str = "cpu A", **figures: dict) -> RunResults:
    return RunResults(run={"perf": {"cpu": cpu}}, tests=[
        TestResult(id=f"m.PerfTests_{backend}.{name}", scenario=f"m.PerfTests.{name}", backend=backend,
                   backend_spec=backend, outcome="PASS", perf=perf) for name, perf in figures.items()])


class PerfRuleTests(unittest.TestCase):
    def lines(self, old: dict, new: dict, **run) -> list[str]:
        comparison = metric_changes.compare_perf(_perf_run("b", t=old), _perf_run("b", t=new, **run))
        return [("regression " if change.regression else "improvement ") + change.line() for change in comparison.changes]

    def test_identical_figures_and_overlapping_intervals_are_no_change(self):
        self.assertEqual(self.lines(_perf(), _perf()), [])
        self.assertEqual(self.lines(_perf(1.0, spread=0.1), _perf(0.85, spread=0.1)), [])  # 15% lower, overlapping

    def test_speed_up_changes_when_the_intervals_lie_apart_by_the_gap(self):
        # Intervals 0.98-1.02 and 0.88-0.90: apart, but by 8%, under SPEED_GAP (15%).
        self.assertEqual(self.lines(_perf(1.0), _perf(0.89, spread=0.01)), [])
        self.assertEqual(self.lines(_perf(1.0), _perf(0.80)), ["regression m.PerfTests_b.t: speed-up 1.00x -> 0.80x"])
        self.assertEqual(self.lines(_perf(1.0), _perf(1.3)), ["improvement m.PerfTests_b.t: speed-up 1.00x -> 1.30x"])

    def test_a_noisy_figure_hides_small_changes_but_not_large_ones(self):
        comparison = metric_changes.compare_perf(_perf_run("b", t=_perf(1.0)),
                                                 _perf_run("b", t=_perf(0.95, spread=0.2, noisy=True)))
        self.assertEqual((comparison.changes, comparison.too_noisy),
                         ([], ["m.PerfTests_b.t: speed-up too noisy to judge in this run"]))
        self.assertEqual(self.lines(_perf(1.0), _perf(0.4, spread=0.2, noisy=True)),
                         ["regression m.PerfTests_b.t: speed-up 1.00x -> 0.40x"])

    def test_a_noisy_baseline_widens_the_gap_by_its_own_width(self):
        # Measured in CI (2026-11-28): aot_eager's sub-millisecond input mutation, noisy at
        # 0.27x [0.25-0.34] beside the self-tests, then 0.50x in a quieter run of the same build.
        noisy = {"speedup": 0.27, "low": 0.25, "high": 0.34, "noisy": True}
        comparison = metric_changes.compare_perf(_perf_run("b", t=noisy), _perf_run("b", t=_perf(0.50, spread=0.04)))
        self.assertEqual((comparison.changes, comparison.too_noisy),
                         ([], ["m.PerfTests_b.t: speed-up too noisy to judge in baseline"]))
        self.assertEqual(self.lines(noisy, _perf(0.10, spread=0.1)),  # a backend 2 ms slower per call
                         ["regression m.PerfTests_b.t: speed-up 0.27x -> 0.10x"])

    def test_a_compiled_call_that_moved_under_a_tenth_of_a_millisecond_is_no_change(self):
        # Measured in CI (2026-12-03): aot_eager's input mutation, eager 0.17 ms, 0.56x
        # [0.54-0.57] in the baseline and 0.44x in the next run, both narrow: 0.08 ms per call.
        def figures(speedup, eager_ms):
            return {**_perf(speedup), "eager_ms": eager_ms}

        self.assertEqual(self.lines(figures(0.56, 0.17), figures(0.44, 0.17)), [])
        # A backend 0.2 ms slower per call on the same graph (0.34x) is a regression.
        self.assertEqual(self.lines(figures(0.56, 0.17), figures(0.34, 0.17)),
                         ["regression m.PerfTests_b.t: speed-up 0.56x -> 0.34x"])
        # Figures without times (an older results.json) are judged by their intervals alone.
        self.assertEqual(self.lines(_perf(0.56), _perf(0.44)), ["regression m.PerfTests_b.t: speed-up 0.56x -> 0.44x"])

    def test_a_test_whose_eager_time_moved_on_its_own_is_not_compared(self):
        # Measured in CI (2026-11-28): the same input mutation's eager call took 2.82 ms beside
        # the self-tests' start (0.32-0.79 ms in five other runs): 1.55x, against 0.52x later.
        def figures(speedup, eager_ms):
            return {**_perf(speedup), "eager_ms": eager_ms}

        old = _perf_run("b", t=figures(1.55, 2.82), u=figures(0.9, 5.0), v=figures(0.7, 3.0))
        new = _perf_run("b", t=figures(0.52, 0.41), u=figures(0.9, 5.5), v=figures(0.5, 3.2))
        comparison = metric_changes.compare_perf(old, new)
        self.assertEqual([change.line() for change in comparison.changes], ["m.PerfTests_b.v: speed-up 0.70x -> 0.50x"])
        self.assertEqual(comparison.too_noisy, ["m.PerfTests_b.t: speed-up not comparable, eager itself took 2.82 ms "
                                                "in the baseline and 0.41 ms in this run"])
        # A machine twice as busy moves every eager time alike: nothing drifts.
        busier = _perf_run("b", t=figures(1.55, 5.6), u=figures(0.9, 10.0), v=figures(0.7, 6.0))
        self.assertEqual(metric_changes.eager_drift(metric_changes._partners(old, busier)), {})

    def test_memory_changes_beyond_five_percent_and_64_kib_after_eager_s_own_change(self):
        mib = 1 << 20
        self.assertEqual(self.lines(_perf(compiled_peak=mib), _perf(compiled_peak=mib + 40_000)), [])  # < 64 KiB
        self.assertEqual(self.lines(_perf(compiled_peak=mib), _perf(compiled_peak=2 * mib)),
                         ["regression m.PerfTests_b.t: compiled peak memory 1.00 MiB -> 2.00 MiB"])
        # Eager's own peak doubled too (another torch): the compiled step kept its share.
        self.assertEqual(self.lines(_perf(compiled_peak=mib), _perf(eager_peak=2 * mib, compiled_peak=2 * mib)), [])

    def test_a_single_backend_baseline_judges_other_backends_by_scenario(self):
        comparison = metric_changes.compare_perf(_perf_run("aot_eager", t=_perf(1.0)),
                                                 _perf_run("mine", t=_perf(0.5)))
        self.assertEqual([change.line() for change in comparison.changes],
                         ["m.PerfTests_mine.t: speed-up 1.00x -> 0.50x (against m.PerfTests_aot_eager.t)"])
        two_backends = RunResults(run={}, tests=_perf_run("aot_eager", t=_perf()).tests + _perf_run("x", t=_perf()).tests)
        self.assertEqual(metric_changes.compare_perf(two_backends, _perf_run("mine", t=_perf(0.5))).compared, 0)

    def test_a_baseline_from_another_machine_is_said(self):
        comparison = metric_changes.compare_perf(_perf_run("b", t=_perf()), _perf_run("b", cpu="cpu B", t=_perf()))
        self.assertEqual(comparison.other_machine, "baseline: cpu A, device cpu; this run: cpu B, device cpu")

    def test_perf_regressions_count_as_metric_regressions_in_the_difference(self):
        difference = difference_between(_perf_run("b", t=_perf(1.0)), _perf_run("b", t=_perf(0.5)))
        self.assertEqual(len(difference.metric_regressions), 1)
        sections = dict(difference.sections())
        self.assertEqual(sections["perf regressions"], ["m.PerfTests_b.t: speed-up 1.00x -> 0.50x"])
        self.assertEqual(difference.to_json("base.json")["perf_changes"][0]["regression"], True)
        self.assertNotIn("perf regressions", dict(difference_between(_run(), _run()).sections()))
