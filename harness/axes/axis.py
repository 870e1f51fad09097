"""What an axis is: one dimension the scenarios run along (the backend, the variant, the
dtype, the device), declared once and read by everything that names tests.

A declaration (``Axis``) is plain data and needs no torch, so the runner and the reports use
it too: its name (the field in results.json and in an expectation), the command-line option
and the environment variable that choose its values, its default, its known values, whether
the run takes one value or a list (a generated class per value), and whether the default
shows in test ids and report columns. What an axis *does* to a test (set torch's default
dtype, patch Dynamo's configuration...) is its ``Behaviour``, named by a ``module:attr`` path
and loaded only where the tests run.

The axes in use, in the order they appear in ids, are ``harness.axes.registry.AXES``.
"""

from __future__ import annotations

import fnmatch
import importlib
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

T = TypeVar("T")
_OPT_OUTS = "__axis_opt_outs__"


class AxisError(ValueError):
    """A value an axis does not take; the message is the one line the user sees."""


@dataclass(frozen=True)
class Axis:
    name: str  # singular: results.json's field, an expectation's key ("variant")
    option: str  # the command-line option ("--variants")
    env: str  # the environment variable, for plain unittest and the workers ("DYNAMO_SUITE_VARIANTS")
    default: str  # chosen when nothing is: a comma-separated list for a per-test axis
    help: str  # what --help says about the option (the default is added)
    choices: tuple[str, ...] = ()  # the values it takes; empty: any (checked by its behaviour)
    per_run: bool = False  # one value for the whole run (the device); else a class per listed value
    always_shown: bool = False  # the value is in every id and column (the backend), not only when not the default
    by_type: bool = False  # an expectation's glob matches the part before ':' (cuda for cuda:1)
    behaviour: str = ""  # "module:attr" of its Behaviour; empty: it changes nothing in the test
    # "module:attr" of a torch-free function (text, source) -> the value's one spelling, for a
    # per-run value that is not a plain name (compile options); it is never split at commas.
    normalize: str = ""

    @property
    def record_key(self) -> str:
        """Its key in results.json's run record: ``variants``, ``dtypes``, ``device``."""
        return self.option.lstrip("-").replace("-", "_")

    @property
    def first(self) -> str:
        """The value a test has when the axis was never chosen (the first of the default list)."""
        return self.default.split(",")[0].strip()

    def shown(self, value: str) -> bool:
        """Whether ``value`` appears in a test id and a report column."""
        return not self.per_run and (self.always_shown or value != self.first)

    def parse(self, text: str | None, source: str = "") -> tuple[str, ...]:
        """The values in ``text`` (the default when empty), in order, without repeats; an
        unknown one raises AxisError naming ``source`` and the choices."""
        given = (text or "").strip() or self.default
        if self.normalize:
            return (_load(self.normalize)(given, source or self.option),)
        names = [name.strip() for name in given.split(",") if name.strip()]
        if self.per_run and len(names) > 1:
            raise AxisError(f"{source or self.option}={given!r}: one {self.name} per run")
        unknown = [name for name in names if self.choices and name not in self.choices]
        if unknown or not names:
            raise AxisError(f"{source or self.option}={given!r}: unknown {self.name} {', '.join(unknown) or '(none given)'}"
                            + (f"; choose from {', '.join(self.choices)}" if self.choices else ""))
        return tuple(dict.fromkeys(names))

    def matches(self, pattern: str, value: str) -> bool:
        """Whether an expectation's glob for this axis covers ``value``."""
        return fnmatch.fnmatchcase(value.split(":")[0] if self.by_type else value, pattern)

    def load_behaviour(self) -> "Behaviour":
        return _load(self.behaviour) if self.behaviour else Behaviour()


def _load(path: str) -> Any:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


class Behaviour:
    """What an axis does to the tests; the defaults do nothing. Subclasses live beside the
    axis's own code (harness/axes/variants.py...) and may import torch."""

    def values_for(self, family: type, selected: tuple[str, ...]) -> tuple[str, ...]:
        """The values ``family`` is generated for: every selected one unless it opts out of
        the axis (dtypes: only numeric families run in half precision)."""
        return selected

    def class_attributes(self, value: str) -> dict[str, Any]:
        """What a generated class for ``value`` carries besides its axis values (the Backend
        object, the Variant...)."""
        return {}

    def set_up(self, test: Any, value: str) -> None:
        """Prepare ``test`` for ``value`` after its state snapshot; anything entered must be
        left with ``test.addCleanup``, so it is never reported as a leak."""

    def counter_created(self, test: Any, value: str, counter: Any) -> None:
        """A BackendTestCase made a new counter around the backend under test."""

    def compile_kwargs(self, test: Any, value: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The keyword arguments every ``torch.compile`` of ``test`` gets, from the scenario's
        ``kwargs`` (the compile options axis adds the run's)."""
        return kwargs

    def compiled(self, test: Any, value: str, fn: Callable, compiled: Callable, counter: Any,
                 options: dict[str, Any]) -> Callable:
        """What ``test.compile(fn, **options)`` returns: ``compiled``, or a wrapper around it."""
        return compiled

    def after_body(self, test: Any, value: str) -> str | None:
        """Checks after a body that passed and gave the backend a graph (raise
        AssertionError to fail); a returned text makes the test SKIP with it (the value
        changed nothing the test ran)."""
        return None


def opt_out(axis: str, value: str, reason: str) -> Callable[[T], T]:
    """Class or test decorator: not run with ``value`` of ``axis`` (SKIP, with ``reason``).
    ``value`` is a glob; ``!glob`` opts out of every value but those (``"!cpu"``)."""
    if not reason.strip():
        raise AxisError(f"an opt-out of {axis} {value!r} needs a reason")

    def mark(target: T) -> T:
        # A fresh dict: a subclass's opt-outs never leak into its base.
        setattr(target, _OPT_OUTS, {**getattr(target, _OPT_OUTS, {}), (axis, value): reason})
        return target

    return mark


def opt_out_reason(testcase_class: type, test_method: Any, axis: str, value: str) -> str | None:
    """The reason the test opted out of ``value`` of ``axis`` (the method's own first), or None."""
    for holder in (test_method, testcase_class):
        reasons = getattr(holder, _OPT_OUTS, {})
        for (name, pattern), reason in reasons.items():
            if name == axis and fnmatch.fnmatchcase(value, pattern.lstrip("!")) != pattern.startswith("!"):
                return reason
    return None
