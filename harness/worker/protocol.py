"""What a worker and the controller both name: the leaf of the worker room, so that neither
side imports the other's machinery to read what the other wrote.

The controller writes the selection (unittest ids, in order, with their time limits) and
starts the workers with the options of ``harness.worker.pytest_plugin``; a worker attaches
each test's classification to its pytest report under ``PROPERTY``, writes ``START_MARK``
before each test into its log (``worker_log_path``), and is ended by a watchdog
``watchdog(timeout)`` after a test started when pytest-timeout cannot stop it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

PROPERTY = "dynamo_suite"  # the user_properties key that carries a test's classification
START_MARK = "\n===== dynamo-aot-suite: start "  # written to the worker log before each test


def worker_log_path(workdir: str | os.PathLike, worker_id: str) -> Path:
    return Path(workdir) / f"{worker_id}.log"


def watchdog(timeout: float) -> float:
    """When a worker that ignored pytest-timeout's SIGALRM for ``timeout`` s is ended."""
    return timeout + max(10.0, 0.1 * timeout) if timeout > 0 else 0.0


def unittest_id(item: pytest.Item) -> str:
    """The id ``python -m unittest`` gives the same test (a pytest item): how the selection
    names it."""
    cls = getattr(item, "cls", None)
    if cls is None:
        return item.nodeid
    return f"{cls.__module__}.{cls.__qualname__}.{item.name}"


def exit_at_once(code: int) -> None:
    """End this process with ``code`` once its output is flushed, skipping the interpreter's
    teardown: with torch and the test modules loaded that takes 2 to 4 s on 2 cores
    (measured 2026-11-28), which every collection and every worker of every run paid."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
