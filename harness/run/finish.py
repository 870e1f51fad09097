"""The end of a run: its record (results.json's ``run``), the reports, the console's
summary, the comparison with --baseline, --accept, and the exit code; --merge, which runs
nothing and ends the same way; --scoreboard and --upstream-reports, which read finished runs.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import socket
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from harness.axes import registry
from harness.project import layout, run_settings
from harness.run import configure
from harness.run.configure import Plan
from harness.run import options
from harness.run.options import UsageError
from harness.testcase import default_tier, perf, tiers

if TYPE_CHECKING:
    from harness.report.results import RunResults


def record(plan: Plan, collected, tests: list, by_id: dict, started, duration_s: float) -> RunResults:
    """The run's results: what ran, with what, and each test's result."""
    from harness.report.results import RunResults

    from harness.report import eager_share_table

    args = plan.args
    results = RunResults(
        run={
            "started": started.isoformat(timespec="seconds"),
            "duration_s": round(duration_s, 3),
            "torch": collected.torch_version,
            "suite": layout.suite_version(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "host": socket.gethostname(),
            "backends": collected.backends,
            "patterns": args.patterns,
            # op_sweep, generated (null: the tier's budget), tier, max_eager_share (null: none, unless
            # [[eager_share]] entries), unsupported...: harness.project.run_settings.
            **{setting.record: setting.value() for setting in run_settings.recorded()},
            **{axis.record_key: registry.selected(axis)[0] if axis.per_run else list(registry.selected(axis))
               for axis in registry.other_than_backend()},
            # The default tier's share of the pool per backend (harness.testcase.default_tier).
            **({"default_tier": {backend["name"]: default_tier.summary(backend["name"]) for backend in collected.backends}}
               if tiers.current() == "default" else {}),
            # What a perf figure depends on beside the code (harness.testcase.perf).
            **({"perf": {"budget_s": perf.budget_s(), "threads": perf.threads(), "cpu": _cpu_name()}}
               if tiers.current() == tiers.PERF else {}),
            "shard": plan.shard_text,
            "jobs": plan.jobs,
            "worker_start": collected.worker_start,  # forked, or interpreters and why (harness.worker.forkserver)
            "timeout_s": args.timeout,  # null: each test's own limit (tests[].time_limit_s)
            "rerun_limit": args.rerun_limit,
            "rerun_time_s": args.rerun_time,
            "expectations": str(plan.expectations_file) if plan.expectations_file else None,  # the project's own
            "expectation_files": [str(path) for path in plan.expectation_files],  # first match wins
            "command": args.command,  # how reruns and repros start the suite
            "argv": args.argv,
            "cwd": os.getcwd(),
            # What a repro needs to run a scenario as this run did.
            "environment": plan.settings.environment(run_settings.repro_names()),
            "complete": True,
        },
        tests=[by_id[test.id] for test in sorted(tests, key=lambda test: test.id)],
    )
    # Per backend, the tests whose graphs ran wholly on PyTorch's kernels (docs/eager-share.md).
    results.run["silent_fallback"] = eager_share_table.fallback_json(results)
    return results


def _cpu_name() -> str:
    """The processor's model name (Linux), else what platform knows."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} cores"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"


def merge(plan: Plan, out: TextIO) -> int:
    """--merge: shard results combined into one set of reports."""
    from harness.report.results import ResultsError, merge as merge_results

    parts = [(source, configure.load_results(source)) for source in plan.args.merge]
    try:
        merged = merge_results(parts)
    except ResultsError as error:
        raise UsageError(str(error))
    print(f"merged {len(parts)} result files: {len(merged.tests)} tests", file=out)
    expectations_file = Path(merged.run["expectations"]) if merged.run.get("expectations") else None
    return finish(dataclasses.replace(plan, expectations_file=expectations_file), merged, out)


def scoreboard(plan: Plan, out: TextIO) -> int:
    """--scoreboard: runs of several backends side by side; exit 0, or 2 when they cannot be."""
    import datetime

    from harness.report import writer
    from harness.report.formats.format import BoardReport
    from harness.report.results import ResultsError
    from harness.report.scoreboard import board, render

    args, report_dir = plan.args, plan.report_dir
    try:
        rows = board.read(args.scoreboard)
        previous = board.read_previous(args.baseline) if args.baseline else None
    except (ResultsError, board.ScoreboardError) as error:
        raise UsageError(str(error))
    built = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    data = board.to_json(rows, built, previous, report_dir)
    written = writer.write(BoardReport(data, board.families(rows, report_dir)), report_dir)
    print("\n".join(render.console_lines(data)), file=out)
    print("scoreboard: " + ", ".join(str(path) for path in written), file=out)
    return 0


def upstream_reports(plan: Plan, out: TextIO) -> int:
    """--upstream-reports: each run's repros run here, then its issues written beside them."""
    from harness.repros import prepare
    from harness.report import problems, writer
    from harness.report.formats import upstream
    from harness.report.formats.format import UpstreamReport

    limit = plan.args.timeout or options.UPSTREAM_REPRO_TIMEOUT_S
    for source in plan.args.upstream_reports:
        directory = Path(source) if Path(source).is_dir() else Path(source).parent
        results = configure.load_results(str(directory))
        prepare.refresh_all(directory, problems.group(results.tests), results.run)  # unexpected passes' too
        found = [problem for problem in problems.group(results.tests) if upstream.filed(problem)]
        known = upstream.known_upstream(found, results.run)
        found = [problem for problem in found if problem.id not in known]  # named in the list, not written
        prepare.clean(directory)
        checked = prepare.prepare(directory, found, results.run, limit, plan.args.reduce_seconds,
                                  lambda line: print(line, file=out, flush=True))
        for problem in found:
            if problem.id in checked:
                print(f"{problem.id}: {upstream.status(checked[problem.id], problem)}", file=out, flush=True)
        written = set(writer.write(UpstreamReport(results, checked), directory))
        for stale in (directory / "upstream").rglob("*.md"):  # an earlier time's issues, placed elsewhere
            if stale not in written:
                stale.unlink()
        placed = [upstream.place(problem, checked.get(problem.id)) for problem in found]
        plain = sum(placed[index] == "" and checked[problem.id].form == "plain" for index, problem in enumerate(found))
        print(f"{directory}: {len(found)} issues, {placed.count('')} of them ready to file (a standalone repro showed "
              f"the behaviour named; {plain} of them a plain-torch script), {placed.count(upstream.NEEDS_SUITE)} needing the suite, "
              f"{placed.count(upstream.UNCONFIRMED)} not confirmed"
              + (f", {len(known)} already open upstream (named, not written)" if known else "")
              + f"; {directory / 'upstream' / upstream.INDEX}", file=out)
    return 0


def finish(plan: Plan, results, out: TextIO, capture_dir: Path | None = None) -> int:
    """Writes the reports and says what was unexpected; the exit code."""
    from harness.repros import generic as repros
    from harness.report import console, problems, writer
    from harness.report.formats.format import RunReport

    args, report_dir = plan.args, plan.report_dir
    problems.assign(results.tests)
    difference = None
    if plan.baseline is not None:
        from harness.report.baseline import difference_between

        difference = difference_between(plan.baseline, results)
        results.baseline = difference.to_json(args.baseline)  # the run's record says what it was compared with
    repro_files = repros.write(results, problems.group(results.tests), report_dir, capture_dir)
    written = writer.write(RunReport(results, difference, args.baseline, repro_files, args.accuracy_csv), report_dir)
    print("", file=out)
    print(console.summary(results, results.run.get("expectations"), repro_files), file=out)
    code = 1 if results.unexpected and args.fail_on == "unexpected" else 0
    if difference is not None:
        print("", file=out)
        print(difference.render(args.baseline), file=out)
        if difference.new_failures or (args.fail_on == "metrics" and difference.metric_regressions):
            code = 1
    if args.accept and plan.expectations_file is not None:
        from harness.run.accept import accept

        changes = accept(plan.expectations_file, results)
        print("", file=out)
        print(changes.render(), file=out)
    print("reports: " + ", ".join(str(path) for path in written), file=out)
    return code
