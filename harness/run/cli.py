"""The command (``dynamo-aot-suite``, or ``python run_tests.py`` in a clone): choose tests,
run them in worker processes, write the reports, say what was unexpected and what changed
since a baseline. Options come from the command line, then the environment, then the
project's ``pyproject.toml`` (harness.project.config).

Exit codes: 0 every result as expected, 1 unexpected results (or new failures against
--baseline), 2 a usage or configuration error -- reported in one line, before any test runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import fnmatch
import os
import platform
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import NoReturn, TextIO

from harness import settings
from harness.axes import device, registry
from harness.axes.axis import AxisError
from harness.measure import share_limit
from harness.project import config, layout
from harness.run import warmup
from harness.testcase import perf, tiers

DEFAULT_REPORT_DIR = "reports"
FAIL_ON = ("unexpected", "regressions", "metrics")

DESCRIPTION = """\
Run dynamo-aot-suite's scenarios against torch.compile backends.

Every scenario runs once per backend (default: eager, aot_eager and inductor), in worker
processes, so a backend that crashes or hangs costs one result, not the run. Results go
to the console and to --report-dir: junit.xml, results.json and report.html.

examples:
  python run_tests.py                                  # everything, all cores
  python run_tests.py --backend my_pkg.compiler:my_backend -k LSTM
  python run_tests.py --backend aot_eager,path/to/mine.py:backend -j 2
  python run_tests.py --baseline reports-yesterday/results.json
  python run_tests.py --tier nightly --op-sweep full     # what the nightly CI job runs
  python run_tests.py --shard 2/3 --report-dir reports/shard2   # one machine of three
  python run_tests.py --merge reports/shard1 reports/shard2 reports/shard3

exit codes: 0 all as expected; 1 unexpected results or new failures against
--baseline; 2 usage or configuration error (one line says what to fix)."""


class UsageError(Exception):
    """Bad input; the message is the one line the user sees."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.command} --help)")


def build_parser(command: str = layout.CLONE_COMMAND) -> argparse.ArgumentParser:
    description = DESCRIPTION.replace(f"{layout.CLONE_COMMAND} ", f"{command} ")
    parser = _Parser(prog=command.split()[-1], description=description,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.command = command
    # Not options: what the run was started with (main sets the project's configuration).
    parser.set_defaults(command=command, project=config.ProjectConfig())
    choose = parser.add_argument_group("what to run")
    _add_axis_option(choose, registry.BACKEND)
    choose.add_argument("-k", dest="patterns", metavar="PATTERN", action="append", default=[],
                        help="run only matching tests (repeatable): a full test id selects exactly that "
                             "test, a glob (* ? [) must match the whole id, anything else is a substring; "
                             "ids look like test.dynamo.test_aot_autograd.LSTMTests_eager.test_lstm")
    choose.add_argument("--shard", metavar="I/N",
                        help="run the I-th of N disjoint parts of equal expected time (I from 1)")
    choose.add_argument("--op-sweep", choices=("quick", "full", "none"),
                        help="the OpInfo operator sweep (test_op_sweep): 'quick' (default) checks about 60 "
                             "ops, 'full' every op in PyTorch's op_db (for nightly runs), 'none' skips it "
                             "(default: $DYNAMO_SUITE_OP_SWEEP, else quick)")
    choose.add_argument("--generated", metavar="N",
                        help="how many generated programs (test_generated_programs: seeded view, mutation "
                             "and aliasing programs, eager against the backend) to run: seeds 0 to N-1 "
                             "(default: $DYNAMO_SUITE_GENERATED, else 16 in the default tier and 1000 in "
                             "the nightly tier)")
    choose.add_argument("--tier", choices=tiers.TIERS,
                        help="'default' runs the scenarios that take seconds; 'nightly' adds the stress "
                             "scenarios (tens of seconds to minutes each), which the default tier reports "
                             "as SKIP; 'smoke' selects a few tests that touch every contract clause "
                             "(harness/testcase/smoke.py), under a tenth of the default tier; 'perf' runs "
                             "only the performance tests: speed-up and peak memory against eager, one worker "
                             "(test/dynamo/test_perf.py, docs/perf.md) (default: $DYNAMO_SUITE_TIER, else default)")
    for axis in registry.other_than_backend():
        _add_axis_option(choose, axis)
    choose.add_argument("--max-eager-share", metavar="F",
                        help="fail a test when one of its compiled calls ran more than this share of its graph's "
                             "compute ops through PyTorch's eager kernels, naming them: 0.2 or 20%% "
                             "(harness/measure/eager_share.py; default: $DYNAMO_SUITE_MAX_EAGER_SHARE, else no limit; "
                             "[[eager_share]] entries in the expectations file set it per backend or test)")
    choose.add_argument("--perf-budget", metavar="S",
                        help="perf tier: seconds of timed rounds per test; fewer when the estimate is tight "
                             "sooner (default: $DYNAMO_SUITE_PERF_BUDGET, else 4)")
    choose.add_argument("--perf-threads", metavar="N",
                        help="perf tier: torch's threads while a test measures (default: "
                             "$DYNAMO_SUITE_PERF_THREADS, else 1)")
    choose.add_argument("--list", action="store_true", help="print the selected test ids and exit")
    choose.add_argument("--expectations", metavar="FILE",
                        help="your project's expected failures and skips, read over the bundled ones (which "
                             "always apply; an entry of yours wins where both match); --accept writes here "
                             "(default: $DYNAMO_SUITE_EXPECTATIONS, else none; in a clone --accept writes to "
                             "harness/expectations.toml)")
    how = parser.add_argument_group("how to run")
    how.add_argument("-j", "--jobs", default="auto", metavar="N",
                     help="worker processes: a number, or 'auto' for one per core, and one in the perf tier, "
                          "whose figures want a quiet machine (default: auto)")
    how.add_argument("--timeout", type=float, metavar="S",
                     help="seconds before any test is stopped as TIMEOUT; 0 for none (default: each test's own "
                          "limit, 30 s + 2x its recorded duration, see --durations; 300 s for tests never recorded)")
    how.add_argument("--rerun-limit", type=int, default=400, metavar="N",
                     help="rerun at most N tests that failed after an earlier failure in their worker, "
                          "in fresh workers, to tell their own failures from collateral damage; 0: no "
                          "reruns (default: 400, more than a default run has tests per backend)")
    how.add_argument("--rerun-time", type=float, default=600.0, metavar="S",
                     help="start no rerun pass later than S seconds after the first (default: 600)")
    how.add_argument("--durations", metavar="FILE",
                     help="earlier results.json (or {id: seconds} map) to order and shard by "
                          "(default: test/durations.json)")
    how.add_argument("-v", "--verbose", action="store_true", help="one line per finished test, also on a terminal")
    out = parser.add_argument_group("reports")
    out.add_argument("--report-dir", default=DEFAULT_REPORT_DIR, metavar="DIR",
                     help=f"where junit.xml, results.json and report.html go (default: ./{DEFAULT_REPORT_DIR})")
    out.add_argument("--baseline", metavar="FILE",
                     help="an earlier results.json: report newly failing, newly passing and changed "
                          "tests; new failures exit 1")
    out.add_argument("--fail-on", choices=FAIL_ON, default="unexpected",
                     help="what exits 1: any unexpected result (default); only tests newly failing against "
                          "--baseline (for a nightly on a torch the expectations do not cover); or those and "
                          "metric regressions against --baseline too (more frames, graph breaks, recompiles, "
                          "graphs or compile time in a test that passed in both; in the perf tier a lower "
                          "speed-up or a higher peak memory)")
    out.add_argument("--accept", action="store_true",
                     help="rewrite the expectations file from this run: add unexpected failures, "
                          "drop entries whose tests now pass")
    out.add_argument("--minify", metavar="TEST_ID",
                     help="run nothing else: shrink TEST_ID's value or gradient mismatch to the smallest graph "
                          "that still disagrees with eager (PyTorch's FX minifier) and write it as a repro to "
                          "--report-dir/repros; give the backend with --backend")
    out.add_argument("--merge", nargs="+", metavar="RESULTS",
                     help="run nothing: combine shard results (results.json files or report dirs) "
                          "into --report-dir")
    return parser


def _add_axis_option(group: argparse._ArgumentGroup, axis) -> None:
    metavar = axis.name.upper() if axis.per_run else f"{axis.name[0].upper()}1,{axis.name[0].upper()}2"
    group.add_argument(axis.option, dest=f"axis_{axis.name}", metavar=metavar,
                       help=f"{axis.help} (default: ${axis.env}, else {axis.default})")


# ------------------------------------------------------------------------------------------
# Checks of the arguments.


def parse_jobs(text: str) -> int:
    if text == "auto":
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"bad -j '{text}': give a number of workers >= 1, or 'auto'")
    return int(text)


def prepare_report_dir(path: str) -> Path:
    report_dir = Path(path)
    try:
        report_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=report_dir):
            pass
    except OSError as error:
        raise UsageError(f"cannot write reports to '{path}' ({error.strerror}); choose another --report-dir")
    return report_dir


# ------------------------------------------------------------------------------------------
# Selection.


def matches(test_id: str, pattern: str, exact_ids: set[str]) -> bool:
    if pattern in exact_ids:
        return test_id == pattern
    if any(char in pattern for char in "*?["):
        return fnmatch.fnmatchcase(test_id, pattern)
    return pattern in test_id


def select(tests: list, patterns: list[str]) -> list:
    if not patterns:
        return tests
    ids = {test.id for test in tests}
    return [test for test in tests if any(matches(test.id, pattern, ids) for pattern in patterns)]


# ------------------------------------------------------------------------------------------
# The run.


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
        project = _load_project()
        parser = build_parser(command)
        parser.set_defaults(**_option_defaults(project), project=project)
        args = parser.parse_args(argv)
        args.argv = list(sys.argv[1:] if argv is None else argv)
        return _main(args, out)
    except UsageError as error:
        print(f"{name}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\n{name}: interrupted; earlier reports left as they were", file=sys.stderr)
        return 130


def _load_project() -> config.ProjectConfig:
    try:
        return config.load()
    except config.ConfigError as error:
        raise UsageError(str(error))


def _option_defaults(project: config.ProjectConfig) -> dict:
    """The options the project's file gives, checked as the command line's would be."""
    defaults = dict(project.options)
    if "timeout" in defaults:
        try:
            defaults["timeout"] = float(defaults["timeout"])
        except ValueError:
            raise UsageError(f"{project.where('timeout')}: '{defaults['timeout']}' is not a number of seconds")
    if defaults.get("fail_on", FAIL_ON[0]) not in FAIL_ON:
        raise UsageError(f"{project.where('fail_on')}: '{defaults['fail_on']}' is not one of {', '.join(FAIL_ON)}")
    return defaults


def _main(args: argparse.Namespace, out: TextIO) -> int:
    jobs = _from_project(args, "jobs", parse_jobs)
    if args.timeout is not None and args.timeout < 0:
        raise UsageError(f"bad --timeout {args.timeout:g}: give seconds >= 0 (0 turns the timeout off)")
    if args.rerun_limit < 0 or args.rerun_time < 0:
        raise UsageError("bad --rerun-limit/--rerun-time: give a number >= 0 (--rerun-limit 0 turns reruns off)")
    shard = _parse_shard(args.shard) if args.shard else None
    if args.fail_on in ("regressions", "metrics") and not args.baseline:
        raise UsageError(f"--fail-on {args.fail_on} needs --baseline FILE to tell what is new")
    report_dir = _from_project(args, "report_dir", prepare_report_dir) if not args.list else None
    baseline = _load_results(args.baseline) if args.baseline else None
    if args.merge:
        return _merge(args, report_dir, out, baseline)
    run_settings = _configure(args)
    # Installed in this process too (the tier, the device... are read through it), and put
    # back afterwards: a test may call main() in-process.
    with settings.using(run_settings):
        return _run_suite(args, run_settings, jobs, shard, report_dir, baseline, out)


def _from_project(args: argparse.Namespace, option: str, check):
    """``check(args.<option>)``, its error prefixed with the project file's line when the
    value came from there."""
    try:
        return check(getattr(args, option))
    except UsageError as error:
        where = args.project.where(option) if getattr(args, option) == args.project.options.get(option) else None
        raise UsageError(f"{where}: {error}" if where else str(error))


def _run_suite(args: argparse.Namespace, run_settings: settings.Settings, jobs: int, shard: tuple[int, int] | None,
               report_dir: Path | None, baseline, out: TextIO) -> int:
    if args.minify:
        return _minify(args, run_settings, report_dir)
    if tiers.current() == tiers.PERF and args.jobs == "auto":
        jobs = 1  # a second worker compiling beside a measurement would be timed too
    with warmup.inductor_toolchain(",".join(registry.selected(registry.BACKEND)), enabled=not args.list):
        collected = _collect(run_settings, args)
        expectations_file = _check_expectations(args, run_settings)
        run_settings = run_settings.replace(**{settings.EXPECTATIONS: str(expectations_file) if expectations_file
                                               else None})
        settings.use(run_settings)
        torch_version, chosen = collected.torch_version, collected.backends
        tests = _choose_tests(collected.tests, args, shard)
        tests, limits_text = _time_limits(tests, args)
    if args.list:
        for test in tests:
            print(test.id, file=out)
        return 0
    shard_text = f"{shard[0]}/{shard[1]}" if shard else None
    if tiers.current() == "smoke":
        from harness.testcase import smoke

        print(smoke.headline({test.scenario for test in tests}), file=out)
    where = "" if device.on_cpu() else f" on device {device.selected_name()}"
    print(f"running {len(tests)} tests on {', '.join(b['spec'] for b in chosen)} with torch {torch_version}{where}, "
          f"{max(1, min(jobs, len(tests)))} worker(s), {limits_text}"
          + (f", shard {shard_text}" if shard_text else ""), file=out, flush=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    clock = time.monotonic()
    # Where workers leave the graphs of failing tests, for the repro files (harness.measure.repro).
    capture = tempfile.TemporaryDirectory(prefix="dynamo-suite-graphs-")
    by_id = _run(tests, jobs, args, run_settings.replace(**{settings.CAPTURE_DIR: capture.name}), out,
                 collected.root)

    from harness.report.results import RunResults

    results = RunResults(
        run={
            "started": started.isoformat(timespec="seconds"),
            "duration_s": round(time.monotonic() - clock, 3),
            "torch": torch_version,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "host": socket.gethostname(),
            "backends": chosen,
            "patterns": args.patterns,
            "op_sweep": run_settings.get(settings.OP_SWEEP, "quick"),
            "generated": run_settings.get(settings.GENERATED) or None,  # null: the tier's budget
            **{axis.record_key: registry.selected(axis)[0] if axis.per_run else list(registry.selected(axis))
               for axis in registry.other_than_backend()},
            "max_eager_share": share_limit.configured_limit(),  # null: none, unless [[eager_share]] entries
            "tier": tiers.current(),
            # What a perf figure depends on beside the code (harness.testcase.perf).
            **({"perf": {"budget_s": perf.budget_s(), "threads": perf.threads(), "cpu": _cpu_name()}}
               if tiers.current() == tiers.PERF else {}),
            "shard": shard_text,
            "jobs": jobs,
            "timeout_s": args.timeout,  # null: each test's own limit (tests[].time_limit_s)
            "rerun_limit": args.rerun_limit,
            "rerun_time_s": args.rerun_time,
            "expectations": str(expectations_file) if expectations_file else None,  # the project's own
            "expectation_files": [str(path) for path in _expectation_files(expectations_file)],  # first match wins
            "command": args.command,  # how reruns and repros start the suite
            "argv": args.argv,
            "cwd": os.getcwd(),
            # What a repro needs to run a scenario as this run did.
            "environment": run_settings.environment(settings.REPRO),
            "complete": True,
        },
        tests=[by_id[test.id] for test in sorted(tests, key=lambda test: test.id)],
    )
    with capture:
        return _finish(args, results, report_dir, out, expectations_file, baseline, Path(capture.name))


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


def _minify(args: argparse.Namespace, run_settings: settings.Settings, report_dir: Path) -> int:
    """In a process of its own: the runner does not import torch."""
    import subprocess

    _collect(run_settings, args)  # a bad --backend or a missing torch stops here, in one line
    with tempfile.TemporaryDirectory(prefix="dynamo-suite-minify-") as directory:
        handed = run_settings.write(Path(directory) / "settings.json")
        done = subprocess.run([sys.executable, "-m", "harness.run.minify", args.minify,
                               "--out", str(report_dir / "repros"), "--settings", str(handed)], cwd=os.getcwd())
    return done.returncode


def _configure(args: argparse.Namespace) -> settings.Settings:
    """The run's settings: the command line over the environment over the project's file,
    each checked here so a mistake stops the run in one line, saying where it was set,
    before anything starts."""
    given = {axis.env: getattr(args, f"axis_{axis.name}") for axis in registry.AXES}
    given.update({settings.OP_SWEEP: args.op_sweep, settings.TIER: args.tier, settings.GENERATED: args.generated,
                  settings.MAX_EAGER_SHARE: args.max_eager_share, settings.EXPECTATIONS: args.expectations,
                  settings.PERF_BUDGET: args.perf_budget, settings.PERF_THREADS: args.perf_threads})
    given = {name: value for name, value in given.items() if value is not None}
    run_settings = settings.Settings(args.project.settings).replace(**settings.from_environment().values).replace(
        **given)

    def at(name: str, message: str) -> str:
        """``message``, after the project file's line when the value of setting ``name``
        came from there (the command line and the environment name themselves)."""
        from_file = name not in given and not settings.from_environment().given(name)
        return f"{args.project.where(name)}: {message}" if from_file and args.project.where(name) else message

    with settings.using(run_settings):
        for axis in registry.AXES:
            try:
                registry.selected(axis)  # a device is checked further where torch is imported (collection)
            except AxisError as error:
                raise UsageError(at(axis.env, f"{axis.option} / {error}"))
        try:
            share_limit.configured_limit()
        except ValueError as error:
            raise UsageError(at(settings.MAX_EAGER_SHARE, f"--max-eager-share / {share_limit.MAX_ENV}: {error}"))
        try:
            tiers.current()
        except tiers.TierError as error:
            raise UsageError(at(settings.TIER, str(error)))
        for name, option, read in ((settings.PERF_BUDGET, "--perf-budget", perf.budget_s),
                                   (settings.PERF_THREADS, "--perf-threads", perf.threads)):
            try:
                read()
            except perf.PerfSettingError as error:
                raise UsageError(at(name, f"{option} / {error}"))
    generated = run_settings.get(settings.GENERATED, "0")
    if not generated.isdigit():
        raise UsageError(at(settings.GENERATED, f"--generated / {settings.GENERATED}={generated!r}: expected a "
                                                "number of programs, 0 or more (e.g. --generated 200)"))
    args.at = at
    # Workers are new processes: they must find the suite's scenarios, and a plugin module
    # the user named in DYNAMO_SUITE_IMPORTS relative to here or to the project's file, just
    # as this one does.
    project_dir = [str(args.project.directory)] if args.project.directory else []
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(
        [str(layout.SUITE_ROOT), os.getcwd(), *project_dir,
         *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]))
    return run_settings


def _check_expectations(args: argparse.Namespace, run_settings: settings.Settings) -> Path | None:
    """The project's own expectations file, if there is one: loaded here with the bundled
    one beneath it, so a malformed file stops the run before any worker starts. (After
    collection: it needs packaging, whose absence the torch check explains better.) Under
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


def _expectation_files(project_file: Path | None) -> list[Path]:
    from harness.testcase import expectations

    return expectations.files(project_file or "")


def _collect(run_settings: settings.Settings, args: argparse.Namespace):
    from harness.run.collection import CollectionError, collect

    try:
        return collect(run_settings)
    except CollectionError as error:
        raise UsageError(args.at(error.setting, str(error)) if error.setting else str(error))


def _choose_tests(collected: list, args: argparse.Namespace, shard: tuple[int, int] | None) -> list:
    """The selected tests of this shard, longest first."""
    from harness.run import shards

    smoke_tier = tiers.current() == "smoke"
    if smoke_tier:
        from harness.testcase import smoke

        # A subset, not a skip list: the other tests are left out of the run and its reports.
        collected = [test for test in collected if test.scenario in smoke.SCENARIOS]
    # The perf tier holds the perf tests alone, and no other tier holds them.
    perf_tier = tiers.current() == tiers.PERF
    collected = [test for test in collected if (test.tier == tiers.PERF) == perf_tier]
    tests = select(collected, args.patterns)
    if not tests:
        tier = tiers.current()
        where, listing = (f" in the {tier} tier", f"--tier {tier} --list") if tier in ("smoke", tiers.PERF) \
            else ("", "--list")
        raise UsageError(f"no test matched -k {' -k '.join(args.patterns)}{where}; "
                         f"{args.command} {listing} shows the ids")
    durations = shards.load_durations(args.durations)
    # Outside its tier a stress scenario only skips: it must not weigh on ordering or shards.
    durations.update({test.id: 0.0 for test in tests if test.tier not in ("default", tiers.current())})
    if shard is not None:
        mine = set(shards.partition([test.id for test in tests], shard[1], durations)[shard[0] - 1])
        tests = [test for test in tests if test.id in mine]
    order = {test_id: index for index, test_id in enumerate(shards.longest_first([t.id for t in tests], durations))}
    return sorted(tests, key=lambda test: order[test.id])


def _time_limits(tests: list, args: argparse.Namespace) -> tuple[list, str]:
    """The tests with their own time limits (unless --timeout sets one), and how the console
    says it."""
    if args.timeout is not None:
        return tests, f"timeout {args.timeout:g} s" if args.timeout else "no timeout"
    from harness.run import shards, timeouts

    limits = timeouts.derive(tests, shards.load_durations(args.durations))
    tests = [dataclasses.replace(test, timeout=limits[test.id][0]) for test in tests]
    seconds = [test.timeout for test in tests] or [0.0]
    return tests, f"time limits {min(seconds):g}-{max(seconds):g} s from recorded durations"


def _run(tests: list, jobs: int, args: argparse.Namespace, run_settings: settings.Settings, out: TextIO,
         root: str) -> dict:
    if not tests:  # a shard can be empty when there are more shards than tests
        return {}
    from harness.run import engine, isolation, timeouts
    from harness.run.progress import Progress

    with tempfile.TemporaryDirectory(prefix="dynamo-suite-") as workdir:
        timeout = args.timeout if args.timeout is not None else timeouts.UNKNOWN
        handed = run_settings.write(Path(workdir) / "settings.json")
        options = engine.EngineOptions(jobs=jobs, timeout=timeout, root=Path(root), workdir=Path(workdir),
                                       settings_file=handed)
        limits = isolation.RerunLimits(tests=args.rerun_limit, seconds=args.rerun_time)
        try:
            return isolation.run(tests, options, lambda count: Progress(count, out, args.verbose), limits, out)
        except engine.EngineError as error:
            raise UsageError(str(error))


def _load_results(path: str):
    from harness.report.results import ResultsError, load

    try:
        return load(path)
    except ResultsError as error:
        raise UsageError(str(error))


def _parse_shard(text: str) -> tuple[int, int]:
    from harness.run.shards import ShardSpecError, parse_shard

    try:
        return parse_shard(text)
    except ShardSpecError as error:
        raise UsageError(str(error))


def _merge(args: argparse.Namespace, report_dir: Path, out: TextIO, baseline) -> int:
    from harness.report.results import ResultsError, merge

    parts = [(source, _load_results(source)) for source in args.merge]
    try:
        merged = merge(parts)
    except ResultsError as error:
        raise UsageError(str(error))
    print(f"merged {len(parts)} result files: {len(merged.tests)} tests", file=out)
    expectations_file = Path(merged.run["expectations"]) if merged.run.get("expectations") else None
    return _finish(args, merged, report_dir, out, expectations_file, baseline)


def _finish(args: argparse.Namespace, results, report_dir: Path, out: TextIO,
            expectations_file: Path | None, baseline, capture_dir: Path | None = None) -> int:
    from harness.report import console, problems, repros, writer

    problems.assign(results.tests)
    difference = None
    if baseline is not None:
        from harness.report.baseline import compare

        difference = compare(baseline, results)
    repro_files = repros.write(results, problems.group(results.tests), report_dir, capture_dir)
    written = writer.write_all(results, report_dir, difference, args.baseline, repro_files)
    print("", file=out)
    print(console.summary(results, results.run.get("expectations"), repro_files), file=out)
    code = 1 if results.unexpected and args.fail_on == "unexpected" else 0
    if difference is not None:
        print("", file=out)
        print(difference.render(args.baseline), file=out)
        if difference.new_failures or (args.fail_on == "metrics" and difference.metric_regressions):
            code = 1
    if args.accept and expectations_file is not None:
        from harness.run.accept import accept

        changes = accept(expectations_file, results)
        print("", file=out)
        print(changes.render(), file=out)
    print("reports: " + ", ".join(str(path) for path in written), file=out)
    return code
