"""When the running test must end: the runner's per-test time limit, as seen from inside.

The runner's plugin in each worker (``harness.worker.worker_log``) calls ``set_deadline`` with the
wall-clock time at which it will stop the current test, and ``clear`` after it. A test that can spend spare time usefully
(shrinking a generated program that disagrees) asks ``seconds_left`` and stops in time to
report what it has instead of being cut off as a TIMEOUT. Under plain unittest there is no
limit and the caller's own budget applies.
"""

from __future__ import annotations

import time

_deadline: float | None = None


def set_deadline(when: float) -> None:
    """The runner stops the running test at ``when`` (``time.time()`` seconds)."""
    global _deadline
    _deadline = when


def clear() -> None:
    global _deadline
    _deadline = None


def seconds_left(default: float) -> float:
    """Seconds until the runner stops this test, at most ``default``."""
    if _deadline is None:
        return default
    return max(0.0, min(default, _deadline - time.time()))
