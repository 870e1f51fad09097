"""Errors as a backend author needs to read them.

Dynamo wraps an exception raised while compiling in ``BackendCompilerFailed``, whose first
line only names the backend; the backend's own error ("op X is not supported") is inside.
Matched by name, so this module imports nothing (the runner's process has no torch).
"""

from __future__ import annotations


def innermost(error: BaseException) -> BaseException:
    """The backend's own error inside Dynamo's BackendCompilerFailed wrappers."""
    inner = error
    while type(inner).__name__ == "BackendCompilerFailed":
        wrapped = getattr(inner, "inner_exception", None) or inner.__cause__
        if wrapped is None:
            break
        inner = wrapped
    return inner
