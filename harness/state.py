"""Global state a scenario may change and must leave as it found it.

A snapshot is a flat mapping ``name -> value``; ``leaked`` names every entry that differs
and ``restore`` puts the snapshot back, so one leaky test is reported by name and does not
poison the tests after it.
"""

from __future__ import annotations

import contextlib
import random
from typing import Any, Iterator

import torch

from harness import compat

SEED = 0


def seed_everything(seed: int = SEED) -> None:
    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy
    except ImportError:
        return
    numpy.random.seed(seed)


def autocast_nesting() -> int:
    """How many autocast blocks are open (torch reads it only by moving it)."""
    depth = torch.autocast_increment_nesting()
    torch.autocast_decrement_nesting()
    return depth - 1


@contextlib.contextmanager
def autocast_kept() -> Iterator[None]:
    """Around running a graph of Dynamo's: it enters and leaves autocast as calls, with no
    finally (pytorch#195488), so a graph that raises inside the block would leave autocast
    on and its nesting raised; both are put back."""
    depth, enabled, dtype = autocast_nesting(), torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")
    try:
        yield
    finally:
        for _ in range(autocast_nesting() - depth):
            if torch.autocast_decrement_nesting() == 0:
                torch.clear_autocast_cache()
        torch.set_autocast_enabled("cpu", enabled)
        torch.set_autocast_dtype("cpu", dtype)


# What eager's float32 arithmetic on this thread does with roundings and subnormal numbers:
# flags of the CPU (MXCSR on x86: flush-to-zero, denormals-are-zero, the rounding mode) that
# compiled code or a compiler's runtime may set and not put back (pytorch#136273), changing
# every later eager result in the process. 1 + 0.75 ulp and -1 - 0.75 ulp tell the four
# rounding modes apart; a subnormal product, and a subnormal input times one, show the two
# flush flags. Two small kernels: a few microseconds.
_ROUNDED = torch.tensor([1.0, -1.0, 1e-38, 1e-40])
_BY = torch.tensor([1.5 * 2.0 ** -24, -1.5 * 2.0 ** -24, 1e-3, 1.0])
_ROUNDINGS = {(True, True): "to nearest", (False, False): "toward zero", (True, False): "upward",
              (False, True): "downward"}


FP_ENVIRONMENT = "eager's floating-point environment (rounding, subnormal results, subnormal inputs)"


def fp_environment() -> tuple[str, str, str]:
    """(rounding mode, subnormal results, subnormal inputs) as eager's float32 kernels see them."""
    with torch.inference_mode(False), torch.no_grad():
        added, multiplied = (_ROUNDED[:2] + _BY[:2]).tolist(), (_ROUNDED[2:] * _BY[2:]).tolist()
    return (_ROUNDINGS[added[0] > 1.0, added[1] < -1.0], "kept" if multiplied[0] != 0.0 else "flushed to zero",
            "read" if multiplied[1] != 0.0 else "read as zero")


FUNCTORCH = "functorch transforms open"


def _torch_state() -> dict[str, Any]:
    transforms = compat.functorch_transforms()
    return {
        # A transform left open (torch.func.grad's level, never left) traces every later op.
        FUNCTORCH: transforms,
        "torch.is_grad_enabled()": torch.is_grad_enabled(),
        "torch.is_inference_mode_enabled()": torch.is_inference_mode_enabled(),
        "torch.get_default_dtype()": torch.get_default_dtype(),
        "torch.get_default_device()": torch.get_default_device(),
        "torch.are_deterministic_algorithms_enabled()": torch.are_deterministic_algorithms_enabled(),
        "torch.is_anomaly_enabled()": torch.is_anomaly_enabled(),
        "torch.is_autocast_enabled('cpu')": torch.is_autocast_enabled("cpu"),
        "torch.get_num_threads()": torch.get_num_threads(),
        # A TorchFunctionMode left on (``with torch.device(...)`` never exited, say) changes
        # every later test's tensors.
        "torch function modes": _function_modes(),
        # Read through an open transform, the environment's probe cannot turn into numbers.
        FP_ENVIRONMENT: fp_environment() if not transforms else None,
    }


def _function_modes() -> tuple[str, ...]:
    return tuple(type(mode).__name__ for mode in torch.overrides._get_current_function_mode_stack())


def snapshot() -> dict[str, Any]:
    state = _torch_state()
    for module_name, module in compat.loaded_config_modules().items():
        for key, value in compat.config_values(module).items():
            state[f"{module_name}.{key}"] = value
    return state


def leaked(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Human-readable differences, one per changed entry (new config modules are ignored)."""
    changes = []
    for name, old in before.items():
        new = after.get(name, old)
        try:
            same = bool(old == new)
        except Exception:
            same = old is new
        if not same:
            changes.append(f"{name}: {old!r} -> {new!r}")
    return changes


def restore(before: dict[str, Any]) -> None:
    """Put the snapshot's values back."""
    # Inference mode can only be left through its context manager, so it is reported, not undone.
    while len(compat.functorch_transforms()) > len(before.get(FUNCTORCH, ())):
        compat.pop_functorch_transform()
    while len(_function_modes()) > len(before["torch function modes"]):
        compat.pop_torch_function_mode()
    torch.set_grad_enabled(before["torch.is_grad_enabled()"])
    torch.set_default_dtype(before["torch.get_default_dtype()"])
    torch.set_default_device(before["torch.get_default_device()"])
    torch.use_deterministic_algorithms(before["torch.are_deterministic_algorithms_enabled()"])
    torch.set_anomaly_enabled(before["torch.is_anomaly_enabled()"])
    torch.set_autocast_enabled("cpu", before["torch.is_autocast_enabled('cpu')"])
    torch.set_num_threads(before["torch.get_num_threads()"])
    # Only torch's switch of both flush flags can be put back portably; a rounding mode left
    # changed is reported, not undone.
    environment = before[FP_ENVIRONMENT]
    if environment is not None:
        torch.set_flush_denormal(environment[1:] != ("kept", "read"))
    now = snapshot()
    for module_name, module in compat.loaded_config_modules().items():
        prefix = f"{module_name}."
        # Only the changed keys: rewriting every key trips deprecation warnings.
        values = {
            key[len(prefix):]: value
            for key, value in before.items()
            if key.startswith(prefix) and key in now and leaked({key: value}, {key: now[key]})
        }
        if values:
            compat.restore_config_values(module, values)
