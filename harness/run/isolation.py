"""No test fails because of another.

A failing test can leave its worker process broken -- a backend's runtime that stops
working after one bad input, a lock still held after a timeout, state a crashed compile
left half-built -- and every later test in that process then fails for a reason that is not
its own. So a result is only taken as the test's own when nothing failed before it in its
process, or when the process showed it still works after that failure (harness.worker.health:
a canary through the test's backend behaves as it did before anything failed). Every other
unexpected result that followed a failure in the same process, and whose problem
(harness.report.problems) shows nowhere else, is a *follower*: it is rerun in fresh
workers, which hand back (DEFERRED) whatever they cannot vouch for after a failure of their
own, until each such test has run with no failure before it:

* it passes (or fails as expected) there: it is COLLATERAL of the earlier failure, which is
  the problem to look at, and it does not count as unexpected;
* it fails there too: that result is its own.

The test named as the cause is the latest failure before the collateral one in its process,
followed back through failures that were not their tests' own (collateral, or failing alone
differently than in the broken process): the test after which the process stopped working.

Bounded: at most ``RerunLimits.tests`` tests are rerun, and no rerun pass starts after
``RerunLimits.seconds``; a test left over keeps its first result, marked ``rerun: "not rerun"``.
Each pass costs one worker start (a few seconds) plus the tests it runs.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Callable, TextIO

from harness.outcomes import COLLATERAL, DEFERRED, named
from harness.report.problems import key as problem_key, signature
from harness.report.results import TestResult
from harness.run import engine
from harness.run.collection import TestInfo


@dataclass(frozen=True)
class RerunLimits:
    tests: int = 400  # most tests rerun in one run (a default run has ~340 per backend); 0: no reruns
    seconds: float = 600.0  # no rerun pass starts later than this after the first one


def run(tests: list[TestInfo], options: engine.EngineOptions,
        progress: Callable[[int], Callable[[TestResult], None]], limits: RerunLimits,
        out: TextIO) -> dict[str, TestResult]:
    """Run ``tests`` (longest first), then rerun the followers of failures; ``progress(n)``
    makes the callback that sees each of n results."""
    results = engine.run(tests, options, progress(len(tests)))
    if limits.tests == 0:
        return results
    by_id = {test.id: test for test in tests}
    passes = 0

    def run_pass(test_ids: list[str]) -> dict[str, TestResult]:
        nonlocal passes
        passes += 1
        fresh = dataclasses.replace(options, workdir=options.workdir / f"rerun{passes}", defer_after_failure=True)
        report = progress(len(test_ids))
        return engine.run([by_id[test_id] for test_id in test_ids], fresh,
                          lambda result: result.outcome == DEFERRED or report(result))

    return rerun_followers(results, [test.id for test in tests], run_pass, limits, out)


def followers(results: dict[str, TestResult], order: list[str]) -> list[str]:
    """Ids (in run order) of the unexpected results that followed a failure in their process
    and need a rerun to tell whose failure they are. Left out:

    * those failing the way (outcome, check or error, raising function) some test failed
      with no failure before it in its process: that failure is a backend's own, not the
      broken process's (on a backend with many real problems this is most of them, and each
      rerun pass costs a worker start) -- unless the failure before it or after it in its
      process is the same: a run of tests failing alike, one after the other, is what a
      runtime that broke does (IREE's "synchronous semaphore failure" took 30 tests of one
      worker, and hid seven problems those tests show alone);
    * timeouts: rerunning one costs another whole time limit, and a backend that hangs
      compiling an operator hangs again alone.
    """
    unexpected = [result for result in results.values() if result.unexpected]
    shown_alone = {_failure(result) for result in unexpected if result.after is None}
    followed_by = {result.after: result for result in unexpected if result.after is not None}

    def in_a_run_of_the_same(result: TestResult) -> bool:
        neighbours = (results.get(result.after), followed_by.get(result.id))
        return any(other is not None and _failure(other) == _failure(result) for other in neighbours)

    return [test_id for test_id in order if test_id in results and results[test_id].after is not None
            and results[test_id].outcome != "TIMEOUT" and (_failure(results[test_id]) not in shown_alone
                                                          or in_a_run_of_the_same(results[test_id]))]


def _failure(result: TestResult) -> tuple[str, ...]:
    """A problem's key without the backend: a run of several backends shares its workers
    between them, so a check one backend fails cleanly tells for the others too."""
    return problem_key(result)[1:]


def rerun_followers(results: dict[str, TestResult], order: list[str],
                    run_pass: Callable[[list[str]], dict[str, TestResult]],
                    limits: RerunLimits, out: TextIO) -> dict[str, TestResult]:
    """``results`` with each follower settled by its run alone. ``run_pass(ids)`` runs the
    tests in fresh workers that defer everything after their first failure."""
    first = dict(results)  # the first run's results, in which `after` links each follower
    results = dict(results)
    pending = followers(results, order)
    if not pending:
        return results
    chosen, left_over = pending[: limits.tests], pending[limits.tests:]
    print(f"rerunning {len(chosen)} test(s) that failed after an earlier failure in their worker, "
          f"in fresh workers" + (f" ({len(left_over)} more over --rerun-limit)" if left_over else ""),
          file=out, flush=True)
    deadline = time.monotonic() + limits.seconds
    passes = 0
    while chosen and (passes == 0 or time.monotonic() < deadline):
        passes += 1
        rerun = run_pass(chosen)
        deferred = [test_id for test_id in chosen if rerun[test_id].outcome == DEFERRED]
        for test_id in chosen:
            if test_id not in deferred:
                results[test_id] = settle(results[test_id], rerun[test_id])
        if len(deferred) == len(chosen):  # no progress: a worker that fails before any test
            break
        chosen = deferred
    for test_id in chosen + left_over:
        results[test_id] = dataclasses.replace(results[test_id], rerun="not rerun")
    causes = {test_id: cause(first, results, test_id) for test_id in pending}
    for test_id, culprit in causes.items():
        results[test_id] = dataclasses.replace(results[test_id], after=culprit)
        if results[test_id].outcome == COLLATERAL:
            results[test_id].reason = results[test_id].reason.replace("{after}", culprit)
    settled = sum(results[test_id].outcome == COLLATERAL for test_id in pending)
    print(f"rerun done in {passes} pass(es): {settled} of {len(pending)} pass alone (COLLATERAL)",
          file=out, flush=True)
    return results


def settle(first: TestResult, alone: TestResult) -> TestResult:
    """The result of a test that failed after ``first.after`` failed, given its run alone."""
    if named(alone.outcome).expected:
        verdict = "passes alone" if alone.outcome == "PASS" else f"{alone.outcome} alone, as expected"
        return dataclasses.replace(
            first, outcome=COLLATERAL, rerun="alone",
            # The cause is named once every follower is settled (see cause()).
            reason=f"{first.outcome} only after {{after}} failed earlier in its worker ({first.reason}); {verdict}")
    return dataclasses.replace(alone, after=first.after, rerun="alone")


def cause(first: dict[str, TestResult], settled: dict[str, TestResult], test_id: str) -> str:
    """The failure after which ``test_id``'s process stopped working: the failure it followed,
    traced back through failures that were not their tests' own (collateral, or failing
    alone in another way than in the broken process)."""
    seen = {test_id}
    culprit = first[test_id].after
    while culprit in first and first[culprit].after is not None and culprit not in seen and not _own_failure(
            first[culprit], settled[culprit]):
        seen.add(culprit)
        culprit = first[culprit].after
    return culprit


def _own_failure(first: TestResult, alone: TestResult) -> bool:
    return alone.outcome != COLLATERAL and alone.rerun == "alone" and (first.outcome, signature(first.reason)) == (
        alone.outcome, signature(alone.reason))
