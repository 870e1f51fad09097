"""The upstream bugs a run showed: the pytorch/pytorch issues its expected failures cite.

An expected failure (harness/expectations.toml) that cites ``pytorch#N`` in its reason is a
known torch bug the run met again; the day it is fixed the test passes and the run reports
XPASS. The count says which of them this torch release still has, so a nightly job sees the
list shrink (or grow) from one morning to the next. A reason saying the bug is fixed (in a
later release) is counted apart: that bug is closed upstream, the release under test still
has it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness import outcomes

# "pytorch#123", "pytorch/pytorch#123", and the issues listed after one: "pytorch#1, #2". A number
# after "near" or "proposed in" (a fix proposed in pytorch#N) is context, not the bug shown.
_CITED = re.compile(r"(?<!near )(?<!proposed in )pytorch(?:/pytorch)?#(\d+)((?:\s*(?:,|and)\s*#\d+)*)")
_MORE = re.compile(r"#(\d+)")
_FIXED = re.compile(r"\bfixed\b", re.IGNORECASE)
_UNFILED = "no upstream issue found"  # an issue named beside it is only a neighbour
_URL = "https://github.com/pytorch/pytorch/issues/{}"
LISTED = 12  # numbers named on the console line; the rest are counted


@dataclass(frozen=True)
class Shown:
    number: int
    fixed: bool  # the reason says a fix exists (after this release): closed upstream
    tests: tuple[str, ...]  # the test ids whose expected failure cites it

    @property
    def url(self) -> str:
        return _URL.format(self.number)


def cited(reason: str) -> list[int]:
    """The issue numbers a reason cites, in order, once each (the entries name the issue they
    are filed under first). docs/tracker.md counts the bugs shown by the same reading."""
    numbers: list[int] = []
    for match in _CITED.finditer(reason):
        for number in (match.group(1), *_MORE.findall(match.group(2))):
            if int(number) not in numbers:
                numbers.append(int(number))
    return numbers


def open_issue(reason: str) -> int | None:
    """The open issue an expectation's reason is filed under: the first it cites, unless it
    names none of its own or says the bug is fixed."""
    if _UNFILED in reason or _FIXED.search(reason):
        return None
    return next(iter(cited(reason)), None)


def shown(results) -> list[Shown]:
    """Each issue the run's expected failures cite, by number."""
    tests: dict[int, list[str]] = {}
    fixed: dict[int, bool] = {}
    for test in results.tests:
        if test.outcome != outcomes.XFAIL:
            continue
        if _UNFILED in test.reason:
            continue
        for number in cited(test.reason)[:1]:  # the first is the bug; the others are context
            tests.setdefault(number, []).append(test.id)
            fixed[number] = fixed.get(number, False) or bool(_FIXED.search(test.reason))
    return [Shown(number, fixed[number], tuple(ids)) for number, ids in sorted(tests.items())]


def line(results) -> str | None:
    """One console line: how many open upstream bugs the run showed, on which torch."""
    found = shown(results)
    if not found:
        return None
    still_open = [bug for bug in found if not bug.fixed]
    named = ", ".join(f"#{bug.number}" for bug in still_open[:LISTED])
    more = f" and {len(still_open) - LISTED} more" if len(still_open) > LISTED else ""
    closed = sum(bug.fixed for bug in found)
    return (f"upstream bugs shown on torch {results.run.get('torch', '?')}: {len(still_open)} open "
            f"(pytorch{named}{more})" + (f", {closed} fixed in a later release" if closed else "")
            + "; each is an expected failure, XPASS the day it is fixed")


def markdown_lines(results) -> list[str]:
    """The same, each issue linked, with the tests that show it."""
    found = shown(results)
    if not found:
        return []
    lines = [f"### Upstream bugs shown on torch {results.run.get('torch', '?')}: "
             f"{sum(not bug.fixed for bug in found)} open, {sum(bug.fixed for bug in found)} fixed later", ""]
    for bug in found:
        tests = ", ".join(f"`{test}`" for test in bug.tests[:3]) + (f" and {len(bug.tests) - 3} more"
                                                                   if len(bug.tests) > 3 else "")
        lines.append(f"- [pytorch#{bug.number}]({bug.url}){' (fixed in a later release)' if bug.fixed else ''}: "
                     f"{tests}")
    return lines
