"""Writing a run's reports: results.json, junit.xml, report.html and summary.md, each atomically."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.report import html_report, junit, markdown
from harness.report.results import RunResults, write_atomic


def write_all(results: RunResults, report_dir: Path, difference: Any = None,
              baseline_name: str | None = None, repro_files: dict[str, str] | None = None) -> list[Path]:
    """``difference``: a baseline.Difference (against ``baseline_name``) to show, if any;
    ``repro_files``: problem id -> its repro file (harness.report.repros)."""
    if difference is not None:
        results.baseline = difference.to_json(baseline_name)
    # Rendered first, written after: a failure while rendering leaves the old set intact.
    contents = {
        "junit.xml": junit.render(results),
        "report.html": html_report.render(results, difference, repro_files),
        "summary.md": markdown.render(results, difference, baseline_name),
        # Last, because tools (and --baseline next time) treat it as the run's record.
        "results.json": results.dumps(),
    }
    written = []
    for name, text in contents.items():
        write_atomic(report_dir / name, text)
        written.append(report_dir / name)
    return written
