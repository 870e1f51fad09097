"""Capturing guard failures (the reasons Dynamo recompiles) under plain ``torch.compile``.

Dynamo appends the reason of every failed guard to a per-code store whether or not a
``guard_fail_fn`` was given; the recorder reads what was appended while it was active.
Reasons are matched after normalization, which removes what varies between torch
releases (compile-id prefixes, ``L['x']`` spellings, appended stack traces and comments).
"""

from __future__ import annotations

import re

from harness.compat import guard_failure_store, normalize_guard_reason

__all__ = ["GuardFailureRecorder", "normalize_guard_reason"]


class GuardFailureRecorder:
    """Records every guard-failure reason Dynamo reports between ``start`` and ``stop``.

    Usable as a context manager; ``reasons`` are normalized, ``raw_reasons`` as torch wrote them.
    """

    def __init__(self) -> None:
        # Per code object: the list Dynamo appends to and how much of it was already read.
        self._seen: dict[int, tuple[list[str], int]] | None = None
        self._raw: list[str] = []

    def start(self) -> "GuardFailureRecorder":
        self._raw = []
        self._seen = self._positions()
        return self

    def stop(self) -> "GuardFailureRecorder":
        self.collect()
        self._seen = None
        return self

    __enter__ = start

    def __exit__(self, *exc_info) -> None:
        self.stop()

    @staticmethod
    def _positions() -> dict[int, tuple[list[str], int]]:
        return {id(code): (reasons, len(reasons)) for code, reasons in guard_failure_store().items()}

    def collect(self) -> None:
        if self._seen is None:
            return
        for code, reasons in list(guard_failure_store().items()):
            read, already = self._seen.get(id(code), (None, 0))
            # A Dynamo reset empties the store and later failures go to a fresh list, which
            # may grow back to the old length: only the same list can hold reasons already read.
            new = reasons[already:] if reasons is read else reasons
            self._raw.extend(new)
            self._seen[id(code)] = (reasons, len(reasons))

    @property
    def raw_reasons(self) -> list[str]:
        self.collect()
        return list(self._raw)

    @property
    def reasons(self) -> list[str]:
        return [normalize_guard_reason(reason) for reason in self.raw_reasons]

    def matching(self, pattern: str) -> list[str]:
        """Normalized reasons in which the regex ``pattern`` is found."""
        regex = re.compile(pattern)
        return [reason for reason in self.reasons if regex.search(reason)]

    def clear(self) -> None:
        self.collect()
        self._raw = []
