"""The run's settings other than the axes, each declared once: how a user gives it (its
command-line option and help, its environment variable, its key in the project's file), how
it is checked, and where it reaches (results.json's run record, the environment a repro is
handed, the command that reruns a test).

Everything else is read off ``SETTINGS``: the command line's options (``harness.run.options``),
the run's configuration and its checks (``harness.run.configure``), the keys of
``[tool.dynamo-aot-suite]`` (``harness.project.config``), the run record
(``harness.run.finish``) and the rerun commands (``harness.report.console``). The axes have
their own declarations (``harness.axes.registry``); the runner's own options (-j, --timeout,
--report-dir...) reach no test and stay with the command line.

Adding a setting is its name in ``harness.settings``, its entry here, and its owner reading
``settings.current().get(NAME)``. Torch-free: the runner and the reports read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from harness import settings
from harness.axes import registry
from harness.features import scope
from harness.measure import share_limit
from harness.testcase import default_tier, perf, tiers


@dataclass(frozen=True)
class Setting:
    env: str  # its name: the environment variable, and its key in harness.settings.Settings
    option: str = ""  # the command-line option; empty: none (the environment or the project's file sets it)
    help: str = ""  # what --help says about the option
    metavar: str | None = None
    choices: tuple[str, ...] = ()  # the only values it takes (argparse's choices too); empty: what `read` allows
    default: str = ""  # its value when nothing gives one
    key: str = ""  # its key in [tool.dynamo-aot-suite]; empty: the file cannot set it
    kind: str = "text"  # how the file gives it: text, list, path, paths or number (harness.project.config)
    # Its owner's reader of the installed settings: the value, checked (what the run record
    # holds); a ValueError's message is the mistake. None: the text, checked against `choices`.
    read: Callable[[], Any] | None = None
    # The one line a mistake reads as; the owner's message may name the variable or the option itself.
    error: str = "{option} / {message}"
    record: str = ""  # its field in results.json's run record; empty: not there
    repro: bool = False  # the record's environment carries it to repros (and --minify's child)
    # A rerun command repeats the run's value when it is not the default: "" for every test, a
    # scenario module's name and a dot ("test_op_sweep.") for its tests only; None: never.
    rerun: str | None = None

    @property
    def dest(self) -> str:
        """Its argparse destination: ``--op-sweep`` -> ``op_sweep``."""
        return self.option.lstrip("-").replace("-", "_")

    def value(self) -> Any:
        """Its value in the installed settings (``harness.settings.current``), checked; a
        ValueError says what is wrong, as ``mistake`` words it."""
        text = settings.current().get(self.env, self.default)
        if self.choices and text not in self.choices:
            raise ValueError(f"{self.env}={text!r}: expected one of {', '.join(self.choices)}")
        return self.read() if self.read else text

    def mistake(self, error: Exception) -> str:
        return self.error.format(option=self.option, env=self.env, message=error)

    def reruns(self, test_id: str) -> bool:
        """Whether the command that reruns ``test_id`` repeats this setting."""
        return self.rerun == "" or self.rerun is not None and test_id.startswith(f"test.dynamo.{self.rerun}")


def _generated() -> str | None:
    """How many generated programs (test/dynamo/test_generated_programs.py); None: the tier's budget."""
    text = settings.current().get(settings.GENERATED)
    if text and not text.isdigit():
        raise ValueError(f"{settings.GENERATED}={text!r}: expected a number of programs, 0 or more "
                         "(e.g. --generated 200)")
    return text or None


# In the order --help lists them (harness.run.options places the axes and --list among them).
SETTINGS: list[Setting] = [
    Setting(settings.OP_SWEEP, "--op-sweep", choices=settings.OP_SWEEP_TIERS, default=settings.OP_SWEEP_TIERS[0],
            key="op-sweep", record="op_sweep", repro=True, rerun="test_op_sweep.",
            help="the OpInfo operator sweep (test_op_sweep): 'quick' (default) checks about 60 "
                 "ops, 'full' every op in PyTorch's op_db (for nightly runs), 'none' skips it "
                 "(default: $DYNAMO_SUITE_OP_SWEEP, else quick)"),
    Setting(settings.GENERATED, "--generated", metavar="N", key="generated", kind="number", read=_generated,
            record="generated", repro=True, rerun="test_generated_programs.",  # its seed may lie past the tier's budget
            help="how many generated programs of each kind (test_generated_programs: seeded "
                 "view, mutation and aliasing programs, and compute programs, eager against the "
                 "backend) to run: seeds 0 to N-1 (default: $DYNAMO_SUITE_GENERATED, else 16 in "
                 "the default tier, and 1000 and 200 in the nightly tier)"),
    # Its mistake has always named only the variable (the option takes no other value).
    Setting(settings.TIER, "--tier", choices=tiers.TIERS, default=tiers.TIERS[0], key="tier", error="{message}",
            record="tier", repro=True, rerun="",
            help="'default' runs the scenarios that take seconds; 'nightly' adds the stress "
                 "scenarios (tens of seconds to minutes each), which the default tier reports "
                 "as SKIP; 'smoke' selects a few tests that touch every contract clause "
                 "(harness/testcase/smoke.py), under a tenth of the default tier; 'perf' runs "
                 "only the performance tests: speed-up and peak memory against eager, one worker "
                 "(test/dynamo/test_perf.py, docs/perf.md) (default: $DYNAMO_SUITE_TIER, else default)"),
    # The default tier's three: recorded in its summary (run.default_tier), which a repro needs
    # none of (it names its test).
    Setting(settings.BUDGET, "--budget", metavar="S", read=lambda: default_tier.seconds(settings.BUDGET),
            help="default tier: the tests that catch the most per second of the backend's time, within S "
                 "seconds of test time per backend (recorded durations; for a backend without any, aot_eager's "
                 "plus --graph-seconds per graph compiled) (default: $DYNAMO_SUITE_BUDGET, else a fifth of "
                 "what the tests harness/default_tier.json names cost the backend)"),
    Setting(settings.TIER_DATA, "--tier-data", metavar="FILE", read=default_tier.load, error="{message}",
            help="default tier: the kill-matrix data to choose it from ('none': no choice, every scenario "
                 "not marked nightly) (default: $DYNAMO_SUITE_TIER_DATA, else harness/default_tier.json)"),
    Setting(settings.GRAPH_SECONDS, "--graph-seconds", metavar="S",
            read=lambda: default_tier.seconds(settings.GRAPH_SECONDS),
            help="for a backend without recorded durations: the seconds it takes to compile a graph, which "
                 "--budget counts and each test's time limit adds per graph (default: "
                 "$DYNAMO_SUITE_GRAPH_SECONDS, else 2 for --budget and nothing for the limits)"),
    Setting(settings.MAX_EAGER_SHARE, "--max-eager-share", metavar="F", key="max-eager-share", kind="number",
            read=share_limit.configured_limit, error="{option} / {env}: {message}", record="max_eager_share",
            repro=True, rerun="",
            help="fail a test when one of its compiled calls ran more than this share of its graph's "
                 "compute ops through PyTorch's eager kernels, naming them: 0.2 or 20%% "
                 "(harness/measure/eager_share.py; default: $DYNAMO_SUITE_MAX_EAGER_SHARE, else no limit; "
                 "[[eager_share]] entries in the expectations file set it per backend or test)"),
    Setting(settings.EAGER_FALLBACK, "--eager-fallback", choices=share_limit.FALLBACK_CHOICES,
            default=share_limit.FALLBACK_CHOICES[0], key="eager-fallback", record="eager_fallback", repro=True,
            rerun="",
            help="a compiled call (or its backward) that ran wholly on PyTorch's eager kernels, a silent "
                 "fallback to eager: 'report' counts them per backend in every run's reports (default), "
                 "'fail' also fails its test, for a backend that compiles everything "
                 "(docs/eager-share.md; default: $DYNAMO_SUITE_EAGER_FALLBACK, else report)"),
    Setting(settings.UNSUPPORTED, "--unsupported", metavar="CAPS", key="unsupported", kind="list",
            read=lambda: list(scope.declared()), error="{option} / {env}: {message}", record="unsupported",
            repro=True,
            help="capabilities your backend does not have, comma-separated (training, float64, "
                 "dynamic-shapes, ...: docs/scope.md): the tests that need one check instead that "
                 "the backend refuses it with an error naming it (REFUSED) or gives eager's answer "
                 "(default: $DYNAMO_SUITE_UNSUPPORTED, else none)"),
    # The perf tier's two: recorded with its figures (run.perf).
    Setting(settings.PERF_BUDGET, "--perf-budget", metavar="S", key="perf-budget", kind="number", read=perf.budget_s,
            repro=True,
            help="perf tier: seconds of timed rounds per test; fewer when the estimate is tight "
                 "sooner (default: $DYNAMO_SUITE_PERF_BUDGET, else 4)"),
    Setting(settings.PERF_THREADS, "--perf-threads", metavar="N", key="perf-threads", kind="number", read=perf.threads,
            repro=True,
            help="perf tier: torch's threads while a test measures (default: "
                 "$DYNAMO_SUITE_PERF_THREADS, else 1)"),
    # Checked after collection (harness.run.configure.with_expectations); recorded as the file
    # checked, and named in a rerun command unless it is the bundled one (harness.report.console).
    Setting(settings.EXPECTATIONS, "--expectations", metavar="FILE", key="expectations", kind="path", repro=True,
            help="your project's expected failures and skips, read over the bundled ones (which "
                 "always apply; an entry of yours wins where both match); --accept writes here "
                 "(default: $DYNAMO_SUITE_EXPECTATIONS, else none; in a clone --accept writes to "
                 "harness/expectations.toml)"),
    # Without an option, checked where the tests are collected (harness.run.collection).
    Setting(settings.IMPORTS, key="imports", kind="list", repro=True),
    Setting(settings.SCENARIOS, key="scenarios", kind="paths", repro=True),
    Setting(settings.MODELS, key="models", kind="paths", repro=True),
]


def with_option() -> list[Setting]:
    return [setting for setting in SETTINGS if setting.option]


def in_project() -> list[Setting]:
    """Those the project's file may set."""
    return [setting for setting in SETTINGS if setting.key]


def recorded() -> list[Setting]:
    """Those results.json's run record holds, under ``record``."""
    return [setting for setting in SETTINGS if setting.record]


def repro_names() -> tuple[str, ...]:
    """What a repro needs, beside the test's own axis values, to run a scenario as the run
    did: the settings it carries and the axes with one value for the whole run."""
    return (*(setting.env for setting in SETTINGS if setting.repro), *(axis.env for axis in registry.per_run()))


def rerun_by(test_id: str) -> list[Setting]:
    """The settings the command that reruns ``test_id`` repeats: those of every test's first,
    then those of its scenario's."""
    return sorted((setting for setting in SETTINGS if setting.reruns(test_id)), key=lambda setting: bool(setting.rerun))

