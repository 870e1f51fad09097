"""The export variants: a scenario's compiled function taken the road of a backend that
consumes ``torch.export`` (ExecuTorch delegates, the export importers of OpenVINO and
torch-mlir, AOTInductor) instead of Dynamo's graphs.

Under ``export`` (torch's default, non-strict) and ``export_strict``, ``test.compile(fn)``
returns an ``ExportedCall``. At its first call with inputs of a kind (shapes, dtypes,
strides, requires_grad, the values of non-tensor arguments) it

1. exports ``fn`` (a module as it is, a function wrapped in one) with those inputs, with
   symbolic sizes (``Dim.AUTO``) where the scenario compiled with ``dynamic=True``;
2. decomposes the program to Core ATen (``run_decompositions()``) and checks the graph's own
   contract (harness/checks/exported.py: functional, Core ATen only, its signature);
3. hands the lifted graph (parameters, buffers and constants as inputs in front of the
   user's) to the backend under test through the test's counter, as ``(graph_module,
   example_inputs)`` with the run's ``mode=`` and ``options=``;

and each call runs the backend's callable on the module's parameters and buffers and the
call's inputs, writes the buffer and input mutations the signature names back, and returns
the user outputs in the scenario's structure. The scenario's own checks (outputs, input
mutations, buffers, gradients through the backend's callable) then compare with eager.

``export_strict`` exports with Dynamo (``strict=True``); a test whose strict graphs are the
same as non-strict ones is SKIP there (the ``export`` variant ran them). A backend that
cannot take an exported graph at all is found once, on a tiny program, and its tests are
SKIP with that one line. Which scenarios do not fit export, and why, is data: entries with
``variant = "export*"`` in harness/expectations.toml.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch.utils import _pytree as pytree

from harness.axes import second_size
from harness.checks import exported


class ExportRefused(Exception):
    """torch.export could not export the scenario: it does not fit export (or torch regressed)."""


class _AsModule(torch.nn.Module):
    """A function as a module, since export takes modules; the modules the scenario passes
    it as positional arguments (a model under evaluation) become submodules, so their
    parameters and buffers are lifted like a module's own."""

    def __init__(self, fn: Callable, bound: dict[int, torch.nn.Module] | None = None) -> None:
        super().__init__()
        self.fn = fn
        self.bound = torch.nn.ModuleDict({str(index): module for index, module in (bound or {}).items()})

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        rest = iter(args)
        count = len(args) + len(self.bound)
        return self.fn(*(self.bound[str(index)] if str(index) in self.bound else next(rest)
                         for index in range(count)), **kwargs)


_PLAIN = (torch.Tensor, int, float, bool, str, type(None), torch.dtype, torch.device)


def _kind(args: tuple, kwargs: dict) -> tuple:
    """What an export is specific to beside sizes and strides: the inputs' structure,
    dtypes and requires_grad, the values of non-tensor arguments, and the state it was
    traced in (grad mode, autocast), as Dynamo's guards would check. ExportRefused for an
    argument export cannot take (a module, an optimizer, an object of the scenario's)."""
    leaves, spec = pytree.tree_flatten((args, kwargs))
    for leaf in leaves:
        if not isinstance(leaf, _PLAIN):
            raise ExportRefused(f"torch.export takes tensors and containers of them; the scenario passes a "
                                f"{type(leaf).__module__}.{type(leaf).__qualname__}")
    kinds = tuple((leaf.dtype, leaf.dim(), leaf.requires_grad, leaf.device) if isinstance(leaf, torch.Tensor)
                  else (type(leaf).__name__, repr(leaf)) for leaf in leaves)
    autocast = tuple((device, torch.is_autocast_enabled(device), torch.get_autocast_dtype(device))
                     for device in ("cpu", "cuda"))
    return str(spec), kinds, torch.is_grad_enabled(), autocast


def _fits(expected: Any, actual: int, ranges: dict, sizes: dict) -> bool:
    """Whether a size or stride ``actual`` fits what the exported graph has there: the same
    number, a symbol whose range holds it, or an expression of symbols (a contiguous
    stride) that ``sizes``, the symbols' values in this call, make ``actual``."""
    if isinstance(expected, int):
        return expected == actual
    expression = expected.node.expr
    if not expression.is_Symbol:
        value = expression.xreplace(sizes)
        return bool(value.is_number) and int(value) == actual  # else export again rather than solve it
    bounds = ranges.get(expression)
    return bounds is None or bool(bounds.lower <= actual <= bounds.upper)


def _automatic_dims(module: torch.nn.Module, args: tuple, kwargs: dict) -> Any:
    """``dynamic_shapes`` with every size of every tensor left to export (``Dim.AUTO``)."""
    def dims(value: Any) -> Any:
        return {index: torch.export.Dim.AUTO for index in range(value.dim())} \
            if isinstance(value, torch.Tensor) and value.dim() else None

    positional = tuple(pytree.tree_map(dims, list(args)))
    named = {name: pytree.tree_map(dims, value) for name, value in kwargs.items()}
    if isinstance(module, _AsModule):  # forward(*args, **kwargs): one tuple, and a dict if given
        return (positional, named) if kwargs else (positional,)
    return {**dict(zip(inspect.signature(module.forward).parameters, positional)), **named}


def export_program(module: torch.nn.Module, args: tuple, kwargs: dict, *, strict: bool,
                   dynamic: bool) -> torch.export.ExportedProgram:
    """``module`` exported with these inputs and decomposed to Core ATen; ExportRefused when
    torch.export or the decomposition raises."""
    how = "strict" if strict else "non-strict"
    try:
        program = torch.export.export(module, args, kwargs, strict=strict,
                                      dynamic_shapes=_automatic_dims(module, args, kwargs) if dynamic else None)
    except Exception as error:
        raise ExportRefused(f"torch.export ({how}) refused the scenario: {type(error).__name__}: "
                            f"{_first_line(error)}") from error
    try:
        return program.run_decompositions()
    except Exception as error:
        raise ExportRefused(f"run_decompositions() of the {how} export raised {type(error).__name__}: "
                            f"{_first_line(error)}") from error


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [""])[0][:300]


def operator_sequence(program: torch.export.ExportedProgram) -> list[str]:
    """The graph's calls in order: what tells a strict export's graph from a non-strict one."""
    return [str(node.target) for node in program.graph_module.graph.nodes if node.op == "call_function"]


@dataclass
class _Entry:
    """One export of the scenario's function and what the backend made of it."""

    program: torch.export.ExportedProgram
    compiled: Callable
    same_as_other_mode: bool | None = None  # export_strict: whether non-strict export gave the same graph
    violations: list[str] = field(default_factory=list)  # of the exported graph's contract (harness.checks.exported)

    def accepts(self, args: tuple, kwargs: dict) -> bool:
        """Whether these inputs' sizes and strides fit the graph: equal where it has numbers,
        within the range where it has symbols (exported with ``dynamic=True`` or dims marked
        dynamic), the same value for a symbol wherever it stands, and equal to its
        expressions of symbols (strides) evaluated with those values."""
        ranges = self.program.range_constraints
        placeholders = {node.name: node for node in self.program.graph_module.graph.nodes if node.op == "placeholder"}
        user = [placeholders[spec.arg.name].meta.get("val") for spec in self.program.graph_signature.input_specs
                if spec.kind.name == "USER_INPUT"]
        pairs = [pair for value, leaf in zip(user, pytree.tree_leaves((args, kwargs)))
                 if isinstance(leaf, torch.Tensor) and isinstance(value, torch.Tensor)
                 for pair in zip((*value.shape, *value.stride()), (*leaf.shape, *leaf.stride()))]
        sizes: dict = {}  # each symbol's value in this call: one value wherever it stands
        for want, have in pairs:
            if not isinstance(want, int) and want.node.expr.is_Symbol and sizes.setdefault(want.node.expr, have) != have:
                return False
        return all(_fits(want, have, ranges, sizes) for want, have in pairs)

    def run(self, module: torch.nn.Module, args: tuple, kwargs: dict) -> Any:
        signature = self.program.graph_signature
        flat = _lifted_inputs(self.program, module, args, kwargs)
        results = self.compiled(*flat)
        results = list(results) if isinstance(results, (list, tuple)) else [results]
        if len(results) != len(signature.output_specs):
            raise AssertionError(f"the backend's callable returned {len(results)} values for an exported graph "
                                 f"with {len(signature.output_specs)} outputs")
        position = {spec.arg.name: index for index, spec in enumerate(signature.input_specs)}
        outputs = []
        for spec, value in zip(signature.output_specs, results):
            kind = spec.kind.name
            if kind == "USER_OUTPUT":
                outputs.append(value)
            elif kind == "BUFFER_MUTATION":
                with torch.no_grad():
                    module.get_buffer(spec.target).copy_(value)
            elif kind == "USER_INPUT_MUTATION":
                written = flat[position[spec.target]]
                if written.is_leaf and written.requires_grad:
                    with torch.no_grad():
                        written.copy_(value)
                else:
                    written.copy_(value)
            else:
                raise NotImplementedError(f"an exported program's output of kind {kind}")
        return pytree.tree_unflatten(outputs, self.program.call_spec.out_spec)


@dataclass
class ExportedCall:
    """What ``test.compile(fn)`` returns under an export variant (see the module's doc)."""

    fn: Callable
    counter: Any  # the test's CompileCounterWithBackend: counts the graph, hands it to the backend
    strict: bool
    dynamic: bool
    handed: dict[str, Any]  # mode= and options= for the backend
    exports: dict[tuple, list[_Entry]] = field(default_factory=dict)  # by _kind: the exports of that kind
    calls: int = 0

    def __post_init__(self) -> None:
        self.modules: dict[tuple, torch.nn.Module] = {}
        functools.update_wrapper(self, self.fn, updated=())

    @property
    def entries(self) -> list[_Entry]:
        return [entry for entries in self.exports.values() for entry in entries]

    def _module(self, args: tuple) -> tuple[tuple, torch.nn.Module, tuple]:
        """The module to export for a call with ``args``: ``fn`` itself when it is one; else
        ``fn`` wrapped, with the modules among ``args`` bound as submodules (and left out)."""
        if isinstance(self.fn, torch.nn.Module):
            return (), self.fn, args
        bound = {index: arg for index, arg in enumerate(args) if isinstance(arg, torch.nn.Module)}
        key = tuple((index, id(module)) for index, module in bound.items())
        if key not in self.modules:
            self.modules[key] = _AsModule(self.fn, bound)
        return key, self.modules[key], tuple(arg for index, arg in enumerate(args) if index not in bound)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        bound, module, args = self._module(args)
        kind = self.exports.setdefault((bound, _kind(args, kwargs)), [])
        entry = next((entry for entry in kind if entry.accepts(args, kwargs)), None)
        if entry is None:
            entry = self._export(module, args, kwargs)
            kind.append(entry)
        self.calls += 1
        return entry.run(module, args, kwargs)

    def _export(self, module: torch.nn.Module, args: tuple, kwargs: dict) -> _Entry:
        program = export_program(module, args, kwargs, strict=self.strict, dynamic=self.dynamic)
        same = None
        if self.strict:
            try:
                other = export_program(module, args, kwargs, strict=False, dynamic=self.dynamic)
                same = operator_sequence(other) == operator_sequence(program)
            except ExportRefused:
                same = False
        inputs = _example_inputs(program, module, args, kwargs)
        # Checked before the backend sees the graph (it may rewrite it), judged after the
        # scenario's own checks: what the backend did with the graph comes first.
        broken = exported.violations(program)
        compiled = self.counter(program.graph_module, inputs, **self.handed)
        return _Entry(program, compiled, same, broken)


def _lifted_inputs(program: torch.export.ExportedProgram, module: torch.nn.Module, args: tuple,
                   kwargs: dict) -> list[Any]:
    """The lifted graph's inputs for a call: the module's own parameters and buffers, the
    program's constants, then the call's arguments, in the signature's order."""
    user = iter(pytree.tree_leaves((args, kwargs)))
    values: list[Any] = []
    for spec in program.graph_signature.input_specs:
        kind, target = spec.kind.name, spec.target
        if kind == "USER_INPUT":
            values.append(next(user))
        elif kind == "PARAMETER":
            values.append(module.get_parameter(target))
        elif kind == "BUFFER":
            values.append(module.get_buffer(target))
        elif kind in ("CONSTANT_TENSOR", "CUSTOM_OBJ"):
            values.append(program.constants[target])
        else:
            raise NotImplementedError(f"an exported program's input of kind {kind} ({spec.arg.name})")
    return values


def _example_inputs(program: torch.export.ExportedProgram, module: torch.nn.Module, args: tuple,
                    kwargs: dict) -> list[Any]:
    """What the backend is handed with the lifted graph. A graph with symbolic sizes comes
    with its own fake values (symbolic sizes, as Dynamo hands a dynamic graph), so that the
    backend compiles for every size in range; a static one with copies of the values (same
    sizes, strides and storage offsets: a backend may specialize on them), never the
    module's or the scenario's own tensors."""
    if second_size.has_symbolic_sizes(program.graph_module):
        return [node.meta["val"] for node in program.graph_module.graph.nodes if node.op == "placeholder"]
    return [_copy(value) if isinstance(value, torch.Tensor) else value
            for value in _lifted_inputs(program, module, args, kwargs)]


def _copy(value: torch.Tensor) -> torch.Tensor:
    """A copy with the same layout: sizes, strides (expanded and sliced ones too), offset."""
    copy = torch.empty((), dtype=value.dtype, device=value.device)
    copy.set_(value.detach().untyped_storage().clone(), value.storage_offset(), value.size(), value.stride())
    return copy.requires_grad_(value.requires_grad)


class _Probe(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(3))
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls.add_(1)
        return (x * self.weight).sin()


_REFUSALS: dict[str, str] = {}


def refusal(backend: Any) -> str:
    """Why ``backend`` cannot take an exported graph at all ("" when it can): the first line
    of what it raised compiling or running a tiny exported program. Cached per backend."""
    spec = getattr(backend, "spec", repr(backend))
    if spec not in _REFUSALS:
        module, x = _Probe(), torch.ones(3)
        program = export_program(module, (x,), {}, strict=False, dynamic=False)
        try:
            compiled = backend(program.graph_module, _example_inputs(program, module, (x,), {}))
            _Entry(program, compiled).run(module, (x,), {})
            _REFUSALS[spec] = ""
        except Exception as error:
            _REFUSALS[spec] = f"{type(error).__name__}: {_first_line(error)}"
    return _REFUSALS[spec]
