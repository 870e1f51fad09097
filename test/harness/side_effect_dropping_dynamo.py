"""A Dynamo that traces a kind of Python side effect and does not replay it, for the proof of
the Python world watcher (test/proofs/test_python_world_faults.py).

Dynamo records the side effects of a traced frame (SideEffects) and writes bytecode that
applies them after the graph has run (``codegen_update_mutated``). Here the variables of one
kind are left out of that bytecode, as a Dynamo regression losing them would: the graph and
its outputs stay right, only the caller's Python objects keep their old state. Kinds:

- ``containers``: list, deque, dict and set mutations (append, extend, clear, setitem, pop)
- ``attributes``: attributes stored on objects and modules, existing or made in the call
- ``globals``: module globals rebound
- ``cells``: closure cells rebound (``nonlocal``)
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from torch._dynamo import side_effects, variables

KINDS = ("containers", "attributes", "globals", "cells")


def _kind(tracked: side_effects.SideEffects, var: Any) -> str | None:
    if isinstance(var, (variables.ListVariable, variables.lists.DequeVariable, variables.ConstDictVariable,
                        variables.SetVariable)):
        return "containers"
    if isinstance(var, variables.NewGlobalVariable):
        return "globals"
    if isinstance(var, variables.CellVariable):
        return "cells"
    if tracked.is_attribute_mutation(var):
        return "attributes"
    return None


@contextlib.contextmanager
def dropping(*kinds: str) -> Iterator[list[str]]:
    """Within: the side effects of ``kinds`` are not replayed; yields the list of those left
    out (their variables' class names), so a proof can tell the patch did something."""
    if not kinds or set(kinds) - set(KINDS):
        raise ValueError(f"{kinds!r}: choose from {KINDS}")
    original = side_effects.SideEffects.codegen_update_mutated
    dropped: list[str] = []

    def codegen_update_mutated(self: side_effects.SideEffects, cg: Any, *args: Any, **kwargs: Any) -> None:
        modified = type(self)._get_modified_vars

        def kept(tracked: side_effects.SideEffects) -> list[Any]:
            found = modified(tracked)
            dropped.extend(type(var).__name__ for var in found if _kind(tracked, var) in kinds)
            return [var for var in found if _kind(tracked, var) not in kinds]

        self._get_modified_vars = lambda: kept(self)  # this instance, during this codegen only
        try:
            return original(self, cg, *args, **kwargs)
        finally:
            del self._get_modified_vars

    side_effects.SideEffects.codegen_update_mutated = codegen_update_mutated
    try:
        yield dropped
    finally:
        side_effects.SideEffects.codegen_update_mutated = original

