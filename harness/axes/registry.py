"""The axes in use, in the order their values appear in test ids and report columns.

Adding an axis is one declaration in ``AXES`` (and, if it changes what a test does, its
Behaviour): the command line gets its option, the environment its variable, generated
classes a copy per value (``Family_<backend>_<value>`` for a value other than the default),
results.json a field, reports a column part, expectations a key, ``--accept`` and rerun
commands and repros the value. CONTRIBUTING.md walks through it.
"""

from __future__ import annotations

import contextlib
from typing import Iterator, Mapping

from harness import settings
from harness.axes import compile_options, dtypes, variants
from harness.axes.axis import Axis

BACKEND_INDEPENDENT = "-"  # the backend of tests that run once, not per backend

BACKEND = Axis(
    "backend", "--backend", settings.BACKENDS, "eager,aot_eager,inductor",
    "comma-separated backends: a name registered with torch (aot_eager), package.module:attr, or "
    "path/to/file.py:attr", always_shown=True, behaviour="harness.axes.backends:BEHAVIOUR")
VARIANT = Axis(
    "variant", "--variants", settings.VARIANTS, variants.STATIC,
    f"comma-separated configurations to run every scenario under: {', '.join(variants.VARIANTS)} "
    "(harness/axes/variants.py)", choices=tuple(variants.VARIANTS), behaviour="harness.axes.variant_checks:BEHAVIOUR")
DTYPE = Axis(
    "dtype", "--dtypes", settings.DTYPES, dtypes.FLOAT32,
    "comma-separated dtypes to run the numeric families (backend contract, Python autograd, LSTM, op sweep, "
    f"models) in: {', '.join(dtypes.DTYPES)} (harness/axes/dtypes.py; the other families run in float32 when it "
    "is selected)", choices=dtypes.DTYPES, behaviour="harness.axes.dtypes:BEHAVIOUR")
DEVICE = Axis(
    "device", "--device", settings.DEVICE, "cpu",
    "the device every scenario creates its tensors and modules on, and compares with eager on: cpu, cuda, "
    "cuda:N, xpu, mps, or an out-of-tree device registered by a module in DYNAMO_SUITE_IMPORTS "
    "(harness/axes/device.py)", per_run=True, by_type=True, behaviour="harness.axes.device:BEHAVIOUR")
COMPILE_OPTIONS = Axis(
    "compile_options", "--compile-options", settings.COMPILE_OPTIONS, compile_options.DEFAULT,
    "what every torch.compile of the run is given beside the backend: key=value items separated by ';' "
    "(mode=max-autotune-no-cudagraphs; fullgraph=true; dynamic=false; options.NAME=VALUE); a scenario's own "
    "arguments win (harness/axes/compile_options.py)", per_run=True,
    behaviour="harness.axes.compile_options:BEHAVIOUR", normalize="harness.axes.compile_options:canonical")

AXES: list[Axis] = [BACKEND, VARIANT, DTYPE, DEVICE, COMPILE_OPTIONS]


def per_test() -> list[Axis]:
    """The axes a run generates a class per value of, in id order."""
    return [axis for axis in AXES if not axis.per_run]


def beside_backend() -> list[Axis]:
    """The per-test axes other than the backend (which results keep with its spec)."""
    return [axis for axis in per_test() if axis is not BACKEND]


def other_than_backend() -> list[Axis]:
    """Every axis but the backend, per test and per run: the options and run-record fields
    the backend's (which carries specs) does not share."""
    return [axis for axis in AXES if axis is not BACKEND]


def per_run() -> list[Axis]:
    """The axes with one value for the whole run (the device)."""
    return [axis for axis in AXES if axis.per_run]


def named(name: str) -> Axis:
    for axis in AXES:
        if axis.name == name:
            return axis
    raise KeyError(name)


def selected(axis: Axis) -> tuple[str, ...]:
    """The values chosen for ``axis`` in this run (harness.settings; else its default);
    AxisError names the setting and the choices."""
    return axis.parse(settings.current().get(axis.env), axis.env)


def defaults() -> dict[str, str]:
    """Each per-test axis's value in a test that never chose one."""
    return {axis.name: axis.first for axis in per_test()}


def class_suffix(values: Mapping[str, str]) -> str:
    """What a generated class's name adds to its family's: ``_inductor_dynamic_bfloat16``."""
    return "".join(f"_{values[axis.name]}" for axis in per_test()
                   if axis.name in values and axis.shown(values[axis.name]))


def column(values: Mapping[str, str]) -> str:
    """A report column: ``inductor/dynamic/bfloat16``, leaving out defaults."""
    if values.get(BACKEND.name) == BACKEND_INDEPENDENT:
        return BACKEND_INDEPENDENT
    return "/".join(values[axis.name] for axis in per_test() if axis.name in values and axis.shown(values[axis.name]))


def test_id(scenario: str, **values: str) -> str:
    """The unittest id of ``<module>.<Family>.<test>`` (globs welcome) with these axis values
    (the others at their defaults): what the self-tests match results with."""
    module, family, test = scenario.split(".", 2)
    return f"test.dynamo.{module}.{family}{class_suffix({**defaults(), **values})}.{test}"


@contextlib.contextmanager
def declared(axis: Axis) -> Iterator[Axis]:
    """``axis`` in use until the block ends, after the others (for tests of the axis machinery)."""
    AXES.append(axis)
    try:
        yield axis
    finally:
        AXES.remove(axis)
