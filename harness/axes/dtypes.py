"""The dtype axis: the numeric scenario families run again in half precision.

Accelerator backends run bfloat16 and float16, and their casting, accumulation and output
dtype bugs live there. A family whose scenarios compute with floating-point values opts in
with ``@dtypes.numeric``; under the dtype axis (harness/axes/registry.py: ``DYNAMO_SUITE_DTYPES`` /
``run_tests.py --dtypes`` (comma-
separated; ``float32`` by default) it gets a copy per dtype, with torch's default dtype set to
it around each test, so every tensor and module the scenario creates without naming a dtype
(and the eager reference it compares with) has it. Ids carry a dtype other than float32:
``OutputContractTests_inductor_bfloat16.test_…``. Families that do not opt in check contracts
that do not depend on the floating-point type (guards, mutation bookkeeping, aliasing); they
run once, in float32, and only when float32 is selected.

Values are compared with tolerances per dtype (harness/checks/compare.py, the defaults PyTorch's
``assert_close`` and OpInfo tests start from); dtypes themselves must match eager's exactly,
so a backend that computes or returns float32 for half inputs fails. An expectation targets a
dtype with ``dtype = "bfloat16"`` (a glob: ``"*float16"`` covers both halves).
"""

from __future__ import annotations

from typing import Any, TypeVar

from harness.axes import axis

T = TypeVar("T")
FLOAT32 = "float32"
DTYPES = (FLOAT32, "bfloat16", "float16")
_NUMERIC = "__dtype_axis__"


def numeric(family: T) -> T:
    """Class decorator: the family's scenarios compute with floating-point values, so it runs
    under every selected dtype."""
    setattr(family, _NUMERIC, True)
    return family


def torch_dtype(name: str):
    import torch

    return getattr(torch, name)


class _DtypeBehaviour(axis.Behaviour):
    """Numeric families run in every selected dtype, the others in float32 alone (when it is
    selected); torch's default dtype is the test's during the test."""

    def values_for(self, family: type, selected: tuple[str, ...]) -> tuple[str, ...]:
        if getattr(family, _NUMERIC, False):
            return selected
        return (FLOAT32,) if FLOAT32 in selected else ()

    def class_attributes(self, value: str) -> dict[str, Any]:
        return {"dtype_name": value}

    def set_up(self, test: Any, value: str) -> None:
        if value != FLOAT32:
            import torch

            test.addCleanup(torch.set_default_dtype, torch.get_default_dtype())
            torch.set_default_dtype(torch_dtype(value))


BEHAVIOUR = _DtypeBehaviour()
