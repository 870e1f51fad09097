"""What every program generator shares: the program, its kind, running it, and the builder.

A ``Program`` is a small PyTorch function with the inputs it runs on, written as a
self-contained module (``Program.source``, read back by ``parse``). Its ``Kind`` says which
generator made it and so how it is judged against eager: ``VIEWS`` (``harness.fuzz.programs``:
views, writes and aliasing, judged by the suite's contract checks) or ``COMPUTE``
(``harness.fuzz.compute``: values, exact ones bit for bit, the others within tolerance).

``Builder`` makes a program for a seed: it draws inputs, then statements one at a time,
keeping each only if the program with it runs eagerly (and the generator accepts what it
computed), then outputs, and keeps the program only if two eager runs agree bit for bit. A
generator is a subclass that brings its vocabulary: how it draws inputs (``choose_inputs``),
a statement (``candidate``), and outputs (``choose_outputs``), and a few numbers.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import linecache
import random
import re
import sys
import warnings
from typing import Any, Callable, ClassVar

import torch

from harness.checks.compare import weighted_loss

MAX_STATEMENTS = 12
_DEFINES = re.compile(r"(v\d+) = ")
_NAMES = re.compile(r"\b[a-z]\w*\b")


def defined_name(code: str) -> str | None:
    """The variable a statement defines (``v3 = ...``), if any."""
    match = _DEFINES.match(code)
    return match.group(1) if match else None


def names_in(code: str) -> list[str]:
    return _NAMES.findall(code)


class Kind(enum.Enum):
    """Which generator made a program, and so how it is judged against eager."""

    # The values are the prefixes of the programs' function names, as they were before kinds
    # had names: found programs and reports carry them.
    VIEWS = "program"  # views, writes and aliasing: the contract checks (harness.fuzz.differential)
    COMPUTE = "compute"  # values: exact ones bit for bit, rounded ones within tolerance (harness.fuzz.compute)


@dataclasses.dataclass(frozen=True)
class Statement:
    code: str  # one line of Python
    no_grad: bool = False  # run under ``with torch.no_grad():``

    def lines(self) -> list[str]:
        return ["with torch.no_grad():", "    " + self.code] if self.no_grad else [self.code]


@dataclasses.dataclass(frozen=True)
class Program:
    seed: int
    setup: tuple[str, ...]  # the body of make_inputs(): builds the bases and the arguments
    bases: tuple[str, ...]  # every tensor the arguments' memory belongs to
    params: tuple[str, ...]  # the program's parameters, built by setup under the same names
    statements: tuple[Statement, ...]
    outputs: tuple[str, ...]
    backward: bool  # whether eager can run backward through the outputs
    kind: Kind
    # The values every correct implementation computes bit for bit (compute programs;
    # a program of views and writes declares none).
    exact: tuple[str, ...] = ()

    def replace(self, **changes: Any) -> "Program":
        return dataclasses.replace(self, **changes)

    @property
    def name(self) -> str:
        return f"{self.kind.value}_{self.seed:04d}"

    def inputs_source(self) -> str:
        # On the default device: the run's (harness/axes/device.py), the CPU in a repro file.
        body = [f"generator = torch.Generator(torch.get_default_device()).manual_seed({self.seed})", *self.setup,
                f"return [{', '.join(self.bases)}], [{', '.join(self.params)}]"]
        return "def make_inputs():\n" + "".join(f"    {line}\n" for line in body)

    def function_source(self) -> str:
        body = [line for statement in self.statements for line in statement.lines()]
        body.append(f"return ({''.join(f'{name}, ' for name in self.outputs)})")
        return (f"def {self.name}({', '.join(self.params)}):\n"
                + "".join(f"    {line}\n" for line in body))

    def source(self) -> str:
        """The program as a self-contained Python module (needs only torch)."""
        backward = "True  # backward through the outputs that require grad" if self.backward else "False"
        # The EXACT line is what tells a compute program's source from a views one (``parse``).
        exact = f"EXACT = {self.exact!r}  # values compared bit for bit\n" if self.kind is Kind.COMPUTE else ""
        return (f"import torch\n\nBACKWARD = {backward}\n{exact}\n\n{self.inputs_source()}\n\n"
                f"{self.function_source()}")

    def build(self) -> tuple[Callable[[], tuple[list, list]], Callable[..., tuple]]:
        """(make_inputs, the program's function), compiled from the source."""
        text = self.source()
        # A filename per source, kept in linecache: tracebacks and Dynamo show the lines.
        filename = f"<generated {self.name} {abs(hash(text)):x}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        namespace: dict[str, Any] = {"torch": torch}
        exec(compile(text, filename, "exec"), namespace)
        return namespace["make_inputs"], namespace[self.name]


def parse(source: str, seed: int = 0) -> Program:
    """The Program a ``Program.source()`` text describes (found programs are stored so)."""
    module = ast.parse(source)
    functions = [node for node in module.body if isinstance(node, ast.FunctionDef)]
    make_inputs = next(node for node in functions if node.name == "make_inputs")
    function = next(node for node in functions if node.name != "make_inputs")
    *body, returned = make_inputs.body
    setup = tuple(ast.get_source_segment(source, node) for node in body
                  if not (isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "generator"))
    seeds = [node for node in ast.walk(make_inputs) if isinstance(node, ast.Call)
             and getattr(node.func, "attr", "") == "manual_seed"]
    if seeds:
        seed = ast.literal_eval(seeds[0].args[0])
    bases, params = (tuple(element.id for element in listed.elts) for listed in returned.value.elts)
    statements = []
    for node in function.body[:-1]:
        if isinstance(node, ast.With):
            statements += [Statement(ast.get_source_segment(source, inner), no_grad=True) for inner in node.body]
        else:
            statements.append(Statement(ast.get_source_segment(source, node)))
    outputs = tuple(element.id for element in function.body[-1].value.elts)
    flags = {node.targets[0].id: ast.literal_eval(node.value) for node in module.body
             if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
    kind = Kind.COMPUTE if "EXACT" in flags else Kind.VIEWS
    return Program(seed, setup, bases, tuple(arg.arg for arg in function.args.args), tuple(statements), outputs,
                   backward=bool(flags.get("BACKWARD", False)), kind=kind, exact=tuple(flags.get("EXACT", ())))


# -- running eagerly ---------------------------------------------------------------------

@dataclasses.dataclass
class Run:
    """What one run of a program produced: outputs, the inputs' memory and metadata after
    the call, and the gradients of the leaves (``None`` without a backward)."""

    args: list[torch.Tensor]
    bases: list[torch.Tensor]
    outputs: tuple
    grads: list[torch.Tensor | None] | None


class RunFailed(Exception):
    """A run raised: in ``phase`` ("the call" or "backward"), with ``error``."""

    def __init__(self, phase: str, error: BaseException) -> None:
        super().__init__(f"{phase}: {type(error).__name__}: {error}")
        self.phase, self.error = phase, error


def run(program: Program, compile_: Callable[[Callable], Callable] | None = None) -> Run:
    """Run ``program`` on fresh inputs, eagerly or through ``compile_``, and its backward
    (a weighted loss over the outputs that require grad) if ``program.backward``."""
    make_inputs, function = program.build()
    bases, args = make_inputs()
    try:
        outputs = (compile_(function) if compile_ else function)(*args)
    except Exception as error:
        raise RunFailed("the call", error) from error
    grads = None
    loss = weighted_loss(outputs) if program.backward else None
    if loss is not None:
        try:
            loss.backward()
        except Exception as error:
            raise RunFailed("backward", error) from error
        grads = [base.grad for base in bases if base.requires_grad]
    return Run(args, bases, outputs, grads)


def _bitwise_equal(first: Any, second: Any) -> bool:
    if isinstance(first, torch.Tensor):
        return (isinstance(second, torch.Tensor) and first.shape == second.shape and first.dtype == second.dtype
                and first.stride() == second.stride()
                and bool(torch.equal(first.detach().nan_to_num(0.0), second.detach().nan_to_num(0.0))))
    if isinstance(first, (list, tuple)):
        return len(first) == len(second) and all(_bitwise_equal(a, b) for a, b in zip(first, second))
    return first == second


def deterministic(program: Program) -> bool:
    """Whether two eager runs agree bit for bit (outputs, inputs after, gradients)."""
    first, second = run(program), run(program)
    return all(_bitwise_equal(getattr(first, field), getattr(second, field))
               for field in ("outputs", "bases", "args", "grads"))


def run_capturing_locals(program: Program, prepare: Callable[[list], list] | None = None) -> tuple[list, dict[str, Any]]:
    """Run ``program`` eagerly on fresh inputs (passed through ``prepare`` first, if given):
    the arguments it was called with, and its local variables as they were when it returned."""
    make_inputs, function = program.build()
    _, args = make_inputs()
    if prepare is not None:
        args = prepare(args)
    frame: dict[str, Any] = {}

    def tracer(frame_, event, arg):
        if event == "return" and frame_.f_code is function.__code__:
            frame.update(frame_.f_locals)

    previous = sys.getprofile()
    sys.setprofile(tracer)
    try:
        function(*args)
    finally:
        sys.setprofile(previous)
    return args, frame


def shares_memory(first: torch.Tensor, second: torch.Tensor) -> bool:
    return first.untyped_storage().data_ptr() == second.untyped_storage().data_ptr()


def broadcasts_to(source: torch.Tensor, shape: torch.Size) -> bool:
    try:
        return torch.broadcast_shapes(source.shape, shape) == shape
    except RuntimeError:
        return False


# -- building ----------------------------------------------------------------------------

class Builder:
    """Chooses a program's statements one at a time, looking at the tensors it holds so far.

    A generator subclasses it with its vocabulary: ``choose_inputs``, ``candidate`` and
    ``choose_outputs``, ``accepts`` where it is choosier than eager, and the numbers below.
    The draws of one seed come from one stream in a fixed order: pinned seeds (test ids,
    expectations, found programs) keep their programs only while that order stays.
    """

    kind: ClassVar[Kind]
    attempts: ClassVar[int]  # programs begun for a seed before it is given up
    fewest_wanted: ClassVar[int]  # the fewest statements a program is drawn to want (up to MAX_STATEMENTS)
    draws_per_statement: ClassVar[int]  # candidates drawn per statement wanted
    operand_share: ClassVar[float]  # how often a second operand is a tensor the program holds rather than a number
    numbers: ClassVar[tuple[str, ...]]  # the floating numbers a second operand may be instead

    def __init__(self, rng: random.Random, seed: int) -> None:
        self.rng, self.seed = rng, seed
        self.setup: list[str] = []
        self.bases: list[str] = []
        self.params: list[str] = []
        self.statements: list[Statement] = []
        self.values: dict[str, torch.Tensor] = {}  # the live tensors, parameters first, by name
        self.inputs: dict[str, torch.Tensor] = {}  # the parameters as the program received them
        self.exact: set[str] = set()  # the values every correct implementation computes bit for bit

    @staticmethod
    def stream(seed: int) -> random.Random:
        """The random stream of ``seed``'s program (each generator has its own)."""
        raise NotImplementedError

    # what a generator brings

    def choose_inputs(self) -> bool:
        """Draw the inputs (``setup``, ``bases``, ``params``) and fill ``values``; False if
        eager cannot make them."""
        raise NotImplementedError

    def candidate(self) -> tuple[Statement, bool] | None:
        """A statement and whether its value is exact, or None when the draw fits no value."""
        raise NotImplementedError

    def accepts(self, statement: Statement, program: Program, frame: dict[str, Any], exact: bool) -> bool:
        """Whether to keep ``statement``, which eager ran (``frame``: the locals of ``program``,
        the program with it)."""
        return True

    def choose_outputs(self) -> tuple[str, ...] | None:
        raise NotImplementedError

    def check_backward(self, program: Program) -> None:
        """Raise if what the generator does with ``program``, which has a backward, fails."""

    # shared by the vocabularies

    def fresh(self) -> str:
        """The name of the next value a statement defines."""
        return f"v{sum(1 for statement in self.statements if defined_name(statement.code))}"

    def tensors(self, predicate: Callable[[torch.Tensor], bool] = lambda tensor: True) -> list[str]:
        return [name for name, value in self.values.items()
                if isinstance(value, torch.Tensor) and predicate(value)]

    def pick(self, predicate: Callable[[str], bool] = lambda name: True) -> str | None:
        names = [name for name in self.tensors() if predicate(name)]
        if not names:
            return None
        # Recent values are likelier, so statements build on each other.
        weights = [1 + index for index in range(len(names))]
        return self.rng.choices(names, weights)[0]

    def other_operand(self, shape: torch.Size, dtype: torch.dtype) -> str:
        """A second operand for a value of ``shape`` and ``dtype``: a tensor of that dtype the
        program holds that broadcasts to it, or a number."""
        names = self.tensors(lambda tensor: tensor.dtype == dtype and broadcasts_to(tensor, shape))
        if names and self.rng.random() < self.operand_share:
            return self.rng.choice(names)
        if dtype == torch.bool:
            return "True"
        return self.rng.choice(self.numbers) if dtype.is_floating_point else "3"

    def program(self, statements: list[Statement], outputs: tuple[str, ...] = (), backward: bool = False) -> Program:
        return Program(self.seed, tuple(self.setup), tuple(self.bases), tuple(self.params), tuple(statements),
                       outputs, backward, self.kind, exact=tuple(sorted(self.exact)))

    def try_statement(self, statement: Statement, exact: bool) -> bool:
        """Keep ``statement`` if the program with it runs eagerly and the generator accepts
        it; refresh ``values``."""
        statements = [*self.statements, statement]
        program = self.program(statements)
        try:
            args, frame = run_capturing_locals(program)
        except Exception:
            return False
        if not self.accepts(statement, program, frame, exact):
            return False
        self.statements = statements
        self.inputs = dict(zip(self.params, args))
        self.values = {name: frame[name] for name in [*self.params, *(defined_name(s.code) for s in statements)]
                       if isinstance(frame.get(name), torch.Tensor)}
        if exact:
            self.exact.add(defined_name(statement.code))
        return True

    def with_outputs(self) -> Program | None:
        """The program with outputs, and a backward where eager can run one; None unless eager
        runs it and two runs agree bit for bit."""
        outputs = self.choose_outputs()
        if outputs is None:
            return None
        program = self.program(self.statements, outputs)
        try:
            if any(isinstance(out, torch.Tensor) and out.requires_grad for out in run(program).outputs):
                # Outputs that require grad must be differentiable in eager: a compiled function
                # builds its backward when it is called, and may refuse one eager never runs.
                program = program.replace(backward=True)
                run(program)
                self.check_backward(program)
            return program if deterministic(program) else None
        except Exception:
            return None

    @classmethod
    def generate(cls, seed: int) -> Program:
        """The program for ``seed``: the same on every run."""
        with warnings.catch_warnings():  # eager's warnings on the candidates it runs (var of one value...)
            warnings.simplefilter("ignore")
            rng = cls.stream(seed)
            for _ in range(cls.attempts):
                builder = cls(rng, seed)
                if not builder.choose_inputs():
                    continue
                wanted = rng.randint(cls.fewest_wanted, MAX_STATEMENTS)
                for _ in range(wanted * cls.draws_per_statement):
                    if len(builder.statements) == wanted:
                        break
                    chosen = builder.candidate()
                    if chosen is not None:
                        builder.try_statement(*chosen)
                if len(builder.statements) < 2:
                    continue
                program = builder.with_outputs()
                if program is not None:
                    return program
        raise RuntimeError(f"no {cls.kind.name.lower()} program found for seed {seed}")
