"""Variants: named configurations a scenario runs under, an axis beside the backend.

``static`` is what every scenario did before variants: Dynamo's defaults. The others patch
Dynamo's configuration around each test (never around the class, so collecting tests
changes nothing), the way PyTorch's own test/dynamo/test_dynamic_shapes.py makes its
``DynamicShapes`` copies of a test class, and check more after the scenario passed:

* ``dynamic``: sizes are symbolic from the first compile (``assume_static_by_default`` off,
  ints not specialized), so the backend receives SymInt inputs and size expressions; each
  such graph is run again at a second size (harness/axes/second_size.py);
* ``automatic_dynamic``: static first; each compiled function's first call is replayed at
  a grown size (the backend must then receive symbolic sizes) and at a third size
  (harness/axes/automatic_dynamic.py);
* ``compiled_autograd``: every ``backward()`` through compiled code is captured by compiled
  autograd and its graph compiled by the backend under test (fullgraph), as PyTorch's own
  CI runs its suite with compiled autograd;
* ``threads``, ``caller_mutates``, ``module_hooks``, ``saved_tensor_hooks``: the ways callers
  call; each compiled function's first call is replayed, after the scenario, from a pool of
  threads, after the caller wrote into what it returned, with module hooks registered, or
  inside saved-tensor hooks (harness/axes/callers.py);
* ``export`` and ``export_strict``: each compiled function goes through ``torch.export``
  (non-strict or strict), Core ATen decomposition and the exported graph's contract, and the
  backend receives the lifted graph (harness/axes/export.py).

The variant axis (harness/axes/registry.py): chosen with ``DYNAMO_SUITE_VARIANTS`` or
``run_tests.py --variants`` (comma-separated; ``static`` by default). A test id carries a variant other than ``static``:
``InputMutationTests_aot_eager_dynamic.test_…``; reports have a column per backend and variant.

A family or a test whose contract does not apply under a variant says so with
``@variants.opt_out("compiled_autograd", "why")``: its tests there are SKIP with that reason.
An expectation targets a variant with ``variant = "dynamic"`` (harness/expectations.toml).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from harness.axes import axis

T = TypeVar("T")


@dataclass(frozen=True)
class Variant:
    name: str
    description: str
    dynamo_config: dict[str, Any] = field(default_factory=dict)  # Dynamo's config, patched per test (compat)
    second_size: bool = False  # rerun each graph with symbolic sizes at a second size (harness.axes.second_size)
    resized_calls: bool = False  # replay each compiled function's first call at two other sizes (automatic_dynamic)
    compiled_autograd: bool = False  # capture every backward() with compiled autograd
    export: str = ""  # "strict" or "non-strict": compiled functions go through torch.export (harness.axes.export)
    caller: str = ""  # a way callers call: each compiled function's first call replayed that way (harness.axes.callers)
    # Why a test that passed is SKIP all the same: the variant changed nothing it ran.
    unproven: str = ""


STATIC = "static"
_NOTHING_REPLAYED = "no compiled call can be replayed (arguments other than tensors and plain values, random draws)"
_NOTHING_EXPORTED = "no compiled function was called (the scenario compiles with torch.compile itself)"

VARIANTS = {
    variant.name: variant for variant in (
        Variant(STATIC, "Dynamo's defaults: static sizes first, automatic dynamic shapes after a size change"),
        Variant("dynamic", "sizes symbolic from the first compile, as PyTorch's DynamicShapes test classes; "
                           "every graph with symbolic sizes also run at a second size",
                {"assume_static_by_default": False, "specialize_int": False}, second_size=True,
                unproven="no graph the backend received had a size that can change"),
        Variant("automatic_dynamic", "static sizes first; then each compiled function's first call again at a "
                                     "grown size (automatic dynamic shapes recompile it with symbolic sizes) "
                                     "and at a third size, which must reuse that graph",
                {"automatic_dynamic_shapes": True, "assume_static_by_default": True}, resized_calls=True,
                unproven="no compiled call accepts inputs of other sizes (the scenario's sizes are fixed)"),
        Variant("compiled_autograd", "every backward() of the scenario captured by compiled autograd and "
                                     "compiled by the backend under test",
                compiled_autograd=True, unproven="no backward through compiled code was captured (the scenario runs none)"),
        Variant("export", "each compiled function exported with torch.export (non-strict, torch's default), "
                          "decomposed to Core ATen and checked, and its lifted graph handed to the backend",
                export="non-strict", unproven=_NOTHING_EXPORTED),
        Variant("export_strict", "as export, exported with strict=True (through Dynamo); a test whose graphs are "
                                 "the same as non-strict export's is SKIP",
                export="strict", unproven=_NOTHING_EXPORTED),
        Variant("threads", "once compiled, each compiled function's first call made again from a pool of "
                           "threads at once, each thread on its own inputs",
                caller="threads", unproven=_NOTHING_REPLAYED),
        Variant("caller_mutates", "each compiled function's first call made again, the caller writing junk into "
                                  "what it returned, then called once more",
                caller="caller_mutates", unproven=_NOTHING_REPLAYED + ", or no output a caller can write into"),
        Variant("module_hooks", "each compiled module's first call made again with a forward pre-hook, a forward "
                                "hook and a full backward hook registered before it is compiled anew",
                caller="module_hooks", unproven="no compiled module (nor a module's compiled forward) was called "
                                                "with arguments that can be replayed"),
        Variant("saved_tensor_hooks", "each compiled function's first call made again, forward and backward, "
                                      "inside saved_tensors_hooks that offload what autograd saves",
                caller="saved_tensor_hooks", unproven=_NOTHING_REPLAYED + ", or eager saved no tensor for a backward"),
    )
}


def opt_out(variant: str, reason: str) -> Callable[[T], T]:
    """Class or test decorator: not run under ``variant`` (SKIP, with ``reason``)."""
    if variant not in VARIANTS or variant == STATIC:
        raise axis.AxisError(f"cannot opt out of {variant!r}: choose from {', '.join(set(VARIANTS) - {STATIC})}")
    return axis.opt_out("variant", variant, reason)
