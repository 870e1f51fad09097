"""A reference against a compiled callable, each run on fresh copies of the same inputs.

The variants' replays (harness/axes/second_size.py, harness/axes/automatic_dynamic.py) run
code again at sizes a scenario never used, where the only reference is the code itself run
eagerly. Here is the comparison they share: outputs, inputs after the call (mutations) and
the gradients of a weighted loss, each run on its own copies of the inputs (an input given
twice stays one object; one that was not a leaf stays a non-leaf), inside the global state
the code was compiled for.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import torch

from harness.checks import accuracy, compare


def repeats(fn: Callable, inputs: list[Any], leaves: list[bool], state: Callable[[], Any]) -> bool:
    """Whether ``fn`` runs on fresh copies of ``inputs`` (inside ``state()``) and gives the
    same result twice: one that raises, or draws random numbers, cannot be a reference (two
    implementations of random ops cannot be compared)."""
    try:
        with state():
            first = fn(*_fresh(inputs, leaves)[0])
            again = fn(*_fresh(inputs, leaves)[0])
    except Exception:
        return False
    return compare.identical(first, again)


def compare_runs(testcase, reference: Callable, compiled: Callable, inputs: list[Any], leaves: list[bool],
                 state: Callable[[], Any]) -> None:
    """``compiled`` against ``reference`` on copies of ``inputs``, each run inside ``state()``
    (the global state the code was compiled for; code that changes it, such as grad mode,
    does not leave it changed for the other run): outputs, inputs after the call
    (mutations), and the gradients of a weighted loss w.r.t. inputs that require grad, a
    gradient missing on either side a failure. Each leaf by its own rule
    (compare.assert_close), floating values that miss their tolerance judged against the
    reference run in float64 (harness/checks/accuracy.py)."""
    expected = run(reference, inputs, leaves, state)
    actual = run(compiled, inputs, leaves, state)
    assert_same_results(testcase, expected, actual,
                        functools.cache(lambda: run(reference, accuracy.in_float64(inputs), leaves, state)))


def assert_same_results(testcase, expected: tuple, actual: tuple, truth: Callable[[], tuple], where: str = "") -> None:
    """Two runs' results (``run``) compared as compare_runs does; ``truth``: the reference's
    run in float64, computed only where a value misses its tolerance; ``where`` prefixes
    each message (which call, which thread)."""
    for index, what in enumerate(("output", "inputs after the call", "gradients")):
        what = f"{where}{what}"
        if index == 2:
            testcase.assertEqual(
                expected[2] is None, actual[2] is None,
                f"{what}: presence differs from eager (the outputs of one run require grad, of the other not)")
            if expected[2] is None:
                continue
        compare.assert_close(testcase, expected[index], actual[index], what=what,
                             reference=lambda index=index: truth()[index])


def run(fn: Callable, inputs: list[Any], leaves: list[bool], state: Callable[[], Any]) -> tuple:
    """One run on fresh copies: (outputs, inputs after the call, gradients of the weighted
    loss, or None when there are none)."""
    args, grad_leaves = _fresh(inputs, leaves)
    with state():
        outputs = list(_as_sequence(fn(*args)))
    loss = compare.weighted_loss(outputs)
    if loss is None or not (grad_leaves and loss.requires_grad):
        return outputs, args, None
    return outputs, args, list(torch.autograd.grad(loss, grad_leaves, allow_unused=True))


def _fresh(inputs: list[Any], leaves: list[bool]) -> tuple[list[Any], list[torch.Tensor]]:
    """Copies of ``inputs`` for one run, and the leaves whose gradients it computes. An input
    that was not a leaf (an intermediate the code may mutate in place) is passed as a
    non-leaf copy of its leaf; an input given twice is copied once."""
    args, grad_leaves, copies = [], [], {}
    for value, was_leaf in zip(inputs, leaves):
        if id(value) in copies:
            args.append(copies[id(value)])
            continue
        if not isinstance(value, torch.Tensor) or not value.requires_grad:
            copy = compare.clone_input(value)
        else:
            leaf = compare.clone_input(value)
            grad_leaves.append(leaf)
            copy = leaf if was_leaf else leaf.clone()
        copies[id(value)] = copy
        args.append(copy)
    return args, grad_leaves



def _as_sequence(outputs: Any) -> Any:
    # A captured graph returns a tuple; what a backend returns for it may be a list.
    return outputs if isinstance(outputs, (tuple, list)) else (outputs,)
