"""The device the scenarios run on: ``cpu`` unless ``DYNAMO_SUITE_DEVICE`` (``run_tests.py
--device``) names another: ``cuda``, ``cuda:1``, ``xpu``, ``mps``, or an out-of-tree device's
name once the package that registers it is imported (``DYNAMO_SUITE_IMPORTS``).

A backend runs different code on each device (inductor generates Triton on CUDA and C++ on
the CPU), so the device is a per-run axis (harness/axes/registry.py): one run, one device,
never part of a test id. Every test runs with that device as torch's default device, so the tensors and modules
a scenario creates (and the eager reference it compares with) are on it. A scenario that only
makes sense on the CPU says so with ``@device.cpu_only("why")``: elsewhere it is SKIP with
that reason.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from harness import settings
from harness.axes import axis
from harness.axes.registry import DEVICE

T = TypeVar("T")
DEVICE_ENV = DEVICE.env
CPU = DEVICE.first


class DeviceError(ValueError):
    pass


def selected_name() -> str:
    """The device as given (no torch needed): ``cpu`` unless the environment names another."""
    return settings.current().get(DEVICE_ENV, CPU)


def selected():
    """The device as a ``torch.device``, checked: torch knows it and can use it here."""
    return _checked(selected_name())


@functools.lru_cache(maxsize=None)
def _checked(name: str):
    import torch

    from harness import compat
    from harness.axes import backends

    if name != CPU:  # whoever asks first (a worker imports test modules first), the device's package is imported
        backends.import_plugins()

    where = f"{DEVICE_ENV}={name!r}"
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError) as error:
        raise DeviceError(f"{where}: not a device torch knows ({_first_line(error)}); use cpu, cuda, cuda:N, xpu, mps, "
                          "or an out-of-tree device's name with its package in DYNAMO_SUITE_IMPORTS") from None
    if device.type == CPU:
        return device
    try:
        module = torch.get_device_module(device.type)
        count = module.device_count() if module.is_available() else 0
        why = f"torch.{device.type}.is_available() is False"
    except (RuntimeError, AttributeError):
        why = f"its package sees no {device.type} device"
        count = compat.out_of_tree_device_count(device.type)
        if count is None:
            raise DeviceError(f"{where}: torch has no runtime module for '{device.type}' (torch.{device.type}), so "
                              "scenarios cannot run there; use a real device such as cpu or cuda") from None
    if not count:
        raise DeviceError(f"{where}: torch {torch.__version__} has no usable {device.type} device here "
                          f"({why}); run where there is one, or use --device cpu")
    if device.index is not None and device.index >= count:
        raise DeviceError(f"{where}: only {count} {device.type} device(s) here (indices from 0)")
    return device


def chosen() -> bool:
    """Whether a device was named at all (an explicit ``cpu`` included)."""
    return settings.current().given(DEVICE_ENV)


def selected_type() -> str:
    """``cuda`` for ``cuda:1``: what OpInfo and autocast are keyed by."""
    return selected_name().split(":")[0]


def on_cpu() -> bool:
    return selected_type() == CPU


def cpu_only(reason: str) -> Callable[[T], T]:
    """Class or test decorator: the scenario runs on the CPU only; on another device it is
    SKIP with ``reason``."""
    if not reason.strip():
        raise DeviceError("cpu_only needs a reason")
    return axis.opt_out(DEVICE.name, f"!{CPU}", f"runs on the CPU only: {reason}")


class _DeviceBehaviour(axis.Behaviour):
    def set_up(self, test: Any, value: str) -> None:
        if chosen():
            # What the scenario creates, its eager reference included, is on the run's device;
            # left before the state is compared (cleanups run last in, first out). Entered for
            # an explicit cpu too, which is how the CPU-only self-test exercises this path.
            import torch

            test.enter_context(torch.device(value))


BEHAVIOUR = _DeviceBehaviour()


def _first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
