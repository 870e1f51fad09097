"""Every outcome a test can have, each declared once with how every report shows it and how
every judge reads it.

A test ends in one outcome (docs/results.md's table says what each means). The worker decides
it (harness.worker.classify), the runner adds the ones only it can see (a dead worker's CRASH,
a rerun's COLLATERAL), and everything after that reads the declaration below instead of
listing names: results.json's summary, the console's table and progress lines, report.html's
colours and filters, summary.md, junit.xml, the accuracy CSVs, the baseline comparison, the
scoreboard, ``--accept``, the worker's health check and the recorded durations. Adding an
outcome is one ``Outcome`` in ``DECLARED`` plus the rule that produces it
(test/harness/test_outcomes.py declares a toy one and nothing else).

The bottom floor of the house: imports nothing, so the library, the workers, the runner
and the reports (which never import torch) all read it.
"""

from __future__ import annotations

from dataclasses import dataclass

# How a test's own code ended, as the judges that only ask "did it pass" read it: the
# baseline comparison, the worker's health check (a failure may leave the process broken)
# and the accuracy CSVs.
PASSED = "passed"
FAILED = "failed"


@dataclass(frozen=True)
class Outcome:
    name: str  # as results.json, the reports and the expectations' messages spell it
    short: str = ""  # its word on a progress line (harness/run/progress.py), at most 7 characters
    html: tuple[str, str] | None = None  # report.html's colours for it: background, text
    # The run expected it; a follower of a failure that ends so alone was COLLATERAL.
    expected: bool = False
    # Counted against the run: exit code 1, listed, grouped into problems.
    unexpected: bool = False
    ended: str | None = None  # PASSED, FAILED, or None: it did not run, or it was not its own
    junit: str | None = None  # junit.xml's element for it: "failure", "error", "skipped", or none
    # The junit element names it in ``type`` and carries the details (junit's plain skips: neither).
    junit_typed: bool = True
    # How the scoreboard judges it: "pass", "fail", or None (neither: left out of its counts
    # of judged tests). The board compares what backends do, not what their projects expect.
    scoreboard: str | None = None
    accepted_as: str | None = None  # the status of the expectations entry --accept writes for it
    by_where: bool = False  # problems tell it apart by the code that raised or was running
    timed: bool = True  # its duration is a whole run of the test: recorded for ordering and time limits
    # A counts table gives it a column only when the run declared a scope or a test had it.
    with_scope_only: bool = False
    reported: bool = True  # reaches results.json; False: only the runner and its workers see it


PASS, XFAIL, SKIP, REFUSED, COLLATERAL = "PASS", "XFAIL", "SKIP", "REFUSED", "COLLATERAL"
FAIL, ERROR, XPASS, CRASH, TIMEOUT, DEFERRED = "FAIL", "ERROR", "XPASS", "CRASH", "TIMEOUT", "DEFERRED"

# In report order: the expected outcomes first, then COLLATERAL, then those that make a run fail.
DECLARED: list[Outcome] = [
    Outcome(PASS, "pass", ("#d5f5dc", "#116329"), expected=True, ended=PASSED, scoreboard="pass"),
    Outcome(XFAIL, "xfail", ("#e3eefa", "#0a3069"), expected=True, ended=FAILED, junit="skipped", junit_typed=False,
            scoreboard="fail"),
    # An expectations `skip` entry, an opt-out, or the test skipped itself: it did not run.
    Outcome(SKIP, "skip", ("#eaeef2", "#57606a"), expected=True, junit="skipped", junit_typed=False, timed=False),
    # It needed a capability the run declared unsupported, and the backend refused it with an
    # error naming it (harness.features.scope): not run, by its own account.
    Outcome(REFUSED, "refused", ("#dff2f0", "#0b5d57"), expected=True, ended=FAILED, junit="skipped",
            scoreboard="fail", with_scope_only=True),
    # Failed only after another test broke its worker process, and passes alone
    # (harness.run.isolation): not its own failure, so not unexpected (the other test is),
    # nor a junit <failure>: a skip, counted apart by its type.
    Outcome(COLLATERAL, "collat.", ("#fff3c4", "#6b5200"), junit="skipped"),
    Outcome(FAIL, "FAIL", ("#ffd8d3", "#a40e26"), unexpected=True, ended=FAILED, junit="failure", scoreboard="fail",
            accepted_as="xfail"),
    Outcome(ERROR, "ERROR", ("#ffe2bd", "#8a4600"), unexpected=True, ended=FAILED, junit="error", scoreboard="fail",
            accepted_as="xfail", by_where=True),
    # Passed where an expectations entry says it fails: --accept writes a `pass` entry over it.
    Outcome(XPASS, "XPASS", ("#f1dcff", "#6e2a9e"), unexpected=True, ended=PASSED, junit="failure", scoreboard="fail",
            accepted_as="pass"),
    # Its worker died (harness.run.engine); it cannot be an expected failure, only skipped.
    Outcome(CRASH, "CRASH", ("#4c0519", "#fff"), unexpected=True, ended=FAILED, junit="error", scoreboard="fail",
            accepted_as="skip", by_where=True, timed=False),
    Outcome(TIMEOUT, "TIMEOUT", ("#ffcf5c", "#4d2d00"), unexpected=True, ended=FAILED, junit="error",
            scoreboard="fail", accepted_as="skip", by_where=True, timed=False),
    # A rerun's worker hands back unrun what it cannot vouch for after a failure
    # (harness.worker.health); the runner gives it to the next fresh worker.
    Outcome(DEFERRED, timed=False, reported=False),
]


@dataclass(frozen=True)
class Skipped:
    """A skip that stands for another outcome than SKIP (REFUSED, DEFERRED), as data: the
    outcome and the reason the reports show reach harness.worker.classify as they are, and
    ``message`` is what a reader of the skip alone sees (unittest's own runner, pytest's log):
    the reason after the outcome's name."""

    outcome: str
    reason: str

    @property
    def message(self) -> str:
        return f"{self.outcome}: {self.reason}"


class UnknownOutcome(ValueError):
    """A name no declaration has."""


def named(name: str) -> Outcome:
    for outcome in DECLARED:
        if outcome.name == name:
            return outcome
    raise UnknownOutcome(f"unknown outcome '{name}' (harness/outcomes.py declares {', '.join(reported())})")


def reported() -> tuple[str, ...]:
    """The outcomes results.json can hold, in report order."""
    return tuple(outcome.name for outcome in DECLARED if outcome.reported)


def ended(name: str, how: str) -> bool:
    """Whether a test with outcome ``name`` ended ``how`` (PASSED or FAILED)."""
    return named(name).ended == how

