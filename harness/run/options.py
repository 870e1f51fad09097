"""The command line: its options and help, the one-line usage error, the project file's
option defaults, and the checks of the options that need no settings (-j, --report-dir).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import NoReturn

from harness import settings
from harness.axes import registry
from harness.project import config, layout, run_settings

DEFAULT_REPORT_DIR = "reports"
FAIL_ON = ("unexpected", "regressions", "metrics")
UPSTREAM_REPRO_TIMEOUT_S = 300
REDUCE_SECONDS = 60  # per problem (harness.repros.prepare): a few compiles of a slow backend

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
    for setting in run_settings.with_option():
        # Where --help has always listed them: the axes before the eager share, --list before
        # the expectations file.
        if setting.env == settings.MAX_EAGER_SHARE:
            for axis in registry.other_than_backend():
                _add_axis_option(choose, axis)
        if setting.env == settings.EXPECTATIONS:
            choose.add_argument("--list", action="store_true", help="print the selected test ids and exit")
        choose.add_argument(setting.option, choices=setting.choices or None, metavar=setting.metavar, help=setting.help)
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
    out.add_argument("--accuracy-csv", action="store_true",
                     help="also write the model tests as benchmarks/dynamo accuracy CSVs (name,accuracy,graph_breaks), "
                          "one per backend and mode, into --report-dir/accuracy (harness/report/formats/accuracy_csv.py)")
    out.add_argument("--accept", action="store_true",
                     help="rewrite the expectations file from this run: add unexpected failures, "
                          "drop entries whose tests now pass")
    out.add_argument("--minify", metavar="TEST_ID",
                     help="run nothing else: shrink TEST_ID's value or gradient mismatch to the smallest graph "
                          "that still disagrees with eager (PyTorch's FX minifier) and write it as a repro to "
                          "--report-dir/repros; give the backend with --backend")
    out.add_argument("--scoreboard", nargs="+", metavar="RUN",
                     help="run nothing: put runs of different backends side by side (report dirs or results.json "
                          "files, from any machine or torch; a dir with install-failed.json is a backend that did "
                          "not install) as index.html, summary.md and scoreboard.json in --report-dir; with "
                          "--baseline, an earlier scoreboard.json to say what changed per backend (docs/scoreboard.md)")
    out.add_argument("--upstream-reports", nargs="+", metavar="RUN",
                     help="run nothing else: for each problem of each RUN (a report dir), run its repro here, where "
                          "the backend is installed, and write RUN/upstream/<problem>.md, an issue for the backend's "
                          "tracker (title, versions, the repro inline, eager's and the backend's results, the clause), "
                          "and RUN/upstream/README.md, the list (docs/upstream.md); --timeout bounds each repro "
                          f"(default {UPSTREAM_REPRO_TIMEOUT_S} s)")
    out.add_argument("--reduce-seconds", type=float, default=REDUCE_SECONDS, metavar="S",
                     help="with --upstream-reports: how long each problem's plain-torch repro may be reduced (its "
                          "graph by PyTorch's FX minifier, then its inputs and arguments) while it still shows the "
                          f"problem (default {REDUCE_SECONDS:g} s; 0: the graph as the backend received it)")
    out.add_argument("--merge", nargs="+", metavar="RESULTS",
                     help="run nothing: combine shard results (results.json files or report dirs) "
                          "into --report-dir")
    return parser


def _add_axis_option(group: argparse._ArgumentGroup, axis) -> None:
    metavar = axis.name.upper() if axis.per_run else f"{axis.name[0].upper()}1,{axis.name[0].upper()}2"
    group.add_argument(axis.option, dest=f"axis_{axis.name}", metavar=metavar,
                       action=_AddedValues if not axis.per_run else _Once,
                       help=f"{axis.help} (default: ${axis.env}, else {axis.default})")


class _AddedValues(argparse.Action):
    """A list axis given again adds to its values: --backend eager --backend aot_eager is
    --backend eager,aot_eager (argparse would keep the last one alone)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        before = getattr(namespace, self.dest, None)
        setattr(namespace, self.dest, f"{before},{values}" if before else values)


class _Once(argparse.Action):
    """A run-wide axis (one device, one set of compile options) is given once."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        before = getattr(namespace, self.dest, None)
        if before is not None:
            raise argparse.ArgumentError(self, f"given twice ({before}, then {values}): give it once")
        setattr(namespace, self.dest, values)


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
# The project's file, whose options are the defaults of the command line's.


def parse(argv: list[str] | None, command: str) -> argparse.Namespace:
    """The options: the command line's over the project file's, checked by argparse."""
    project = load_project()
    parser = build_parser(command)
    parser.set_defaults(**option_defaults(project), project=project)
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    return args


def load_project() -> config.ProjectConfig:
    try:
        return config.load()
    except config.ConfigError as error:
        raise UsageError(str(error))


def option_defaults(project: config.ProjectConfig) -> dict:
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


def from_project(args: argparse.Namespace, option: str, check):
    """``check(args.<option>)``, its error prefixed with the project file's line when the
    value came from there."""
    try:
        return check(getattr(args, option))
    except UsageError as error:
        where = args.project.where(option) if getattr(args, option) == args.project.options.get(option) else None
        raise UsageError(f"{where}: {error}" if where else str(error))
