"""Which stage a failure came from: Dynamo's capture, AOTAutograd, the backend's compiler,
the compiled code running, or a check after a successful run.

Decided from which callable was running when the error was raised, not from its message:

* the counter every scenario compiles through (harness.measure.counters) runs the backend's
  compiler inside ``running(BACKEND_COMPILE)`` and each compiled call inside
  ``running(BACKEND_RUN)``; an exception leaving either is marked with that stage (the
  innermost mark wins);
* within those, the frames of the traceback tell AOTAutograd from the backend: AOTAutograd's
  code (torch._functorch, fake tensors, proxy tracing, decompositions) with none of the
  backend's own code running inside it is AOTAutograd's stage; the backend's code running
  inside AOTAutograd (its forward or backward compiler) is the backend's;
* an unmarked error raised inside Dynamo's tracing is the capture's; one raised by a
  compiled function's backward, which runs outside any call the counter sees, is judged by
  its frames alike; anything else (a check's assertion, an error in the scenario's own code
  after the compiled call returned) is the check's.

Imports nothing from torch: the runner reads stages from results, and the rules are paths.
"""

from __future__ import annotations

import contextlib
import os
import traceback
from typing import Iterator

CAPTURE = "capture"
AOT_AUTOGRAD = "AOTAutograd"
BACKEND_COMPILE = "backend compile"
BACKEND_RUN = "backend run"
CHECK = "check"
STAGES = (CAPTURE, AOT_AUTOGRAD, BACKEND_COMPILE, BACKEND_RUN, CHECK)

_MARK = "_dynamo_suite_stage"
# AOTAutograd's functions that compile a backward graph on its first call (a compiled
# function's backward, outside any call the counter sees).
_LAZY_BACKWARD_COMPILE = ("get_or_compile",)
_SEP = os.sep


@contextlib.contextmanager
def running(stage: str) -> Iterator[None]:
    """Mark an exception that leaves this block with ``stage``, unless an inner block did."""
    try:
        yield
    except BaseException as error:
        if getattr(error, _MARK, None) is None:
            try:
                setattr(error, _MARK, stage)
            except (AttributeError, TypeError):  # an exception type that takes no attributes
                pass
        raise


def _torch_part(path: str) -> str | None:
    """The part of torch a file belongs to (``_functorch``, ``_dynamo``...), or None."""
    marker = f"{_SEP}torch{_SEP}"
    if marker not in path:
        return None
    rest = path.rsplit(marker, 1)[1]
    return rest.split(_SEP, 1)[0] if _SEP in rest else rest


# AOTAutograd's own code: its tracing, functionalization, partitioning and runtime wrappers,
# and what it runs to trace (fake tensors, proxy tracing, decompositions).
_AOT_PARTS = {"_functorch", "_subclasses", "_decomp", "_refs", "_prims", "_prims_common"}
_AOT_FILES = (f"fx{_SEP}experimental{_SEP}proxy_tensor.py", f"fx{_SEP}experimental{_SEP}symbolic_shapes.py")
_HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + _SEP
_STDLIB = os.path.dirname(os.__file__) + _SEP


def _owner(path: str) -> str | None:
    """``"aot"``, ``"backend"``, ``"dynamo"`` or None (neutral: the standard library,
    generic torch, FX's generated code, the harness)."""
    if path.startswith(("<", _HARNESS)) or path.startswith(_STDLIB) and "-packages" not in path:
        return None
    part = _torch_part(path)
    if part is None:
        return "backend"
    if part in _AOT_PARTS or path.endswith(_AOT_FILES):
        return "aot"
    if part == "_inductor":
        return "backend"  # inductor is a backend
    if part == "_dynamo":
        return None if f"_dynamo{_SEP}backends{_SEP}" in path else "dynamo"
    return None


def _owners(error: BaseException) -> list[str]:
    """The owners of the traceback's frames, outermost first, neutral frames left out."""
    return [owner for frame in traceback.extract_tb(error.__traceback__)
            if (owner := _owner(frame.filename)) is not None]


def _aot_or(owners: list[str], otherwise: str) -> str:
    """AOTAutograd's stage when AOTAutograd's code was running and none of the backend's
    code inside it; else ``otherwise``."""
    if "aot" not in owners:
        return otherwise
    inside = owners[owners.index("aot"):]
    return otherwise if "backend" in inside else AOT_AUTOGRAD


_CHECK_LIBRARIES = (os.path.join(_STDLIB, "unittest", ""), f"{_SEP}torch{_SEP}testing{_SEP}")


def is_check_failure(error: BaseException, test_file: str) -> bool:
    """Whether a check failed (unittest's or torch.testing's asserts, or an ``assert`` of
    the test's module or of the harness), rather than an ``assert`` inside torch or the
    backend, which is an internal error (Dynamo's "sources must not be empty for symbol"):
    the compile failed, and the result is an ERROR with the code that raised it."""
    if not isinstance(error, AssertionError):
        return False
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return True
    path = os.path.realpath(frames[-1].filename)
    return (any(library in path for library in _CHECK_LIBRARIES) or path.startswith(_HARNESS)
            or path == os.path.realpath(test_file))


def _raised_by_aot(error: BaseException) -> bool:
    """Whether AOTAutograd's own code raised it (its runtime wrappers' assertions), rather
    than a kernel its compiled graph called."""
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and _torch_part(frames[-1].filename) == "_functorch"


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = getattr(error, "inner_exception", None) or error.__cause__ or error.__context__


def of(error: BaseException | None, failed_check: bool) -> str:
    """The stage of a test's failure: ``failed_check`` when a check's assertion failed."""
    if failed_check or error is None:
        return CHECK
    chain = list(_chain(error))
    marked = [link for link in chain if getattr(link, _MARK, None) is not None]
    if marked:
        inner, stage = marked[-1], getattr(marked[-1], _MARK)
        if stage == BACKEND_RUN:
            return AOT_AUTOGRAD if _raised_by_aot(chain[-1]) else BACKEND_RUN
        return _aot_or(_owners(inner), stage)
    owners = [owner for link in chain for owner in _owners(link)]
    if "aot" in owners and "dynamo" not in owners[:owners.index("aot")]:
        # A compiled function's backward runs its compiled graph where no counter sees it;
        # it compiles its backward graph there too, the first time.
        if any(_torch_part(frame.filename) == "_functorch" and frame.name in _LAZY_BACKWARD_COMPILE
               for link in chain for frame in traceback.extract_tb(link.__traceback__)):
            return _aot_or(owners, BACKEND_COMPILE)
        return AOT_AUTOGRAD if _raised_by_aot(chain[-1]) else BACKEND_RUN
    if "dynamo" in owners:
        return CAPTURE
    return CHECK
