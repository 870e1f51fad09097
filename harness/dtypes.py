"""The dtype axis: the numeric scenario families run again in half precision.

Accelerator backends run bfloat16 and float16, and their casting, accumulation and output
dtype bugs live there. A family whose scenarios compute with floating-point values opts in
with ``@dtypes.numeric``; under ``DYNAMO_SUITE_DTYPES`` / ``run_tests.py --dtypes`` (comma-
separated; ``float32`` by default) it gets a copy per dtype, with torch's default dtype set to
it around each test, so every tensor and module the scenario creates without naming a dtype
(and the eager reference it compares with) has it. Ids carry a dtype other than float32:
``OutputContractTests_inductor_bfloat16.test_…``. Families that do not opt in check contracts
that do not depend on the floating-point type (guards, mutation bookkeeping, aliasing); they
run once, in float32, and only when float32 is selected.

Values are compared with tolerances per dtype (harness/compare.py, the defaults PyTorch's
``assert_close`` and OpInfo tests start from); dtypes themselves must match eager's exactly,
so a backend that computes or returns float32 for half inputs fails. An expectation targets a
dtype with ``dtype = "bfloat16"`` (a glob: ``"*float16"`` covers both halves).
"""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")
DTYPES_ENV = "DYNAMO_SUITE_DTYPES"
FLOAT32 = "float32"
DTYPES = (FLOAT32, "bfloat16", "float16")
_NUMERIC = "__dtype_axis__"


class DtypeError(ValueError):
    pass


def selected_dtypes() -> tuple[str, ...]:
    from harness.variants import selected_names

    return selected_names(DTYPES_ENV, FLOAT32, DTYPES, "dtype", DtypeError)


def numeric(family: T) -> T:
    """Class decorator: the family's scenarios compute with floating-point values, so it runs
    under every selected dtype."""
    setattr(family, _NUMERIC, True)
    return family


def dtypes_for(family: type) -> tuple[str, ...]:
    """The dtypes a family is generated for: every selected one if it is numeric, else float32
    alone (when selected)."""
    chosen = selected_dtypes()
    if getattr(family, _NUMERIC, False):
        return chosen
    return (FLOAT32,) if FLOAT32 in chosen else ()


def suffix(name: str) -> str:
    """What a dtype adds to a generated class name: nothing for float32."""
    return "" if name == FLOAT32 else f"_{name}"


def torch_dtype(name: str):
    import torch

    return getattr(torch, name)
