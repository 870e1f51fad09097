"""Reading the catalogue's features off the graphs a backend receives and the calls it serves.

A ``Recorder`` belongs to one counter (harness.measure.counters): ``graph`` reads a graph
Dynamo hands the backend, before the backend sees it; ``watch`` wraps what the backend
returned, so that each call of it is read too (the caller's modes, the call's index, the
values of its inputs, backward passes through its outputs). ``seen`` is what was found:
feature names, and ``name@family`` for each operator family a site feature was found in.

Reading never changes a test: a rule that fails is a feature not seen. A graph's calls are
read on its first ``READ_CALLS`` calls only, the values of its inputs on the first
``VALUE_CALLS``, and a feature already seen is not looked for again: a call after those is
one comparison more (the perf tier times calls of a fraction of a millisecond).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from harness import compat
from harness.features import catalogue, families
from harness.features.views import (BackwardView, CallView, GraphView, Site, argument_variants, graph_view,
                                    integer_values, meta_of, plain_values, site_of_values, value_of)

VALUE_CALLS = 3
READ_CALLS = 8



def _with(level: str) -> list[catalogue.Feature]:
    """The features with a rule at ``level``, read from the catalogue at each use (so that a
    new entry is all it takes: test/harness/test_features.py adds a toy one)."""
    return [feature for feature in catalogue.CATALOGUE.values() if getattr(feature, level) is not None]


def holds(rule: Callable[..., bool], *args: Any) -> bool:
    try:
        return bool(rule(*args))
    except Exception:  # a reading aid: never let it change a test
        return False


def of_site(site: Site) -> set[str]:
    """The features of one operator call."""
    return {feature.name for feature in _with("site") if holds(feature.site, site)}


def of_graph(view: GraphView) -> set[str]:
    """The features of a graph: its operator calls' (also as ``name@family``) and its own."""
    found: set[str] = set()
    for site in [*view.sites, view.pseudo_site()]:
        names = of_site(site)
        found |= names
        if site.family:
            found.update(f"{name}@{site.family}" for name in names)
    found.update(feature.name for feature in _with("graph") if holds(feature.graph, view))
    return found


def of_values(target: Any, args: tuple, kwargs: dict, result: Any) -> set[str]:
    """The features an eager call of ``target`` on these values shows: its site's, and its
    tensors' values'."""
    found = of_site(site_of_values(target, args, kwargs, result))
    for value in (*args, *kwargs.values()):
        values = plain_values(value)
        if values is not None:
            found.update(feature.name for feature in _with("value") if holds(feature.value, values))
    return found


def variants_called(fn: Callable, args: tuple, kwargs: dict) -> set[str]:
    """``<operator>: <name>=<value>`` for each option of each ATen operator an eager call of
    ``fn`` runs (views.argument_variants): the kernel variants the call asks for. Empty where
    the call raises."""
    from torch.utils._python_dispatch import TorchDispatchMode

    found: set[str] = set()

    class Reading(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, call_args=(), call_kwargs=None):
            call_kwargs = call_kwargs or {}
            found.update(f"{func._opname}: {variant}" for variant in argument_variants(func, call_args, call_kwargs))
            return func(*call_args, **call_kwargs)

    try:
        with torch.no_grad(), Reading():
            fn(*args, **kwargs)
    except Exception:
        return set()
    return found


@dataclass(frozen=True)
class GraphInputs:
    """What a graph's inputs are, for reading its calls: which an indexing call reads as
    indices (position -> the length of the dimension it indexes, None: unknown), and which
    hold a module's parameters or buffers (its state, not the data it is fed)."""

    indices: dict[int, int | None] = field(default_factory=dict)
    state: frozenset[int] = frozenset()


def graph_inputs(view: GraphView) -> GraphInputs:
    placeholders = [node for node in view.graph.nodes if node.op == "placeholder"]
    positions = {node: index for index, node in enumerate(placeholders)}
    state = frozenset(index for index, name in enumerate(view.input_names)
                      if "_parameters_" in name.lower() or "_buffers_" in name.lower())
    found: dict[int, int | None] = {}
    for site in view.sites:
        if site.family != families.INDEXING or site.node is None:
            continue
        args = [arg for arg in (*site.node.args, *site.node.kwargs.values())]
        flat = [item for arg in args for item in (arg if isinstance(arg, (list, tuple)) else [arg])]
        indices = [node for node in flat if isinstance(node, torch.fx.Node) and node in positions
                   and (meta := meta_of(value_of(node))) is not None and meta.dtype in ("int64", "int32")]
        data = next((meta for node in flat if isinstance(node, torch.fx.Node) and node not in indices
                     and (meta := meta_of(value_of(node))) is not None and meta.dtype not in ("int64", "int32")), None)
        length = None
        if data is not None and data.ndim:
            dim = site.dim if site.dim is not None else 0
            if -data.ndim <= dim < data.ndim:
                length = data.shape[dim]
        for node in indices:
            found[positions[node]] = length
    return GraphInputs(found, state)


class Recorder:
    def __init__(self) -> None:
        self.seen: set[str] = set()
        self._modules: list[weakref.ref] = []

    def watch_module(self, module: Any) -> None:
        """A module compiled through this counter: its mode and hooks are read at each call."""
        if isinstance(module, torch.nn.Module):
            self._modules.append(weakref.ref(module))

    def modules(self) -> list[Any]:
        return [module for ref in self._modules if (module := ref()) is not None]

    def graph(self, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> GraphInputs:
        """Read a graph; returns what its inputs are (for ``watch``)."""
        try:
            view = graph_view(gm, example_inputs)
            self.seen |= of_graph(view)
            return graph_inputs(view)
        except Exception:  # a reading aid: never let it change a test
            return GraphInputs()

    def watch(self, compiled: Callable, graph_inputs: GraphInputs) -> Callable:
        """``compiled``, each call of which is read."""
        calls = [0]
        boxed = getattr(compiled, "_boxed_call", False)

        def run(*args: Any, **kwargs: Any) -> Any:
            index = calls[0]
            if index >= READ_CALLS:
                return compiled(*args, **kwargs)
            calls[0] += 1
            inputs = list(args[0]) if boxed and len(args) == 1 and isinstance(args[0], list) else list(args)
            try:
                self._read_call(index, inputs, graph_inputs)
            except Exception:
                pass
            result = compiled(*args, **kwargs)
            try:
                self._hook_backward(result)
            except Exception:
                pass
            return result

        if boxed:
            run._boxed_call = True  # type: ignore[attr-defined]
        return run

    def _read_call(self, index: int, inputs: list[Any], graph_inputs: GraphInputs) -> None:
        call = CallView.now(index, self.modules())
        self.seen.update(feature.name for feature in _with("call") if feature.name not in self.seen
                         and holds(feature.call, call))
        if index >= VALUE_CALLS:
            return
        for position, value in enumerate(inputs):
            if position in graph_inputs.state:
                continue  # a module's parameters and buffers hold its state, not the data it is fed
            wanted = [feature for feature in _with("value") if feature.name not in self.seen]
            values = plain_values(value) if wanted else None
            if values is not None:
                self.seen.update(feature.name for feature in wanted if holds(feature.value, values))
            if position in graph_inputs.indices:
                integers = integer_values(value)
                if integers is not None:
                    self.seen.update(feature.name for feature in _with("index") if feature.name not in self.seen
                                     and holds(feature.index, integers, graph_inputs.indices[position]))

    def _hook_backward(self, result: Any) -> None:
        if not torch.is_grad_enabled() or compat.compiled_autograd_active():
            return
        nodes = {id(node): node for value in _tensors(result) if (node := value.grad_fn) is not None}
        if not nodes:
            return
        passes = [0]
        seen_in_pass: set[int] = set()

        def before_backward(node_id: int) -> Callable:
            def hook(*_: Any) -> None:
                # The first of this call's nodes a pass reaches starts it; a node reached
                # again starts another pass (retain_graph).
                if node_id in seen_in_pass or not seen_in_pass:
                    seen_in_pass.clear()
                    passes[0] += 1
                seen_in_pass.add(node_id)
                backward = BackwardView(passes[0], torch.is_grad_enabled())
                self.seen.update(feature.name for feature in _with("backward") if holds(feature.backward, backward))
                return None

            return hook

        for node_id, node in nodes.items():
            try:
                node.register_prehook(before_backward(node_id))
            except Exception:
                pass


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [tensor for item in value for tensor in _tensors(item)]
    return []
