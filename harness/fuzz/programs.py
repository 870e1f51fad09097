"""Generated programs: small seeded PyTorch functions over views, mutations and aliasing.

A program takes one to three tensor inputs and runs 2-12 statements that take views of
inputs and intermediates (slicing, select, transpose, expand, a dtype view, as_strided,
unbind, split...), write into inputs, views and intermediates (in-place ops, ``copy_``,
assignment through indexing, metadata changes such as ``t_()``), call ops that may return
their input or an alias (``contiguous``, ``reshape``, ``to``, ``dropout`` in eval,
``x + 0``...), mix ``no_grad`` with inputs that require grad, and return outputs that may
alias inputs or each other. The inputs themselves may be views, non-leaf tensors that
require grad, or several views of one storage; about half of those that do not require
grad start with NaN, +inf and -inf.

``generate(seed)`` builds the same program for the same seed. Each statement is chosen
by running the program so far eagerly and looking at the live tensors, so only
statements eager accepts are kept; then the program is kept only if two eager runs agree
bit for bit. Nothing random, and no write whose result depends on the order in which
overlapping memory is written, is ever generated: a disagreement with eager is always the
compiled side's. ``FRONTEND_LIMITS`` lists what is kept out because torch.compile's
frontend itself gets it wrong.
"""

from __future__ import annotations

import ast
import dataclasses
import linecache
import random
import re
import sys
from typing import Any, Callable

import torch

from harness import compat
from harness.checks.compare import weighted_loss

MAX_STATEMENTS = 12
# Real inputs carry NaN and infinities (padding, masked rows, log of zero): this share of the
# inputs that do not require grad start with them, and outputs must have NaN where eager has.
SPECIAL_INPUTS = 0.5
SPECIAL_VALUES = "[float('nan'), float('inf'), -float('inf')]"

# Where torch.compile's frontend (Dynamo and AOTAutograd, shared by every backend) disagrees
# with eager, measured on torch 2.13.0 (about 1 program in 15 before these limits): the
# generator does not go there, so a generated program that disagrees is the backend's
# problem, and eager and aot_eager agree on every generated program. Each limit has a
# found program (test/dynamo/found_programs.toml) that keeps the bug itself visible.
FRONTEND_LIMITS = {
    "dropout in eval mode": ("not generated: it returns its input, and AOTAutograd returns a copy",
                             "dropout_in_eval_returns_its_input"),
    "writes into inputs that share memory": ("not generated: replaying the other inputs' views fails",
                                             "write_into_one_of_three_aliased_inputs"),
    "as_strided": ("only on tensors at storage offset 0, never written through",
                   "as_strided_of_a_mutated_offset_input"),
    "metadata changes in place (t_, unsqueeze_...)": (
        "only on intermediates that do not require grad, in programs whose inputs do not share memory",
        "transpose_in_place_of_an_input, unsqueeze_in_place_with_aliased_inputs"),
    "writes into inputs that require grad": ("not generated: AOTAutograd's backward fails or differs",
                                             "view_taken_before_an_input_that_requires_grad_is_written"),
    "writing a value that requires grad into an input": ("not generated: the backward fails",
                                                         "input_written_with_a_value_that_requires_grad"),
    "views made under no_grad": ("not generated: gradients differ",
                                 "view_made_under_no_grad_returned_beside_a_differentiable_view"),
}
_DEFINES = re.compile(r"(v\d+) = ")
_NAMES = re.compile(r"\b[a-z]\w*\b")


def defined_name(code: str) -> str | None:
    """The variable a statement defines (``v3 = ...``), if any."""
    match = _DEFINES.match(code)
    return match.group(1) if match else None


def names_in(code: str) -> list[str]:
    return _NAMES.findall(code)


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
    # Compute programs (harness/fuzz/compute.py): the values every correct
    # implementation computes bit for bit; None for programs of views and writes.
    exact: tuple[str, ...] | None = None

    def replace(self, **changes: Any) -> "Program":
        return dataclasses.replace(self, **changes)

    @property
    def name(self) -> str:
        return f"{'program' if self.exact is None else 'compute'}_{self.seed:04d}"

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
        exact = "" if self.exact is None else f"EXACT = {self.exact!r}  # values compared bit for bit\n"
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


# -- generating --------------------------------------------------------------------------

def shares_memory(first: torch.Tensor, second: torch.Tensor) -> bool:
    return first.untyped_storage().data_ptr() == second.untyped_storage().data_ptr()


def _same_view(first: torch.Tensor, second: torch.Tensor) -> bool:
    return (shares_memory(first, second) and first.storage_offset() == second.storage_offset()
            and first.shape == second.shape and first.stride() == second.stride())


def _writable(tensor: torch.Tensor) -> bool:
    # A tensor with several elements on one memory location (expand, unfold) has no
    # defined result for a write; eager rejects most such writes but not all of them.
    return tensor.numel() > 0 and compat.no_internal_overlap(tensor)


def _broadcasts_to(source: torch.Tensor, shape: torch.Size) -> bool:
    try:
        return torch.broadcast_shapes(source.shape, shape) == shape
    except RuntimeError:
        return False


class _Builder:
    """Chooses statements one at a time, looking at the tensors the program holds so far."""

    def __init__(self, rng: random.Random, seed: int) -> None:
        self.rng = rng
        self.seed = seed
        # Which inputs carry special values: a stream of its own, so that the statements a
        # seed draws stay the same whether or not its inputs do.
        self.special = random.Random(f"special values {seed}")
        self.setup: list[str] = []
        self.bases: list[str] = []
        self.base_shapes: dict[str, tuple[int, ...]] = {}
        self.params: list[str] = []
        self.statements: list[Statement] = []
        self.values: dict[str, torch.Tensor] = {}
        self.inputs: dict[str, torch.Tensor] = {}  # the parameters as the program received them
        self.from_as_strided: set[str] = set()

    # inputs

    def choose_inputs(self) -> None:
        rng = self.rng
        shapes = [(4, 4), (3, 4), (4,), (2, 3, 4), (4, 2), (6,)]
        for index in range(rng.choice((1, 2, 2, 3))):
            param = "abc"[index]
            if self.bases and rng.random() < 0.3:  # another view of an earlier input's memory
                base = rng.choice(self.bases)
                self.setup.append(f"{param} = {base}{self._input_view(self.base_shapes[base])}")
            else:
                base = f"base{len(self.bases)}"
                shape = rng.choice(shapes)
                grad = rng.random() < 0.4
                self.setup.append(f"{base} = torch.randn({shape}, generator=generator)"
                                  + (".requires_grad_()" if grad else ""))
                if not grad and self.special.random() < SPECIAL_INPUTS:
                    self.setup.append(f"{base}.view(-1)[:3] = torch.tensor({SPECIAL_VALUES})")
                self.bases.append(base)
                self.base_shapes[base] = shape
                kind = rng.random()
                if grad and kind < 0.5:  # a non-leaf that requires grad: it may be mutated
                    self.setup.append(f"{param} = {base}.clone()")
                elif kind < 0.75:
                    self.setup.append(f"{param} = {base}{self._input_view(shape)}")
                else:
                    self.setup.append(f"{param} = {base}")
            self.params.append(param)

    def _input_view(self, shape: tuple[int, ...]) -> str:
        options = [""]
        if len(shape) >= 2:
            options += [".transpose(0, 1)", "[1:]", "[:, ::2]", "[:, 1:]"]
        else:
            options += ["[1:]", "[::2]", "[:-1]"]
        return self.rng.choice(options)

    # statements

    def fresh(self) -> str:
        return f"v{sum(1 for statement in self.statements if _DEFINES.match(statement.code))}"

    def tensors(self, predicate: Callable[[torch.Tensor], bool] = lambda tensor: True) -> list[str]:
        return [name for name, value in self.values.items()
                if isinstance(value, torch.Tensor) and predicate(value)]

    def inputs_sharing(self, tensor: torch.Tensor) -> list[str]:
        return [param for param in self.params if shares_memory(self.inputs[param], tensor)]

    def aliased_inputs(self) -> bool:
        return any(len(self.inputs_sharing(tensor)) > 1 for tensor in self.inputs.values())

    def writable(self, name: str) -> bool:
        """Whether the program may write into ``name``: not into memory with several
        elements on one location, and not where torch.compile's frontend (Dynamo and
        AOTAutograd, which every backend shares) is known to disagree with eager; see
        FRONTEND_LIMITS."""
        tensor = self.values[name]
        if not _writable(tensor) or name in self.from_as_strided:
            return False
        return all(not self.inputs[param].requires_grad and len(self.inputs_sharing(self.inputs[param])) == 1
                   for param in self.inputs_sharing(tensor))

    def pick(self, predicate: Callable[[str], bool] = lambda name: True) -> str | None:
        names = [name for name in self.tensors() if predicate(name)]
        if not names:
            return None
        # Recent values are likelier, so statements build on each other.
        weights = [1 + index for index in range(len(names))]
        return self.rng.choices(names, weights)[0]

    def candidate(self) -> Statement | None:
        kind = self.rng.choices(["view", "alias", "compute", "write", "metadata"], [30, 12, 18, 34, 6])[0]
        code = getattr(self, f"_{kind}")()
        if code is None:
            return None
        no_grad = kind in ("compute", "write") and self.rng.random() < 0.12
        return Statement(code, no_grad)

    def _view(self) -> str | None:
        name = self.pick()
        if name is None:
            return None
        x, rng = self.values[name], self.rng
        options = [f"{name}.unsqueeze(0)", f"{name}[...]", f"{name}.view_as({name})"]
        if x.dim() >= 1 and x.shape[0] >= 2:
            options += [f"{name}[1:]", f"{name}[:-1]", f"{name}[::2]", f"{name}[{rng.randrange(x.shape[0])}]",
                        f"{name}.narrow(0, 1, {x.shape[0] - 1})", f"{name}.unbind(0)[{rng.randrange(x.shape[0])}]",
                        f"{name}.split({rng.randint(1, x.shape[0] - 1)})[0]", f"{name}.chunk(2)[-1]",
                        f"{name}.expand(2, *{name}.shape)"]
        if x.dim() >= 2:
            options += [f"{name}.transpose(0, 1)", f"{name}[:, 1:]", f"{name}.diagonal()", f"{name}.movedim(0, -1)",
                        f"{name}.unbind(1)[0]", f"{name}.split(1, 1)[-1]"]
        if x.dim() == 2:
            options.append(f"{name}.t()")
        if x.is_contiguous():
            options += [f"{name}.view(-1)", f"{name}.flatten()"]
            if x.numel() >= 4 and x.storage_offset() == 0:
                rows = 2
                cols = x.numel() // 2 - 1
                offset = x.storage_offset() + rng.randint(0, 1)
                options += [f"{name}.as_strided(({rows}, {cols}), ({cols}, 1), {offset})",
                            f"{name}.as_strided(({cols}, {rows}), (1, {cols}), {offset})"]
        if x.dtype == torch.float32:
            options += [f"{name}.view(torch.int32)"] * 2
        elif x.dtype == torch.int32:
            options += [f"{name}.view(torch.float32)"] * 3
        return f"{self.fresh()} = {rng.choice(options)}"

    def _alias(self) -> str | None:
        name = self.pick()
        if name is None:
            return None
        x = self.values[name]
        options = [f"{name}.contiguous()", f"{name}.reshape(-1)", f"{name}.reshape({name}.shape)",
                   f"{name}.to({x.dtype})", f"{name}.detach()", f"{name}[:]", f"{name}.clone()",
                   f"{name}.expand_as({name})", f"torch.flatten({name})"]
        if x.dtype.is_floating_point:
            options += [f"{name} + 0", f"{name} * 1", f"{name}.float()", f"{name}.to(torch.float64)"]
        return f"{self.fresh()} = {self.rng.choice(options)}"

    def _other_operand(self, shape: torch.Size, dtype: torch.dtype) -> str:
        names = self.tensors(lambda tensor: tensor.dtype == dtype and _broadcasts_to(tensor, shape))
        if names and self.rng.random() < 0.75:
            return self.rng.choice(names)
        return self.rng.choice(["2.0", "-1.5", "0.5"]) if dtype.is_floating_point else "3"

    def _compute(self) -> str | None:
        name = self.pick(lambda name: self.values[name].dtype.is_floating_point)
        if name is None:
            return None
        x, rng = self.values[name], self.rng
        other = self._other_operand(x.shape, x.dtype)
        options = [f"torch.sin({name})", f"{name}.exp()", f"{name}.relu()", f"{name} * {other}", f"{name} + {other}",
                   f"torch.where({name} > 0, {name}, {other})", f"{name}.abs()", f"{name}.sigmoid()",
                   f"{name} - {other}", f"torch.maximum({name}, torch.as_tensor({other}))"]
        if x.dim() >= 1:
            options += [f"{name}.sum(0)", f"{name}.cumsum(0)", f"torch.cat([{name}, {name}])",
                        f"{name}.sum(-1, keepdim=True)"]
        return f"{self.fresh()} = {rng.choice(options)}"

    def _write(self) -> str | None:
        name = self.pick(self.writable)
        if name is None:
            return None
        x, rng = self.values[name], self.rng
        other = self._other_operand(x.shape, x.dtype)
        if other in self.values and shares_memory(self.values[other], x) and not _same_view(self.values[other], x):
            return None  # reading memory while writing it elsewhere: order-dependent
        if other in self.values and self.values[other].requires_grad and self.inputs_sharing(x):
            return None  # see FRONTEND_LIMITS
        if x.dtype.is_floating_point:
            options = [f"{name}.add_({other})", f"{name}.mul_({other})", f"{name}.copy_({other})", f"{name}.zero_()",
                       f"{name}.fill_({rng.choice(['1.5', '-2.0'])})", f"{name}.clamp_(min=-0.5)", f"{name}.sin_()",
                       f"torch.relu_({name})", f"{name}.div_(2)", f"{name}.neg_()", f"{name} += {other}",
                       f"{name}.lerp_(torch.as_tensor({other}).expand_as({name}), 0.5)",
                       f"{name}.masked_fill_({name} > 0, 0.0)"]
        else:
            options = [f"{name}.add_(1)", f"{name}.bitwise_xor_(5)", f"{name}.mul_(3)", f"{name}.zero_()"]
        if x.dim() >= 1:
            row = rng.randrange(x.shape[0])
            value = self._other_operand(x.shape[1:], x.dtype)
            if not (value in self.values and shares_memory(self.values[value], x)):
                options += [f"{name}[{row}] = {value}", f"{name}[{row}:] += {value if x.shape[0] - row == 1 else '1'}"]
        return rng.choice(options)

    def _metadata(self) -> str | None:
        if self.aliased_inputs():
            return None
        name = self.pick(lambda name: self.values[name].dim() <= 2 and not self.values[name].requires_grad
                         and not self.inputs_sharing(self.values[name]))
        if name is None:
            return None
        x = self.values[name]
        options = [f"{name}.unsqueeze_(0)"]
        if x.dim() == 2:
            options += [f"{name}.t_()", f"{name}.transpose_(0, 1)"]
        if 1 in x.shape:
            options.append(f"{name}.squeeze_()")
        return self.rng.choice(options)

    # running what is chosen so far

    def program(self, statements: list[Statement], outputs: tuple[str, ...] = (), backward: bool = False) -> Program:
        return Program(self.seed, tuple(self.setup), tuple(self.bases), tuple(self.params), tuple(statements),
                       outputs, backward)

    def try_statement(self, statement: Statement) -> bool:
        """Keep ``statement`` if the program with it runs eagerly; refresh ``values``."""
        statements = [*self.statements, statement]
        try:
            make_inputs, function = self.program(statements).build()
            _, args = make_inputs()
            frame = _run_capturing_locals(function, args)
        except Exception:
            return False
        self.statements = statements
        self.inputs = dict(zip(self.params, args))
        self.values = {name: value for name, value in frame.items() if isinstance(value, torch.Tensor)}
        defined = _DEFINES.match(statement.code)
        if defined and ("as_strided" in statement.code or set(_NAMES.findall(statement.code)) & self.from_as_strided):
            self.from_as_strided.add(defined.group(1))
        return True


def _run_capturing_locals(function: Callable, args: list) -> dict[str, Any]:
    """Run ``function``; its local variables as they were when it returned."""
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
    return frame


def generate(seed: int) -> Program:
    """The program for ``seed``: the same on every run."""
    rng = random.Random(seed)
    for _ in range(100):
        builder = _Builder(rng, seed)
        builder.choose_inputs()
        try:
            builder.inputs = dict(zip(builder.params, builder.program([]).build()[0]()[1]))
            builder.values = dict(builder.inputs)
        except Exception:
            continue
        wanted = rng.randint(2, MAX_STATEMENTS)
        for _ in range(wanted * 4):
            if len(builder.statements) == wanted:
                break
            statement = builder.candidate()
            if statement is not None:
                builder.try_statement(statement)
        if len(builder.statements) < 2:
            continue
        program = _with_outputs(builder, rng)
        if program is not None:
            return program
    raise RuntimeError(f"no program found for seed {seed}")


def _with_outputs(builder: _Builder, rng: random.Random) -> Program | None:
    defined = [name for name in builder.values if name.startswith("v")]
    if not defined:
        return None
    everything = list(builder.values)
    outputs = [rng.choice(defined[-3:])]
    for _ in range(rng.choice((0, 0, 1, 2))):
        outputs.append(rng.choice(everything))
    program = builder.program(builder.statements, tuple(outputs), backward=False)
    try:
        run(program)
    except Exception:
        return None
    if any(isinstance(out, torch.Tensor) and out.requires_grad for out in run(program).outputs):
        # Outputs that require grad must be differentiable in eager: a compiled function
        # builds its backward when it is called, and may refuse one eager never runs.
        program = program.replace(backward=True)
        try:
            run(program)
        except Exception:
            return None
    return program if deterministic(program) else None


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
    exact = flags.get("EXACT")
    return Program(seed, setup, bases, tuple(arg.arg for arg in function.args.args), tuple(statements), outputs,
                   backward=bool(flags.get("BACKWARD", False)), exact=None if exact is None else tuple(exact))
