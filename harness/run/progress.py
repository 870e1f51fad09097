"""What the runner prints while tests run: one line per finished test, or one line that
updates itself on a terminal."""

from __future__ import annotations

import os
import time
from typing import TextIO

from harness import outcomes
from harness.report.results import TestResult


class Progress:
    """One line per finished test, or a single self-updating line on a terminal."""

    def __init__(self, total: int, out: TextIO, verbose: bool) -> None:
        self.total = total
        self.out = out
        self.done = 0
        self.unexpected = 0
        self.started = time.monotonic()
        self.live = out.isatty() and not verbose and os.environ.get("CI") is None
        self.width = len(str(total))

    def __call__(self, result: TestResult) -> None:
        self.done += 1
        self.unexpected += result.unexpected
        elapsed = time.monotonic() - self.started
        counter = f"[{self.done:>{self.width}}/{self.total}]"
        if self.live:
            line = f"\r{counter} {_clock(elapsed)}  {self.unexpected} unexpected  {result.id}"
            self.out.write(line[:160].ljust(160))
            if self.done == self.total:
                self.out.write("\n")
        else:
            self.out.write(f"{counter} {outcomes.named(result.outcome).short:<7} {result.duration_s:6.1f}s  {result.id}\n")
        self.out.flush()


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes}:{seconds:02d}"
