"""The run's configuration, built once from the options: the settings (the command line over
the environment over the project's file), the workers, the shard, the report folder, the
baseline and the expectations files, each checked so a mistake stops the run in one line,
saying where it was set, before anything starts. The result is a frozen ``Plan``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path

from harness import settings
from harness.axes import registry
from harness.axes.axis import AxisError
from harness.project import layout, run_settings
from harness.run import options, selection
from harness.run.options import UsageError
from harness.testcase import tiers


@dataclasses.dataclass(frozen=True)
class Plan:
    """What one run (or one --merge) does, checked."""

    args: argparse.Namespace  # the options as given: patterns, timeout, fail_on, accept, command, argv...
    jobs: int
    shard: tuple[int, int] | None
    report_dir: Path | None  # None under --list: nothing is written
    baseline: object | None  # the --baseline results, loaded
    settings: settings.Settings | None = None  # None under --merge: nothing runs
    expectations_file: Path | None = None  # the project's own, once checked (after collection)
    expectation_files: tuple[Path, ...] = ()  # every file that applies, the first match winning

    @property
    def shard_text(self) -> str | None:
        return f"{self.shard[0]}/{self.shard[1]}" if self.shard else None

    def at(self, name: str, message: str) -> str:
        return at(self.args, name, message)


def plan(args: argparse.Namespace) -> Plan:
    """The run's plan; a UsageError names the first mistake."""
    jobs = options.from_project(args, "jobs", options.parse_jobs)
    if args.timeout is not None and args.timeout < 0:
        raise UsageError(f"bad --timeout {args.timeout:g}: give seconds >= 0 (0 turns the timeout off)")
    if args.rerun_limit < 0 or args.rerun_time < 0:
        raise UsageError("bad --rerun-limit/--rerun-time: give a number >= 0 (--rerun-limit 0 turns reruns off)")
    shard = _parse_shard(args.shard) if args.shard else None
    if args.fail_on in ("regressions", "metrics") and not args.baseline:
        raise UsageError(f"--fail-on {args.fail_on} needs --baseline FILE to tell what is new")
    if args.upstream_reports:  # written into each run's directory
        return Plan(args, jobs, shard, None, None)
    report_dir = options.from_project(args, "report_dir", options.prepare_report_dir) if not args.list else None
    if args.scoreboard:  # its --baseline is an earlier scoreboard.json, read where it is built
        return Plan(args, jobs, shard, report_dir, None)
    baseline = load_results(args.baseline) if args.baseline else None
    if args.merge:
        return Plan(args, jobs, shard, report_dir, baseline)
    run_settings = _configure(args)
    with settings.using(run_settings):
        if tiers.current() == tiers.PERF and args.jobs == "auto":
            jobs = 1  # a second worker compiling beside a measurement would be timed too
    return Plan(args, jobs, shard, report_dir, baseline, run_settings)


def with_expectations(plan: Plan) -> Plan:
    """The plan with the project's expectations file checked and in its settings. (After
    collection: it needs packaging, whose absence the torch check explains better.)"""
    from harness.testcase import expectations

    chosen = _check_expectations(plan.args, plan.settings)
    return dataclasses.replace(
        plan, expectations_file=chosen, expectation_files=tuple(expectations.files(chosen or "")),
        settings=plan.settings.replace(**{settings.EXPECTATIONS: str(chosen) if chosen else None}))


def at(args: argparse.Namespace, name: str, message: str) -> str:
    """``message``, after the project file's line when the value of setting ``name`` came
    from there (the command line and the environment name themselves)."""
    from_file = name not in _given(args) and not settings.from_environment().given(name)
    return f"{args.project.where(name)}: {message}" if from_file and args.project.where(name) else message


def _given(args: argparse.Namespace) -> dict[str, str]:
    """The settings the command line gives, by environment name."""
    given = {axis.env: getattr(args, f"axis_{axis.name}") for axis in registry.AXES}
    given.update({setting.env: getattr(args, setting.dest) for setting in run_settings.with_option()})
    return {name: value for name, value in given.items() if value is not None}


def _configure(args: argparse.Namespace) -> settings.Settings:
    """The run's settings: the command line over the environment over the project's file,
    each checked here."""
    chosen = settings.Settings(args.project.settings).replace(**settings.from_environment().values).replace(
        **_given(args))
    with settings.using(chosen):
        for axis in registry.AXES:
            try:
                registry.selected(axis)  # a device is checked further where torch is imported (collection)
            except AxisError as error:
                raise UsageError(at(args, axis.env, f"{axis.option} / {error}"))
        for setting in run_settings.SETTINGS:
            try:
                setting.value()
            except ValueError as error:
                raise UsageError(at(args, setting.env, setting.mistake(error)))
    # Workers are new processes: they must find the suite's scenarios, and a plugin module
    # the user named in DYNAMO_SUITE_IMPORTS relative to here or to the project's file, just
    # as this one does.
    project_dir = [str(args.project.directory)] if args.project.directory else []
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(
        [str(layout.SUITE_ROOT), os.getcwd(), *project_dir,
         *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]))
    return chosen


def _check_expectations(args: argparse.Namespace, run_settings: settings.Settings) -> Path | None:
    """The project's own expectations file, if there is one: loaded here with the bundled
    one beneath it, so a malformed file stops the run before any worker starts. Under
    --accept a file named but not yet there is created, and a clone with none writes to the
    bundled file, its own."""
    from harness.testcase import expectations

    given = run_settings.get(settings.EXPECTATIONS)
    project_file = Path(given).resolve() if given else None
    if args.accept and project_file is None:
        if layout.INSTALLED:
            raise UsageError("--accept writes into your project's expectations file: name it with --expectations "
                             "FILE or 'expectations = \"FILE\"' in [tool.dynamo-aot-suite] of pyproject.toml")
        project_file = expectations.DEFAULT_FILE
    if args.accept and not project_file.exists():
        try:
            project_file.write_text(expectations.NEW_FILE_HEADER, encoding="utf-8")
        except OSError as error:
            raise UsageError(f"cannot create {project_file} for --accept ({error.strerror})")
    try:
        expectations.load(project=project_file)
    except expectations.ExpectationError as error:
        raise UsageError(str(error))  # it names the file and line at fault
    return project_file


def _parse_shard(text: str) -> tuple[int, int]:
    try:
        return selection.parse_shard(text)
    except selection.ShardSpecError as error:
        raise UsageError(str(error))


def load_results(path: str):
    """An earlier results.json (--baseline, --merge); a UsageError says why it cannot be read."""
    from harness.report.results import ResultsError, load

    try:
        return load(path)
    except ResultsError as error:
        raise UsageError(str(error))
