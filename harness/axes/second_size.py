"""A graph with symbolic sizes, run again at a second size.

Under the ``dynamic`` variant the backend receives graphs whose sizes are symbols (``s0``,
``s1``...) and compiles them once for every size. Running only the size a scenario was
written with cannot tell a backend that really handles symbolic sizes from one that bakes
in the sizes it first saw. So every such graph is also run at a second size: each size
symbol doubled (or, where a guard Dynamo recorded for the graph rules that out, grown
another way the guards accept), inputs rebuilt with the new sizes and strides from the
graph's own symbolic metadata, and the backend's compiled
callable compared with the captured graph run eagerly on copies of the same inputs
(harness/checks/replay.py).

Nothing here knows a scenario: it works on what any backend receives (a GraphModule and its
example inputs), so it applies to every family unchanged. (The ``automatic_dynamic``
variant replays a scenario's own call instead: harness/axes/automatic_dynamic.py.)
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import sympy
import torch

from harness import compat
from harness.checks import replay

# Second sizes to try, in order; the first that every guard Dynamo recorded for the graph
# accepts is used (the compiled graph is only valid where its guards hold).
GROWTHS = ((lambda size: size * 2), (lambda size: size + 1), (lambda size: size * 3), (lambda size: size + 2))


@dataclass
class SecondSize:
    """A captured graph and its inputs at the second size, to replay after the scenario."""

    graph: torch.fx.GraphModule  # a copy taken before the backend saw it (copy_graph)
    compiled: Callable
    inputs: list[Any]
    sizes: dict[str, tuple[int, int]]  # symbol -> (first size, second size)
    leaves: list[bool]  # which inputs were leaves in the scenario
    grad_enabled: bool  # global state the graph was compiled (and Dynamo guards) for
    default_dtype: torch.dtype

    def describe(self) -> str:
        return ", ".join(f"{name} {first}->{second}" for name, (first, second) in sorted(self.sizes.items()))

    @contextlib.contextmanager
    def global_state(self) -> Iterator[None]:
        previous = torch.get_default_dtype()
        torch.set_default_dtype(self.default_dtype)
        try:
            with torch.set_grad_enabled(self.grad_enabled):
                yield
        finally:
            torch.set_default_dtype(previous)

    def runs_eagerly(self) -> bool:
        """Whether the captured graph itself accepts the second size (a guard Dynamo added
        may rule it out), and gives the same result twice: a graph that draws random numbers
        cannot be compared across two implementations of its random ops."""
        return replay.repeats(self.graph, self.inputs, self.leaves, self.global_state)

    def check(self, testcase) -> None:
        """The backend's compiled graph against the captured graph run eagerly: outputs,
        inputs after the call (mutations), and the gradients of a weighted loss."""
        replay.compare_runs(testcase, self.graph, self.compiled, self.inputs, self.leaves, self.global_state)


def capture(gm: torch.fx.GraphModule, example_inputs: list[Any], compiled: Callable) -> SecondSize | None:
    """``gm`` (a copy_graph taken before compiling) at a second size, or None when it has no
    size that can change (static sizes only, sizes that depend on data, inputs that alias or
    are tensor subclasses, a graph that changes grad mode part way)."""
    if any(isinstance(example, torch.Tensor) and type(example) not in (torch.Tensor, torch.nn.Parameter)
           for example in example_inputs):
        return None  # a tensor subclass: its inner tensors' sizes are not ours to rebuild
    try:
        return _capture(gm, example_inputs, compiled)
    except _NotASize:
        return None


def _capture(gm: torch.fx.GraphModule, example_inputs: list[Any], compiled: Callable) -> SecondSize | None:
    placeholders = [node for node in gm.graph.nodes if node.op == "placeholder"]
    if len(placeholders) != len(example_inputs):
        return None
    if any(compat.is_grad_mode_switch(node.target) for node in gm.graph.nodes):
        return None  # it changes grad mode part way, and leaves restoring it to Dynamo's frame
    if torch.is_autocast_enabled() or torch.is_autocast_enabled("cpu"):
        return None  # compiled for an autocast region the replay would have to recreate
    values = [node.meta.get("example_value") for node in placeholders]
    shape_env = _shape_env(values)
    if shape_env is None:
        return None
    symbols = set().union(*(_free_symbols(value) for value in values))
    hints = compat.size_hints(shape_env)
    if not symbols or any(symbol not in hints for symbol in symbols):
        return None  # static, or an unbacked (data-dependent) size: nothing to choose
    first = {symbol: int(hints[symbol]) for symbol in symbols}
    tensors = [example for example in example_inputs if isinstance(example, torch.Tensor)]
    if len({_storage(example) for example in tensors}) < len(tensors):
        return None  # inputs that alias each other: their copies at a second size would not
    for grow in GROWTHS:
        second = {symbol: sympy.Integer(grow(size)) for symbol, size in first.items()}
        if _guards_hold(shape_env, hints, second):
            break
    else:
        return None  # no second size this graph is valid for
    inputs = [_at(value, example, second) for value, example in zip(values, example_inputs)]
    return SecondSize(gm, compiled, inputs,
                      {str(symbol): (first[symbol], int(second[symbol])) for symbol in symbols},
                      [isinstance(example, torch.Tensor) and example.is_leaf for example in example_inputs],
                      torch.is_grad_enabled(), torch.get_default_dtype())


def _guards_hold(shape_env: Any, hints: dict, assignment: dict) -> bool:
    """Whether the sizes in ``assignment`` (the other symbols of the frame keeping their
    values) satisfy every size guard Dynamo recorded."""
    values = {**{symbol: sympy.Integer(int(value)) for symbol, value in hints.items()}, **assignment}
    for guard in shape_env.guards:
        try:
            if not bool(sympy.sympify(guard.expr).xreplace(values)):
                return False
        except TypeError:  # still symbolic: a symbol we know no value for
            return False
    return True


class _NotASize(Exception):
    pass


def has_symbolic_sizes(gm: torch.fx.GraphModule) -> bool:
    """Whether a graph (Dynamo's, or an exported program's) has a size symbol among its inputs."""
    return any(_symbolic_parts(node.meta.get("example_value", node.meta.get("val")))
               for node in gm.graph.nodes if node.op == "placeholder")


def _storage(tensor: torch.Tensor) -> int:
    return tensor.untyped_storage().data_ptr()


def _shape_env(values: list[Any]):
    for value in values:
        for size in _symbolic_parts(value):
            return size.node.shape_env
    return None


def _symbolic_parts(value: Any) -> list[torch.SymInt]:
    if isinstance(value, torch.SymInt):
        return [value]
    if isinstance(value, torch.Tensor):
        parts = [*value.size(), *value.stride(), value.storage_offset()]
        return [part for part in parts if isinstance(part, torch.SymInt)]
    return []


def _free_symbols(value: Any) -> set:
    return set().union(*(sympy.sympify(part.node.expr).free_symbols for part in _symbolic_parts(value)))


def _evaluate(size: Any, assignment: dict) -> int:
    if not isinstance(size, torch.SymInt):
        return int(size)
    result = sympy.sympify(size.node.expr).xreplace(assignment)
    if not result.is_number:
        raise _NotASize(str(result))
    return int(result)


def _at(fake: Any, example: Any, assignment: dict) -> Any:
    """``example`` (a real input) rebuilt at the sizes ``assignment`` gives ``fake``'s symbols."""
    if isinstance(fake, torch.SymInt):
        return _evaluate(fake, assignment)
    if not isinstance(fake, torch.Tensor) or not isinstance(example, torch.Tensor):
        return example
    if not _symbolic_parts(fake):
        return example  # a static input (a parameter, a buffer): the same object
    size = [_evaluate(part, assignment) for part in fake.size()]
    stride = [_evaluate(part, assignment) for part in fake.stride()]
    offset = _evaluate(fake.storage_offset(), assignment)
    return tiled(example.detach(), size, stride, offset).requires_grad_(example.requires_grad)


def tiled(example: torch.Tensor, size: list[int], stride: list[int], offset: int) -> torch.Tensor:
    """A tensor of ``size`` and ``stride`` whose values repeat ``example``'s along each dimension,
    so integer inputs (indices, lengths) keep values that were valid for the first size."""
    values = example
    for dim, new in enumerate(size):
        old = values.shape[dim]
        if old == 0:
            values = values.new_zeros([*values.shape[:dim], new, *values.shape[dim + 1:]])
        elif old != new:
            values = values.index_select(dim, torch.arange(new, device=values.device) % old)
    if any(step == 0 and n > 1 for n, step in zip(size, stride)):
        raise _NotASize("an expanded input (stride 0)")  # its strides cannot be rebuilt by copying
    extent = offset + 1 + sum((n - 1) * step for n, step in zip(size, stride)) if all(size) else offset
    storage = torch.zeros(extent, dtype=example.dtype, device=example.device)
    result = storage.as_strided(size, stride, offset)
    with torch.no_grad():
        result.copy_(values)
    return result


def copy_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A copy of ``gm``'s graph (sharing its submodules and node metadata), unaffected by a
    backend that rewrites the graph it receives."""
    graph = torch.fx.Graph()
    graph.output(graph.graph_copy(gm.graph, {}))
    return torch.fx.GraphModule(gm, graph)
