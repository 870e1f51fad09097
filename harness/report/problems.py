"""Problems, not tests: unexpected results grouped by what went wrong.

A backend that drops input mutations fails a dozen scenarios with the same check; a
backend that cannot compile one operator fails every scenario that uses it with the same
error. The author wants the handful of causes. Two unexpected results are one problem when
they share

* the backend,
* the outcome (FAIL, ERROR, XPASS, CRASH, TIMEOUT),
* the failed check or the error, as its reason reads with everything that varies between
  scenarios taken out: numbers, addresses, shapes and indexes (``output[1]: requires_grad
  differs from eager`` and ``output: requires_grad differs from eager`` are one check), and
  the names torch generates (Dynamo's size symbols ``s57``, FX's ``arg2_1``, ``primals_3``,
  inductor's ``buf3``); an error is the same whether or not Dynamo wrapped it as the
  backend's compiler's,
* the stage it came from (harness.measure.stages: capture, AOTAutograd, backend compile,
  backend run, check),
* for errors, crashes and timeouts, the innermost frame in the backend's code (file and
  function, not the line, which moves between versions).

What a message names after its core is detail of one test, not a cause: the operator and
operands after "Found in" (FakeTensor's "Please convert all Tensors to FakeTensors first"),
the node after "While executing", the hints torch appends. The reason of each test keeps
them; the problem's signature does not.

Each problem has a stable id (the same problem in tomorrow's run has the same id, so a
baseline comparison can say which problems are new and which are fixed) and a
representative: its simplest test, the one with the fewest compiled graphs, then the
shortest.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from harness import outcomes
from harness.checks import clauses
from harness.measure.stages import BACKEND_COMPILE, BACKEND_RUN, CHECK
from harness.report.results import TestResult

# The suite's own checks say "<what>: <how it differs>"; unittest's assertEqual puts its
# operands first ("True != False : output: requires_grad differs from eager").
_OPERANDS = re.compile(r"^(\w+(?:\.\w+)*: ).*? : (?=\S)")
_WRAPPED = re.compile(r"^the backend's compiler raised ")  # harness/worker/classify.py says so when Dynamo wrapped it
_NORMALIZE = [
    # Generated names, before the numbers in them are: Dynamo's size symbols (s57, u3), FX
    # placeholders and nodes, inductor's buffers and temporaries.
    (re.compile(r"\b(s|u|ps)\d+\b"), r"\1#"),
    (re.compile(r"\barg\d+_\d+\b"), "arg#_#"),
    (re.compile(r"\b(primals_|tangents_|getitem_|buf|tmp)\d+\b"), r"\1#"),
    (re.compile(r"torch\.Size\(\[[^\]]*\]\)"), ""),
    (re.compile(r"\[[^\[\]]*\]"), ""),  # indexes, shapes and lists, innermost first
    (re.compile(r"\[[^\[\]]*\]"), ""),
    (re.compile(r"0x[0-9a-fA-F]+"), "#"),
    (re.compile(r"\bgw\d+\b"), "gw#"),  # the worker that died
    (re.compile(r"(?<![\w.])[-+]?\d+(\.\d+)?([eE][-+]?\d+)?(?![\w])"), "#"),
    (re.compile(r"\(\s*#(\s*,\s*#)*\s*,?\s*\)"), "(#)"),  # sizes as tuples, of any rank: size=(2, 1)
    (re.compile(r"\bsize=\(\s*\)"), "size=(#)"),  # and a 0-dim tensor's
    (re.compile(r"\b(input|output)s\b"), r"\1"),  # "inputs after the call" when a tuple
    (re.compile(r"\bfor(?=\s*:)"), ""),  # "output for [sizes]:" once the sizes are gone
    (re.compile(r"\s+"), " "),
    (re.compile(r"\s+(?=[:,)])"), ""),
]
_WHERE_LINE = re.compile(r":\d+\)$")
# A module inductor (or another compiler) generated, named by its hash under a cache directory:
# the same code in another run, or under another cache, has another path.
_GENERATED_MODULE = re.compile(r"[^\s(]*/\w{2}/\w{40,}\.py")
# A reason cut at its length ends in a fragment whose length follows the numbers before it.
_CUT_OFF = re.compile(r"(;[^;]*|\S*)…$")
_BACKEND_STAGES = (BACKEND_COMPILE, BACKEND_RUN, CHECK)
# Where a message's detail starts: what follows names this test's operator, operands or node,
# or is a hint torch appends to every such error.
_DETAIL = re.compile(r"\s*(\bFound in\b|\bWhile executing\b|\(while checking arguments\b|\bfrom user code\b"
                     r"|\bSet TORCH_LOGS\b|\bYou can suppress this exception\b|\bFor more information\b"
                     r"|\bOriginal traceback\b).*$", re.IGNORECASE)


def signature(reason: str) -> str:
    """The reason without what varies from one scenario to the next."""
    text = _DETAIL.sub("", _OPERANDS.sub(r"\1", _WRAPPED.sub("", _CUT_OFF.sub("", reason.strip()))))
    for pattern, replacement in _NORMALIZE:
        text = pattern.sub(replacement, text)
    return text.strip()


def key(test: TestResult, by_stage: bool = True) -> tuple[str, str, str, str, str]:
    """``by_stage=False`` leaves the stage out: to compare with results recorded before
    stages were (harness.report.baseline)."""
    where = (_GENERATED_MODULE.sub("<generated module>", _WHERE_LINE.sub(")", test.where or ""))
             if outcomes.named(test.outcome).by_where else "")
    stage = (test.stage or "") if by_stage else ""
    return test.column, test.outcome, stage, breach(test) or signature(test.reason), where


def breach(test: TestResult) -> str | None:
    """For a test of a capability the run declared unsupported that the backend did not
    refuse (harness.features.scope), how it broke the refusal contract: one problem per
    capability and way, whatever each test's check or error said (its reason keeps that).
    Failures of Dynamo's capture or AOTAutograd are no refusal to make: they keep their own."""
    if not test.out_of_scope or test.outcome not in ("FAIL", "ERROR") or test.stage not in _BACKEND_STAGES:
        return None
    how = "an answer other than eager's" if test.stage == CHECK else f"an error in {test.stage} that does not name it"
    return f"declared unsupported {', '.join(test.out_of_scope)}, yet {how} instead of a refusal"


def problem_id(test: TestResult, by_stage: bool = True) -> str:
    """``<backend>-<what went wrong, in a few words>-<hash of the whole key>``: stable
    across runs, readable in a file name."""
    backend, outcome, _, text, _ = key(test, by_stage)
    words = re.sub(r"[^a-z0-9]+", "-", f"{outcome} {text.split(': ', 1)[-1]}".lower()).strip("-")[:48].rstrip("-")
    digest = hashlib.sha1("\0".join(key(test, by_stage)).encode()).hexdigest()[:6]
    return f"{re.sub(r'[^A-Za-z0-9_.]+', '_', backend)}-{words}-{digest}"


@dataclass
class Problem:
    id: str
    backend: str
    outcome: str
    signature: str
    where: str
    stage: str = ""  # harness.measure.stages; "" for results recorded before stages were
    tests: list[TestResult] = field(default_factory=list)

    @property
    def clause(self) -> str:
        """The contract clause its failed check enforces (harness/checks/clauses.py)."""
        return clauses.of_problem([test.scenario for test in self.tests], self.outcome, self.signature)

    @property
    def representative(self) -> TestResult:
        return min(self.tests, key=_simplicity)


def _simplicity(test: TestResult) -> tuple:
    """Fewest compiled graphs, then shortest: the test a reader debugs first."""
    metrics = test.metrics or {}
    return metrics.get("graphs", 0) + metrics.get("frames", 0) or float("inf"), test.duration_s, test.id


def group(tests: list[TestResult], by_stage: bool = True) -> list[Problem]:
    """The problems among ``tests``' unexpected results, most tests first."""
    problems: dict[str, Problem] = {}
    for test in tests:
        if not test.unexpected:
            continue
        identifier = problem_id(test, by_stage)
        if identifier not in problems:
            backend, outcome, stage, text, where = key(test, by_stage)
            problems[identifier] = Problem(identifier, backend, outcome, text, where, stage)
        problems[identifier].tests.append(test)
    return sorted(problems.values(), key=lambda problem: (-len(problem.tests), problem.id))


def assign(tests: list[TestResult]) -> None:
    """Record on each unexpected result its problem's id and clause (``problem`` and
    ``clause`` in results.json)."""
    for test in tests:
        test.problem = test.clause = None
    for problem in group(tests):
        for test in problem.tests:
            test.problem, test.clause = problem.id, problem.clause


def by_stage(tests: list[TestResult]) -> dict[str, dict[str, int]]:
    """Per backend column, how many unexpected results came from each stage, in the order of
    harness.measure.stages.STAGES (results recorded without a stage left out)."""
    from harness.measure.stages import STAGES

    counts: dict[str, dict[str, int]] = {}
    for test in tests:
        if test.unexpected and test.stage:
            column = counts.setdefault(test.column, {})
            column[test.stage] = column.get(test.stage, 0) + 1
    return {column: {stage: stages[stage] for stage in STAGES if stage in stages}
            for column, stages in counts.items()}


def stage_line(counts: dict[str, int]) -> str:
    """``backend compile 3, check 12``."""
    return ", ".join(f"{stage} {count}" for stage, count in counts.items())


@dataclass
class Clause:
    """A clause of the contract and the problems that break it."""
    name: str
    problems: list[Problem]

    @property
    def tests(self) -> int:
        return sum(len(problem.tests) for problem in self.problems)

    @property
    def simplest(self) -> Problem:
        """The problem to read first: the one whose representative is simplest."""
        return min(self.problems, key=lambda problem: _simplicity(problem.representative))


def by_clause(problems: list[Problem]) -> list[Clause]:
    """``problems`` under their clauses, the clause with the most tests first; within a
    clause, the simplest problem first, then by tests."""
    grouped: dict[str, list[Problem]] = {}
    for problem in problems:
        grouped.setdefault(problem.clause, []).append(problem)
    result = []
    for name, members in grouped.items():
        first = min(members, key=lambda problem: _simplicity(problem.representative))
        rest = sorted((problem for problem in members if problem is not first),
                      key=lambda problem: (-len(problem.tests), problem.id))
        result.append(Clause(name, [first, *rest]))
    return sorted(result, key=lambda clause: (-clause.tests, clause.name))


# What a problem's behaviour is, as a repro must print it to show that problem and not another.
# A signature names either an error (its type, innermost last, and its message) or a kind of
# difference; a repro shows the problem when it exits 1 and what it printed names the same.
# The kind of difference a check names, most specific first: the repro must print the same kind.
KINDS = ("requires_grad", "dtype", "shape", "stride", "values differ", "grad")
# "grad" is a difference in gradients, not any message with the word ("requires grad", "grad mode").
_KIND_PATTERNS = {each: re.compile(re.escape(each)) for each in KINDS} | {
    "grad": re.compile(r"\bgrad(?:ient)?s? (?:of|differ)")}
_WRAPPERS = {"BackendCompilerFailed", "InternalTorchDynamoError", "TorchRuntimeError"}  # Dynamo's, around the error
_ERROR = re.compile(r"\b(\w+(?:Error|Exception|Failure|Failed))\b:?\s*")
CORE_WORDS = 4  # of the error's message: enough to tell two errors of one type apart, few enough to survive


def kind(signature: str) -> str | None:
    return next((each for each in KINDS if _KIND_PATTERNS[each].search(signature)), None)


def named_error(signature: str) -> tuple[str, str] | None:
    """The innermost error a signature names, Dynamo's wrappers and the suite's own failed
    check (a FAIL's leading AssertionError) aside: (type, message)."""
    text = re.sub(r"^AssertionError: ", "", signature)
    found = [match for match in _ERROR.finditer(text) if match.group(1) not in _WRAPPERS]
    if not found:
        return None
    return found[-1].group(1), text[found[-1].end():]


def _words(text: str) -> list[str]:
    # A message as repr() prints it has its line breaks as two characters: not part of a word.
    return re.findall(r"[a-z]{3,}", text.replace("\\n", " ").lower())


def core(message: str) -> list[str]:
    """The first words of an error's message that do not vary (no numbers, names of its own)."""
    return _words(message)[:CORE_WORDS]


def needs_backward(signature: str) -> bool:
    """The problem shows in the backward: the repro computes gradients too."""
    return bool(_KIND_PATTERNS["grad"].search(signature) or re.search(r"\bbackward\b", signature))


def shown_by(outcome: str, signature: str, output: str) -> bool:
    """Whether ``output``, printed by a repro that exited 1, is the behaviour the problem names."""
    if not output.strip():
        return False
    named = named_error(signature)
    if named is not None and (outcome == "ERROR" or "raised" in signature or kind(signature) is None):
        printed = set(_words(output))
        return named[0] in output and all(word in printed for word in core(named[1]))
    difference = kind(signature)
    return difference is None or difference in output
