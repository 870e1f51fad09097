#!/usr/bin/env python3
"""Render a report.html in headless Chromium and save a PNG of it.

    python scripts/screenshot_report.py reports/report.html reports/report.png

Chromium comes from the system (Debian: apt-get install chromium) or $CHROMIUM. The page
is opened from disk with networking off: the report needs nothing from outside.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def find_chromium() -> str | None:
    if os.environ.get("CHROMIUM"):
        return os.environ["CHROMIUM"]
    return next((path for path in map(shutil.which, CANDIDATES) if path), None)


def _headless(report: Path, *options: str) -> subprocess.CompletedProcess:
    chromium = find_chromium()
    if chromium is None:
        raise RuntimeError("no Chromium found; install it (apt-get install chromium) or set CHROMIUM=/path/to/it")
    with tempfile.TemporaryDirectory(prefix="report-chromium-") as profile:
        command = [
            chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            # Without these Chromium keeps dialling out, which a closed network refuses.
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run", "--disable-quic", f"--user-data-dir={profile}",
            *options, report.resolve().as_uri(),
        ]
        return subprocess.run(command, capture_output=True, text=True, timeout=120)


def rendered_dom(report: Path) -> str:
    """The page's DOM after its script ran."""
    return _headless(report, "--dump-dom").stdout


def screenshot(report: Path, png: Path, width: int = 1400, height: int = 1100) -> None:
    png = png.resolve()
    completed = _headless(report, f"--window-size={width},{height}", f"--screenshot={png}")
    if not png.exists() or not png.read_bytes().startswith(PNG_SIGNATURE):
        raise RuntimeError(f"Chromium wrote no screenshot (exit {completed.returncode}): {completed.stderr.strip()[-300:]}")


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print("usage: python scripts/screenshot_report.py REPORT.html [OUT.png]", file=sys.stderr)
        return 2
    report = Path(argv[0])
    if not report.is_file():
        print(f"screenshot_report.py: no report at {report}; run python run_tests.py first", file=sys.stderr)
        return 2
    png = Path(argv[1]) if len(argv) == 2 else report.with_suffix(".png")
    try:
        screenshot(report, png)
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        print(f"screenshot_report.py: {error}", file=sys.stderr)
        return 2
    print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
