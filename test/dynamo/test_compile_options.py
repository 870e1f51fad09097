"""Compile options: ``torch.compile(f, backend=B, mode=..., options={...}, fullgraph=...,
dynamic=...)``, the way users reach a backend, and how a backend must handle them.

torch hands a backend ``mode`` and ``options`` as keyword arguments (inductor, by name,
through its own wrapper). Two contracts follow, which no scenario compiled without options
can show:

* an option the backend does not know is *reported*: refused with an error naming it (as
  inductor's "Unexpected optimization option"), or warned about by name (as aot_eager's
  "ignoring extra kwargs"), never silently dropped, so a misspelt option is found;
* options belong to their own compile: what one compile was given never reaches the next in
  the same process, and Dynamo keeps each compile's ``fullgraph`` and ``dynamic`` to itself.

Every other scenario runs under the run's own options (``--compile-options``,
harness/axes/compile_options.py); here the counter also checks torch handed each compile's
options on. The faulty backends ``ignores_options`` and ``keeps_first_options``
(test/harness/faulty_backends/options.py) fail this family (test/proofs/test_option_faults.py).
"""

from __future__ import annotations

import contextlib
import logging
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import torch

from harness import BackendTestCase, assert_close, for_each_backend, variants
from harness import has_symbolic_sizes

# Option names and a mode no backend can know.
UNKNOWN = ("dynamo_aot_suite_unknown_option_a", "dynamo_aot_suite_unknown_option_b")
UNKNOWN_MODE = "dynamo-aot-suite-unknown-mode"
# A backend without a mode= or options= parameter refuses the keyword itself: reported too.
_KEYWORD_REFUSED = re.compile(r"unexpected keyword argument '(mode|options)'")
_GRAPH_BREAK = re.compile(r"graph.?break", re.IGNORECASE)


@dataclass
class Compiled:
    """What one compile and call of a function showed: the error it raised, the warnings
    and log records at WARNING or above while it ran, and whether its output was right."""

    error: str = ""
    warnings: list[str] = field(default_factory=list)

    def names(self, word: str) -> bool:
        return any(word in text for text in [self.error, *self.warnings])

    def reported(self, word: str) -> bool:
        return self.names(word) or bool(_KEYWORD_REFUSED.search(self.error))

    def describe(self) -> str:
        if self.error:
            return f"it raised: {self.error.splitlines()[0][:300]}"
        return f"warnings: {[text[:200] for text in self.warnings]}" if self.warnings else "no error and no warning"


class _Records(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record.getMessage())


@contextlib.contextmanager
def _warnings_and_logs(into: list[str]) -> Iterator[None]:
    """Every warning and every log record at WARNING or above while the block runs. A record
    reaches the root unless a logger on its way stops it (torch's own loggers do), so the
    handler goes on the root and on every logger that does not propagate."""
    handler = _Records(into)
    loggers = [logging.getLogger(), *(logger for logger in list(logging.root.manager.loggerDict.values())
                                      if isinstance(logger, logging.Logger) and not logger.propagate)]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        into.extend(str(warning.message) for warning in caught)
    finally:
        for logger in loggers:
            logger.removeHandler(handler)


def _first(x):
    return torch.sin(x) * 2 + 1


def _second(x):
    return torch.cos(x) - x


def _third(x):
    return torch.tanh(x) / 2


def _with_break(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y.cos() + 1


@variants.opt_out("dynamic", "the family sets dynamic= per compile itself")
@variants.opt_out("automatic_dynamic", "the family sets dynamic= per compile itself")
@variants.opt_out("compiled_autograd", "the family runs no backward")
@for_each_backend
class CompileOptionsTests(BackendTestCase):
    def compile_and_call(self, fn: Callable, **kwargs: Any) -> Compiled:
        """Compile ``fn`` with a counter of its own and ``kwargs`` (over the run's options),
        call it once; a call that returns must be right, and the counter must have been handed
        exactly this compile's mode= and options=."""
        counter = self.new_counter()
        given = self.compile_kwargs(**kwargs)
        x = torch.randn(8)
        seen = Compiled()
        with _warnings_and_logs(seen.warnings):
            try:
                actual = self.compile(fn, counter=counter, **kwargs)(x)
            except Exception as error:  # the backend's refusal, inside Dynamo's wrapper
                seen.error = f"{type(error).__name__}: {error}"
        if not seen.error:
            assert_close(self, fn(x), actual)
        handed = {key: given[key] for key in ("mode", "options") if given.get(key) not in (None, "default")}
        self.assertEqual(counter.compile_kwargs, [handed] if counter.frame_count else [],
                         "torch did not hand the backend this compile's mode= and options=")
        return seen

    def assert_reported(self, seen: Compiled, what: str, word: str) -> None:
        self.assertTrue(seen.reported(word),
                        f"the backend took {what}, which it cannot know, with nothing naming it ({seen.describe()}): a "
                        "misspelt option would be silently ignored. torch's own backends refuse one with an error "
                        "naming it (inductor: 'Unexpected optimization option') or warn naming it (aot_eager: "
                        "'ignoring extra kwargs')")

    def test_unknown_option_is_reported(self):
        seen = self.compile_and_call(_first, options={UNKNOWN[0]: True})
        self.assert_reported(seen, f"options={{'{UNKNOWN[0]}': True}}", UNKNOWN[0])

    def test_unknown_mode_is_reported(self):
        seen = self.compile_and_call(_first, mode=UNKNOWN_MODE)
        self.assert_reported(seen, f"mode='{UNKNOWN_MODE}'", UNKNOWN_MODE)

    def test_options_do_not_leak_into_later_compiles(self):
        first = self.compile_and_call(_first, options={UNKNOWN[0]: True})
        self.assert_reported(first, f"options={{'{UNKNOWN[0]}': True}}", UNKNOWN[0])
        second = self.compile_and_call(_second)
        self.assertFalse(second.names(UNKNOWN[0]),
                         f"a compile given only the run's options was reported as having the previous compile's "
                         f"option {UNKNOWN[0]} ({second.describe()}): options leak into later compiles")
        self.assertEqual(second.error, "", "a compile with only the run's options failed after one with an unknown "
                                           "option: the earlier compile's options stayed")
        third = self.compile_and_call(_third, options={UNKNOWN[1]: True})
        self.assert_reported(third, f"options={{'{UNKNOWN[1]}': True}}", UNKNOWN[1])
        self.assertFalse(third.names(UNKNOWN[0]), f"the third compile was reported with the first compile's option "
                                                  f"{UNKNOWN[0]} ({third.describe()}): options leak into later compiles")

    def test_fullgraph_belongs_to_its_compile(self):
        x = torch.randn(8)
        for fullgraph in (True, False, True):
            counter = self.new_counter()
            compiled = self.compile(_with_break, counter=counter, fullgraph=fullgraph)
            if fullgraph:
                with self.assertRaises(Exception, msg="fullgraph=True accepted a graph break") as caught:
                    compiled(x)
                self.assertRegex(str(caught.exception), _GRAPH_BREAK)
                self.assertEqual(counter.frame_count, 0, "fullgraph=True handed the backend part of a graph")
            else:
                assert_close(self, _with_break(x), compiled(x))
                self.assertEqual(counter.frame_count, 2, "fullgraph=False did not compile the two sides of the break")

    def test_dynamic_belongs_to_its_compile(self):
        # One function compiled twice, called alternately at two sizes: each compile keeps
        # its own dynamic= (and Dynamo its own cache entries).
        static_counter, dynamic_counter = self.new_counter(), self.new_counter()
        static = self.compile(_first, counter=static_counter, dynamic=False)
        dynamic = self.compile(_first, counter=dynamic_counter, dynamic=True)
        for size in (6, 9, 6, 9):
            x = torch.randn(size)
            assert_close(self, _first(x), static(x))
            assert_close(self, _first(x), dynamic(x))
        self.assertEqual(dynamic_counter.frame_count, 1, "dynamic=True recompiled for a new size")
        self.assertTrue(has_symbolic_sizes(dynamic_counter.graphs[0]), "dynamic=True gave the backend static sizes")
        self.assertEqual(static_counter.frame_count, 2, "dynamic=False did not compile once per size")
        self.assertFalse(any(has_symbolic_sizes(graph) for graph in static_counter.graphs),
                         "dynamic=False gave the backend symbolic sizes")
