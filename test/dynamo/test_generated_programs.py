"""Generated programs, eager against the backend under test (differential testing).

``GeneratedProgramTests`` has one test per seed: ``harness.generated.programs.generate(seed)`` builds
a small program of views, in-place writes and aliasing, ``harness.generated.differential`` runs it
eagerly and compiled on identical inputs and compares everything observable. A program
that disagrees is shrunk to the smallest program that still disagrees in the same check;
the failure shows its source, which runs on its own.

How many seeds (the budget): ``DYNAMO_SUITE_GENERATED`` (``run_tests.py --generated N``),
else ``DEFAULT_BUDGET`` in the default tier and ``NIGHTLY_BUDGET`` in the nightly tier.

``FoundProgramTests`` keeps the programs that found real bugs (``found_programs.toml``),
one permanent test each in the nightly tier, whatever the budget; an open bug has an
expectation that cites its upstream issue.
"""

from __future__ import annotations

from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

from harness import BackendTestCase, for_each_backend, settings, tiers
from harness.testcase.deadline import seconds_left
from harness.generated.differential import disagreement, headline, shrink
from harness.generated.programs import Program, generate, parse

BUDGET_ENV = settings.GENERATED
DEFAULT_BUDGET = 16
NIGHTLY_BUDGET = 1000
FOUND_PROGRAMS = Path(__file__).with_name("found_programs.toml")
# Seconds kept back from shrinking for compiling the shrunk program once more and reporting.
RESERVE_S = 8.0
SHRINK_S = 300.0


def budget() -> int:
    value = settings.current().get(BUDGET_ENV) or None
    if value is None:
        return NIGHTLY_BUDGET if tiers.current() == "nightly" else DEFAULT_BUDGET
    if not value.isdigit():
        raise ValueError(f"{BUDGET_ENV}={value!r}: expected a number of programs (0 or more)")
    return int(value)


class ProgramCase(BackendTestCase):
    def check_program(self, program: Program, *, shrink_it: bool = True) -> None:
        message = disagreement(program, self.compile)
        if message is None:
            return
        if not shrink_it:
            self.fail(f"program disagrees with eager: {headline(message)}\n\n{program.source()}\n{message}")
        seconds = seconds_left(SHRINK_S) - RESERVE_S
        small, small_message = shrink(program, self.compile, message, seconds=max(0.0, seconds),
                                      before_each=self.reset_dynamo)
        # Compiled last, with the graphs of the attempts forgotten: the problem's repro holds
        # the shrunk program's graphs only.
        self.reset_dynamo()
        for counter in self._counters:
            counter.clear()
        disagreement(small, self.compile)
        self.fail(f"generated program disagrees with eager: {headline(small_message)}\n"
                  f"shrunk from {len(program.statements)} to {len(small.statements)} statements "
                  f"(seed {program.seed}); it runs on its own:\n\n{small.source()}\n{small_message}")


def _seed_test(seed: int):
    def test(self):
        self.check_program(generate(seed))

    test.__name__ = f"test_seed_{seed:04d}"
    test.__doc__ = f"The generated program of seed {seed}."
    return test


class GeneratedProgramTests(ProgramCase):
    """One generated program per seed, eager against the backend."""


for _seed in range(budget()):
    setattr(GeneratedProgramTests, f"test_seed_{_seed:04d}", _seed_test(_seed))
for_each_backend(GeneratedProgramTests)


def found_programs() -> dict[str, dict]:
    with FOUND_PROGRAMS.open("rb") as handle:
        entries = tomllib.load(handle)["program"]
    return {entry["name"]: entry for entry in entries}


def _found_test(name: str, entry: dict):
    # Nightly: they fail the same way on every backend until upstream fixes them, which is
    # news for the nightly job, not for a backend author's run.
    @tiers.nightly("a known torch.compile frontend bug, the same on every backend")
    def test(self):
        self.check_program(parse(entry["source"]), shrink_it=False)  # stored shrunk

    test.__name__ = f"test_{name}"
    test.__doc__ = entry["cause"]
    return test


class FoundProgramTests(ProgramCase):
    """Generated programs that found real bugs, kept as regression tests."""


for _name, _entry in found_programs().items():
    setattr(FoundProgramTests, f"test_{_name}", _found_test(_name, _entry))
for_each_backend(FoundProgramTests)
