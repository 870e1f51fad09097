"""Tiers: which scenarios a run includes.

* ``default``: every scenario that finishes in seconds; what a backend author runs many
  times a day (``python run_tests.py``).
* ``nightly``: adds the stress scenarios, each of which takes tens of seconds or more (a
  full-length unrolled LSTM, a hundred mutated overlapping views); for nightly CI.
* ``smoke``: a subset of the default tier, one test per contract clause (``harness.testcase.smoke``);
  ``run_tests.py`` selects only those, and under plain unittest it runs the default tier.
* ``perf``: only the performance tests (``test/dynamo/test_perf.py``): speed-up and peak
  memory of what the backend compiled, against eager (``harness.measure.speed``). They are
  in no other tier: ``run_tests.py`` leaves them out of the others' runs and reports, and
  under plain unittest they skip outside it.

Chosen by ``DYNAMO_SUITE_TIER`` (``run_tests.py --tier``). A stress scenario outside its
tier is a SKIP whose reason says how to run it, so it is never silently missing.
"""

from __future__ import annotations

import functools
import unittest
from typing import Callable

from harness import settings

TIER_ENV = settings.TIER
PERF = "perf"
TIERS = ("default", "nightly", "smoke", PERF)
_MARK = "__dynamo_suite_tier__"


class TierError(ValueError):
    pass


def current() -> str:
    value = settings.current().get(TIER_ENV, "default")
    if value not in TIERS:
        raise TierError(f"{TIER_ENV}={value!r}: expected one of {', '.join(TIERS)}")
    return value


def nightly(reason: str) -> Callable[[Callable], Callable]:
    """Run the decorated test only in the nightly tier; ``reason`` says why it is costly."""

    def decorate(test: Callable) -> Callable:
        @functools.wraps(test)
        def run_in_nightly_tier(*args, **kwargs):
            if current() != "nightly":
                raise unittest.SkipTest(f"nightly tier ({reason}); run it with --tier nightly "
                                        f"(under plain unittest: {TIER_ENV}=nightly)")
            return test(*args, **kwargs)

        setattr(run_in_nightly_tier, _MARK, "nightly")
        return run_in_nightly_tier

    return decorate


def perf(test: Callable) -> Callable:
    """Run the decorated test only in the perf tier: a measurement wants a quiet worker
    and seconds of repetitions, which no correctness run should pay for."""

    @functools.wraps(test)
    def run_in_perf_tier(*args, **kwargs):
        if current() != PERF:
            raise unittest.SkipTest(f"perf tier (a speed and memory measurement); run it with --tier perf "
                                    f"(under plain unittest: {TIER_ENV}=perf)")
        return test(*args, **kwargs)

    setattr(run_in_perf_tier, _MARK, PERF)
    return run_in_perf_tier


def tier_of(test: unittest.TestCase) -> str:
    """The tier a collected test belongs to."""
    method = getattr(type(test), test._testMethodName, None)
    return getattr(method, _MARK, "default")
