"""Writing a run's reports: results.json, junit.xml and report.html, each atomically."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness import html_report, junit
from harness.results import RunResults, write_atomic


def write_all(results: RunResults, report_dir: Path, difference: Any = None) -> list[Path]:
    """``difference``: a baseline.Difference to show in the HTML report, if any."""
    # Rendered first, written after: a failure while rendering leaves the old set intact.
    contents = {
        "junit.xml": junit.render(results),
        "report.html": html_report.render(results, difference),
        # Last, because tools (and --baseline next time) treat it as the run's record.
        "results.json": results.dumps(),
    }
    written = []
    for name, text in contents.items():
        write_atomic(report_dir / name, text)
        written.append(report_dir / name)
    return written
