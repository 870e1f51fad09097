#!/usr/bin/env python3
"""Wall-clock time of run_tests.py at different -j, on the same selection, interleaved.

    python scripts/benchmark.py --jobs 1,2 --repeat 2 -- --backend eager,aot_eager

Runs are interleaved (1, 2, 1, 2, ...) so that a machine getting busier affects every -j
alike; the best time per -j is compared, as the least disturbed by anything else.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", default="1,2", help="comma-separated -j values (default 1,2)")
    parser.add_argument("--repeat", type=int, default=2, help="runs per -j value (default 2)")
    parser.add_argument("run_tests_args", nargs="*", help="arguments for run_tests.py, after --")
    args = parser.parse_args(argv)
    jobs = [value.strip() for value in args.jobs.split(",")]
    times: dict[str, list[float]] = {value: [] for value in jobs}
    with tempfile.TemporaryDirectory() as reports:
        for round_number in range(args.repeat):
            for value in jobs:
                command = [sys.executable, str(ROOT / "run_tests.py"), *args.run_tests_args, "-j", value,
                           "--report-dir", str(Path(reports) / f"j{value}")]
                started = time.monotonic()
                completed = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                elapsed = time.monotonic() - started
                times[value].append(elapsed)
                print(f"round {round_number + 1}: -j {value}: {elapsed:6.1f} s (exit {completed.returncode})", flush=True)
                if completed.returncode == 2:
                    print(completed.stderr.strip(), file=sys.stderr)
                    return 2
    best = {value: min(samples) for value, samples in times.items()}
    base = best[jobs[0]]
    for value in jobs:
        print(f"-j {value}: best {best[value]:6.1f} s, ratio to -j {jobs[0]}: {best[value] / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
