"""Running ``run_tests.py`` as a user would, for the runner's tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args: str, python: list[str] | None = None, env: dict[str, str] | None = None,
            timeout: float = 1500, cwd: str | Path = REPO_ROOT) -> subprocess.CompletedProcess:
    # The self-test's largest run (every fault against its scenarios) takes 7-9 minutes on 2
    # cores, and the machine's speed varies by a fifth between runs: 600 s was too tight.
    environment = {**os.environ, "CI": "true", **(env or {})}
    environment.pop("DYNAMO_SUITE_BACKENDS", None)
    environment.pop("DYNAMO_SUITE_EXPECTATIONS", None)
    environment.pop("DYNAMO_SUITE_VARIANTS", None)
    environment.pop("DYNAMO_SUITE_DEVICE", None)
    environment.pop("DYNAMO_SUITE_SCENARIOS", None)
    environment.pop("DYNAMO_SUITE_MODELS", None)
    command = [*(python or [sys.executable]), str(REPO_ROOT / "run_tests.py"), *args]
    return subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)


def read_results(report_dir: str | Path) -> dict[str, Any]:
    return json.loads((Path(report_dir) / "results.json").read_text())


def outcomes(report_dir: str | Path) -> dict[str, str]:
    """test id -> outcome, from a report directory."""
    return {test["id"]: test["outcome"] for test in read_results(report_dir)["tests"]}
