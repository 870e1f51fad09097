#!/usr/bin/env python3
"""Keep a scoreboard of real backends in docs/scoreboard/<date>/: each run's results
(gzipped), repros and issues for the trackers, and the board built from those copies, so that
its links work in the repository and ``--scoreboard runs/*`` rebuilds it.

    python scripts/scoreboard_snapshot.py --into docs/scoreboard/2026-12-03 \\
        --baseline docs/scoreboard/2026-11-30/scoreboard.json ROW=RUN_DIR ...

``ROW=RUN_DIR``: the run's directory (a report dir), kept as ``runs/ROW``. The README, which
says how each row was made, is written by hand beside it.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
from pathlib import Path

KEPT = ("repros", "upstream")  # what the board links, beside results.json
ROOT = Path(__file__).resolve().parents[1]


def keep(row: str, run: Path, into: Path) -> None:
    target = into / "runs" / row
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    marker = run / "install-failed.json"
    if marker.exists() and not (run / "results.json").exists():
        shutil.copy(marker, target / marker.name)
        return
    (target / "results.json.gz").write_bytes(gzip.compress((run / "results.json").read_bytes(), mtime=0))
    for name in KEPT:
        if (run / name).is_dir():
            shutil.copytree(run / name, target / name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--into", required=True, type=Path)
    parser.add_argument("--baseline", help="the previous snapshot's scoreboard.json")
    parser.add_argument("runs", nargs="+", metavar="ROW=RUN_DIR")
    args = parser.parse_args()
    rows = []
    for entry in args.runs:
        row, _, run = entry.partition("=")
        if not run or not Path(run).is_dir():
            print(f"scoreboard_snapshot.py: error: '{entry}': give ROW=RUN_DIR with an existing directory",
                  file=sys.stderr)
            return 2
        keep(row, Path(run), args.into)
        rows.append(str(args.into / "runs" / row))
    command = [sys.executable, str(ROOT / "run_tests.py"), "--scoreboard", *rows, "--report-dir", str(args.into)]
    if args.baseline:
        command += ["--baseline", args.baseline]
    return subprocess.run(command).returncode


if __name__ == "__main__":
    sys.exit(main())
