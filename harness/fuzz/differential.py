"""Running a generated program eagerly and compiled, and shrinking one that disagrees.

``disagreement`` runs a ``harness.fuzz.generator.Program`` twice on identical fresh inputs, once
eagerly and once through a compile function, and applies the suite's contract checks to
what each run left behind: outputs (values, shape, dtype, requires_grad), output strides,
which outputs alias which inputs and each other, the inputs after the call (values and
metadata), and the gradients of the leaves. It returns the first difference as a message.

``shrink`` removes statements, outputs and ``no_grad`` blocks (delta debugging: big chunks
first, then single ones) while the program still runs eagerly, eager stays deterministic,
and the compiled run still differs in the same check.
"""

from __future__ import annotations

import functools
import re
import time
import unittest
from typing import Any, Callable

import torch

from harness.checks.compare import assert_close, assert_same_aliasing, assert_same_strides
from harness.errors import innermost
from harness.fuzz import compute
from harness.fuzz.generator import (Kind, Program, Run, RunFailed, Statement, defined_name, deterministic, names_in,
                                    run, shares_memory)

Compile = Callable[[Callable], Callable]
_CHECKER = unittest.TestCase()  # its assert methods raise AssertionError with our messages


def _metadata(tensors: list[torch.Tensor]) -> list[tuple]:
    return [(tuple(t.shape), t.stride(), t.storage_offset(), t.dtype) for t in tensors]


def _aliasing_outputs(result: Run) -> list[torch.Tensor]:
    """The outputs that are views of an input: their layout follows from the input's
    (a view of an intermediate is laid out as that intermediate, which is not fixed)."""
    return [out for out in result.outputs if isinstance(out, torch.Tensor) and out.numel()
            and any(base.numel() and shares_memory(out, base) for base in result.bases)]


def _floats_as_floats(expected: tuple, actual: tuple) -> tuple[tuple, tuple]:
    """Int32 outputs compared as the float32 bits they hold.

    A generated program's only integers are float32 memory viewed as int32 (inputs are
    float32), and a compiled sum may differ from eager's in the last bit: as an integer that
    is a wrong value, as a float it is within tolerance. Only where both sides are int32,
    so a dtype that differs is still reported as such."""
    if len(expected) != len(actual):
        return expected, actual
    pairs = [(want.view(torch.float32), got.view(torch.float32))
             if isinstance(want, torch.Tensor) and isinstance(got, torch.Tensor)
             and want.dtype == got.dtype == torch.int32 else (want, got)
             for want, got in zip(expected, actual)]
    return tuple(want for want, _ in pairs), tuple(got for _, got in pairs)


def assert_same_run(expected: Run, actual: Run) -> None:
    """Raise AssertionError at the first way ``actual`` differs from ``expected``.

    Two checks are looser than the hand-written contract families': the strides of an
    output that is a fresh tensor are not compared (functionalization may lay out an
    intermediate differently, and a generated program makes such outputs everywhere), and
    a gradient eager leaves as None may be all zeros (a compiled function is one autograd
    node over all its inputs).
    """
    assert_close(_CHECKER, *_floats_as_floats(expected.outputs, actual.outputs))
    assert_same_aliasing(_CHECKER, [*expected.bases, *expected.args], expected.outputs,
                         [*actual.bases, *actual.args], actual.outputs)
    assert_same_strides(_CHECKER, _aliasing_outputs(expected), _aliasing_outputs(actual), what="aliasing output")
    assert_close(_CHECKER, expected.bases, actual.bases, what="inputs after the call")
    _CHECKER.assertEqual(_metadata(expected.args), _metadata(actual.args),
                         "inputs after the call: shape, stride, offset or dtype differ from eager")
    for index, (want, got) in enumerate(zip(expected.grads or [], actual.grads or [])):
        if want is None and got is not None and not got.count_nonzero():
            continue
        _CHECKER.assertEqual(want is None, got is None, f"grad of leaf {index}: presence differs from eager")
        if want is not None:
            assert_close(_CHECKER, want, got, what=f"grad of leaf {index}")


def disagreement(program: Program, compile_: Compile) -> str | None:
    """How the compiled run of ``program`` differs from eager (None if it does not)."""
    expected = run(program)
    try:
        actual = run(program, compile_)
    except RunFailed as raised:
        error = innermost(raised.error)
        message = (str(error).strip().splitlines() or [""])[0]
        return f"compiled program raised in {raised.phase} (eager did not): {type(error).__name__}: {message}"
    if program.kind is Kind.COMPUTE:  # judged value by value, exact or rounded
        return compute.judge(program, expected, actual)
    try:
        assert_same_run(expected, actual)
    except AssertionError as failure:
        return str(failure)
    return None


def headline(message: str) -> str:
    """The first line of the check's own message."""
    # unittest puts our message last, after " : " ("[1] != [2] : inputs after the call...").
    ours = message.rsplit(" : ", 1)[-1].strip()
    return ours.splitlines()[0] if ours else ""


def check_of(message: str) -> str:
    """The check a disagreement failed, without indices and numbers: shrinking keeps it."""
    first = headline(message)
    if first.startswith("compiled program raised"):
        first = ":".join(first.split(":", 2)[:2])  # the phase and the error's type
    return re.sub(r"\d+", "#", first)


def _runs_eagerly(program: Program) -> bool:
    try:
        return deterministic(program)
    except Exception:
        return False


def shrink(program: Program, compile_: Compile, message: str, *, attempts: int = 80,
           seconds: float = 120.0, before_each: Callable[[], None] = lambda: None) -> tuple[Program, str]:
    """The smallest program found that still fails ``message``'s check, and its message."""
    wanted = check_of(message)
    deadline = time.monotonic() + seconds
    tried = 0

    def still_fails(candidate: Program) -> str | None:
        nonlocal tried
        if tried >= attempts or time.monotonic() > deadline or not _runs_eagerly(candidate):
            return None
        tried += 1
        before_each()
        try:
            found = disagreement(candidate, compile_)
        except Exception:  # eager raised on this candidate's inputs: not a valid program
            return None
        return found if found is not None and check_of(found) == wanted else None

    best, best_message = program, message
    for field in ("statements", "outputs"):
        best, best_message = _ddmin(best, best_message, field, still_fails)
    # An output may stand for a value computed earlier: return that value instead, so the
    # statements between become removable.
    changed = True
    while changed:
        changed = False
        for candidate in _earlier_outputs(best):
            found = still_fails(candidate)
            if found is not None:
                best, best_message = _ddmin(candidate, found, "statements", still_fails)
                changed = True
                break
    # Then simpler forms of what is left: no unused inputs, no backward, no no_grad blocks.
    simplifications = [functools.partial(_without_input, param=param) for param in program.params]
    simplifications += [lambda p: p.replace(backward=False) if p.backward else None]
    simplifications += [functools.partial(_without_no_grad, index=index) for index in range(len(best.statements))]
    for simplify in simplifications:
        candidate = simplify(best)
        found = still_fails(candidate) if candidate is not None else None
        if found is not None:
            best, best_message = candidate, found
    return best, best_message


def _earlier_outputs(program: Program) -> list[Program]:
    """The program with one output replaced by a value its defining statement reads."""
    candidates = []
    for index, output in enumerate(program.outputs):
        defining = [statement for statement in program.statements if defined_name(statement.code) == output]
        if not defining:
            continue
        read = [name for name in dict.fromkeys(names_in(defining[0].code.split(" = ", 1)[1]))
                if name in program.params or re.fullmatch(r"v\d+", name)]
        for name in read:
            candidates.append(program.replace(outputs=program.outputs[:index] + (name,) + program.outputs[index + 1:]))
    return candidates


def _without_input(program: Program, param: str) -> Program | None:
    """The program without parameter ``param`` (and its base, if nothing else views it),
    when no statement or output reads it."""
    used = {name for statement in program.statements for name in names_in(statement.code)} | set(program.outputs)
    if param in used or param not in program.params or len(program.params) == 1:
        return None
    setup = [line for line in program.setup if not line.startswith(f"{param} = ")]
    bases = [base for base in program.bases
             if any(base in names_in(line.split(" = ", 1)[-1]) for line in setup if names_in(line)[0] != base)]
    # A line that writes into a base (``base0.view(-1)[:3] = ...``) goes with it.
    setup = [line for line in setup if names_in(line)[0] not in set(program.bases) - set(bases)]
    return program.replace(params=tuple(name for name in program.params if name != param), setup=tuple(setup),
                           bases=tuple(bases))


def _without_no_grad(program: Program, index: int) -> Program | None:
    statement = program.statements[index]
    if not statement.no_grad:
        return None
    return program.replace(statements=program.statements[:index] + (Statement(statement.code),)
                           + program.statements[index + 1:])


def _defined(program: Program, statements: tuple[Statement, ...]) -> tuple[str, ...]:
    """The outputs still defined when only ``statements`` are left."""
    names = set(program.params) | {defined_name(statement.code) for statement in statements}
    return tuple(name for name in program.outputs if name in names)


def _ddmin(program: Program, message: str, field: str, still_fails: Callable[[Program], str | None]) -> tuple[Program, str]:
    """Remove chunks of ``field`` (halves, then quarters... then single items) while the
    program still fails; removing a statement also removes the outputs it defined."""
    items: tuple[Any, ...] = getattr(program, field)
    chunk = max(1, len(items) // 2)
    while chunk >= 1 and items:
        removed_any = False
        start = 0
        while start < len(items):
            kept = items[:start] + items[start + chunk:]
            candidate = program.replace(**{field: kept})
            if field == "statements":
                candidate = candidate.replace(outputs=_defined(program, kept))
            found = still_fails(candidate)
            if found is not None:
                program, items, message, removed_any = candidate, kept, found, True
            else:
                start += chunk
        if not removed_any:
            chunk //= 2
    return program, message
