"""What a backend project declares its backend does not do, and the refusal contract.

A backend used only for inference, or without float64, fails every test that needs it, for
one reason its team already knows. Instead of accepting each such failure, the project
declares the capability unsupported (``unsupported = ["training"]`` in its pyproject.toml,
``--unsupported training`` on the command line), and the tests that need it check the
**refusal contract** instead of the capability:

* the backend raises an error that says, in one sentence, that the capability is not
  supported, naming it by one of its words (in its compiler or its compiled code): the test
  is REFUSED, an expected outcome counted apart;
* or the call gives eager's answer (it fell back to eager, or did it anyway): the test passes;
* a different answer than eager's, or an error that does not name the capability, breaks the
  contract: a failure, grouped under the refusal contract (harness/report/problems.py).

The capabilities are the features of harness.features.catalogue that carry refusal words
(``named_by``): a test needs one when its graphs or calls show it (read by
harness.features.recorder), or when the scenario declares it with ``@needs`` (what no graph
can show: a backward of a backward in another process, ranks in other processes).

Imports no torch.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable

from harness import settings
from harness.features import catalogue
# The capabilities' names, for @needs(...) in scenarios.
from harness.features.catalogue import (  # noqa: F401
    AUTOCAST, BFLOAT16, COMPLEX, CONTROL_FLOW, CUSTOM_OPS, DISTRIBUTED, DOUBLE_BACKWARD, DYNAMIC_SHAPES, FLOAT16,
    FLOAT64, INPUT_MUTATION, RANDOM, TENSOR_SUBCLASSES, TRAINING)

UNSUPPORTED_ENV = settings.UNSUPPORTED
_STATIC = "__dynamo_suite_needs__"  # set by @needs on a test method or a scenario family
NOTHING = "none"  # --unsupported none: nothing, over a project file's declaration



class ScopeError(ValueError):
    """An unknown capability name; the message is one line."""


# The refusal contract's form: a sentence of the error that names the capability (one of its
# words, whole) and says it is not supported. Words are whole when no letter or digit touches
# them ("_set_grad_enabled" names grad; "upgrade", "Constraints" and "degraded" do not).
NEGATION = (r"not\s+(yet\s+)?(supported|implemented|available|allowed|handled)|unsupported\w*|unimplemented"
            r"|(does|do|can|will|could)(\s+not|n't)\s+(yet\s+)?(support|handle|compile|lower)\w*|cannot|can't"
            r"|no\s+support|(has|have)\s+no|only\s+supports?|refuses?|refused")
_WHOLE = r"(?<![A-Za-z0-9])(?:{})(?![A-Za-z0-9])"
# A sentence ends at . ; ! or ? before a space, or at a line's end ("aten::mm", "torch.float64" stay whole).
_SENTENCE_END = re.compile(r"(?<=[.;!?])\s+|\n")
_SAYS_NOT_SUPPORTED = re.compile(_WHOLE.format(NEGATION), re.IGNORECASE)


def sentences(message: str) -> list[str]:
    return [part for part in _SENTENCE_END.split(message) if part.strip()]


def named_in(name: str, message: str) -> bool:
    """Whether an error's ``message`` refuses the capability ``name`` in the contract's form:
    one of its sentences names it by one of its words (whole) and says it is not supported
    (``NEGATION``). A word inside a crash's text ("Constraints violated", "code generator",
    "unsupported operator aten::mm") is no refusal."""
    names = re.compile(_WHOLE.format(catalogue.capabilities()[name].named_by), re.IGNORECASE)
    return any(names.search(sentence) and _SAYS_NOT_SUPPORTED.search(sentence) for sentence in sentences(message))


def words(name: str) -> list[str]:
    """The alternatives of a capability's ``named_by``, as docs/scope.md lists them."""
    found, depth, current = [], 0, ""
    for char in catalogue.capabilities()[name].named_by:
        depth += (char == "(") - (char == ")")
        if char == "|" and depth == 0:
            found.append(current)
            current = ""
        else:
            current += char
    return found + [current]


def canonical(name: str) -> str:
    return re.sub(r"[\s_]+", "-", name.strip().lower())


def declared(value: str | Iterable[str] | None = None) -> tuple[str, ...]:
    """The capabilities declared unsupported (the run's setting by default), checked."""
    if value is None:
        value = settings.current().get(UNSUPPORTED_ENV)
    names = [canonical(name) for name in (value.split(",") if isinstance(value, str) else value) if name.strip()]
    names = [name for name in names if name != NOTHING]
    unknown = [name for name in names if name not in catalogue.capabilities()]
    if unknown:
        raise ScopeError(f"unknown capability {', '.join(map(repr, unknown))}: choose from "
                         f"{', '.join(catalogue.capabilities())} (docs/scope.md)")
    return tuple(name for name in catalogue.capabilities() if name in names)


def needs(*names: str) -> Callable:
    """Declare on a test method or a scenario family what its graphs cannot show it needs."""
    for name in names:
        if name not in catalogue.capabilities():
            raise ScopeError(f"@needs: unknown capability {name!r}")

    def mark(target: Any) -> Any:
        setattr(target, _STATIC, tuple(sorted({*getattr(target, _STATIC, ()), *names})))
        return target

    return mark


def declared_by(*targets: Any) -> set[str]:
    """What ``@needs`` declared on these (a test method, its class)."""
    return {name for target in targets for name in getattr(target, _STATIC, ())}


def needed(features: Iterable[str]) -> set[str]:
    """The capabilities among features a test's graphs and calls showed."""
    return {name for name in features if name in catalogue.capabilities()}


def refused(message: str, out_of_scope: Iterable[str]) -> str | None:
    """The first of ``out_of_scope`` that an error's ``message`` refuses (``named_in``), if any."""
    return next((name for name in out_of_scope if named_in(name, message)), None)


_CAUGHT = "_dynamo_suite_backend_errors"


def attach_caught(failure: BaseException, raised: list[BaseException | None]) -> BaseException:
    """``failure``, a check's report of several compiled calls at once, knowing the errors
    those calls raised when nothing else failed (each entry is a call's error, or None where
    the call answered): such a failure is the backend's refusal if each error is one."""
    if raised and all(error is not None for error in raised):
        setattr(failure, _CAUGHT, list(raised))
    return failure


def caught(failure: BaseException) -> list[BaseException]:
    """The compiled calls' errors a check's failure is made of (attach_caught), or none."""
    return list(getattr(failure, _CAUGHT, ()))


_LEVELS = {"site": "an operator call", "graph": "the graph", "call": "each call", "value": "a call's values",
           "index": "a call's indices", "backward": "a backward pass", "declared": "the scenario's @needs"}


def table() -> str:
    """The capabilities as docs/scope.md shows them (test/harness/test_capabilities.py keeps the
    page current: ``python -c "from harness.features import scope; print(scope.table())"``)."""
    rows = ["| capability | a test needs it when | read from | a refusal names it by one of |",
            "| --- | --- | --- | --- |"]
    rows += [f"| `{name}` | {feature.means} | {', '.join(_LEVELS[level] for level in feature.levels())}"
             + (", the scenario's @needs" if "declared" not in feature.levels() else "") + " | "
             + ", ".join(f"`{word.replace('|', '&#124;')}`" for word in words(name)) + " |"
             for name, feature in catalogue.capabilities().items()]
    return "\n".join(rows)
