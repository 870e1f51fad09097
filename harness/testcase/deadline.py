"""When the running test must end: the runner's per-test time limit, as seen from inside.

The runner (``harness.run.pytest_plugin``) sets ``TEST_DEADLINE_ENV`` to the wall-clock
time at which it will stop the current test. A test that can spend spare time usefully
(shrinking a generated program that disagrees) asks ``seconds_left`` and stops in time to
report what it has instead of being cut off as a TIMEOUT. Under plain unittest there is no
limit and the caller's own budget applies.
"""

from __future__ import annotations

import os
import time

TEST_DEADLINE_ENV = "DYNAMO_SUITE_TEST_DEADLINE"


def seconds_left(default: float) -> float:
    """Seconds until the runner stops this test, at most ``default``."""
    value = os.environ.get(TEST_DEADLINE_ENV)
    if not value:
        return default
    try:
        return max(0.0, min(default, float(value) - time.time()))
    except ValueError:
        return default
