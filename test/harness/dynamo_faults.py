"""Dynamo faults of the state a compiled function's own code sets up, as context managers:
what a torch nightly that lost them would do, for test/proofs/test_hook_and_default_faults.py.
test/harness/hookless_dynamo.py and unguarded_defaults_dynamo.py switch each on for a whole
run (``DYNAMO_SUITE_IMPORTS``), as the other patched Dynamos do.

- ``drops_tensor_hooks``: ``tensor.register_hook(fn)`` inside compiled code is accepted and
  forgotten. Dynamo keeps such a hook in ``TensorVariable._method_register_hook``: on an
  intermediate as a ``register_hook`` node of the graph (AOTAutograd's trace registers it and
  the joint graph holds its effect), on an input as a pending side effect that the bytecode
  after the graph replays. Replaced here by a handle alone: no node, no side effect, and no
  graph break where the hook could not be traced (which would have run it eagerly).
- ``unguarded_defaults``: no guard on a default a called function reads
  (``fn.__defaults__[i]``, ``fn.__kwdefaults__[name]``, sources of kind ``DefaultsSource``):
  the graph keeps the default it was traced with after the user rebinds it.

Every result of a program without such hooks or defaults is still right.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator


@contextlib.contextmanager
def drops_tensor_hooks() -> Iterator[None]:
    from torch._dynamo import variables
    from torch._dynamo.variables.base import ValueMutationNew
    from torch._dynamo.variables.tensor import TensorVariable

    original = TensorVariable.__dict__["_method_register_hook"]

    def forget(self: Any, tx: Any, name: str, hook: Any) -> Any:
        return variables.RemovableHandleVariable(mutation_type=ValueMutationNew())

    TensorVariable._method_register_hook = forget
    try:
        yield
    finally:
        TensorVariable._method_register_hook = original


def _reads_a_default(source: Any) -> bool:
    from torch._dynamo.source import DefaultsSource

    while source is not None:
        if isinstance(source, DefaultsSource):
            return True
        source = getattr(source, "base", None)  # a chained source: what it was reached from
    return False


@contextlib.contextmanager
def unguarded_defaults() -> Iterator[None]:
    from torch._guards import Guard

    original = Guard.__dict__["create"]

    def create(guard: Any, builder: Any) -> Any:
        return None if _reads_a_default(guard.originating_source) else original(guard, builder)

    Guard.create = create
    try:
        yield
    finally:
        Guard.create = original
