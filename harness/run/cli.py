"""The command (``dynamo-aot-suite``, or ``python run_tests.py`` in a clone): choose tests,
run them in worker processes, write the reports, say what was unexpected and what changed
since a baseline. Options come from the command line, then the environment, then the
project's ``pyproject.toml`` (harness.project.config).

Exit codes: 0 every result as expected, 1 unexpected results (or new failures against
--baseline), 2 a usage or configuration error -- reported in one line, before any test runs.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import NoReturn, TextIO

from harness import settings
from harness.axes import device, registry
from harness.project import layout
from harness.run import configure, finish, options, selection, warmup
from harness.run.configure import Plan
from harness.run.options import UsageError
from harness.testcase import tiers


def _interrupt(signum, frame) -> NoReturn:
    raise KeyboardInterrupt


def console_main() -> int:
    """The installed console command."""
    return main(command=layout.COMMAND)


def main(argv: list[str] | None = None, out: TextIO | None = None, command: str = layout.CLONE_COMMAND) -> int:
    out = out or sys.stdout
    name = command.split()[-1]
    # A CI job that is cancelled sends SIGTERM: stop the workers and keep the old reports,
    # as for Ctrl-C, rather than dying with workers and temporary files left behind.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        return _main(options.parse(argv, command), out)
    except UsageError as error:
        print(f"{name}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\n{name}: interrupted; earlier reports left as they were", file=sys.stderr)
        return 130


def _main(args: argparse.Namespace, out: TextIO) -> int:
    plan = configure.plan(args)
    if args.scoreboard:
        return finish.scoreboard(plan, out)
    if args.merge:
        return finish.merge(plan, out)
    if args.upstream_reports:
        return finish.upstream_reports(plan, out)
    # Installed in this process too (the tier, the device... are read through it), and put
    # back afterwards: a test may call main() in-process.
    with settings.using(plan.settings):
        return _run_suite(plan, out)


def _run_suite(plan: Plan, out: TextIO) -> int:
    args = plan.args
    if args.minify:
        return _minify(plan)
    if not args.list:
        from harness.run import engine

        engine.share_compile_threads(plan.jobs)
    with contextlib.ExitStack() as stack:
        with warmup.inductor_toolchain(",".join(registry.selected(registry.BACKEND)), enabled=not args.list):
            collected = _collect(plan, serve=not args.list)
            stack.callback(collected.close)  # the fork server, once the workers are done
            plan = configure.with_expectations(plan)
            settings.use(plan.settings)
            tests = selection.choose_tests(collected.tests, args, plan.shard)
            tests, limits_text = selection.time_limits(tests, args)
        return _run_collected(plan, collected, tests, limits_text, out)


def _run_collected(plan: Plan, collected, tests: list, limits_text: str, out: TextIO) -> int:
    args = plan.args
    if args.list:
        for test in tests:
            print(test.id, file=out)
        return 0
    if tiers.current() == "smoke":
        from harness.testcase import smoke

        print(smoke.headline({test.scenario for test in tests}), file=out)
    where = "" if device.on_cpu() else f" on device {device.selected_name()}"
    print(f"running {len(tests)} tests on {', '.join(b['spec'] for b in collected.backends)} with torch "
          f"{collected.torch_version}{where}, {max(1, min(plan.jobs, len(tests)))} worker(s), {limits_text}"
          + (f", shard {plan.shard_text}" if plan.shard_text else ""), file=out, flush=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    clock = time.monotonic()
    # Where workers leave the graphs of failing tests, for the repro files (harness.measure.repro).
    capture = tempfile.TemporaryDirectory(prefix="dynamo-suite-graphs-")
    by_id = _run(tests, plan, plan.settings.replace(**{settings.CAPTURE_DIR: capture.name,
                                                       settings.TESTS_CHOSEN: "1"}), out, collected)
    collected.close()
    results = finish.record(plan, collected, tests, by_id, started, time.monotonic() - clock)
    with capture:
        return finish.finish(plan, results, out, Path(capture.name))


def _minify(plan: Plan) -> int:
    """In a process of its own: the runner does not import torch."""
    import subprocess

    _collect(plan)  # a bad --backend or a missing torch stops here, in one line
    with tempfile.TemporaryDirectory(prefix="dynamo-suite-minify-") as directory:
        handed = plan.settings.write(Path(directory) / "settings.json")
        done = subprocess.run([sys.executable, "-m", "harness.run.minify", plan.args.minify,
                               "--out", str(plan.report_dir / "repros"), "--settings", str(handed)], cwd=os.getcwd())
    return done.returncode


def _collect(plan: Plan, serve: bool = False):
    from harness.run.collection import CollectionError, collect

    try:
        return collect(plan.settings, serve=serve)
    except CollectionError as error:
        raise UsageError(plan.at(error.setting, str(error)) if error.setting else str(error))


def _kept_log(workdir: Path, report_dir: Path | None) -> Path:
    """pytest's log out of the run's temporary directory, which is about to go: into the
    report directory, where the message that names it can be followed. The directory the
    log is in after the move."""
    if report_dir is None:
        return workdir
    report_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(workdir / "pytest.log", report_dir / "pytest.log")
    return report_dir


def _run(tests: list, plan: Plan, run_settings: settings.Settings, out: TextIO, collected) -> dict:
    if not tests:  # a shard can be empty when there are more shards than tests
        return {}
    from harness.run import engine, isolation
    from harness.run.progress import Progress

    args = plan.args
    with tempfile.TemporaryDirectory(prefix="dynamo-suite-") as workdir:
        # pytest-timeout's limit for a test without its own; never under the longest of theirs.
        timeout = args.timeout if args.timeout is not None else max(
            [selection.UNKNOWN, *(test.timeout for test in tests if test.timeout)])
        handed = run_settings.write(Path(workdir) / "settings.json")
        server = collected.fork_server
        engine_options = engine.EngineOptions(jobs=plan.jobs, timeout=timeout, root=Path(collected.root),
                                              workdir=Path(workdir), settings_file=handed,
                                              fork_server=server.path if server else None)
        limits = isolation.RerunLimits(tests=args.rerun_limit, seconds=args.rerun_time)
        try:
            return isolation.run(tests, engine_options, lambda count: Progress(count, out, args.verbose), limits, out)
        except engine.EngineError as error:
            raise UsageError(str(error).replace(str(workdir), str(_kept_log(Path(workdir), plan.report_dir))))
