"""Processes a scenario starts (the ranks of a distributed run), contained like the test itself.

Each process runs ``python -m <module> <args>`` with the test's own ``sys.path`` and the run's
settings in its environment, in a process group of its own (the first process leads it, the
others join), and dies with its parent: if the worker running the test is killed (a crash, a
time limit), the kernel kills them too (``PR_SET_PDEATHSIG`` on Linux). ``run_all`` waits for
every one up to a deadline, then kills the whole group, whatever happened: no process
outlives the call. What each printed goes to a file, whose tail a failure message carries.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

_PR_SET_PDEATHSIG = 1


class ProcessesFailed(AssertionError):
    """One of the processes died, failed or hung; the message says which and how, with the
    tail of what it printed."""


@dataclass
class Ended:
    index: int
    returncode: int | None  # None: still running at the deadline (killed)
    output: Path

    def how(self) -> str:
        if self.returncode is None:
            return f"process {self.index} did not finish before the deadline (killed: a hang, or a peer it waited for died)"
        if self.returncode < 0:
            return f"process {self.index} was killed by signal {signal.Signals(-self.returncode).name}"
        return f"process {self.index} exited with code {self.returncode}"


def tail(path: Path, lines: int = 6) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(none)"
    return " | ".join(line.strip() for line in text[-lines:]) or "(none)"


def _contained(group: list[int]) -> None:
    """In the child before it runs: join the group (or lead a new one) and die with the parent."""
    os.setpgid(0, group[0] if group else 0)
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def run_all(module: str, arguments: list[list[str]], directory: Path, timeout_s: float,
            environment: dict[str, str] | None = None) -> list[Ended]:
    """Start ``python -m module *arguments[i]`` for each i, wait for all of them up to
    ``timeout_s``, and kill their group before returning. Raises ProcessesFailed unless every
    one exited 0 (the first to fail is named first: the others usually fail because of it)."""
    env = {**os.environ, **(environment or {}), "PYTHONPATH": os.pathsep.join(filter(None, sys.path))}
    group: list[int] = []
    started: list[tuple[subprocess.Popen, Path]] = []
    try:
        for index, args in enumerate(arguments):
            output = directory / f"process-{index}.log"
            with open(output, "w") as sink:
                process = subprocess.Popen([sys.executable, "-m", module, *args], stdin=subprocess.DEVNULL,
                                           stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=directory,
                                           preexec_fn=lambda: _contained(list(group)))
            group = group or [process.pid]
            started.append((process, output))
        ended = _wait(started, timeout_s)
    finally:
        if group:
            try:
                os.killpg(group[0], signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for process, _ in started:
            process.wait()
    failed = [end for end in ended if end.returncode != 0]
    if failed:
        # How each ended comes first, so that a reason cut short still names every process.
        raise ProcessesFailed("; ".join(end.how() for end in failed) + ". "
                              + " ".join(f"Process {end.index}'s last output: {tail(end.output)}." for end in failed))
    return ended


def _wait(started: list[tuple[subprocess.Popen, Path]], timeout_s: float, grace_s: float = 5.0) -> list[Ended]:
    """Each process's end, in the order they failed first, then the rest. Once one has
    failed the others get ``grace_s`` more (they are likely stuck in a collective with it)."""
    deadline = time.monotonic() + timeout_s
    codes: dict[int, int] = {}
    order: list[int] = []
    while len(codes) < len(started) and time.monotonic() < deadline:
        for index, (process, _) in enumerate(started):
            if index not in codes and process.poll() is not None:
                codes[index] = process.returncode
                order.append(index)
                if process.returncode != 0:
                    deadline = min(deadline, time.monotonic() + grace_s)
        time.sleep(0.05)
    order += [index for index in range(len(started)) if index not in codes]
    return [Ended(index, codes.get(index), started[index][1]) for index in order]
