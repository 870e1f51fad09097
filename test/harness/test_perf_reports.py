"""The perf tier's figures in the console summary, summary.md and report.html, from hand-made
results (no compiling, no runs): the shared rows, the noisy marking, the chart, and escaping."""

from __future__ import annotations

import math
import re
import unittest

from harness.report import console, perf_table
from harness.report.formats import html_report, markdown
from harness.report.formats.format import RunReport
from harness.report.results import RunResults
from test.harness.test_reports import HOSTILE, result, sample_results

# Its own seconds (test/harness/budgets.py): 1 s measured 2026-11-29.
TIME_BUDGET_S = 10

PERF = "test.dynamo.test_perf.PerfTests"
HOSTILE_NAME = "test_<script>alert('name')</script>"


def figures(speedup: float, low: float, high: float, noisy: bool = False, eager_peak: int | None = 3145740,
            compiled_peak: int | None = 1048576) -> dict:
    """Figures shaped as harness.testcase.perf writes them (values from a real run)."""
    return {"eager_ms": 3.283571, "compiled_ms": 3.283571 / speedup, "speedup": speedup, "low": low, "high": high,
            "rounds": 49, "eager_calls": 3, "compiled_calls": 5, "noisy": noisy, "threads": 1, "device": "cpu",
            "eager_peak_bytes": eager_peak, "compiled_peak_bytes": compiled_peak}


def perf_results(eager_peak: int | None = 3145740, compiled_peak: int | None = 1048576) -> RunResults:
    """Two backends, three perf scenarios (one failed on ``mine``), and a test outside the tier."""
    peaks = dict(eager_peak=eager_peak, compiled_peak=compiled_peak)
    return RunResults(
        run={"torch": "2.13.0", "python": "3.11", "duration_s": 60.0, "tier": "perf", "device": "cpu",
             "perf": {"budget_s": 4.0, "threads": 1, "cpu": "AMD EPYC, 2 cores"},
             "backends": [{"name": "eager", "spec": "eager"}, {"name": "mine", "spec": "pkg:mine"}]},
        tests=[
            result(f"{PERF}_eager.test_graph_pointwise_chain", "PASS",
                   perf=figures(0.824684, 0.803922, 0.846917, **peaks)),
            result(f"{PERF}_mine.test_graph_pointwise_chain", "PASS", backend="mine",
                   perf=figures(1.6146, 1.563167, 1.672277, **peaks)),
            result(f"{PERF}_eager.test_graph_input_mutation", "PASS", perf=figures(0.95, 0.93, 0.97, **peaks)),
            result(f"{PERF}_mine.test_graph_input_mutation", "PASS", backend="mine",
                   perf=figures(1.176537, 1.076548, 1.298292, noisy=True, **peaks)),
            result(f"{PERF}_eager.test_resnet18_eval", "PASS", perf=figures(1.0, 0.98, 1.02, **peaks)),
            result(f"{PERF}_mine.test_resnet18_eval", "ERROR", backend="mine", reason="RuntimeError: lowering failed"),
            result("test.dynamo.m.LSTMTests_eager.test_lstm", "PASS"),
        ],
    )


def hostile_results() -> RunResults:
    """A perf test whose name, and a failed one whose message, carry markup."""
    results = perf_results()
    results.tests += [result(f"{PERF}_eager.{HOSTILE_NAME}", "PASS", perf=figures(2.0, 1.9, 2.1)),
                      result(f"{PERF}_mine.{HOSTILE_NAME}", "FAIL", backend="mine", reason=HOSTILE)]
    return results


MEASURED = 5  # perf_results' tests with figures


class PerfTableTests(unittest.TestCase):
    def setUp(self):
        self.rows = {row.name: row for row in perf_table.rows(perf_results())}

    def test_a_row_per_perf_scenario_and_a_cell_per_backend_in_run_order(self):
        self.assertEqual(list(self.rows), ["graph_input_mutation", "graph_pointwise_chain", "resnet18_eval"])
        self.assertEqual([list(row.cells) for row in self.rows.values()], [["eager", "mine"]] * 3)
        self.assertEqual(perf_table.columns(perf_results()), ["eager", "mine"])

    def test_cell_texts(self):
        cell = self.rows["graph_pointwise_chain"].cells["mine"]
        self.assertEqual(cell.texts(), ["3.28", "2.03", "1.61x [1.56-1.67]", "3.00", "1.00", "0.33x"])

    def test_noisy_speed_up_is_marked(self):
        self.assertEqual(self.rows["graph_input_mutation"].cells["mine"].speedup, "~1.18x [1.08-1.30]")
        self.assertFalse(self.rows["graph_input_mutation"].cells["eager"].speedup.startswith("~"))

    def test_failed_perf_test_shows_its_outcome_instead_of_figures(self):
        cell = self.rows["resnet18_eval"].cells["mine"]
        self.assertFalse(cell.measured)
        self.assertEqual(cell.texts(), ["", "", "ERROR", "", "", ""])

    def test_peaks_not_measured(self):
        cell = perf_table.rows(perf_results(eager_peak=None, compiled_peak=None))[0].cells["eager"]
        self.assertEqual(cell.texts()[3:], ["n/a", "n/a", "n/a"])

    def test_method_line_names_the_setup_and_counts_the_noisy(self):
        line = perf_table.method_line(perf_results())
        for part in ("1 thread,", "4 s of timed rounds per test", "device cpu", "AMD EPYC, 2 cores",
                     "1 of 5 speed-ups too noisy to judge", "10% either way"):
            self.assertIn(part, line)

    def test_geometric_mean_of_speed_ups(self):
        cells = [perf_table.PerfCell(result(f"{PERF}_eager.test_a", "PASS", perf=figures(speedup, 1, 1)))
                 for speedup in (2.0, 0.5)]
        self.assertAlmostEqual(perf_table.geometric_mean_speedup(cells), 1.0)
        self.assertEqual(perf_table.column_line(perf_results(), "mine"),
                         "mine: 2 measured, 1 not measured, geometric mean speed-up 1.38x, 1 too noisy to judge")

    def test_figures_keep_three_digits_without_exponents(self):
        self.assertEqual([perf_table.number(value) for value in (0.0398, 0.398, 3.284, 32.84, 1234.5)],
                         ["0.040", "0.40", "3.28", "32.8", "1234"])


class ConsoleTests(unittest.TestCase):
    def test_a_block_per_backend_after_the_outcome_table(self):
        text = console.summary(perf_results())
        self.assertLess(text.index("backend  "), text.index("Speed and peak memory against eager:"))
        self.assertIn("mine: 2 measured, 1 not measured, geometric mean speed-up 1.38x", text)
        self.assertRegex(text, r"\n  graph_pointwise_chain +3\.28 +2\.03 +1\.61x \[1\.56-1\.67\] +3\.00 +1\.00 "
                               r"+0\.33x\n")
        self.assertRegex(text, r"\n  graph_input_mutation .* ~1\.18x \[1\.08-1\.30\]")
        self.assertRegex(text, r"\n  resnet18_eval +ERROR\s*\n")
        self.assertNotIn("lstm", "\n".join(console.perf_lines(perf_results())))  # not a perf test

    def test_fits_in_120_columns_whatever_the_names(self):
        results = perf_results()
        results.tests.append(result(f"{PERF}_eager.test_{'very_long_model_name_' * 5}train", "PASS",
                                    perf=figures(12.5, 10.25, 13.75)))
        lines = console.perf_lines(results)
        self.assertLessEqual(max(map(len, lines)), 120)
        self.assertTrue(any("very_long_model_name_very_l…" in line for line in lines))

    def test_no_perf_block_without_figures(self):
        self.assertEqual(console.perf_lines(sample_results()), [])
        self.assertNotIn("Speed and peak memory", console.summary(sample_results()))


class MarkdownTests(unittest.TestCase):
    def test_a_row_per_test_with_its_figures(self):
        text = markdown.render(RunReport(perf_results()))
        self.assertIn("### Speed and peak memory against eager", text)
        self.assertIn("| graph\\_pointwise\\_chain | mine | 3.28 | 2.03 | 1.61x \\[1.56-1.67\\] | 3.00 | 1.00 | 0.33x |",
                      text)
        self.assertIn("| graph\\_input\\_mutation | mine | 3.28 | 2.79 | \\~1.18x \\[1.08-1.30\\] |", text)
        self.assertIn("| resnet18\\_eval | mine |  |  | ERROR |", text)

    def test_names_cannot_break_the_table(self):
        lines = markdown.render(RunReport(hostile_results())).splitlines()
        heading = next(line for line in lines if line.startswith("| scenario | backend |"))
        table = [line for line in lines if "alert" in line and line.startswith("|")]
        self.assertEqual(len(table), 2)
        for line in table:
            self.assertNotIn("<script>", line)
            self.assertEqual(len(re.findall(r"(?<!\\)\|", line)), heading.count("|"))

    def test_no_perf_section_without_figures(self):
        self.assertNotIn("Speed and peak memory", markdown.render(RunReport(sample_results())))


class HtmlTests(unittest.TestCase):
    def setUp(self):
        self.html = html_report.render(RunReport(perf_results()))

    def chart(self, html: str) -> str:
        return re.search(r'<svg class="perf-chart".*?</svg>', html, re.S).group(0)

    def test_a_dot_per_measured_test_noisy_ones_hollow(self):
        chart = self.chart(self.html)
        self.assertEqual(chart.count('class="dot"'), MEASURED)
        self.assertEqual(chart.count('<g class="noisy">'), 1)
        self.assertEqual(chart.count('class="interval"'), MEASURED)
        self.assertIn('class="one"', chart)  # the 1.0x line
        self.assertIn("ERROR: not measured", chart)

    def test_memory_bars_eager_and_compiled_scaled_to_the_larger(self):
        chart = self.chart(self.html)
        self.assertEqual(chart.count('<rect class="eager"'), MEASURED)
        self.assertEqual(chart.count('<rect class="compiled"'), MEASURED)
        self.assertEqual(html_report._bars(figures(1.0, 1.0, 1.0, eager_peak=3 * 2 ** 20, compiled_peak=2 ** 20)),
                         (html_report._MEMORY_BAR, round(html_report._MEMORY_BAR / 3, 1)))
        self.assertIn(">3.00 \N{RIGHTWARDS ARROW} 1.00 MiB</text>", chart)

    def test_no_memory_bars_where_peaks_were_not_measured(self):
        chart = self.chart(html_report.render(RunReport(perf_results(eager_peak=None, compiled_peak=None))))
        self.assertNotIn("<rect", chart)
        self.assertIn("peak memory, eager → compiled: not measured here", chart)
        self.assertEqual(chart.count('class="dot"'), MEASURED)

    def test_table_with_the_figures(self):
        self.assertIn('<td class="figure noisy">~1.18x [1.08-1.30]</td>', self.html)
        self.assertIn('<td class="figure">1.61x [1.56-1.67]</td>', self.html)
        self.assertIn("1 of 5 speed-ups too noisy to judge", self.html)

    def test_matrix_cell_tooltip_has_the_speed_up(self):
        self.assertIn('title="PASS | 0.00 s | speed-up 1.61x [1.56-1.67]"', self.html)

    def test_speed_axis_is_logarithmic_around_one(self):
        axis = html_report._perf_chart(perf_results()).speed
        self.assertAlmostEqual(axis.x(2.0) - axis.x(1.0), axis.x(1.0) - axis.x(0.5), delta=0.2)
        self.assertIn((axis.x(1.0), "1x"), axis.ticks)
        self.assertTrue(axis.left <= axis.x(0.0) and axis.x(math.inf) <= axis.right)  # clamped, never off the plot

    def test_hostile_names_and_messages_are_escaped(self):
        html = html_report.render(RunReport(hostile_results()))
        self.assertNotIn("<script>alert", html)
        self.assertEqual(html.count("<script>"), 1)  # the page's own filter script
        self.assertIn("&lt;script&gt;alert(&#39;name&#39;)&lt;/script&gt;", self.chart(html))
        self.assertEqual(self.chart(html).count('class="dot"'), MEASURED + 1)
        self.assertNotIn("\x1b", html)

    def test_no_perf_section_without_figures(self):
        html = html_report.render(RunReport(sample_results()))
        self.assertNotIn("Speed and memory", html)
        self.assertNotIn("<svg", html)
        self.assertNotIn('class="perf"', html)


if __name__ == "__main__":
    unittest.main()
