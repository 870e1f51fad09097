"""report.html in a real browser: headless Chromium renders the matrix and runs the filter
script. Skipped where no Chromium is installed (CI installs none)."""

from __future__ import annotations

import importlib.util
import tempfile
import unittest
from pathlib import Path

from harness.report.formats import html_report
from harness.report.formats.format import RunReport
from test.harness.test_reports import sample_results

# Its own seconds (test/harness/budgets.py): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10

_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "screenshot_report.py"
_spec = importlib.util.spec_from_file_location("screenshot_report", _SCRIPT)
screenshot_report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(screenshot_report)


@unittest.skipIf(screenshot_report.find_chromium() is None, "no Chromium on this machine")
class ReportInBrowserTests(unittest.TestCase):
    def setUp(self):
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.report = Path(directory.name) / "report.html"
        self.report.write_text(html_report.render(RunReport(sample_results())))

    def test_screenshot_is_a_png(self):
        png = self.report.with_suffix(".png")
        screenshot_report.screenshot(self.report, png)
        self.assertGreater(png.stat().st_size, 10_000)

    def test_matrix_rendered_and_filter_script_ran_without_running_injected_script(self):
        dom = screenshot_report.rendered_dom(self.report)
        self.assertIn('id="matrix"', dom)
        self.assertIn("2 of 2 scenarios shown", dom)  # written by the page's script
        self.assertIn("&lt;script&gt;alert", dom)


if __name__ == "__main__":
    unittest.main()
