#!/usr/bin/env python3
"""Audit the issues ``--upstream-reports`` wrote, as a maintainer would meet them: each ready
issue's repro run alone in an empty directory with the backend's interpreter (it must exit 1)
and under ``--backend aot_eager`` (0, or 3 where it cannot run its check; never 1); how many
are the plain form within 40 lines, and their median length; and any path of the writing
machine in a repro or an issue.

    python scripts/upstream_audit.py --python /path/to/venv/bin/python RUN_DIR [RUN_DIR ...]

Prints a line per ready issue, then the totals as one JSON line. Exit 0.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import statistics
import subprocess
import tempfile
from pathlib import Path

MACHINE_PATHS = r"/work/|/tmp/|/root/|/home/|/Users/"
MOST_LINES = 40


def run_alone(python: str, text: str, *args: str, time_limit: float) -> int | None:
    with tempfile.TemporaryDirectory(prefix="upstream-audit-") as directory:
        (Path(directory) / "repro.py").write_text(text)
        try:
            return subprocess.run([python, "repro.py", *args], cwd=directory, capture_output=True,
                                  timeout=time_limit, env=dict(os.environ)).returncode
        except subprocess.TimeoutExpired:
            return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", required=True, help="the interpreter where the backend is installed")
    parser.add_argument("--machine-paths", default=MACHINE_PATHS, help="a regex of the writing machine's paths")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("runs", nargs="+", type=Path)
    args = parser.parse_args()
    machine = re.compile(args.machine_paths)
    ready, paths = [], []
    for run in args.runs:
        listing = run / "upstream" / "issues.json"
        if not listing.exists():
            continue
        for path in [*(run / "upstream").rglob("*.md"), *(run / "repros").glob("*.py")]:
            found = machine.search(path.read_text(encoding="utf-8"))
            if found:
                paths.append(f"{path}: {found.group(0)}")
        for issue in json.loads(listing.read_text()):
            if issue.get("ready"):
                plain = run / "repros" / f"{issue['id']}.plain.py"
                chosen = plain if issue.get("repro") == "plain" else run / "repros" / f"{issue['id']}.py"
                ready.append((run.name, issue["id"], issue.get("repro") == "plain", chosen.read_text()))

    def audit(entry):
        run, problem, plain, text = entry
        shown = run_alone(args.python, text, time_limit=args.timeout)
        control = run_alone(args.python, text, "--backend", "aot_eager", time_limit=args.timeout)
        return run, problem, plain, len(text.splitlines()), shown, control

    totals = {"ready": len(ready), "plain": 0, "plain_within_40_lines_showing": 0, "controls": {}}
    lines = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:  # each imports torch
        for run, problem, plain, length, shown, control in pool.map(audit, ready):
            print(f"{run} {problem}: {'plain' if plain else 'generic'}, {length} lines, exit {shown}, "
                  f"--backend aot_eager exit {control}", flush=True)
            totals["controls"][str(control)] = totals["controls"].get(str(control), 0) + 1
            if plain:
                totals["plain"] += 1
                lines.append(length)
                totals["plain_within_40_lines_showing"] += length <= MOST_LINES and shown == 1
    for path in paths:
        print(f"machine path in {path}")
    totals["share"] = round(totals["plain_within_40_lines_showing"] / max(len(ready), 1), 3)
    totals["median_plain_lines"] = statistics.median(lines) if lines else None
    totals["files_with_machine_paths"] = len(paths)
    print(json.dumps(totals))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
