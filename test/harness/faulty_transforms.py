"""AOTAutograd's tracing transforms, each broken in one way, to show that the scenarios of
test/dynamo/test_tracing_transforms.py notice.

A faulty backend cannot break what AOTAutograd does before the backend is called, so these
faults patch AOTAutograd itself. Import this module through DYNAMO_SUITE_IMPORTS with
DYNAMO_SUITE_FAULTY_TRANSFORM naming one entry of PATCHES, e.g.::

    DYNAMO_SUITE_IMPORTS=test.harness.faulty_transforms \
    DYNAMO_SUITE_FAULTY_TRANSFORM=ignores_data_mutations python run_tests.py -k ...

The patch holds for the whole process (every runner worker imports this module). The
patched names are internals of torch 2.13; a torch without them is reported, not ignored.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any, Callable

FAULT_ENV = "DYNAMO_SUITE_FAULTY_TRANSFORM"


def _never(*args: Any, **kwargs: Any) -> bool:
    return False


def _default_partition() -> Callable:
    return importlib.import_module("torch._functorch.partitioners").default_partition


@dataclass(frozen=True)
class Patch:
    module: str
    attribute: str
    replacement: Callable[[], Any]  # made when the patch is applied
    breaks: str


PATCHES = {
    # Functionalization no longer sees data written into inputs: the functional graph drops
    # the write and the runtime never copies a new value back.
    "ignores_data_mutations": Patch("torch._functorch._aot_autograd.collect_metadata_analysis",
                                    "has_data_mutation", lambda: _never,
                                    "data mutations of inputs reach the caller"),
    # Metadata changes of inputs (t_, transpose_, as_strided_...) are not replayed.
    "ignores_metadata_mutations": Patch("torch._functorch._aot_autograd.collect_metadata_analysis",
                                        "has_metadata_mutation", lambda: _never,
                                        "metadata mutations of inputs are replayed"),
    # The min-cut partitioner saves every activation, as the default partitioner does.
    "partitions_without_recompute": Patch("torch._functorch.partitioners", "min_cut_rematerialization_partition",
                                          _default_partition, "min-cut recomputes cheap ops"),
}


def apply(name: str) -> None:
    try:
        patch = PATCHES[name]
    except KeyError:
        raise SystemExit(f"{FAULT_ENV}: unknown fault {name!r}; choose from {', '.join(PATCHES)}") from None
    module = importlib.import_module(patch.module)
    if not hasattr(module, patch.attribute):
        raise SystemExit(f"{FAULT_ENV}: this torch has no {patch.module}.{patch.attribute} to patch")
    setattr(module, patch.attribute, patch.replacement())


if os.environ.get(FAULT_ENV):
    apply(os.environ[FAULT_ENV])
