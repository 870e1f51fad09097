"""The run's summary on the console: a table per backend, the perf tier's figures, the
operator sweep's counts, and every unexpected result with its reason and a command that
reruns just that test."""

from __future__ import annotations

import shlex
import textwrap
from pathlib import Path

from harness import settings
from harness.axes import registry
from harness.outcomes import COLLATERAL
from harness.project import layout, run_settings
from harness.measure import stages
from harness.report import coverage, eager_share_table, perf_table, problems, scope_table, upstream_bugs
from harness.report.results import BACKEND_INDEPENDENT, OP_SWEEP_PREFIX, RunResults, TestResult
from harness.testcase.expectations import DEFAULT_FILE

_DEFAULT_EXPECTATIONS = DEFAULT_FILE.resolve()
PERF_NAME_CHARACTERS = 28  # the longest model's (lstm_language_model_train), and the perf table fits 120 columns


def repro_command(test: TestResult, expectations: str | None = None, run: dict | None = None) -> str:
    """Reruns only this test, on only this backend, in one worker (in the run's tier, and
    with its operator sweep when the test is an operator's: harness.project.run_settings)."""
    parts = shlex.split((run or {}).get("command") or layout.CLONE_COMMAND)
    if test.backend_spec:
        parts += ["--backend", test.backend_spec]
    run = run or {}
    for axis in registry.beside_backend():
        if test.axis(axis.name) != axis.first:
            parts += [axis.option, test.axis(axis.name)]
    if expectations and Path(expectations).resolve() != _DEFAULT_EXPECTATIONS:
        parts += ["--expectations", expectations]
    for axis in registry.per_run():
        if run.get(axis.record_key, axis.first) != axis.first:
            parts += [axis.option, run[axis.record_key]]
    for setting in run_settings.rerun_by(test.id):
        value = run.get(setting.record)
        if value is not None and value != setting.default:
            parts += [setting.option, f"{value:g}" if isinstance(value, float) else str(value)]
    parts += ["-k", test.id, "-j", "1"]
    imports = run.get("environment", {}).get(settings.IMPORTS)
    prefix = f"{settings.IMPORTS}={shlex.quote(imports)} " if imports else ""
    return prefix + " ".join(shlex.quote(part) for part in parts)


def op_sweep_lines(results: RunResults) -> list[str]:
    """Per backend: op tests (an op's own, and in the quick tier its test on NaN and
    infinities), passed, expected failures, unexpected."""
    lines = []
    for column in results.columns():
        ops = [test for test in results.tests if test.column == column and test.scenario.startswith(OP_SWEEP_PREFIX)]
        if ops:
            count = lambda *outcomes: sum(test.outcome in outcomes for test in ops)  # noqa: E731
            lines.append(f"op sweep ({results.run.get('op_sweep', 'quick')}) on {column}: {len(ops)} op tests, "
                         f"{count('PASS')} passed, {count('XFAIL')} expected failures, "
                         + (f"{count('REFUSED')} refused, " if count('REFUSED') else "")
                         + f"{sum(test.unexpected for test in ops)} unexpected, {count('SKIP')} skipped"
                         + (f", {count(COLLATERAL)} collateral" if count(COLLATERAL) else ""))
        # test_error_inputs' own counts (results.json metrics): which error inputs the backend's code met.
        errors = next((test.metrics for test in results.tests if test.column == column and test.metrics
                       and "error_inputs_reached" in test.metrics), None)
        if errors:
            lines.append(f"error inputs on {column}: {errors['error_inputs_reached']:g} reached the backend's "
                         f"compiled code, {errors.get('error_inputs_rejected_by_dynamo', 0):g} rejected by Dynamo "
                         "while tracing (sizes, dtypes, arguments)")
    return lines


def tier_lines(results: RunResults) -> list[str]:
    """The default tier's share of the nightly pool per backend (harness.testcase.default_tier)."""
    chosen = {backend: entry for backend, entry in (results.run.get("default_tier") or {}).items()
              if entry.get("scenarios")}
    if not chosen:
        return []
    budget = next((entry["budget_s"] for entry in chosen.values() if entry.get("budget_s")), None)
    shares = ", ".join(f"{backend} {entry['default']} of {entry['scenarios']}" for backend, entry in chosen.items())
    return ["default tier: the tests that catch most per second of each backend's time"
            + (f" within {budget:g} s" if budget else "") + f" ({shares}); --tier nightly runs them all",
            *(line for backend, entry in chosen.items() if (line := _reach_line(backend, entry)))]


def _reach_line(backend: str, entry: dict) -> str:
    """What a backend's default tier reaches of what the nightly pool reaches."""
    parts = []
    if entry.get("operators"):
        parts.append("{} of {} ATen operators".format(*entry["operators"]))
    if entry.get("stack_lines"):
        met, total = entry["stack_lines"]
        measured = entry.get("lines_from")
        parts.append(f"{100 * met / max(total, 1):.0f} % of {total} lines of the compile stack"
                     + (f" (as measured on {measured})" if measured and measured != backend else ""))
    return f"  {backend}'s default tier reaches {' and '.join(parts)} the nightly pool reaches" if parts else ""


def left_broken_lines(results: RunResults) -> list[str]:
    """One line per test after which other tests failed in its worker but pass alone."""
    return [f"{test_id} left its worker broken: after it, {failed} later test{'s' if failed != 1 else ''} "
            f"failed in the same worker; {collateral} of them pass alone (COLLATERAL)"
            for test_id, (failed, collateral) in sorted(results.left_broken().items())]


def verdict(results: RunResults) -> str:
    counts = results.summary()
    text = "as expected" if not counts["unexpected"] else f"{counts['unexpected']} unexpected"
    if counts.get("REFUSED"):
        text += f", {counts['REFUSED']} refused as declared"
    if counts[COLLATERAL]:
        text += f", {counts[COLLATERAL]} collateral"
    return f"{counts['total']} tests, {text}"


def summary(results: RunResults, expectations: str | None = None, repros: dict[str, str] | None = None) -> str:
    """``repros``: problem id -> the standalone repro file written for it, if any."""
    declared = scope_table.lines(results)
    lines = [*declared, *([""] if declared else []), _table(results), *eager_share_table.fallback_lines(results),
             *stage_lines(results), *perf_lines(results),
             *op_sweep_lines(results),
             *eager_share_table.lines(results), *filter(None, [coverage.line(results)]), *tier_lines(results),
             *filter(None, [upstream_bugs.line(results)]), ""]
    unexpected = results.unexpected
    grouped = problems.by_clause(problems.group(results.tests))
    found = [problem for clause in grouped for problem in clause.problems]
    number = {test.id: index for index, problem in enumerate(found, 1) for test in problem.tests}
    if grouped:
        lines += [*clause_lines(grouped, len(unexpected)), ""]
    if unexpected:
        lines.append(f"{len(unexpected)} unexpected result{'s' if len(unexpected) != 1 else ''} "
                     f"([n]: the problem below):")
        lines += [f"  {test.outcome:<7} [{number[test.id]}] {test.id}" for test in unexpected]
        lines.append("")
    broken = results.left_broken()
    index = 0
    for clause in grouped:
        lines += ["", f"{clause.name}: {_count(len(clause.problems), 'problem')}, {_count(clause.tests, 'test')}"]
        for problem in clause.problems:
            index += 1
            lines += ["", *problem_block(index, problem, results, expectations, (repros or {}).get(problem.id), broken)]
    if found:
        lines.append("")
    orphans = [line for test_id, line in zip(sorted(broken), left_broken_lines(results)) if test_id not in number]
    if orphans:  # the cause failed as expected (XFAIL), so it is no problem of its own
        lines += [*orphans, ""]
    lines.append(f"{verdict(results)}, in {results.run.get('duration_s', 0):.0f} s, "
                 f"on torch {results.run.get('torch', '?')}")
    return "\n".join(lines)


def _count(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def clause_lines(grouped: list[problems.Clause], unexpected: int) -> list[str]:
    """The contract clauses the run found broken, with their problems and tests."""
    width = max(len(clause.name) for clause in grouped)
    count = sum(len(clause.problems) for clause in grouped)
    return [f"{_count(count, 'problem')} in {_count(unexpected, 'unexpected result')}, by the clause of the "
            "backend contract they break (docs/checks.md):",
            *(f"  {clause.name.ljust(width)}  {_count(len(clause.problems), 'problem')}, "
              f"{_count(clause.tests, 'test')}{_stages_of(clause)}" for clause in grouped)]


def _stages_of(clause: problems.Clause) -> str:
    """``; backend compile 2, check 3``: where a clause's failures came from."""
    counts: dict[str, int] = {}
    for problem in clause.problems:
        if problem.stage:
            counts[problem.stage] = counts.get(problem.stage, 0) + len(problem.tests)
    ordered = {stage: counts[stage] for stage in stages.STAGES if stage in counts}
    return f"; {problems.stage_line(ordered)}" if ordered else ""


def stage_lines(results: RunResults) -> list[str]:
    """Per backend with unexpected results, the stages they came from (harness.measure.stages)."""
    return [f"unexpected on {column}, by stage: {problems.stage_line(counts)}"
            for column, counts in problems.by_stage(results.tests).items()]


def problem_block(index: int, problem: problems.Problem, results: RunResults, expectations: str | None,
                  repro_file: str | None, broken: dict[str, tuple[int, int]]) -> list[str]:
    simplest = problem.representative
    count = len(problem.tests)
    breach = problems.breach(simplest)
    lines = [f"  [{index}] {problem.backend}: {problem.outcome} {breach or simplest.reason}",
             *([f"      the simplest's own reason: {simplest.reason}"] if breach else []),
             f"      {count} test{'s' if count != 1 else ''}; simplest: {simplest.id}"]
    if problem.where:
        lines.append(f"      in {problem.where}")
    if problem.stage:
        lines.append(f"      stage: {problem.stage}")
    for test in problem.tests:
        if test.id in broken:
            failed, collateral = broken[test.id]
            lines.append(f"      {test.id} left its worker broken: after it, {failed} later test"
                         f"{'s' if failed != 1 else ''} failed in the same worker; {collateral} of them pass alone")
    lines.append(f"      rerun: {repro_command(simplest, expectations, results.run)}")
    if repro_file:
        lines.append(f"      repro: python {shlex.quote(repro_file)}")
    return lines


def _table(results: RunResults) -> str:
    outcomes = results.outcomes_shown()
    columns = ["backend", *outcomes, "time", "eager"]
    rows = []
    for column in results.columns():
        tests = [test for test in results.tests if test.column == column]
        label = "(backend-independent)" if column == BACKEND_INDEPENDENT else column
        counts = [sum(test.outcome == outcome for test in tests) for outcome in outcomes]
        seconds = sum(test.duration_s for test in tests)
        rows.append([label, *[str(count) if count else "." for count in counts], f"{seconds:.0f}s",
                     eager_share_table.median_text(tests)])
    return "\n".join(aligned(columns, rows))


def aligned(headings: list[str], rows: list[list[str]], indent: str = "") -> list[str]:
    """A plain-text table: the first column left-aligned, the others (numbers) right-aligned,
    a rule under the headings."""
    widths = [max(len(row[index]) for row in [headings, *rows]) for index in range(len(headings))]
    render = lambda row: (indent + "  ".join(cell.ljust(width) if index == 0 else cell.rjust(width)  # noqa: E731
                                             for index, (cell, width) in enumerate(zip(row, widths)))).rstrip()
    return [render(headings), render(["-" * width for width in widths]), *map(render, rows)]


def perf_lines(results: RunResults) -> list[str]:
    """The perf tier's figures, a block per backend column (one table with every backend side
    by side would not fit 120 columns); nothing for runs without figures."""
    if not perf_table.has_figures(results):
        return []
    lines = ["", "Speed and peak memory against eager:",
             *textwrap.wrap(perf_table.method_line(results), 110, initial_indent="  ", subsequent_indent="  ")]
    table_rows = perf_table.rows(results)
    for column in perf_table.columns(results):
        cells = [(perf_table.shortened(row.name, PERF_NAME_CHARACTERS), row.cells[column])
                 for row in table_rows if column in row.cells]
        lines += ["", perf_table.column_line(results, column),
                  *aligned(["scenario", *perf_table.HEADINGS], [[name, *cell.texts()] for name, cell in cells], "  ")]
    return lines
