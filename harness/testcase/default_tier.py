"""The default tier, chosen by what each test catches: the kill matrix of the conditional
mutants (scripts/mutation_score.py), the features each test covers, the problems real
backends showed in it, and what each test costs on the backend under test.

``harness/default_tier.json`` (scripts/choose_default_tier.py writes it) holds, per
scenario of the nightly pool (``module.Family.test``), the mutants it killed, the features
of the catalogue it covered (harness.features), the ATen operators its graphs called and the
conditions each met (``where: zero-dim-operand``), the real backends' problems it showed, the
graphs it compiled and its recorded seconds per backend. For a backend, the default tier is
a greedy cover of all that: the test that adds the most new kills, conditions and problems
per second of that backend's time first, until no test adds anything or the next would pass
the budget: SHARE of what the scenarios the data names cost that backend (4 %: what is kept
past it is most of the tier). Past it, each mutant of Dynamo
and AOTAutograd, and each of a backend's faults of whole calls (references kept, results
reused or staged, writes lost, hooks dropped), the pool kills is kept by its two cheapest
killers: a regression of the layers the suite is about fails every default run, in two tests
(one may be skipped, or fail for another reason first). For a backend without
recordings (a real backend: OpenVINO's and IREE-Turbine's problems were found so), every
problem a real backend showed is kept in any case, by its cheapest test, on top of the budget;
for eager, aot_eager and inductor such a problem counts as a kill does. Then every feature of
the catalogue a test of the pool shows (a graph of 150 calls), every ATen operator the pool
calls (and for a backend without recordings every kernel variant: ``gelu: approximate=tanh``,
``argmax: keepdim=True``), and tests until the tier runs LINES_WANTED of the lines of PyTorch's
compile stack the pool runs on that backend (scripts/stack_coverage.py measures them): a
regression anywhere the nightly pool reaches fires in the default run too. Last, a test whose
every want the tests taken after it bring again leaves, the costliest first. Every other test of
the pool runs in the nightly tier only: none is deleted, and ``--tier nightly`` runs them all.

With a budget of its own (``--budget SECONDS``, DYNAMO_SUITE_BUDGET), the cover stops at
that many seconds instead, and keeps no problem by force: the most kills per second for a
backend that compiles slowly.
A backend with no recordings of its own (any but eager, aot_eager and inductor) costs, per
test, aot_eager's seconds plus its graphs times ``--graph-seconds`` (DYNAMO_SUITE_GRAPH_SECONDS,
default GRAPH_SECONDS).

A test the file does not name (a new scenario, a project's own) is in the default tier, and so
is a test whose module, class or id plain unittest was given (``python -m unittest
test.dynamo.test_aot_autograd`` runs the module whole), as what ``run_tests.py -k`` names is
(harness.run.selection).
``--tier-data FILE`` (DYNAMO_SUITE_TIER_DATA) chooses from other data; ``none`` from none: the
default tier is then every scenario not marked nightly, as before a choice was made.
Imports no torch.
"""

from __future__ import annotations

import base64
import collections
import functools
import heapq
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from harness import settings

DATA = Path(__file__).resolve().parents[1] / "default_tier.json"
BUDGET_ENV = settings.BUDGET
GRAPH_SECONDS_ENV = settings.GRAPH_SECONDS
TIER_DATA_ENV = settings.TIER_DATA
NO_DATA = "none"
GRAPH_SECONDS = 2.0
# 0.2 until the compile stack's kept mutants (2026-12-06), 0.19 with them; 0.12, 0.08, then
# 0.04, since every ATen operator, the compile-stack lines and two killers of each kept mutant
# are kept past the budget whatever they cost. Those are most of the tier now, and the budget
# is what is left to give: the README's first command ran 1.34 times c1bc596's time cold at
# 0.08 (2026-12-07). Kernel mutants of the 340 the pool kills (eager, aot_eager, inductor):
# 323, 328, 322 at 0.08; 316, 325, 311 at 0.04; 312, 318, 308 at 0.02 (the floor was 309).
SHARE = 0.04
# How many tests of the tier must show each kill and feature before another one showing it
# adds nothing: a second test that kills a mutant meets its condition another way (other ops,
# other values), which is what catches a fault no mutant is. Within the same budget, 2 takes
# more of the cheap tests: aot_eager 119 scenarios instead of 87 in the same 54 s.
REDUNDANCY = 2
# A kernel's condition (an ATen operator under one condition of the catalogue) is wanted from
# one test of the tier and weighs a twentieth of a kill: real backend bugs are one kernel's
# under one condition (``where`` widening with a 0-d operand, ``addmm`` dropping its bias under
# inference mode), which a mutant firing in every kernel under that condition does not tell
# apart. At a quarter of a kill the cover took inductor's costliest op-sweep tests for their
# 60-odd conditions each (the float32 value domains alone compile 77 s cold): the README's
# first run went from 198 s to 310 s cold. The conditions no test meets are the coverage
# gaps a new family fills (the served block, written for addmm under inference mode).
KERNEL = "kernel "
KERNEL_WEIGHT = 0.05
# The lines of PyTorch's compile stack (torch/_dynamo, _functorch, fx, _inductor...: what
# scripts/stack_coverage.py measures each test runs): a regression anywhere the pool runs
# should fire in a test the default tier runs too. Past the budget, the tests that run most of
# the lines the tier misses per second are kept until it runs LINES_WANTED of the pool's; and
# every ATen operator the pool calls is kept by a test that calls it (a kernel bug in an op no
# default test calls never fires by default). The lines are no part of the cover inside the
# budget: at even a ten-thousandth of a kill per line it took 50 to 150 more cheap tests for 3
# points more of the lines, and lost kills (2026-12-06), while the cover of kills alone runs
# 92-94 % of them. A backend the data holds no lines for is judged by LINES_FROM's.
LINES_WANTED = 0.9
LINES_FROM = "aot_eager"
RECORDED = ("eager", "aot_eager", "inductor")
# The modules that mirror PyTorch's own test_aot_autograd.py and test_python_autograd.py: each of
# their families is in every default tier.
SEED_MODULES = ("test_aot_autograd", "test_python_autograd")
# Below this a test's cost counts as this much: what starting any test costs the harness.
SMALLEST_COST_S = 0.05


@dataclass(frozen=True)
class Entry:
    """What the data says of one scenario."""

    kills: frozenset[str]
    covers: frozenset[str]
    shows: frozenset[str]  # "<backend>: <problem>", a real backend's problem this test showed
    graphs: int
    seconds: dict[str, float]  # per recorded backend
    kernels: frozenset[str] = frozenset()  # "<operator>: <condition>" and "<operator>" its graphs met
    # Its kills of the mutants every default tier keeps killers of past the budget (the data's
    # ``kept_mutants``, _keep_killers): Dynamo's and AOTAutograd's, the layers the suite is about,
    # and the backend's faults of whole calls, which the observations of every call catch.
    kept_kills: frozenset[str] = frozenset()
    # Per backend, the blocks of compile-stack lines it runs: (block, lines in it), a block
    # being the lines run by exactly the same scenarios (scripts/stack_coverage.py).
    lines: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)

    def operators(self) -> set[str]:
        """The ATen operators its graphs called (``kernels`` without a condition)."""
        return {name for name in self.kernels if ":" not in name}

    def variants(self) -> set[str]:
        """The kernel variants its graphs called: ``<operator>: <option>=<value>``
        (harness.features.views.argument_variants)."""
        return {name for name in self.kernels if "=" in name}

    def blocks(self, backend: str) -> tuple[tuple[int, int], ...]:
        """Its blocks of compile-stack lines on ``backend`` (LINES_FROM's for one not measured)."""
        return self.lines.get(backend, self.lines.get(LINES_FROM, ()))

    def elements(self) -> set[str]:
        return {*(f"kill {name}" for name in self.kills), *(f"covers {name}" for name in self.covers),
                *(f"shows {name}" for name in self.shows), *(f"{KERNEL}{name}" for name in self.kernels)}

    def cost(self, backend: str, graph_seconds: float) -> float:
        if backend in self.seconds:
            return max(self.seconds[backend], SMALLEST_COST_S)
        return max(self.seconds.get("aot_eager", 1.0) + self.graphs * graph_seconds, SMALLEST_COST_S)


class TierDataError(ValueError):
    """A default_tier.json that cannot be read; the message is one line."""


def data_path() -> str | None:
    """The data the run chooses from (None: no choice)."""
    given = settings.current().get(TIER_DATA_ENV)
    if given == NO_DATA:
        return None
    return given or str(DATA)


def load() -> dict[str, Entry]:
    """The scenarios the data names (none without data: everything is default)."""
    path = data_path()
    if path is not None and settings.current().given(TIER_DATA_ENV) and not Path(path).is_file():
        raise TierDataError(f"--tier-data / {TIER_DATA_ENV}: no file {path} (write one with "
                            "python scripts/choose_default_tier.py, or give none)")
    return read(path) if path is not None else {}


@functools.lru_cache(maxsize=4)
def read(path: str) -> dict[str, Entry]:
    """The scenarios a default-tier file names."""
    if not Path(path).is_file():
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        kept = frozenset(data.get("kept_mutants", ()))
        lines = _lines_by_scenario(data.get("stack_lines", {}))
        return {scenario: Entry(frozenset(entry.get("kills", ())), frozenset(entry.get("covers", ())),
                                frozenset(entry.get("shows", ())), int(entry.get("graphs", 0)),
                                {key: float(value) for key, value in entry.get("seconds", {}).items()},
                                frozenset(entry.get("kernels", ())), frozenset(entry.get("kills", ())) & kept,
                                {backend: tuple(by_scenario.get(scenario, ())) for backend, by_scenario in lines.items()})
                for scenario, entry in data["scenarios"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise TierDataError(f"{path}: not a default-tier file ({error}); rewrite it with "
                            "python scripts/choose_default_tier.py") from None


def encode_blocks(blocks: set[int]) -> str:
    """A set of block numbers as the data keeps it: a bitmap, base64."""
    bits = bytearray((max(blocks) // 8 + 1) if blocks else 0)
    for block in blocks:
        bits[block // 8] |= 1 << (block % 8)
    return base64.b64encode(bytes(bits)).decode("ascii")


def decode_blocks(text: str) -> list[int]:
    bits, found = int.from_bytes(base64.b64decode(text), "little"), []
    while bits:
        lowest = bits & -bits
        found.append(lowest.bit_length() - 1)
        bits ^= lowest
    return found


def _lines_by_scenario(stack_lines: dict[str, Any]) -> dict[str, dict[str, list[tuple[int, int]]]]:
    """backend -> scenario -> its (block, lines) pairs, from the data's ``stack_lines``: per
    backend, each block's lines (``sizes``) and each scenario's blocks (``scenarios``)."""
    return {backend: {scenario: [(block, int(measured["sizes"][block])) for block in decode_blocks(bits)]
                      for scenario, bits in measured["scenarios"].items()}
            for backend, measured in stack_lines.items()}


def choose(entries: dict[str, Entry], backend: str, budget: float | None = None,
           graph_seconds: float = GRAPH_SECONDS) -> list[str]:
    """The default tier of ``backend``: scenarios in the order the cover took them, within
    ``budget`` seconds (None: SHARE of the scenarios' cost, real backends' problems kept)."""
    cost = {scenario: entry.cost(backend, graph_seconds) for scenario, entry in entries.items()}
    shown: collections.Counter[str] = collections.Counter()  # element -> chosen tests showing it
    chosen: list[str] = []
    spent = 0.0
    keep_problems = budget is None and backend not in RECORDED
    complete = budget is None
    if budget is None:
        budget = SHARE * sum(cost.values())

    def take(scenario: str) -> None:
        nonlocal spent
        chosen.append(scenario)
        shown.update(entries[scenario].elements())
        spent += cost[scenario]

    # A problem a real backend showed is kept, for a backend like those: its cheapest test, first.
    if keep_problems:
        for problem in sorted({problem for entry in entries.values() for problem in entry.shows}):
            if not shown[f"shows {problem}"]:
                take(min((scenario for scenario, entry in entries.items() if problem in entry.shows),
                         key=lambda scenario: (cost[scenario], scenario)))
    # The problems are kept on top of the budget, not out of it: they cost a backend without
    # recordings 209 of its 285 s, leaving the cover of kills and conditions 76 s (30 tests).
    budget += spent
    left = {scenario for scenario in entries if scenario not in chosen}
    weighed = {scenario: [(element, KERNEL_WEIGHT, 1) if element.startswith(KERNEL) else (element, 1.0, REDUNDANCY)
                          for element in entries[scenario].elements()] for scenario in left}

    def adds(scenario: str) -> float:
        return sum(weight for element, weight, wanted in weighed[scenario] if shown[element] < wanted)

    # Greedy, lazily: what a test adds only shrinks as others are taken, so a test whose
    # fresh ratio still beats every other's last one is the best (ties: the cheaper, then
    # the later name, as a full pass would take them).
    rank = {scenario: index for index, scenario in enumerate(sorted(left))}
    queue = [(-adds(scenario) / cost[scenario], cost[scenario], -rank[scenario], scenario) for scenario in left]
    heapq.heapify(queue)
    while queue:
        _, price, order, scenario = heapq.heappop(queue)
        gain = adds(scenario)
        if not gain or spent + price > budget:
            continue  # it will add nothing, or fit, later either
        fresh = (-gain / price, price, order, scenario)
        if queue and fresh > queue[0]:
            heapq.heappush(queue, fresh)
            continue
        left.discard(scenario)
        take(scenario)
    # Past the budget, a kept mutant the pool kills (a regression of Dynamo or AOTAutograd, a
    # backend's fault of whole calls): its REDUNDANCY cheapest killers (_keep_killers); then a
    # feature only tests the cover left out show: its cheapest test (a run that meets no index
    # past the end cannot see validation lost, nor one with no graph of 150 calls a backend
    # wrong on big graphs).
    # --budget keeps to itself.
    if complete:
        _keep_killers(entries, cost, left, shown, take)
        # Every family of the seed modules (the documented scenarios: the LSTM, input mutation,
        # duplicated arguments, double backward, grad mode, data_ptr, expand mutation, the
        # Python autograd tape...) runs at least once: its cheapest test.
        families: dict[str, list[str]] = {}
        for scenario in entries:
            module, family, _ = scenario.split(".", 2)
            if module in SEED_MODULES:
                families.setdefault(f"{module}.{family}", []).append(scenario)
        for family, members in sorted(families.items()):
            if not any(member in chosen for member in members):
                cheapest = min(members, key=lambda scenario: (cost[scenario], scenario))
                left.discard(cheapest)
                take(cheapest)
        for feature in sorted({feature for entry in entries.values() for feature in entry.covers} - {
                feature for scenario in chosen for feature in entries[scenario].covers}):
            if not shown[f"covers {feature}"]:
                take(min((scenario for scenario in left if feature in entries[scenario].covers),
                         key=lambda scenario: (cost[scenario], scenario)))
        _keep_reach(entries, cost, left, backend, chosen, take)
        _drop_redundant(entries, cost, backend, chosen)
    return chosen


def _keep_reach(entries: dict[str, Entry], cost: dict[str, float], left: set[str], backend: str,
                chosen: list[str], take: Callable[[str], None]) -> None:
    """Past the budget: every ATen operator the pool calls, for a backend without recordings
    every kernel variant too, then LINES_WANTED of the compile-stack lines it runs, each time the
    test that adds most of what is missing per second, whatever it costs. The variants: such a
    backend implements each variant of a kernel apart, and nothing measures which of them its
    kernels get wrong: 39 of the pool's 207 variants were called by no test of its tier, most by
    one test of the pool; 21 tests more call them, for 78 s. eager, aot_eager and inductor are
    judged by their measured kills; the variants would cost inductor 226 s more (2026-12-07).
    (Within 0.8 of the budget, inductor's tier called 227 of the 234 operators: its last ones are
    called only by tests that compile for 10 to 25 s cold, 2026-12-06.)"""

    def cover(wanted: dict[Any, int], of: Callable[[str], dict], enough: float) -> None:
        have = {key for scenario in chosen for key in of(scenario)}
        total = sum(weight for key, weight in wanted.items())
        missing = {key: weight for key, weight in wanted.items() if key not in have}
        while missing and total - sum(missing.values()) < enough * total:
            gains = {scenario: sum(missing.get(key, 0) for key in of(scenario)) for scenario in left}
            best = max((scenario for scenario in gains if gains[scenario]),
                       key=lambda scenario: (gains[scenario] / cost[scenario], scenario), default=None)
            if best is None:
                return
            left.discard(best)
            take(best)
            for key in of(best):
                missing.pop(key, None)

    cover({name: 1 for entry in entries.values() for name in entry.operators()},
          lambda scenario: dict.fromkeys(entries[scenario].operators(), 1), 1.0)
    if backend not in RECORDED:
        cover({name: 1 for entry in entries.values() for name in entry.variants()},
              lambda scenario: dict.fromkeys(entries[scenario].variants(), 1), 1.0)
    cover({block: size for entry in entries.values() for block, size in entry.blocks(backend)},
          lambda scenario: dict(entries[scenario].blocks(backend)), LINES_WANTED)


def _drop_redundant(entries: dict[str, Entry], cost: dict[str, float], backend: str, chosen: list[str]) -> None:
    """Last, the costliest first: a test whose every kill, feature, problem, kernel condition and
    operator enough other chosen tests show, whose family of the seed modules has another, and
    without whose lines the tier still runs LINES_WANTED of the pool's, leaves. What each stage
    took for its own want is often all brought again by the stages after it (an op's test, kept
    for two operators, then the category's first samples, for thirty): eager's tier lost 13
    tests (2 s of 74), aot_eager's 6, inductor's 13 (13 s of 632 recorded; 2026-12-07)."""
    shown = collections.Counter(element for scenario in chosen for element in entries[scenario].elements())
    runs = collections.Counter(block for scenario in chosen for block, _ in entries[scenario].blocks(backend))
    sizes = {block: size for entry in entries.values() for block, size in entry.blocks(backend)}
    lines, enough = sum(sizes[block] for block in runs), LINES_WANTED * sum(sizes.values())
    families = collections.Counter(scenario.rsplit(".", 1)[0] for scenario in chosen)
    for scenario in sorted(chosen, key=lambda scenario: (-cost[scenario], scenario)):
        entry, family = entries[scenario], scenario.rsplit(".", 1)[0]
        alone = sum(size for block, size in entry.blocks(backend) if runs[block] == 1)
        if any(shown[element] <= (1 if element.startswith(KERNEL) else REDUNDANCY) for element in entry.elements()) \
                or alone and lines - alone < enough \
                or scenario.split(".", 1)[0] in SEED_MODULES and families[family] == 1:
            continue
        chosen.remove(scenario)
        shown.subtract(entry.elements())
        runs.subtract(block for block, _ in entry.blocks(backend))
        lines -= alone
        families[family] -= 1


def _keep_killers(entries: dict[str, Entry], cost: dict[str, float], left: set[str],
                  shown: collections.Counter, take: Callable[[str], None]) -> None:
    """Past the budget: killers of the kept mutants until REDUNDANCY of the chosen tests kill each
    (first one each, then a second), whatever they cost; each time the test that brings the most
    of those still short per second. (Second killers within a fifth of the budget left
    inductor's global-scalar guard and seven more with one killer each, 2026-12-06.)"""
    kept = sorted({name for entry in entries.values() for name in entry.kept_kills})
    for needed in range(1, REDUNDANCY + 1):
        while short := {mutant for mutant in kept if shown[f"kill {mutant}"] < needed
                        and any(mutant in entries[scenario].kept_kills for scenario in left)}:
            best = max((scenario for scenario in left if entries[scenario].kept_kills & short),
                       key=lambda scenario: (len(entries[scenario].kept_kills & short) / cost[scenario], scenario))
            left.discard(best)
            take(best)


def _budget_setting() -> tuple[float | None, float]:
    current = settings.current()
    budget = current.get(BUDGET_ENV)
    graph_seconds = current.get(GRAPH_SECONDS_ENV)
    return (float(budget) if budget else None), (float(graph_seconds) if graph_seconds else GRAPH_SECONDS)


def seconds(name: str) -> float | None:
    """The budget or the graph seconds (``name``), None when not given; a value that is not a
    positive number: ValueError, in one line naming the setting."""
    value = settings.current().get(name)
    try:
        if value and float(value) <= 0:
            raise ValueError
    except ValueError:
        raise ValueError(f"{name}: '{value}' is not a positive number of seconds") from None
    return float(value) if value else None


@functools.lru_cache(maxsize=16)
def _chosen(path: str, backend: str, budget: float | None, graph_seconds: float) -> frozenset[str]:
    return frozenset(choose(read(path), backend, budget, graph_seconds))


def graphs(scenario: str) -> int | None:
    """How many graphs ``scenario`` compiles, as the tier data recorded (None: not recorded)."""
    entry = load().get(scenario)
    return entry.graphs if entry is not None else None


def named_on_the_command_line(test_id: str, argv: list[str] | None = None) -> bool:
    """Whether plain unittest was given this test, its class or its module by name
    (``python -m unittest test.dynamo.test_aot_autograd``, ``python test/dynamo/test_aot_autograd.py``):
    what a user names runs whole, whatever the cover chose; ``discover`` names nothing."""
    argv = sys.argv if argv is None else argv
    names = list(argv[1:]) if argv and "unittest" in argv[0] else list(argv[:1])
    if "discover" in names:  # what follows are folders and patterns to search, not tests
        return False
    for index, name in enumerate(names):
        # An option, or the pattern -k / -p takes: not a name.
        if not name or name.startswith("-") or (index and names[index - 1] in ("-k", "-p")):
            continue
        if name.endswith(".py"):
            name = Path(name).resolve().as_posix()
            root = Path(__file__).resolve().parents[2].as_posix() + "/"
            if not name.startswith(root):
                continue
            name = name[len(root):-len(".py")].replace("/", ".")
        if test_id == name or test_id.startswith(name + "."):
            return True
    return False


def includes(scenario: str, backend: str) -> bool:
    """Whether the default tier of ``backend`` runs ``scenario`` (``module.Family.test``)."""
    entries = load()
    if scenario not in entries:
        return True
    budget, graph_seconds = _budget_setting()
    return scenario in _chosen(data_path(), backend, budget, graph_seconds)


def why(scenario: str, backend: str) -> str:
    """One line: why the default tier leaves ``scenario`` to the nightly tier."""
    entry = load().get(scenario)
    budget, _ = _budget_setting()
    if entry is None:
        return ""
    if budget is not None:
        return f"past the budget of {budget:g} s"
    return (f"what it catches ({len(entry.kills)} mutants killed, {len(entry.covers)} features covered, "
            f"{len(entry.kernels)} kernel conditions met) other tests "
            f"of the default tier catch for less")


def summary(backend: str) -> dict[str, Any]:
    """For the reports: how many scenarios the data names, and the default tier's share."""
    entries = load()
    budget, graph_seconds = _budget_setting()
    chosen = _chosen(data_path(), backend, budget, graph_seconds) if entries else frozenset()
    return {"scenarios": len(entries), "default": len(chosen),
            "seconds": round(sum(entries[name].cost(backend, graph_seconds) for name in chosen), 1),
            "budget_s": budget, **reach(entries, chosen, backend)}


def reach(entries: dict[str, Entry], chosen: Any, backend: str) -> dict[str, Any]:
    """What the chosen scenarios reach of what the pool reaches on ``backend``: ATen operators
    and compile-stack lines (``lines_from``: the backend whose lines the data holds)."""
    operators = {name for entry in entries.values() for name in entry.operators()}
    blocks = {block: size for entry in entries.values() for block, size in entry.blocks(backend)}
    met = {block for scenario in chosen for block, _ in entries[scenario].blocks(backend)}
    measured = next((name for name in (backend, LINES_FROM) if any(entry.lines.get(name) for entry in entries.values())),
                    None)
    return {"operators": [len({name for scenario in chosen for name in entries[scenario].operators()}), len(operators)],
            **({"stack_lines": [sum(blocks[block] for block in met), sum(blocks.values())], "lines_from": measured}
               if measured else {})}
