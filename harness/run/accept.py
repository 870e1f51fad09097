"""``--accept``: bring the expectations file in line with what a run observed.

* A test that failed, errored, crashed or timed out with no expectation gets a new entry
  for its backend and the running torch minor version (``xfail`` for failures and errors,
  ``skip`` for crashes and timeouts, which would take the run down with them again).
* An ``xfail`` entry whose every test in this run passed (XPASS) is removed.

It writes only the project's own file. An entry of the bundled file (or another beneath)
whose tests passed is taken back for them with a ``pass`` entry; a ``pass`` entry of the
project's whose every test failed is removed, so the entry beneath decides again.

The file is edited as text: entries are appended at the end or cut out with the comment
lines directly above them; everything else stays byte for byte, so the diff shows only the
change.
"""

from __future__ import annotations

import datetime
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from harness import outcomes
from harness.axes import registry
from harness.testcase import expectations
from harness.report.results import BACKEND_INDEPENDENT, RunResults, TestResult, write_atomic

_REASON_LIMIT = 300


@dataclass
class AcceptChanges:
    path: Path
    added: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # entries some of whose tests passed, some not

    def render(self) -> str:
        if not (self.added or self.dropped or self.kept):
            return f"--accept: {self.path} already matches this run; unchanged"
        lines = [f"--accept: rewrote {self.path}: {len(self.added)} added, {len(self.dropped)} dropped"]
        lines += [f"  + {entry}" for entry in self.added]
        lines += [f"  - {entry}" for entry in self.dropped]
        lines += [f"  kept {entry}: some of its tests passed, others still fail; narrow it by hand"
                  for entry in self.kept]
        return "\n".join(lines)


def _torch_range(version: str) -> str:
    release = re.match(r"(\d+)\.(\d+)", version)
    return f"=={release.group(1)}.{release.group(2)}.*" if release else ""


def _toml_string(text: str) -> str:
    # A JSON string literal is a valid TOML basic string.
    return json.dumps(text, ensure_ascii=False)


def _accepted_failure(outcome: str) -> bool:
    """A failure --accept records as an expected one (an ``xfail`` or ``skip`` entry)."""
    return outcomes.named(outcome).accepted_as not in (None, "pass")


def _new_entry(test: TestResult, torch_version: str, run: dict | None = None) -> str:
    status = outcomes.named(test.outcome).accepted_as
    if status == "pass":
        reason = f"passes here, where {test.expectation} expects a failure"
    else:
        reason = f"observed {test.outcome}: {test.reason}"
    if len(reason) > _REASON_LIMIT:
        reason = reason[: _REASON_LIMIT - 1] + "…"
    lines = ["[[expect]]", f"test = {_toml_string(test.scenario)}"]
    if test.backend != BACKEND_INDEPENDENT:
        lines.append(f"backend = {_toml_string(test.backend)}")
    for axis in registry.beside_backend():
        if test.axis(axis.name) != axis.first:
            lines.append(f"{axis.name} = {_toml_string(test.axis(axis.name))}")
    for axis in registry.per_run():  # seen with that value only (the device: its type)
        value = str((run or {}).get(axis.record_key) or axis.first)
        value = value.split(":")[0] if axis.by_type else value
        if value != axis.first:
            lines.append(f"{axis.name} = {_toml_string(value)}")
    if torch_range := _torch_range(torch_version):
        lines.append(f"torch = {_toml_string(torch_range)}")
    lines += [f"status = {_toml_string(status)}", f"reason = {_toml_string(reason)}"]
    return "\n".join(lines)


def _entry_spans(lines: list[str]) -> list[tuple[int, int]]:
    """Per [[expect]] table: [first line, end) in ``lines``, its own comments included."""
    headers = [index for index, line in enumerate(lines) if line.strip().startswith("[[")]
    starts = []
    for header in headers:
        start = header
        while start > 0 and lines[start - 1].lstrip().startswith("#"):
            start -= 1
        starts.append(start)
    return [(start, starts[position + 1] if position + 1 < len(starts) else len(lines))
            for position, start in enumerate(starts)]


def accept(path: Path, results: RunResults) -> AcceptChanges:
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    entries = expectations.parse(text, str(path))
    changes = AcceptChanges(path=path)

    governed: dict[str, list[TestResult]] = defaultdict(list)
    for test in results.tests:
        if test.expectation:
            governed[test.expectation].append(test)
    lines = text.splitlines(keepends=True)
    spans = _entry_spans(lines)
    drop = set()
    for index, entry in enumerate(entries):
        tests = governed.get(entry.source, [])
        if not tests or entry.status == "skip":
            continue
        wrong = "XPASS" if entry.status == "xfail" else None
        if entry.status == "pass":
            wrong = next((outcome for outcome in outcomes.reported()
                          if _accepted_failure(outcome) and any(test.outcome == outcome for test in tests)), None)
        if wrong and all(test.unexpected for test in tests):
            drop.add(index)
            changes.dropped.append(f"{entry.test} [{entry.source}] ({'passed' if wrong == 'XPASS' else 'failed'} "
                                   f"on {len(tests)} test(s))")
        elif wrong:
            changes.kept.append(f"{entry.test} [{entry.source}]")
    ours = {entry.source for entry in entries}

    kept_lines = [line for index, (start, end) in enumerate(spans) if index not in drop
                  for line in lines[start:end]]
    preamble = lines[: spans[0][0]] if spans else lines
    new_text = "".join(preamble + kept_lines)

    failing = sorted((test for test in results.tests
                      if (_accepted_failure(test.outcome) and not test.expectation)
                      or (outcomes.named(test.outcome).accepted_as == "pass" and test.expectation not in ours)),
                     key=lambda test: (test.scenario, test.backend))
    if failing:
        torch_version = results.run.get("torch", "")
        today = datetime.date.today().isoformat()
        command = results.run.get("command") or "run_tests.py"
        blocks = [f"# Added by {command.split()[-1]} --accept on {today} (torch {torch_version}): observed, "
                  "not yet explained."]
        blocks += [_new_entry(test, torch_version, results.run) for test in failing]
        new_text = new_text.rstrip("\n") + "\n\n" + "\n\n".join(blocks) + "\n"
        changes.added = [f"{test.scenario} on {test.backend}: {test.outcome}" for test in failing]
        if any(test.outcome == "XPASS" for test in failing):
            blocks[0] += " A 'pass' entry takes back, for its tests, an expected failure of the file beneath."
    if new_text != text:
        expectations.parse(new_text, str(path))  # never write a file the next run cannot read
        write_atomic(path, new_text)
    return changes
