"""Peak tensor memory of one call: how much more than before the call torch's allocator
held at its highest point during it (outputs, activations kept for backward, gradients,
workspace). Eager's and the compiled code's figures side by side say whether the backend
keeps more alive than eager does.

* On an accelerator the device allocator keeps the peak itself (``max_memory_allocated``
  after ``reset_peak_memory_stats``).
* On the CPU torch keeps no peak, and the process's resident high-water mark counts
  what the C allocator keeps cached and Python's objects too. So the call runs once under
  torch's profiler with memory profiling on, which records each allocation and free of
  torch's CPU allocator with its address; the peak is the highest running sum of what was
  allocated during the call (a free of a block from before it, such as the last step's
  gradients, does not count: it would lower the level below where the call started).
  Only that one call pays the profiler's cost; the timing (harness.measure.speed) never
  runs under it.
"""

from __future__ import annotations

import gc
from typing import Any, Callable

import torch

from harness import compat


def _accelerator(device: torch.device) -> Any | None:
    """torch's module for ``device``'s allocator statistics (torch.cuda...), if it has one."""
    module = getattr(torch, device.type, None)
    needed = ("reset_peak_memory_stats", "max_memory_allocated", "memory_allocated", "synchronize")
    return module if module is not None and all(hasattr(module, name) for name in needed) else None


def peak_bytes(fn: Callable[[], Any], device: torch.device) -> int | None:
    """Bytes above the level before the call at the call's highest point (None where the
    device offers no way to tell)."""
    gc.collect()
    if device.type == "cpu":
        return _cpu_peak(fn)
    module = _accelerator(device)
    if module is None:
        return None
    module.synchronize()
    module.reset_peak_memory_stats()
    before = module.memory_allocated()
    fn()
    module.synchronize()
    return int(module.max_memory_allocated() - before)


def _cpu_peak(fn: Callable[[], Any]) -> int:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as profiler:
        fn()
    level = peak = 0
    mine: set[int] = set()  # blocks allocated during the call, not yet freed
    for _, address, change in compat.cpu_allocations(profiler):
        if change > 0:
            mine.add(address)
        elif address in mine:
            mine.discard(address)
        else:
            continue
        level += change
        peak = max(peak, level)
    return peak
