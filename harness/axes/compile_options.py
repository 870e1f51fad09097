"""The compile options axis: what every ``torch.compile`` of a run is given beside the backend.

Users reach a backend with ``mode=``, ``options={...}``, ``fullgraph=`` and ``dynamic=``; a
backend whose option handling is broken passes every test compiled without them. One set of
options per run (``--compile-options``, ``DYNAMO_SUITE_COMPILE_OPTIONS``, the configuration
file's ``compile-options``), written as ``key=value`` items separated by ``;``::

    mode=max-autotune-no-cudagraphs
    fullgraph=true;dynamic=false
    options.freezing=true;options.max_autotune=true

``options.NAME=VALUE`` adds NAME to the ``options`` dict (``options={"freezing": true}``,
JSON, also works). Values are ``true``/``false``, numbers, JSON, or plain text. The value is
kept in one canonical spelling (sorted, lower-case literals), which is what results.json
records and an expectation's ``compile_options`` glob matches: ``"*fullgraph=true*"``.

A scenario's own keyword arguments win over the run's (a scenario that compiles with
``dynamic=True`` does so for its contract); an ``options`` dict is merged key by key. How torch
hands ``mode`` and ``options`` to the backend, and how the counter passes them on, is in
harness/measure/counters.py; test/dynamo/test_compile_options.py checks a backend's handling.
"""

from __future__ import annotations

import json
from typing import Any

from harness.axes import axis

DEFAULT = "default"  # nothing passed: torch.compile's own defaults
KEYS = ("dynamic", "fullgraph", "mode", "options")
_LITERALS = {"true": True, "false": False, "none": None, "null": None}
SYNTAX = "give key=value items separated by ';': mode=..., fullgraph=true, dynamic=false, options.NAME=VALUE"


def parse(text: str, source: str = "--compile-options") -> dict[str, Any]:
    """The torch.compile keyword arguments ``text`` names; AxisError says what is wrong in one line."""
    text = (text or "").strip()
    if text in ("", DEFAULT):
        return {}
    found: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(";"))):
        key, equals, raw = (part.strip() for part in item.partition("="))
        if not equals or not key:
            raise axis.AxisError(f"{source}={text!r}: '{item}' is not key=value; {SYNTAX}")
        value = _value(raw, f"{source}={text!r}: {key}")
        if key.startswith("options."):
            found.setdefault("options", {})[key[len("options."):]] = value
        elif key not in KEYS:
            raise axis.AxisError(f"{source}={text!r}: unknown key '{key}'; {SYNTAX}")
        elif key == "options":
            if not isinstance(value, dict):
                raise axis.AxisError(f"{source}={text!r}: options must be a JSON object, or options.NAME=VALUE items")
            found.setdefault("options", {}).update(value)
        elif key == "fullgraph" and not isinstance(value, bool):
            raise axis.AxisError(f"{source}={text!r}: fullgraph is true or false")
        elif key == "dynamic" and value not in (True, False, None):
            raise axis.AxisError(f"{source}={text!r}: dynamic is true, false or none")
        elif key == "dynamic" and value is None:
            found.pop("dynamic", None)  # torch's default
        else:
            found[key] = value if key != "mode" else str(value)
    if "mode" in found and "options" in found:
        # torch.compile itself refuses both; say so before a worker starts.
        raise axis.AxisError(f"{source}={text!r}: torch.compile takes mode or options, not both")
    return found


def canonical(text: str, source: str = "--compile-options") -> str:
    """``text`` in its one spelling: items sorted, literals lower-case, ``default`` for none."""
    found = parse(text, source)
    items = [(key, value) for key, value in found.items() if key != "options"]
    items += [(f"options.{name}", value) for name, value in found.get("options", {}).items()]
    return ";".join(f"{key}={_spelled(value)}" for key, value in sorted(items)) or DEFAULT


def handed_to_backend(text: str) -> dict[str, Any]:
    """What torch hands the backend itself of the options ``text`` names: ``mode`` and
    ``options`` (``fullgraph`` and ``dynamic`` are Dynamo's). A repro passes these on."""
    return {key: value for key, value in parse(text).items() if key in ("mode", "options")}


def merged(run_options: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """A compile's keyword arguments: the scenario's ``given`` over the run's options. An
    ``options`` dict is merged key by key; the run's ``mode`` gives way to a scenario's
    ``options`` and the other way round (torch takes one of them)."""
    result = {**run_options, **given}
    if "options" in run_options and "options" in given:
        result["options"] = {**run_options["options"], **given["options"]}
    if "mode" in given and "options" not in given:
        result.pop("options", None)
    if "options" in given and "mode" not in given:
        result.pop("mode", None)
    return result


def _value(raw: str, where: str) -> Any:
    if raw.lower() in _LITERALS:
        return _LITERALS[raw.lower()]
    if raw[:1] in '[{"' or raw.lstrip("-").replace(".", "", 1).isdigit():
        try:
            return json.loads(raw)
        except ValueError as error:
            raise axis.AxisError(f"{where}: {raw!r} is not valid JSON ({error})") from None
    return raw


def _spelled(value: Any) -> str:
    if isinstance(value, str) and value and not set(value) & set(';="[{ ') and value.lower() not in _LITERALS:
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


class _CompileOptionsBehaviour(axis.Behaviour):
    """Every compile of a test gets the run's options (BackendTestCase.compile_kwargs)."""

    def compile_kwargs(self, test: Any, value: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        return merged(parse(value), kwargs)


BEHAVIOUR = _CompileOptionsBehaviour()
