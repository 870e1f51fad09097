"""Writing a run's reports: results.json, junit.xml, report.html and summary.md, each atomically
(and, when asked, the model tests as accuracy CSVs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.report.formats import accuracy_csv, html_report, junit, markdown
from harness.report.results import RunResults, write_atomic


def write_all(results: RunResults, report_dir: Path, difference: Any = None,
              baseline_name: str | None = None, repro_files: dict[str, str] | None = None,
              accuracy: bool = False) -> list[Path]:
    """``difference``: a baseline.Difference (against ``baseline_name``) to show, if any;
    ``repro_files``: problem id -> its repro file (harness.report.repros); ``accuracy``: also
    the model tests as accuracy CSVs, in ``accuracy/``."""
    if difference is not None:
        results.baseline = difference.to_json(baseline_name)
    # Rendered first, written after: a failure while rendering leaves the old set intact.
    contents = {
        "junit.xml": junit.render(results),
        "report.html": html_report.render(results, difference, repro_files),
        "summary.md": markdown.render(results, difference, baseline_name),
        **({f"accuracy/{name}": text for name, text in accuracy_csv.files(results).items()} if accuracy else {}),
        # Last, because tools (and --baseline next time) treat it as the run's record.
        "results.json": results.dumps(),
    }
    written = []
    for name, text in contents.items():
        (report_dir / name).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(report_dir / name, text)
        written.append(report_dir / name)
    return written
