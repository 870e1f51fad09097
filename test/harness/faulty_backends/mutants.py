"""Faulty backends made by mutation, not by hand: the suite's own measure of how far its
checks reach beyond the faults it was written against (scripts/mutation_score.py).

A mutant is a real backend (``aot_eager``, or ``inductor``) whose graph compiler first
rewrites ONE node of every graph it is given (forward, backward and inference graphs
alike) with one mutation operator, the node drawn by a seeded random choice among the
nodes that operator can change. The draw is seeded by the mutant's name and a description
of the graph, so a mutant rewrites the same node of the same graph in every process, and
another seed most likely another node. A graph with no node the operator can change runs
as traced.

A mutant is named ``<operator>_s<seed>`` (``perturb_s0``), ``<operator>_s<seed>_inductor``
on inductor, and is found by this module's ``__getattr__``, so
``test.harness.faulty_backends.mutants:perturb_s0`` is a backend spec like any other.
``unmutated`` (``unmutated_inductor``) is the same pipeline with nothing rewritten: the
control a mutant's results are read against.

These are not in the package's exports: they break no clause on purpose, so
test/harness/test_smoke.py, which requires a smoke test for every faulty backend there,
has nothing to say about them. test/harness/test_mutants.py checks the operators;
test/harness/faulty_backends/mutant_probes.py decides which mutants are equivalent.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import random
import re
from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch.utils._pytree as pytree
from torch._guards import detect_fake_mode

from test.harness.faulty_backends._shared import _NUDGE, _packet_name

aten = torch.ops.aten
prims = torch.ops.prims

# When set, every rewrite appends "test id<TAB>mutant<TAB>site" to this file: which nodes a
# mutant really changed in a run, to tell a survivor the suite missed from one that only
# ever hit nodes where its rewrite changes nothing.
MUTATION_LOG_ENV = "DYNAMO_SUITE_MUTATION_LOG"
BASES = ("aot_eager", "inductor")
CONTROL = "unmutated"

# Integer arguments past this are sentinels ("to the end" of a slice), not sizes or indices.
_SENTINEL = 2 ** 31


@dataclass(frozen=True)
class Site:
    """One way to rewrite one node: the node, and what the operator changes there."""

    node: torch.fx.Node
    change: Any = None  # operator-specific: the arguments swapped, the integer changed, the input made stale
    text: str = ""

    def describe(self) -> str:
        return f"{self.node.name} = {self.node.target}" + (f" ({self.text})" if self.text else "")


@dataclass(frozen=True)
class Mutation:
    """What a mutant did to one graph."""

    site: str
    # The graph input the rewritten node now reads as it was on the first call (stale_input):
    # its index among the graph's inputs; the graph takes the stale copy as one more input.
    stale_input: int | None = None


@dataclass(frozen=True)
class Operator:
    name: str
    fault: str  # the kind of backend bug it stands for, one line
    sites: Callable[[torch.fx.Graph], list[Site]]
    apply: Callable[[torch.fx.GraphModule, Site], Mutation]
    # Whether a drawn site really can be rewritten (off_by_one: the operator still accepts
    # the changed integer). Checked only on the drawn sites, in draw order, as it costs a call.
    accepts: Callable[[Site], bool] = lambda site: True


# -- reading nodes ----------------------------------------------------------------------------


def _value(node: Any) -> Any:
    return node.meta.get("val") if isinstance(node, torch.fx.Node) else node


def _symbolic(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and not all(isinstance(size, int) for size in value.shape)


def _has_elements(value: torch.Tensor) -> bool:
    # A rewrite of an empty result changes nothing; a symbolic size is assumed not to be 0.
    return _symbolic(value) or value.numel() > 0


def _shape_text(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"{str(value.dtype).removeprefix('torch.')}{list(map(str, value.shape))}"
    return type(value).__name__


def _computes(node: torch.fx.Node) -> bool:
    """An operator call that makes a new value: not an input, the output, or an in-place write."""
    if node.op != "call_function":
        return False
    schema = getattr(node.target, "_schema", None)
    return schema is None or not schema.is_mutable


def _tensor_result(node: torch.fx.Node) -> torch.Tensor | None:
    value = _value(node)
    if _computes(node) and isinstance(value, torch.Tensor) and _has_elements(value):
        return value
    return None


def _fake_call(target: Callable, args: tuple, kwargs: dict) -> Any:
    """``target`` run on the fake values of its argument nodes, as the tracer did."""
    values_args, values_kwargs = torch.fx.node.map_arg((args, kwargs), _value)
    mode = detect_fake_mode([value for value in pytree.tree_leaves((values_args, values_kwargs))
                             if isinstance(value, torch.Tensor)])
    if mode is None:
        raise RuntimeError("no fake values to run on")
    with mode:
        return target(*values_args, **values_kwargs)


def _call(graph: torch.fx.Graph, target: Callable, *args: Any, **kwargs: Any) -> torch.fx.Node:
    """A new ATen call, with the fake value a later compiler (inductor) reads from it."""
    node = graph.call_function(target, args, kwargs)
    try:
        node.meta["val"] = _fake_call(target, args, kwargs)
    except Exception:
        pass  # aot_eager reads no meta; inductor finds its own way or fails, which is a result too
    return node


# -- operators that change a node's result ------------------------------------------------------


def _result_operator(name: str, fault: str, eligible: Callable[[torch.Tensor], bool],
                     build: Callable[[torch.fx.Graph, torch.fx.Node, torch.Tensor], torch.fx.Node]) -> Operator:
    """An operator that passes one node's result through ``build``'s ATen calls: every user
    of the node reads the changed value, the node itself is unchanged."""

    def sites(graph: torch.fx.Graph) -> list[Site]:
        return [Site(node) for node in graph.nodes
                if (value := _tensor_result(node)) is not None and eligible(value)]

    def apply(gm: torch.fx.GraphModule, site: Site) -> Mutation:
        graph, node = gm.graph, site.node
        before = set(graph.nodes)
        # Before the next node, not after this one: inserting_after puts each new node right
        # after the anchor, so several would come out in reverse order.
        with graph.inserting_before(node.next):
            result = build(graph, node, _value(node))
        inserted = set(graph.nodes) - before
        node.replace_all_uses_with(result, delete_user_cb=lambda user: user not in inserted)
        return Mutation(site.describe())

    return Operator(name, fault, sites, apply)


def _floating(value: torch.Tensor) -> bool:
    return value.dtype.is_floating_point


def _perturbed(graph: torch.fx.Graph, node: torch.fx.Node, value: torch.Tensor) -> torch.fx.Node:
    # _shared._nudged's 5% of the magnitude (at least 0.05), in operators both aot_eager and
    # inductor's lowering take (as the other rewrites below).
    offset = _call(graph, aten.mul.Tensor, _call(graph, aten.add.Tensor, _call(graph, aten.abs.default, node), 1.0),
                   _NUDGE)
    return _call(graph, aten.add.Tensor, node, offset)


def _flushed(graph: torch.fx.Graph, node: torch.fx.Node, value: torch.Tensor) -> torch.fx.Node:
    # The dtype's own smallest normal: float32's for float32 results, as a unit with
    # flush-to-zero set loses every subnormal it writes.
    tiny = torch.finfo(value.dtype).tiny
    small = _call(graph, aten.lt.Scalar, _call(graph, aten.abs.default, node), tiny)
    return _call(graph, aten.where.self, small, _call(graph, aten.mul.Tensor, node, 0.0), node)


def _round_trip(through: torch.dtype) -> Callable:
    def build(graph: torch.fx.Graph, node: torch.fx.Node, value: torch.Tensor) -> torch.fx.Node:
        narrow = _call(graph, prims.convert_element_type.default, node, through)
        return _call(graph, prims.convert_element_type.default, narrow, value.dtype)

    return build


_SIGNED = (torch.int8, torch.int16, torch.int32, torch.int64)

PERTURB = _result_operator(
    "perturb", "one kernel's result off by 5% of its magnitude (a wrong constant, a bad fusion)",
    lambda value: value.dtype.is_floating_point or value.dtype.is_complex, _perturbed)
FLUSH_TINY = _result_operator(
    "flush_tiny", "one kernel flushes subnormal results to zero (FTZ/DAZ left on)", _floating, _flushed)
DROP_SIGN = _result_operator(
    "drop_sign", "one kernel loses the sign bit of its results (abs where it should not)",
    lambda value: _floating(value) or value.dtype in _SIGNED,
    lambda graph, node, value: _call(graph, aten.abs.default, node))
LOWER_PRECISION = _result_operator(
    "lower_precision", "one float32/float64 kernel computes in bfloat16 (a lowered dtype)",
    lambda value: value.dtype in (torch.float32, torch.float64), _round_trip(torch.bfloat16))
TRUNCATE_INT = _result_operator(
    "truncate_int", "one integer kernel keeps only 16 bits of its int32/int64 results",
    lambda value: value.dtype in (torch.int32, torch.int64), _round_trip(torch.int16))


# -- swap_args ------------------------------------------------------------------------------------

# Operators whose result changes when two of their tensor arguments trade places.
NON_COMMUTATIVE = frozenset({
    "sub", "rsub", "div", "pow", "atan2", "fmod", "remainder", "floor_divide", "copysign", "xlogy",
    "mm", "bmm", "addmm", "baddbmm", "lt", "le", "gt", "ge", "where", "lerp", "clamp_min", "clamp_max",
    "threshold_backward", "sigmoid_backward", "tanh_backward", "gelu_backward", "silu_backward",
    "hardtanh_backward", "_softmax_backward_data", "_log_softmax_backward_data", "mse_loss_backward",
})


def _same_kind(first: Any, second: Any) -> bool:
    return (isinstance(first, torch.Tensor) and isinstance(second, torch.Tensor) and first.dtype == second.dtype
            and list(map(str, first.shape)) == list(map(str, second.shape)))


def _swap_sites(graph: torch.fx.Graph) -> list[Site]:
    sites = []
    for node in graph.nodes:
        if not _computes(node) or _packet_name(node) not in NON_COMMUTATIVE:
            continue
        tensors = [index for index, arg in enumerate(node.args)
                   if isinstance(arg, torch.fx.Node) and isinstance(_value(arg), torch.Tensor)]
        # The first two arguments of one shape and dtype that are different values: swapping
        # keeps every shape right, so only the values tell.
        pair = next(((i, j) for i in tensors for j in tensors
                     if i < j and node.args[i] is not node.args[j] and _same_kind(_value(node.args[i]),
                                                                                  _value(node.args[j]))), None)
        if pair is not None:
            sites.append(Site(node, pair, f"arguments {pair[0]} and {pair[1]} swapped"))
    return sites


def _swap(gm: torch.fx.GraphModule, site: Site) -> Mutation:
    i, j = site.change
    args = list(site.node.args)
    args[i], args[j] = args[j], args[i]
    site.node.args = tuple(args)
    return Mutation(site.describe())


SWAP_ARGS = Operator("swap_args", "one kernel reads two same-shaped operands in the wrong order", _swap_sites, _swap)


# -- off_by_one -----------------------------------------------------------------------------------

_INTEGER_TYPE = re.compile(r"\b(Sym)?[Ii]nt\b")


def _integer_arguments(node: torch.fx.Node) -> list[tuple[str, int | str, int | None, int]]:
    """``(argument name, position or keyword, index in a list or None, value)`` for each
    integer an operator's schema declares as int or SymInt (sizes, dims, indices)."""
    found = []
    for position, argument in enumerate(node.target._schema.arguments):
        if not _INTEGER_TYPE.search(str(argument.type)):
            continue
        where: int | str = argument.name if argument.kwarg_only or position >= len(node.args) else position
        value = node.kwargs.get(where) if isinstance(where, str) else node.args[where]
        values = list(enumerate(value)) if isinstance(value, (list, tuple)) else [(None, value)]
        # bool is an int, and a dtype (ScalarType, "int" in the schema) is no int here.
        found += [(argument.name, where, index, item) for index, item in values
                  if type(item) is int and abs(item) < _SENTINEL]
    return found


def _normalized(name: str, node: torch.fx.Node, value: int) -> int | None:
    """Where an index counts from either end, the one it means; None where unknown."""
    first = next((_value(arg) for arg in node.args if isinstance(_value(arg), torch.Tensor)), None)
    if first is None:
        return None
    if name.startswith("dim") or name.endswith("dim") or name == "dims":
        return value % max(first.dim(), 1)
    if name == "index" and _packet_name(node) == "select":
        return value % max(first.shape[node.args[1]], 1)
    return None


def _off_by_one_sites(graph: torch.fx.Graph) -> list[Site]:
    sites = []
    for node in graph.nodes:
        if not _computes(node) or getattr(node.target, "_schema", None) is None:
            continue
        # Concrete sizes only: trying the changed integer on symbolic sizes could add guards.
        values = [_value(arg) for arg in node.all_input_nodes] + pytree.tree_leaves(_value(node))
        if any(_symbolic(value) for value in values) or not isinstance(_value(node), (torch.Tensor, tuple, list)):
            continue
        for name, where, index, value in _integer_arguments(node):
            for changed in (value + 1, value - 1):
                known = _normalized(name, node, value)
                if known is not None and known == _normalized(name, node, changed):
                    continue  # the same dim or index counted from the other end
                sites.append(Site(node, (where, index, changed), f"{name} {value} -> {changed}"))
    return sites


def _changed_call(site: Site) -> tuple[tuple, dict]:
    where, index, changed = site.change
    args, kwargs = list(site.node.args), dict(site.node.kwargs)
    container = kwargs if isinstance(where, str) else args
    if index is None:
        container[where] = changed
    else:
        items = list(container[where])
        items[index] = changed
        container[where] = items
    return tuple(args), kwargs


@contextlib.contextmanager
def _fake_errors_unlogged():
    # Fake tensors log every refused call at ERROR level; here a refusal is the answer.
    logger = logging.getLogger("torch._subclasses.fake_tensor")
    disabled, logger.disabled = logger.disabled, True
    try:
        yield
    finally:
        logger.disabled = disabled


def _off_by_one_accepts(site: Site) -> bool:
    """The operator takes the changed integer and returns results of the same shapes and
    dtypes: the mistake is in the values only, not an error at the next operator."""
    try:
        args, kwargs = _changed_call(site)
        with _fake_errors_unlogged():
            result = _fake_call(site.node.target, args, kwargs)
    except Exception:
        return False
    expected, got = pytree.tree_leaves(_value(site.node)), pytree.tree_leaves(result)
    return len(expected) == len(got) and all(
        (not isinstance(a, torch.Tensor) and a == b) or _same_kind(a, b) for a, b in zip(expected, got))


def _off_by_one(gm: torch.fx.GraphModule, site: Site) -> Mutation:
    site.node.args, site.node.kwargs = _changed_call(site)
    return Mutation(site.describe())


OFF_BY_ONE = Operator("off_by_one", "one kernel's dim, index, size or mode argument off by one",
                      _off_by_one_sites, _off_by_one, _off_by_one_accepts)


# -- stale_input ----------------------------------------------------------------------------------


def _stale_sites(graph: torch.fx.Graph) -> list[Site]:
    return [Site(node, arg, f"reads {arg.name} of the first call")
            for node in graph.nodes if _computes(node)
            for arg in dict.fromkeys(node.all_input_nodes)
            if arg.op == "placeholder" and isinstance(_value(arg), torch.Tensor) and _has_elements(_value(arg))]


def _stale(gm: torch.fx.GraphModule, site: Site) -> Mutation:
    graph = gm.graph
    inputs = [node for node in graph.nodes if node.op == "placeholder"]
    with graph.inserting_after(inputs[-1]):
        stale = graph.placeholder(f"stale_{site.change.name}")
    stale.meta.update(site.change.meta)
    site.node.replace_input_with(site.change, stale)
    return Mutation(site.describe(), stale_input=inputs.index(site.change))


STALE_INPUT = Operator("stale_input", "one kernel reads a graph input's buffer as it was on the first call "
                                      "(a cached copy never refreshed)", _stale_sites, _stale)


OPERATORS: dict[str, Operator] = {operator.name: operator for operator in (
    PERTURB, FLUSH_TINY, DROP_SIGN, LOWER_PRECISION, TRUNCATE_INT, SWAP_ARGS, OFF_BY_ONE, STALE_INPUT)}
# inductor's graph compiler returns its own compiled-graph object, which AOTAutograd keeps
# and caches; it cannot take one more input behind AOTAutograd's back.
UNSUPPORTED = {"inductor": ("stale_input",)}


# -- drawing the site ---------------------------------------------------------------------------


def _graph_description(graph: torch.fx.Graph) -> str:
    """The graph as text that is the same in every process (no object ids)."""
    return "\n".join(f"{node.op} {node.target} {_shape_text(_value(node))}" for node in graph.nodes)


def mutate(gm: torch.fx.GraphModule, operator: str, seed: int) -> Mutation | None:
    """Rewrite one node of ``gm`` with ``operator``, the node drawn with ``seed``; None when
    no node can be changed (the graph is left as it is)."""
    chosen = OPERATORS[operator]
    sites = chosen.sites(gm.graph)
    digest = hashlib.sha256(f"{operator}_s{seed}\n{_graph_description(gm.graph)}".encode()).digest()
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(sites)
    site = next((site for site in sites if chosen.accepts(site)), None)
    if site is None:
        return None
    mutation = chosen.apply(gm, site)
    gm.graph.lint()
    gm.recompile()
    return mutation


def _log(name: str, mutation: Mutation) -> None:
    path = os.environ.get(MUTATION_LOG_ENV)
    if path:
        test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
        with open(path, "a") as log:
            log.write(f"{test}\t{name}\t{mutation.site}\n")


def _with_stale_input(compiled: Callable, index: int) -> Callable:
    """A boxed graph that takes, as its last input, input ``index`` as it was on the first
    call (kept while sizes, strides and dtype stay the same; a graph for new sizes reads
    the new input until it is called again)."""
    kept: list[torch.Tensor] = []

    def run(args: list) -> Any:
        current = args[index]
        if not kept or (kept[0].shape, kept[0].stride(), kept[0].dtype) != (current.shape, current.stride(),
                                                                          current.dtype):
            kept[:] = [current.detach().clone()]
        return compiled([*args, kept[0]])

    run._boxed_call = True
    return run


def _rounding_as_written(compile_graph: Callable) -> Callable:
    """inductor's graph compiler, keeping every cast it is given: by default it may skip a
    narrowing cast followed by a widening one, which is lower_precision's whole rewrite."""

    def compile_rounding(gm: torch.fx.GraphModule, example_inputs: list[Any], **kwargs: Any) -> Callable:
        with torch._inductor.config.patch(emulate_precision_casts=True):
            return compile_graph(gm, example_inputs, **kwargs)

    return compile_rounding


class Mutant:
    """A backend that compiles like ``base`` after rewriting one node of each graph.

    ``operator`` None is the control: the same pipeline, nothing rewritten.
    ``mutations`` lists what it did to each graph it compiled in this process.
    """

    def __init__(self, name: str, operator: str | None, seed: int, base: str) -> None:
        self.__name__ = self.name = name
        self.operator, self.seed, self.base = operator, seed, base
        self.mutations: list[Mutation] = []

    def _mutating(self, compile_graph: Callable) -> Callable:
        def compile_mutated(gm: torch.fx.GraphModule, example_inputs: list[Any], **kwargs: Any) -> Callable:
            mutation = mutate(gm, self.operator, self.seed) if self.operator else None
            if mutation is None:
                return compile_graph(gm, example_inputs, **kwargs)
            self.mutations.append(mutation)
            _log(self.name, mutation)
            if mutation.stale_input is None:
                return compile_graph(gm, example_inputs, **kwargs)
            example = example_inputs[mutation.stale_input]
            compiled = compile_graph(gm, [*example_inputs, example], **kwargs)
            return _with_stale_input(compiled, mutation.stale_input)

        return compile_mutated

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Any], **kwargs: Any) -> Callable:
        if self.base == "inductor":
            from torch._inductor.compile_fx import compile_fx, compile_fx_inner

            # AOTAutograd's cache keys a compiled function by Dynamo's graph, not by the graph
            # compiler: a hit would skip the rewrite, and a mutated result saved there would
            # later be what a real inductor run loads.
            with torch._functorch.config.patch(enable_autograd_cache=False):
                return compile_fx(gm, example_inputs, inner_compile=self._mutating(_rounding_as_written(compile_fx_inner)))
        from torch._dynamo.backends.debugging import aot_eager, boxed_nop

        compile_graph = self._mutating(boxed_nop)
        return aot_eager(gm, example_inputs, fw_compiler=compile_graph, bw_compiler=compile_graph, **kwargs)

    def __repr__(self) -> str:
        return f"<mutant {self.name}>"


_NAME = re.compile(rf"(?P<operator>{'|'.join(OPERATORS)})_s(?P<seed>\d+)(?:_(?P<base>{'|'.join(BASES[1:])}))?")
_CONTROL = re.compile(rf"{CONTROL}(?:_(?P<base>{'|'.join(BASES[1:])}))?")
_MUTANTS: dict[str, Mutant] = {}


def mutant_name(operator: str | None, seed: int = 0, base: str = "aot_eager") -> str:
    """``perturb_s3``, ``perturb_s3_inductor``; ``unmutated`` for operator None."""
    name = CONTROL if operator is None else f"{operator}_s{seed}"
    return name if base == BASES[0] else f"{name}_{base}"


def spec(name: str) -> str:
    """The backend spec of a mutant, for --backend."""
    return f"{__name__}:{name}"


def mutant(name: str) -> Mutant:
    """The mutant called ``name``, the same object each time in a process."""
    if name not in _MUTANTS:
        control, found = _CONTROL.fullmatch(name), _NAME.fullmatch(name)
        if control:
            _MUTANTS[name] = Mutant(name, None, 0, control["base"] or BASES[0])
        elif found and found["operator"] not in UNSUPPORTED.get(found["base"] or BASES[0], ()):
            _MUTANTS[name] = Mutant(name, found["operator"], int(found["seed"]), found["base"] or BASES[0])
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r} "
                                 f"(mutants are named <operator>_s<seed>[_inductor], operators: {', '.join(OPERATORS)})")
    return _MUTANTS[name]


def __getattr__(name: str) -> Mutant:
    # How a backend spec (harness/axes/backends.py: getattr on the module) reaches a mutant.
    return mutant(name)
