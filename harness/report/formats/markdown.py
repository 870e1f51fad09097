"""summary.md: a run in GitHub-flavoured Markdown, for a CI job summary.

The per-backend table, the operator-sweep lines, the perf tier's figures, every unexpected
result, and, when the run was compared with a baseline, what changed. Cell text is escaped
so a test's message cannot break the table or inject markup.
"""

from __future__ import annotations

import re
from harness.report import coverage, eager_share_table, perf_table, problems, scope_table, upstream_bugs
from harness.report.console import left_broken_lines, op_sweep_lines, stage_lines, verdict
from harness.report.formats.format import RunReport
from harness.report.results import BACKEND_INDEPENDENT, RunResults

_LIMIT = 50  # entries per list; the HTML report has them all


def escaped(text: object, width: int | None = None) -> str:
    """``text`` as literal Markdown on one line (a table cell, a list item): control characters
    as spaces, cut at ``width`` characters, every character Markdown reads as syntax escaped.
    The one Markdown escape of the reports (the scoreboard's summary uses it too)."""
    text = re.sub(r"[\x00-\x1f\x7f]+", " ", str(text)).strip()
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return re.sub(r"([\\`*_{}\[\]<>()#+!|~])", r"\\\1", text)


def _cell(text: str, width: int = 200) -> str:
    return escaped(text, width)


def _table(results: RunResults) -> list[str]:
    outcomes = results.outcomes_shown()
    lines = ["| backend | " + " | ".join(outcomes) + " | time | eager share |",
             "| --- | " + " | ".join("---:" for _ in outcomes) + " | ---: | ---: |"]
    for column in results.columns():
        tests = [test for test in results.tests if test.column == column]
        label = "(backend-independent)" if column == BACKEND_INDEPENDENT else column
        counts = [sum(test.outcome == outcome for test in tests) for outcome in outcomes]
        cells = [str(count) if count else "·" for count in counts]
        lines.append(f"| {_cell(label)} | " + " | ".join(cells) + f" | {sum(t.duration_s for t in tests):.0f} s | "
                     f"{eager_share_table.median_text(tests, '·')} |")
    return lines


def _scope_section(results: RunResults) -> list[str]:
    """The declared scope, then per backend what its tests needed and how they ended."""
    lines = [f"- {_cell(line, 600)}" for line in scope_table.lines(results)]
    table = scope_table.rows(results)
    if not table:
        return lines
    lines += ["", "<details><summary>What the tests needed of each backend (docs/scope.md)</summary>", "",
              "| backend | " + " | ".join(scope_table.HEADINGS) + " |",
              "| --- | --- | " + " | ".join("---:" for _ in scope_table.HEADINGS[1:]) + " |"]
    for column, rows in table.items():
        lines += [f"| {_cell(column)} | " + " | ".join(map(_cell, row)) + " |" for row in rows]
    return lines + ["", "</details>", ""]


def _perf_section(results: RunResults) -> list[str]:
    """The perf tier's figures: a row per scenario and backend, so a scenario's backends stand
    one under the other; nothing for runs without figures."""
    if not perf_table.has_figures(results):
        return []
    lines = ["", "### Speed and peak memory against eager", "", _cell(perf_table.method_line(results), 600), "",
             *(f"- {_cell(perf_table.column_line(results, column))}" for column in perf_table.columns(results)), "",
             "| scenario | backend | " + " | ".join(perf_table.HEADINGS) + " |",
             "| --- | --- | " + " | ".join("---:" for _ in perf_table.HEADINGS) + " |"]
    for row in perf_table.rows(results):
        for column, cell in row.cells.items():
            lines.append(f"| {_cell(row.name)} | {_cell(column)} | " + " | ".join(map(_cell, cell.texts())) + " |")
    return lines


def _listing(entries: list[str]) -> list[str]:
    shown = [f"- {_cell(entry, 400)}" for entry in entries[:_LIMIT]]
    if len(entries) > _LIMIT:
        shown.append(f"- … and {len(entries) - _LIMIT} more (see report.html)")
    return shown


def render(report: RunReport) -> str:
    results, difference, baseline_name = report.results, report.difference, report.baseline_name
    run = results.run
    lines = [f"## dynamo-aot-suite on torch {_cell(str(run.get('torch', '?')))}: {verdict(results)}", "",
             f"torch {_cell(str(run.get('torch', '?')))}, python {_cell(str(run.get('python', '?')))}, "
             f"device {_cell(str(run.get('device') or 'cpu'))}"
             + (f", compile options `{_cell(run['compile_options'])}`"
                if run.get("compile_options", "default") != "default" else ""), ""]
    lines += _scope_section(results)
    lines += _table(results)
    fallback = eager_share_table.fallback_lines(results)
    if fallback:
        lines += ["", *(f"- **{_cell(line)}**" for line in fallback)]
    sweep = stage_lines(results) + op_sweep_lines(results) + eager_share_table.lines(results) + \
        list(filter(None, [coverage.line(results)]))
    if sweep:
        lines += ["", *(f"- {_cell(line)}" for line in sweep)]
    lines += _perf_section(results)
    shown = upstream_bugs.markdown_lines(results)
    if shown:
        lines += ["", *shown]  # issue numbers and test ids of the suite's own: nothing to escape
    if difference is not None:
        lines += ["", f"### Compared with {_cell(baseline_name or 'the baseline')}"]
        for title, entries in difference.sections():
            lines += ["", f"**{title}: {len(entries)}**"]
            if title not in ("new tests", "not run this time"):
                lines += _listing(entries)
        if not difference.new_failures:
            lines += ["", "No new failures."]
    unexpected = results.unexpected
    grouped = problems.by_clause(problems.group(results.tests))
    if grouped:
        count = sum(len(clause.problems) for clause in grouped)
        lines += ["", f"### {count} problem{'s' if count != 1 else ''} in {len(unexpected)} unexpected results, "
                  "by the contract clause they break"]
        for clause in grouped:
            lines += ["", f"**{_cell(clause.name)}**: {len(clause.problems)} problem"
                      f"{'s' if len(clause.problems) != 1 else ''}, {clause.tests} test{'s' if clause.tests != 1 else ''}", ""]
            lines += _listing([f"{problem.outcome} on {problem.backend}"
                               f"{f' in {problem.stage}' if problem.stage else ''}: {problem.representative.reason} "
                               f"({len(problem.tests)} tests; simplest {problem.representative.id})"
                               for problem in clause.problems])
    if unexpected:
        lines += ["", f"### Unexpected results ({len(unexpected)})", ""]
        lines += _listing([f"{test.outcome} {test.id}: {test.reason}" for test in unexpected])
    broken = left_broken_lines(results)
    if broken:
        lines += ["", "### Tests that left their worker broken", "", *_listing(broken)]
    return "\n".join(lines) + "\n"
