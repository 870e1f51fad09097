"""Run the repros of PyTorch's silent-correctness tracker (docs/tracker/*.jsonl) on one torch.

    python scripts/tracker_repros.py --python /work/venv/bin/python --out reports/tracker-2.13.jsonl
    python scripts/tracker_repros.py --python ../venv214/bin/python --open-only --number 197896,198189

Each repro runs alone in an empty directory with ``--timeout`` seconds (a repro of the tracker
is a few lines of user code; one that needs a GPU or a hub says so by failing). The output file
gets one JSON object per repro (number, torch version, exit status, seconds, the output's
tail), written as each one ends, so a stopped run keeps what it measured. Whether a repro
*shows* its bug is read from that output by a person: the threads print in their own ways
(two tensors, ``allclose`` False, an assertion), and docs/tracker.md records the verdict.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = sorted((ROOT / "docs" / "tracker").glob("sample-*.jsonl"))


def read_sample(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_one(python: str, row: dict, timeout: float) -> dict:
    with tempfile.TemporaryDirectory() as directory:
        script = Path(directory) / "repro.py"
        script.write_text(row["repro"])
        started = time.monotonic()
        try:
            done = subprocess.run([python, script.name], cwd=directory, capture_output=True, text=True,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
            status, output = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired as expired:
            status = "timeout"
            output = "".join(part.decode() if isinstance(part, bytes) else (part or "")
                             for part in (expired.stdout, expired.stderr))
    return {"number": row["number"], "status": status, "seconds": round(time.monotonic() - started, 1),
            "output": output[-3000:]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable, help="the interpreter whose torch runs them")
    parser.add_argument("--sample", type=Path, default=SAMPLE[-1] if SAMPLE else None)
    parser.add_argument("--out", type=Path, required=True, help="JSON lines, appended as each repro ends")
    parser.add_argument("--open-only", action="store_true", help="only issues the sample read as open")
    parser.add_argument("--number", help="only these issues (comma-separated)")
    parser.add_argument("--timeout", type=float, default=120)
    options = parser.parse_args()
    if options.sample is None or not options.sample.is_file():
        parser.error("--sample: no tracker sample (docs/tracker/sample-*.jsonl); name one")
    version = subprocess.run([options.python, "-c", "import torch; print(torch.__version__)"],
                             capture_output=True, text=True)
    if version.returncode:
        parser.error(f"--python {options.python}: cannot import torch ({version.stderr.strip().splitlines()[-1:]})")
    wanted = {int(n) for n in options.number.split(",")} if options.number else None
    rows = [row for row in read_sample(options.sample) if row.get("repro")
            and (not options.open_only or row["state"] == "open") and (wanted is None or row["number"] in wanted)]
    done = set()
    if options.out.exists():  # a run stopped before: go on where it was
        done = {json.loads(line)["number"] for line in options.out.read_text().splitlines() if line.strip()}
    options.out.parent.mkdir(parents=True, exist_ok=True)
    for row in rows:
        if row["number"] in done:
            continue
        result = {**run_one(options.python, row, options.timeout), "torch": version.stdout.strip()}
        with options.out.open("a") as out:
            out.write(json.dumps(result) + "\n")
        print(f"#{row['number']}: {result['status']} in {result['seconds']} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
