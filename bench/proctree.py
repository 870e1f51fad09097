"""Wall time, CPU time and memory of a command together with every process it starts.

Linux only: memory is read from /proc. The measuring process makes itself a child
subreaper, so a grandchild that outlives its parent (an inductor compile worker, an xdist
worker) is re-parented to it instead of to init: it stays in the sampled tree, and its CPU
time is counted when it is reaped here.
"""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class Usage:
    wall_s: float
    cpu_s: float  # user + system of the command and all its descendants
    peak_rss_bytes: int  # highest sum of resident set sizes over the tree, at one instant
    peak_pss_bytes: int  # the same with shared pages split between the processes sharing them
    peak_processes: int
    peak_breakdown: list  # at the RSS peak: [process name, RSS bytes], largest first
    pss_breakdown: list  # at the PSS peak: [process name, PSS bytes], largest first
    command_cpu_s: float  # the command's own process, without its descendants
    sampler_cpu_s: float  # what measuring cost this process (it competes for the same cores)
    returncode: int
    started: float  # time.time() at launch
    ended: float


def become_subreaper() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """``root`` and every process below it, from one scan of /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        # The command name is in parentheses and may itself hold spaces or parentheses.
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    tree, queue = [], [root]
    while queue:
        pid = queue.pop()
        tree.append(pid)
        queue.extend(children.get(pid, []))
    return tree


def rss(pid: int) -> int:
    """Resident bytes of one process; 0 once it is gone."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def pss(pid: int) -> int:
    """Proportional set size: resident bytes with each shared page divided among its users.
    The kernel walks the process's page tables for it, so it is read only near a peak."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return rss(pid)


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def _cpu_seconds(pid: int) -> float:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


class _Sampler(threading.Thread):
    def __init__(self, interval: float) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.stopped = threading.Event()
        self.command_pid = 0
        self.command_cpu = 0.0
        self.peak_rss = self.peak_pss = self.peak_processes = 0
        self.peak_breakdown: list = []
        self.pss_breakdown: list = []
        self.pss_interval = max(interval, 10.0)
        self.pss_read_at = float("-inf")
        self.rss_at_pss_reading = 0

    def run(self) -> None:
        me = os.getpid()
        while not self.stopped.is_set():
            sizes = {pid: rss(pid) for pid in descendants(me) if pid != me}
            total = sum(sizes.values())
            self.peak_processes = max(self.peak_processes, sum(1 for size in sizes.values() if size))
            if total > self.peak_rss:
                self.peak_rss = total
                self.peak_breakdown = sorted(([_name(pid), size] for pid, size in sizes.items() if size),
                                             key=lambda entry: -entry[1])
            # Every process's PSS is at most its RSS, so a sample whose RSS total is not above
            # the PSS peak so far cannot raise it. Reading PSS makes the kernel walk each
            # process's page tables under its memory-map lock, which slows the measured run
            # (read once a second, it cost a warm run 15% of its wall time), so of the others
            # only those are read whose RSS total passes the highest one read so far by 1% --
            # the PSS peak lies near the RSS peak -- and one every 10 s.
            now = time.monotonic()
            if total > self.peak_pss and (total > 1.01 * self.rss_at_pss_reading
                                          or now - self.pss_read_at >= self.pss_interval):
                self.pss_read_at, self.rss_at_pss_reading = now, max(total, self.rss_at_pss_reading)
                names = {pid: _name(pid) for pid, size in sizes.items() if size}
                shares = {pid: pss(pid) for pid in names}  # 0 for a process gone meanwhile
                if sum(shares.values()) > self.peak_pss:
                    self.peak_pss = sum(shares.values())
                    self.pss_breakdown = sorted(([names[pid], share] for pid, share in shares.items() if share),
                                                key=lambda entry: -entry[1])
            self.command_cpu = max(self.command_cpu, _cpu_seconds(self.command_pid))
            self.stopped.wait(self.interval)


def measure(command: list[str], *, env: dict[str, str] | None = None, cwd: str | os.PathLike | None = None,
            stdout=None, interval: float = 0.25) -> Usage:
    """Run ``command`` to the end and measure it and everything it starts.

    Every other child of this process should be finished: the CPU time is the growth of
    this process's reaped-children usage.
    """
    become_subreaper()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    own_before = time.process_time()
    sampler = _Sampler(interval)
    started, clock = time.time(), time.monotonic()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=stdout, stderr=subprocess.STDOUT)
    sampler.command_pid = process.pid
    sampler.start()
    try:
        returncode = process.wait()
        wall = time.monotonic() - clock
        ended = time.time()
        _reap_orphans()
    finally:
        sampler.stopped.set()
        sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Usage(wall_s=wall, cpu_s=cpu, peak_rss_bytes=sampler.peak_rss, peak_pss_bytes=sampler.peak_pss,
                 peak_processes=sampler.peak_processes, peak_breakdown=sampler.peak_breakdown,
                 pss_breakdown=sampler.pss_breakdown,
                 command_cpu_s=sampler.command_cpu, sampler_cpu_s=time.process_time() - own_before,
                 returncode=returncode, started=started, ended=ended)


def _reap_orphans(grace: float = 30.0) -> None:
    """Wait for descendants left behind by the command; kill those still there after ``grace``."""
    deadline = time.monotonic() + grace
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid:
            continue
        if time.monotonic() > deadline:
            for orphan in descendants(os.getpid())[1:]:
                try:
                    os.kill(orphan, 9)
                except ProcessLookupError:
                    pass
            deadline = float("inf")
        time.sleep(0.05)
