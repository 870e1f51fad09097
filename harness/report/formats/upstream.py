"""Issues a backend's maintainers can act on without the suite (``--upstream-reports RUN``):
``RUN/upstream/<problem id>.md`` per problem of the run, ready to paste into the tracker of the
package that provides the backend, and ``RUN/upstream/README.md``, the list (``issues.json`` the same as data, which the
scoreboard reads).

Each issue has a title naming the behaviour (what went wrong, at which stage, in which
scenario), the versions (torch, the backend's package, Python, platform, device), the
standalone repro inline, what it printed when the report was written (eager's values and the
backend's where they differ), the contract clause, and how many of the suite's tests show it.

A report is only as good as its repro, so every repro is run first, here, where the backend is
installed (harness.repros.generic.check). The list says which showed the problem: only those are
ready to file. A repro that needs the suite (the problem shows in a scenario, not in one graph:
guards, recompiles, global state, crashes) says so in its issue.

A problem already open upstream is not written again: where its scenario is an expected
failure of the run's expectations elsewhere (another backend, another torch) citing an open
pytorch/pytorch issue, the list names that issue instead of an issue file.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness import outcomes
from harness.measure.stages import AOT_AUTOGRAD, BACKEND_COMPILE, BACKEND_RUN, CAPTURE, CHECK
from harness.report import console, problems, upstream_bugs
from harness.report.formats.format import UpstreamReport
from harness.report.results import TestResult
from harness.testcase import expectations

INDEX = "README.md"
NEEDS_SUITE, UNCONFIRMED = "needs-suite/", "unconfirmed/"  # the issues not ready to file as they are
LISTING = "issues.json"  # the same list as data, for the scoreboard: id, title, tracker, tests, ready
LISTED_TESTS = 10  # test ids an issue lists; the rest are counted
OUTPUT_LINES = 60  # of what the repro printed
BACKEND_FREE = "-"  # the column of tests without a backend (torch's own transforms)
# What a failure at each stage does, as a title says it.
_STAGE = {
    CAPTURE: "Dynamo's capture fails",
    AOT_AUTOGRAD: "AOTAutograd fails",
    BACKEND_COMPILE: "compiling fails",
    BACKEND_RUN: "the compiled code fails",
    CHECK: "the answer differs from eager",
}
_HOW = {"CRASH": "the process crashes", "TIMEOUT": "never returns"}


def filed(problem: problems.Problem) -> bool:
    """Problems a tracker gets: wrong answers, errors, crashes and hangs; an unexpected pass is
    news for the suite's expectations, not for the backend."""
    return outcomes.named(problem.outcome).name != "XPASS"


def _words(name: str) -> str:
    return re.sub(r"_(\d+)(?=_|$)", r" \1", name.removeprefix("test_")).replace("_", " ").strip()


def scenario_words(test: TestResult) -> str:
    """``state changes: instance shadows class``."""
    family, method = test.scenario.split(".")[-2:]
    family = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", family.removesuffix("Tests")).lower()
    return f"{family}: {_words(method)}"


def _behaviour(problem: problems.Problem) -> str:
    text = re.sub(r"^AssertionError: ", "", problem.signature).rstrip(".: ")
    if problem.outcome in _HOW:
        return f"{_HOW[problem.outcome]} ({text})" if text else _HOW[problem.outcome]
    if problem.stage == CHECK or problem.outcome == "FAIL":
        return text
    return f"{_STAGE.get(problem.stage, 'it fails')}: {text}"


_DIFFERENCE = re.compile(r"^\s*graph \d+: (?P<what>.+?)(?: \(|$)", re.MULTILINE)


def _shown(problem: problems.Problem, checked: Any) -> str | None:
    """For a wrong answer a standalone repro showed: its first difference, as a maintainer
    running it will see it (``inputs after the call: values differ from eager`` where the
    scenario's check saw the output the lost write fed)."""
    if problem.outcome != "FAIL" or checked is None or not checked.standalone or not ready(problem, checked):
        return None
    if getattr(checked, "form", "") == "plain":
        return said(checked.output)
    found = _DIFFERENCE.search(checked.output)
    return problems.signature(found.group("what")).rstrip(".: ") if found else None


_RAISED = re.compile(r"raised (?P<type>\w+)\((?P<quote>['\"])(?P<message>.*?)(?P=quote)\)")


_SAID = re.compile(r"^(the compiled call raised|backward raised|output|inputs after the call|gradients)\b")


def said(output: str) -> str:
    """What a plain repro printed, as a title says it: ``AssertionError: Please convert ...``
    (its own line, not a warning the backend printed before it)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    first = next((line for line in lines if _SAID.match(line)), lines[0] if lines else "")
    raised = _RAISED.search(first)
    if raised:
        # The message as repr() wrote it: its first line that says something (not a file's path).
        message = next((line.strip() for line in raised.group("message").split("\\n") if line.strip()), "")
        what = f"{raised.group('type')}: {message.rstrip(':. ')}"
        return ("backward raised " if first.startswith("backward") else "") + what
    return re.sub(r":\s*(Tensor-likes are not close!|The values for attribute.*)$", "", first).rstrip(":. ")


def title(problem: problems.Problem, checked: Any = None) -> str:
    """``torch.compile(backend="ts"): compiling fails: RuntimeError: method cannot be used as a value
    (LSTM: lstm)``, cut to a tracker's title length: the behaviour its repro shows."""
    if checked is not None and getattr(checked, "title", None) and ready(problem, checked):
        return scrubbed(checked.title)
    spec = problem.representative.backend_spec or problem.backend
    subject = f'torch.compile(backend="{spec}")' if problem.backend != BACKEND_FREE else "torch.compile"
    text = f"{subject}: {_shown(problem, checked) or _behaviour(problem)}"
    if len(text) > 150:
        text = text[:149].rstrip() + "…"
    return f"{text} ({scenario_words(problem.representative)})"


def _package(run: dict[str, Any], problem: problems.Problem) -> str:
    for backend in run.get("backends", []):
        if backend.get("name") == problem.backend:
            return backend.get("package") or ""
    return ""


def tracker(run: dict[str, Any], problem: problems.Problem) -> str:
    """Whose tracker: the package that provides the backend (torch for its own backends and for
    problems no backend is part of)."""
    if problem.backend == BACKEND_FREE:
        return "torch"
    package = _package(run, problem)
    return package.split()[0] if package else "the backend's own (no package recorded)"


def _fence(text: str, language: str = "") -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language}\n{text}\n{fence}"


def _printed(output: str) -> str:
    lines = output.splitlines()
    if len(lines) > OUTPUT_LINES:
        lines = [*lines[:OUTPUT_LINES], f"... ({len(lines) - OUTPUT_LINES} more lines)"]
    return "\n".join(lines) or "(nothing)"


def same_behaviour(problem: problems.Problem, output: str) -> bool:
    """Whether what the repro printed is the behaviour the problem names (harness.report.problems.same)."""
    return problems.shown_by(problem.outcome, problem.signature, output)


def ready(problem: problems.Problem, checked: Any) -> bool:
    """Ready to file: the repro showed the problem, and as the behaviour its title names."""
    return checked is not None and checked.shows and same_behaviour(problem, checked.output) \
        and getattr(checked, "control", None) != 1  # a repro that blames PyTorch's reference path too


def place(problem: problems.Problem, checked: Any) -> str:
    """Where its issue is written: ready to file at the top (a standalone repro showed the
    behaviour the title names); in ``needs-suite/`` when it showed it but runs the suite's
    scenario; in ``unconfirmed/`` when it did not show it, showed another, or did not finish."""
    if not ready(problem, checked):
        return UNCONFIRMED
    return "" if checked.standalone else NEEDS_SUITE


def status(checked: Any, problem: problems.Problem | None = None) -> str:
    if checked is None:
        return "not run (the run wrote no repro for it)"
    if checked.exit_code is None:
        return f"still running after {checked.seconds:g} s"
    if checked.exit_code not in (0, 1):
        return f"the repro itself raised after {checked.seconds:g} s (below); not ready to file"
    if checked.shows and getattr(checked, "control", None) == 1:
        return (f"exit 1 in {checked.seconds:g} s, and exit 1 under --backend aot_eager too: it shows a difference "
                "PyTorch's reference path has as well; not ready to file")
    if checked.shows and problem is not None and not same_behaviour(problem, checked.output):
        return (f"exit {checked.exit_code} in {checked.seconds:g} s: a difference shows, but not the behaviour the "
                "title names; not ready to file")
    return (f"exit {checked.exit_code} in {checked.seconds:g} s: "
            + ("the problem shows" if checked.shows else "the problem did not show"))


def same_repro(found: list[problems.Problem], report: UpstreamReport) -> dict[str, list[problems.Problem]]:
    """problem id -> the other ready problems whose reduced script is the same as its own (its
    title line aside): likely one bug of the backend, found by several scenarios."""
    scripts: dict[str, list[problems.Problem]] = {}
    for problem in found:
        checked = report.checked.get(problem.id)
        if checked is not None and checked.form == "plain" and ready(problem, checked):
            scripts.setdefault(checked.text.split("\n", 1)[-1], []).append(problem)
    return {problem.id: [other for other in group if other is not problem]
            for group in scripts.values() if len(group) > 1 for problem in group}


def issue(problem: problems.Problem, report: UpstreamReport,
          same: dict[str, list[problems.Problem]] | None = None) -> str:
    """The repro first (inline where it is the plain form), then expected against actual in one
    line, the versions, and the suite's context after them."""
    run, checked = report.results.run, report.checked.get(problem.id)
    test = problem.representative
    package = _package(run, problem)
    versions = [f"torch {run.get('torch', '?')}", *([package] if package and not package.startswith("torch ") else []),
                f"Python {run.get('python', '?')}", run.get("platform", "?"), f"device {run.get('device') or 'cpu'}"]
    rerun = console.repro_command(test, run.get("expectations"), run)
    lines = [f"# {title(problem, checked)}", ""]
    if checked is None:
        lines += ["The run wrote no repro for this problem; the suite's own test shows it:", "",
                  _fence(f"pip install dynamo-aot-suite=={run.get('suite', '')}\n{rerun}", "sh"), ""]
    elif checked.form == "plain":
        lines += [_fence(scrubbed(checked.text.rstrip()), "python"), "",
                  f"`python repro.py` exits 1 while the problem shows (0 once compiled agrees with eager; "
                  f"`--backend aot_eager` runs PyTorch's reference path). It needs torch and the backend's package "
                  f"only. It was {checked.reduction}.", ""]
        others = (same or {}).get(problem.id, [])
        if others:
            lines += [f"The same script shows {len(others)} other problem{'s' if len(others) > 1 else ''} of this "
                      "run, probably this bug: " + ", ".join(f"[{title(other, report.checked.get(other.id))}]"
                                                             f"({other.id}.md)" for other in others[:5])
                      + (f" and {len(others) - 5} more" if len(others) > 5 else "") + ".", ""]
    else:
        needs = ("It needs torch and the backend's package only." if checked.standalone else
                 "The problem shows in a scenario, not in one graph, so the repro runs the suite's scenario: it "
                 f"needs `pip install dynamo-aot-suite=={run.get('suite', '')}` beside the backend.")
        lines += [f"**Generic repro** (the fallback form: {checked.reduction or 'no plain script of one graph'}). "
                  "Save as `repro.py` and run `python repro.py`: exit 1 while the problem shows, 0 once it does "
                  "not, 3 where it cannot run its check; `--backend aot_eager` runs the same against PyTorch's "
                  f"reference path. {needs}", "",
                  "<details><summary>repro.py</summary>", "", _fence(scrubbed(checked.text.rstrip()), "python"), "",
                  "</details>", ""]
    if checked is not None:
        actual = (said(checked.output) if checked.form == "plain" and ready(problem, checked) else
                  _shown(problem, checked) or _behaviour(problem))
        lines += [f"**Expected**: what eager gives. **Actual**: {actual}.", "",
                  f"**Versions**: {', '.join(versions)}.", "",
                  f"`python repro.py` when this report was written: {status(checked, problem)}.", "",
                  _fence(_printed(scrubbed(checked.output))), ""]
    else:
        lines += [f"**Versions**: {', '.join(versions)}.", ""]
    lines += ["## Where the suite found it", "",
              f"{problem.outcome} at stage *{problem.stage or 'unknown'}*, against the backend contract's clause "
              f"*{problem.clause}*. Found by dynamo-aot-suite {run.get('suite', '?')}: {len(problem.tests)} of its "
              "tests show it. The suite's check, in its simplest test:", "",
              _fence(scrubbed(test.reason.strip() or problem.signature)), "",
              f"### Tests of the suite that show it ({len(problem.tests)})", ""]
    ids = sorted(each.id for each in problem.tests)
    lines += [f"- `{each}`" for each in ids[:LISTED_TESTS]]
    if len(ids) > LISTED_TESTS:
        lines.append(f"- and {len(ids) - LISTED_TESTS} more")
    lines += ["", f"One of them, in the suite: `{scrubbed(rerun)}`", ""]
    return "\n".join(lines)


_SITE_PACKAGES = re.compile(r"(?<![\w.-])(?:[A-Za-z]:)?(?:[\\/][^\s'\"\\/]+)+?[\\/]((?:site|dist)-packages)[\\/]")


# The suite's own files, wherever it is installed or cloned: from its package's name on.
_SUITE_FILE = re.compile(r"(?<![\w.-])(?:[A-Za-z]:)?(?:[\\/][^\s'\"\\/]+)+?[\\/](?=(?:harness|test)[\\/][\w/\\]+\.py)")


# A repro file where it was run (its own traceback): by its name.
_REPRO_FILE = re.compile(r"(?<![\w.-])(?:[A-Za-z]:)?(?:[\\/][^\s'\"\\/]+)+?[\\/]repros[\\/]([\w.-]+\.py)")


def scrubbed(text: str) -> str:
    """``text`` without the paths of the machine that wrote it: an installed package's file by
    its place in site-packages; this interpreter's environment, the home, the working and the
    temporary directory left out."""
    text = _SITE_PACKAGES.sub(r"\1/", text)
    temporary = re.escape(tempfile.gettempdir().rstrip("/\\"))
    text = re.sub(temporary + r"[\\/][^\s'\"\\/]+[\\/]", "", text)
    text = _SUITE_FILE.sub("", text)
    text = _REPRO_FILE.sub(r"\1", text)
    for root, name in sorted(((os.getcwd(), "."), (sys.prefix, "<venv>"), (sys.base_prefix, "<python>"),
                              (str(Path.home()), "~")),
                             key=lambda pair: -len(pair[0])):
        if len(root) > 1:
            text = text.replace(root, name)
    return text


def index(found: list[problems.Problem], report: UpstreamReport) -> str:
    run = report.results.run
    placed = {problem.id: place(problem, report.checked.get(problem.id)) for problem in found}
    count = {where: sum(placed[problem.id] == where for problem in found) for where in ("", NEEDS_SUITE, UNCONFIRMED)}
    lines = ["# Issues for the backends' trackers", "",
             f"From the run of {run.get('started', '?')} (torch {run.get('torch', '?')}, dynamo-aot-suite "
             f"{run.get('suite', '?')}): {len(found)} problems, each repro run when these were written.", "",
             f"* **{count['']} ready to file** (here): a standalone repro (torch and the backend) showed the "
             "behaviour the title names;",
             f"* {count[NEEDS_SUITE]} in `{NEEDS_SUITE}`: the repro showed it, but runs the suite's scenario;",
             f"* {count[UNCONFIRMED]} in `{UNCONFIRMED}`: the repro did not show it, showed another behaviour, or did "
             "not finish: not to be filed as they are.", ""]
    same = same_repro(found, report)
    if same:
        scripts = len({min(other.id for other in [problem, *same[problem.id]]) for problem in found
                       if problem.id in same})
        lines += [f"{len(same)} of the ready issues reduced to {scripts} script{'s' if scripts > 1 else ''} shared "
                  "between them (each issue names the others): probably one bug per script, found by several "
                  "scenarios. File one issue per script, naming the rest.", ""]
    lines += ["| issue | tracker | tests | repro |", "| --- | --- | ---: | --- |"]
    for problem in sorted(found, key=lambda problem: ("", NEEDS_SUITE, UNCONFIRMED).index(placed[problem.id])):
        cell = title(problem, report.checked.get(problem.id)).replace("|", "\\|")
        lines.append(f"| [{cell}]({placed[problem.id]}{problem.id}.md) | {tracker(run, problem)} | "
                     f"{len(problem.tests)} | {status(report.checked.get(problem.id), problem)} |")
    return "\n".join(lines) + "\n"


def listing(found: list[problems.Problem], report: UpstreamReport,
            known: list[tuple[problems.Problem, int]] = ()) -> str:
    run = report.results.run
    placed = {problem.id: place(problem, report.checked.get(problem.id)) for problem in found}
    same = same_repro(found, report)
    return json.dumps([{"id": problem.id, "title": title(problem, report.checked.get(problem.id)),
                        "tracker": tracker(run, problem),
                        "tests": len(problem.tests), "path": f"{placed[problem.id]}{problem.id}.md",
                        "ready": placed[problem.id] == "",
                        "repro": getattr(report.checked.get(problem.id), "form", None),
                        "same_repro": sorted(other.id for other in same.get(problem.id, []))}
                       for problem in found]
                      + [{"id": problem.id, "title": title(problem), "tracker": "https://github.com/pytorch/pytorch",
                          "tests": len(problem.tests), "path": None, "ready": False, "upstream": number}
                         for problem, number in known], indent=1) + "\n"


def known_upstream(found: list[problems.Problem], run: dict[str, Any]) -> dict[str, int]:
    """problem id -> the open pytorch/pytorch issue it already is: one of its scenarios is an
    expected failure of the run's expectations under other conditions (another backend, a
    torch the entry's range leaves out) whose reason cites that issue first."""
    try:
        entries = [entry for entry in expectations.load(project=run.get("expectations")) if entry.status == "xfail"]
    except expectations.ExpectationError:
        return {}
    cited = [(entry.test, upstream_bugs.open_issue(entry.reason)) for entry in entries]
    cited = [(pattern, number) for pattern, number in cited if number is not None]
    known = {}
    for problem in found:
        for test in problem.tests:
            number = next((number for pattern, number in cited if fnmatch.fnmatchcase(test.scenario, pattern)), None)
            if number is not None:
                known[problem.id] = number
                break
    return known


def render(report: UpstreamReport) -> dict[str, str]:
    found = [problem for problem in problems.group(report.results.tests) if filed(problem)]
    known = known_upstream(found, report.results.run)
    written = [problem for problem in found if problem.id not in known]
    same = same_repro(written, report)
    return {**{f"{place(problem, report.checked.get(problem.id))}{problem.id}.md": issue(problem, report, same)
               for problem in written},
            INDEX: index(written, report) + _known_lines(found, known),
            LISTING: listing(written, report, known=[(problem, known[problem.id]) for problem in found
                                                     if problem.id in known])}


def _known_lines(found: list[problems.Problem], known: dict[str, int]) -> str:
    if not known:
        return ""
    lines = ["", f"{len(known)} problem{'s' if len(known) != 1 else ''} not written: already open upstream "
                 "(the scenario is an expected failure elsewhere, citing the issue):", ""]
    lines += [f"* {title(problem).replace('|', '/')}: [pytorch#{known[problem.id]}]"
              f"(https://github.com/pytorch/pytorch/issues/{known[problem.id]})"
              for problem in found if problem.id in known]
    return "\n".join(lines) + "\n"
