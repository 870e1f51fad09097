"""Warm inductor's C++ toolchain while the tests are being collected.

The first inductor compile with a cold cache probes which vector instruction sets g++ and
the CPU support: five test programs built with g++, about 10 s of one core before its first
kernel. Every worker starts with it: the first pays it, the others wait on its lock, and
the run's first minutes are its slowest. Collecting the tests takes about as long and keeps
only one core busy, so the probe runs beside it, in a process of its own, and the workers
start once both are done, with the probes in inductor's cache on disk, which they share.

Only for runs that include inductor itself; another backend that calls inductor inside
warms up on its own, as before. An optimisation only: a warm-up that fails leaves the
probe to the workers.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from typing import Iterator

_PROGRAM = "from harness import compat; compat.warm_inductor_toolchain()"
_WAIT_S = 120.0  # past this the warm-up is stuck, and stopped


@contextlib.contextmanager
def inductor_toolchain(backends: str, enabled: bool = True) -> Iterator[None]:
    """Warm up while the body runs, when ``backends`` (as given to --backend) names inductor;
    wait for the warm-up at the end of the body, or stop it when the body failed."""
    process = _start() if enabled and "inductor" in (name.strip() for name in backends.split(",")) else None
    try:
        yield
    except BaseException:
        _stop(process)
        raise
    if process is not None:
        try:
            process.wait(timeout=_WAIT_S)
        except subprocess.TimeoutExpired:
            _stop(process)


def _start() -> subprocess.Popen | None:
    try:
        return subprocess.Popen([sys.executable, "-c", _PROGRAM], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        return None


def _stop(process: subprocess.Popen | None) -> None:
    if process is not None and process.poll() is None:
        process.kill()
        process.wait()
