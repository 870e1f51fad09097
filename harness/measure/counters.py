"""Backends that count what Dynamo hands them.

Every scenario compiles through one of these, which is how the suite proves that the
backend under test really received a graph instead of Dynamo running the code eagerly.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from harness import compat
from harness.features.recorder import GraphInputs, Recorder
from harness.measure import eager_share, share_limit, stages


def count_ops(gm: torch.fx.GraphModule) -> int:
    """Calls in the graph: functions, methods and submodules."""
    return sum(1 for node in gm.graph.nodes if node.op.startswith("call_"))


class CompileCounter:
    """A backend that records each graph and runs it as captured (no compilation)."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.frame_count = 0
        self.op_count = 0
        self.graphs: list[torch.fx.GraphModule] = []
        self.example_inputs: list[list[Any]] = []
        # Per graph, the keyword arguments torch handed with it: mode= and options= of the compile.
        self.compile_kwargs: list[dict[str, Any]] = []
        # The features its graphs and their calls showed (harness.features), read before the
        # backend sees a graph.
        self.features = Recorder()
        # Per graph, what its inputs are (harness.features.recorder.GraphInputs).
        self._graph_inputs: list[Any] = []

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Any], **kwargs: Any) -> Callable:
        self.frame_count += 1
        self.op_count += count_ops(gm)
        self.graphs.append(gm)
        self.example_inputs.append(list(example_inputs))
        self.compile_kwargs.append(kwargs)
        self._graph_inputs.append(self.features.graph(gm, example_inputs))
        return self.compile(gm, example_inputs, **kwargs)

    def compile(self, gm: torch.fx.GraphModule, example_inputs: list[Any], **kwargs: Any) -> Callable:
        return gm.forward

    def __repr__(self) -> str:
        return f"{type(self).__name__}(frames={self.frame_count}, ops={self.op_count})"


class CompileCounterWithBackend(CompileCounter):
    """Counts like CompileCounter, then hands the graph to ``backend``.

    ``backend`` is a harness Backend, a registered name, or any compiler callable. Names are
    looked up when a graph arrives, so the registry's current entry is the one used.
    """

    def __init__(self, backend: Any, *, measure_eager_share: bool = False) -> None:
        super().__init__()
        self.backend = backend
        # The test cases' counters measure (BackendTestCase.new_counter); a counter wrapped
        # around one of those must not measure the same calls again.
        self.measure_eager_share = measure_eager_share and share_limit.measuring()
        # Optional: called as around_compile(gm, example_inputs, compile) in place of
        # compile(gm, example_inputs), to look at the graph before and the result after.
        self.around_compile: Callable[[torch.fx.GraphModule, list[Any], Callable], Callable] | None = None
        # harness.measure.eager_share: per graph compiled, its own ops and what each call ran eagerly.
        self.eager_share: list[eager_share.GraphRecord] = []
        # Calls of the backend's compiled graphs, all graphs together: a replay that sees this
        # unchanged ran no code of the backend's (Dynamo ran the call eagerly).
        self.calls_run = 0

    def compile(self, gm: torch.fx.GraphModule, example_inputs: list[Any], **kwargs: Any) -> Callable:
        # The compile's mode= and options= go on to the backend as torch would hand them.
        backend = compat.with_options(self.backend, kwargs)
        # Counted before the backend sees the graph: a backend may rewrite it in place.
        record = eager_share.GraphRecord(eager_share.graph_ops(gm, example_inputs)) if self.measure_eager_share else None
        with stages.running(stages.BACKEND_COMPILE):
            if self.around_compile is not None:
                compiled = self.around_compile(gm, example_inputs, backend)
            else:
                compiled = backend(gm, example_inputs)
        if record is not None:
            self.eager_share.append(record)
            compiled = eager_share.probe(compiled, record)
        inputs = self._graph_inputs[-1] if self._graph_inputs else GraphInputs()
        return _run_as_a_stage(self.features.watch(compiled, inputs), self)

    def __repr__(self) -> str:
        name = getattr(self.backend, "spec", self.backend)
        return f"CompileCounterWithBackend({name!r}, frames={self.frame_count}, ops={self.op_count})"


def _run_as_a_stage(compiled: Callable, counter: CompileCounterWithBackend) -> Callable:
    """``compiled``, whose errors are marked as raised while the compiled code ran, and whose
    calls ``counter`` counts."""

    def run(*args: Any, **kwargs: Any) -> Any:
        counter.calls_run += 1
        with stages.running(stages.BACKEND_RUN):
            return compiled(*args, **kwargs)

    if getattr(compiled, "_boxed_call", False):
        run._boxed_call = True  # type: ignore[attr-defined]
    return run
