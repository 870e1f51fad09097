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

The programs are ``Kind.VIEWS``, built by ``harness.fuzz.generator.Builder``; what is theirs
is the vocabulary, ``ViewBuilder``: the statements it draws (``STATEMENT_KINDS``, each with
its rule) and the inputs.
"""

from __future__ import annotations

import random
import re

import torch

from harness import compat
from harness.fuzz.generator import Builder, Kind, Program, Statement, defined_name, names_in, shares_memory

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
    "writes through expand views": ("not generated: AOTAutograd replays them as base + (new - base), "
                                    "so NaN and infinities in the base become NaN",
                                    "write_through_expand_loses_nan_and_inf"),
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
# The statements a program is made of: how often each is drawn (its rule is the method of its
# name, ``_view``...), and whether it may run under ``no_grad``.
STATEMENT_KINDS = {"view": (30, False), "alias": (12, False), "compute": (18, True), "write": (34, True),
                   "metadata": (6, False)}
NO_GRAD_SHARE = 0.12
_EXPAND = re.compile(r"\.expand(_as)?\(")


def _same_view(first: torch.Tensor, second: torch.Tensor) -> bool:
    return (shares_memory(first, second) and first.storage_offset() == second.storage_offset()
            and first.shape == second.shape and first.stride() == second.stride())


def _writable(tensor: torch.Tensor) -> bool:
    # A tensor with several elements on one memory location (expand, unfold) has no
    # defined result for a write; eager rejects most such writes but not all of them.
    return tensor.numel() > 0 and compat.no_internal_overlap(tensor)


class ViewBuilder(Builder):
    """The vocabulary of views, writes and aliasing, on float32 inputs that may share memory."""

    kind = Kind.VIEWS
    attempts = 100
    fewest_wanted = 2
    draws_per_statement = 4
    operand_share = 0.75
    numbers = ("2.0", "-1.5", "0.5")

    def __init__(self, rng: random.Random, seed: int) -> None:
        super().__init__(rng, seed)
        # Which inputs carry special values: a stream of its own, so that the statements a
        # seed draws stay the same whether or not its inputs do.
        self.special = random.Random(f"special values {seed}")
        self.base_shapes: dict[str, tuple[int, ...]] = {}
        self.from_as_strided: set[str] = set()
        self.from_expand: set[str] = set()  # expand views, and the views made of them
        self.written: str | None = None  # what the statement drawn last writes into (``_write``)

    @staticmethod
    def stream(seed: int) -> random.Random:
        return random.Random(seed)

    # inputs

    def choose_inputs(self) -> bool:
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
        try:
            self.inputs = dict(zip(self.params, self.program([]).build()[0]()[1]))
        except Exception:
            return False
        self.values = dict(self.inputs)
        return True

    def _input_view(self, shape: tuple[int, ...]) -> str:
        options = [""]
        if len(shape) >= 2:
            options += [".transpose(0, 1)", "[1:]", "[:, ::2]", "[:, 1:]"]
        else:
            options += ["[1:]", "[::2]", "[:-1]"]
        return self.rng.choice(options)

    # statements

    def inputs_sharing(self, tensor: torch.Tensor) -> list[str]:
        return [param for param in self.params if shares_memory(self.inputs[param], tensor)]

    def aliased_inputs(self) -> bool:
        return any(len(self.inputs_sharing(tensor)) > 1 for tensor in self.inputs.values())

    def writable(self, name: str) -> bool:
        """Whether the program may write into ``name``: not into memory with several
        elements on one location, and not where torch.compile's frontend (Dynamo and
        AOTAutograd, which every backend shares) is known to disagree with eager; see
        FRONTEND_LIMITS (a write into an expand view is refused after it is drawn, by
        ``try_statement``)."""
        tensor = self.values[name]
        if not _writable(tensor) or name in self.from_as_strided:
            return False
        return all(not self.inputs[param].requires_grad and len(self.inputs_sharing(self.inputs[param])) == 1
                   for param in self.inputs_sharing(tensor))

    def candidate(self) -> tuple[Statement, bool] | None:
        kind = self.rng.choices(list(STATEMENT_KINDS), [weight for weight, _ in STATEMENT_KINDS.values()])[0]
        self.written = None
        code = getattr(self, f"_{kind}")()
        if code is None:
            return None
        no_grad = STATEMENT_KINDS[kind][1] and self.rng.random() < NO_GRAD_SHARE
        return Statement(code, no_grad), False  # nothing here is judged bit for bit

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

    def _compute(self) -> str | None:
        name = self.pick(lambda name: self.values[name].dtype.is_floating_point)
        if name is None:
            return None
        x, rng = self.values[name], self.rng
        other = self.other_operand(x.shape, x.dtype)
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
        self.written = name
        x, rng = self.values[name], self.rng
        other = self.other_operand(x.shape, x.dtype)
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
            value = self.other_operand(x.shape[1:], x.dtype)
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

    def try_statement(self, statement: Statement, exact: bool) -> bool:
        # A write into an expand view is refused once drawn, not kept from the draw (by
        # ``writable``): the programs that never keep one are drawn as they were before the limit.
        if self.written in self.from_expand:
            return False
        kept = super().try_statement(statement, exact)
        defined = defined_name(statement.code)
        # What as_strided makes, and what is made from it, is never written (FRONTEND_LIMITS).
        if kept and defined and ("as_strided" in statement.code or set(names_in(statement.code)) & self.from_as_strided):
            self.from_as_strided.add(defined)
        # Nor is an expand view, or what shares its memory and is made from it (FRONTEND_LIMITS).
        if kept and defined in self.values and (_EXPAND.search(statement.code) or any(
                shares_memory(self.values[defined], self.values[name])
                for name in set(names_in(statement.code)) & self.from_expand if name in self.values)):
            self.from_expand.add(defined)
        return kept

    def choose_outputs(self) -> tuple[str, ...] | None:
        defined = [name for name in self.values if name.startswith("v")]
        if not defined:
            return None
        everything = list(self.values)
        outputs = [self.rng.choice(defined[-3:])]
        for _ in range(self.rng.choice((0, 0, 1, 2))):
            outputs.append(self.rng.choice(everything))
        return tuple(outputs)


def generate(seed: int) -> Program:
    """The program for ``seed``: the same on every run."""
    return ViewBuilder.generate(seed)
