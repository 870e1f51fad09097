"""Writing the reports: every format declared once, here (``FORMATS``), each a ``Format``
(harness.report.formats.format) whose render takes the one report it is written for, a run's
or a scoreboard's; and one way to write them: all rendered first, then each file atomically,
so a failed render or a killed run never leaves a half-written file nor a half-new set."""

from __future__ import annotations

from pathlib import Path

from harness.report.formats import accuracy_csv, html_report, junit, markdown, upstream
from harness.report.formats.format import BoardReport, Format, RunReport, UpstreamReport
from harness.report.results import write_atomic
from harness.report.scoreboard import render as scoreboard

# In the order written (and printed).
FORMATS: tuple[Format, ...] = (
    Format("junit.xml", junit.render),
    Format("report.html", html_report.render),
    Format("index.html", scoreboard.page, of=(BoardReport,)),
    Format("summary.md", markdown.render),
    Format("summary.md", scoreboard.summary, of=(BoardReport,)),
    Format("accuracy/", accuracy_csv.render, wanted=lambda report: report.accuracy),  # --accuracy-csv
    Format("upstream/", upstream.render, of=(UpstreamReport,)),  # --upstream-reports
    # Last, because tools (and --baseline next time) treat it as the run's record.
    Format("results.json", lambda report: report.results.dumps()),
    Format("scoreboard.json", scoreboard.record, of=(BoardReport,)),
)


def write(report: RunReport | BoardReport, report_dir: Path) -> list[Path]:
    """Every format written for ``report`` into ``report_dir``; the paths written, in order."""
    # Rendered first, written after: a failure while rendering leaves the old set intact.
    contents = {name: text for entry in FORMATS for name, text in entry.files(report).items()}
    written = []
    for name, text in contents.items():
        (report_dir / name).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(report_dir / name, text)
        written.append(report_dir / name)
    return written
