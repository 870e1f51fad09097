"""Where a stack was: in the standard library, inside a backend's compile; a file's path as
a reader would look it up. Shared by the worker's classification of a live exception
(``classify``) and the controller's reading of a dead worker's dump (``crash_reports``)."""

from __future__ import annotations

import re
import sysconfig
from pathlib import Path

STDLIB = sysconfig.get_paths()["stdlib"]


def in_compile(stack: str) -> bool:
    """Whether a stack (lines ending ``in <function>``, as faulthandler writes them) is
    inside a backend's compile."""
    from harness.compat import COMPILE_FRAMES  # imports torch: only once a test timed out

    return bool(re.search(r"\bin (" + "|".join(map(re.escape, COMPILE_FRAMES)) + r")$", stack, re.MULTILINE))


def in_stdlib(path: str) -> bool:
    return path.startswith(STDLIB) and "site-packages" not in path


def short_path(path: str) -> str:
    """A path as a reader would look it up: relative to site-packages or the project."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path
