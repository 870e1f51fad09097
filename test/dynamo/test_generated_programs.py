"""Generated programs, eager against the backend under test (differential testing).

``GeneratedProgramTests`` has one test per seed: ``harness.fuzz.programs.generate(seed)`` builds
a small program of views, in-place writes and aliasing, ``harness.fuzz.differential`` runs it
eagerly and compiled on identical inputs and compares everything observable. A program
that disagrees is shrunk to the smallest program that still disagrees in the same check;
the failure shows its source, which runs on its own.

``GeneratedComputeTests`` does the same with ``harness.fuzz.compute.generate(seed)``:
programs that compute (pointwise, reductions, indexing, products, normalization, shape
ops, conversions) on inputs from the value domains, judged bit for bit where eager is
exact. A failure also says on which other kinds of input values the same program
disagrees, so a backend author sees the class of the bug, not one instance.

How many seeds (the budget): ``DYNAMO_SUITE_GENERATED`` (``run_tests.py --generated N``,
N of each kind), else ``DEFAULT_BUDGET`` in the default tier and ``NIGHTLY_BUDGET`` (views)
and ``NIGHTLY_COMPUTE_BUDGET`` in the nightly tier.

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
from harness import compute, differential, generator, programs, seconds_left

BUDGET_ENV = settings.GENERATED
DEFAULT_BUDGET = 16
NIGHTLY_BUDGET = 1000
# A compute program costs a backend like inductor a code generation each (3 to 10 s cold):
# the nightly spends 200 of them (inductor on torch 2.13 disagrees on 15, harness/expectations.toml).
NIGHTLY_COMPUTE_BUDGET = 200
FOUND_PROGRAMS = Path(__file__).with_name("found_programs.toml")
# Seconds kept back from shrinking for compiling the shrunk program once more and reporting.
RESERVE_S = 8.0
SHRINK_S = 300.0


def budget(nightly: int = NIGHTLY_BUDGET) -> int:
    value = settings.current().get(BUDGET_ENV) or None
    if value is None:
        return nightly if tiers.current() == "nightly" else DEFAULT_BUDGET
    if not value.isdigit():
        raise ValueError(f"{BUDGET_ENV}={value!r}: expected a number of programs (0 or more)")
    return int(value)


class ProgramCase(BackendTestCase):
    def check_program(self, program: generator.Program, *, shrink_it: bool = True) -> None:
        message = differential.disagreement(program, self.compile)
        if message is None:
            return
        if not shrink_it:
            self.fail(f"program disagrees with eager: {differential.headline(message)}\n\n{program.source()}\n"
                      f"{message}")
        seconds = seconds_left(SHRINK_S) - RESERVE_S
        small, small_message = differential.shrink(program, self.compile, message, seconds=max(0.0, seconds),
                                                   before_each=self.reset_dynamo)
        # Compiled last, with the graphs of the attempts forgotten: the problem's repro holds
        # the shrunk program's graphs only.
        self.reset_dynamo()
        for counter in self._counters:
            counter.clear()
        differential.disagreement(small, self.compile)
        self.fail(f"generated program disagrees with eager: {differential.headline(small_message)}\n"
                  f"shrunk from {len(program.statements)} to {len(small.statements)} statements "
                  f"(seed {program.seed}){self._domains(small)}; it runs on its own:\n\n{small.source()}\n"
                  f"{small_message}")

    def _domains(self, program: generator.Program) -> str:
        """For a compute program: the kinds of input values it also disagrees on (its
        inputs redrawn from each value domain; the same shapes, so no new compile)."""
        if program.kind is not generator.Kind.COMPUTE:
            return ""
        found = {}
        for domain, variant in compute.redrawn(program):
            try:
                found[domain] = differential.disagreement(variant, self.compile) is not None
            except Exception:  # eager rejects these values: the kind does not apply
                continue
        failing = [domain for domain, failed in found.items() if failed]
        return f"; with inputs of each kind of value it disagrees on: {', '.join(failing) or 'none'}" \
               f" (of {', '.join(found)})"


def _seed_test(seed: int):
    def test(self):
        self.check_program(programs.generate(seed))

    test.__name__ = f"test_seed_{seed:04d}"
    test.__doc__ = f"The generated program of seed {seed}."
    return test


class GeneratedProgramTests(ProgramCase):
    """One generated program per seed, eager against the backend."""


for _seed in range(budget()):
    setattr(GeneratedProgramTests, f"test_seed_{_seed:04d}", _seed_test(_seed))
for_each_backend(GeneratedProgramTests)


def _compute_test(seed: int):
    def test(self):
        self.check_program(compute.generate(seed))

    test.__name__ = f"test_seed_{seed:04d}"
    test.__doc__ = f"The generated compute program of seed {seed}."
    return test


class GeneratedComputeTests(ProgramCase):
    """One generated compute program per seed, eager against the backend."""


for _seed in range(budget(NIGHTLY_COMPUTE_BUDGET)):
    setattr(GeneratedComputeTests, f"test_seed_{_seed:04d}", _compute_test(_seed))
for_each_backend(GeneratedComputeTests)


def found_programs() -> dict[str, dict]:
    with FOUND_PROGRAMS.open("rb") as handle:
        entries = tomllib.load(handle)["program"]
    return {entry["name"]: entry for entry in entries}


def _found_test(name: str, entry: dict):
    # Nightly: they fail until upstream fixes them (the frontend's on every backend, a
    # bundled backend's on that one), which is news for the nightly job, not for a backend
    # author's run.
    @tiers.nightly("a known torch.compile bug, kept as a regression test")
    def test(self):
        self.check_program(generator.parse(entry["source"]), shrink_it=False)  # stored shrunk

    test.__name__ = f"test_{name}"
    test.__doc__ = entry["cause"]
    return test


class FoundProgramTests(ProgramCase):
    """Generated programs that found real bugs, kept as regression tests."""


for _name, _entry in found_programs().items():
    setattr(FoundProgramTests, f"test_{_name}", _found_test(_name, _entry))
for_each_backend(FoundProgramTests)
