"""What a test asks of the backend, and what a backend project declares it does not do.

A backend used only for inference, or without float64, fails every test that needs it, for
one reason its team already knows. Instead of accepting each such failure, the project
declares the capability unsupported (``unsupported = ["training"]`` in its pyproject.toml,
``--unsupported training`` on the command line), and the tests that need it check the
**refusal contract** instead of the capability:

* the backend raises an error that names the capability (in its compiler or its compiled
  code): the test is REFUSED, an expected outcome counted apart;
* or the call gives eager's answer (it fell back to eager, or did it anyway): the test passes;
* a different answer than eager's, or an error that does not name the capability, breaks the
  contract: a failure, grouped under the refusal contract (harness/report/problems.py).

A test's needs are read from the graphs the backend received (CATALOGUE says how, per
capability), so no scenario lists them by hand; the few a graph cannot show (a backward of a
backward, ranks in other processes) are declared on the scenario with ``@needs(...)``.

The catalogue and the declared names import nothing from torch (the runner checks the
option); ``of_graph`` imports torch when called.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from harness import settings

UNSUPPORTED_ENV = settings.UNSUPPORTED
# The outcome of a test whose backend refused, and how its skip reason starts (harness.worker.classify).
REFUSED = "REFUSED"
_STATIC = "__dynamo_suite_needs__"  # set by @needs on a test method or a scenario family


@dataclass(frozen=True)
class Capability:
    name: str
    means: str  # what a test needing it asks of the backend (docs/scope.md's table)
    detected: str  # how the suite knows a test needs it
    named_by: str  # regexes, "|"-separated (case-insensitive): an error naming the capability matches one

    def named_in(self, message: str) -> bool:
        return re.search(self.named_by, message, re.IGNORECASE) is not None

    def words(self) -> list[str]:
        """The alternatives of ``named_by``, as docs/scope.md lists them."""
        words, depth, current = [], 0, ""
        for char in self.named_by:
            depth += (char == "(") - (char == ")")
            if char == "|" and depth == 0:
                words.append(current)
                current = ""
            else:
                current += char
        return words + [current]


TRAINING = "training"
DOUBLE_BACKWARD = "double-backward"
DYNAMIC_SHAPES = "dynamic-shapes"
INPUT_MUTATION = "input-mutation"
FLOAT64 = "float64"
FLOAT16 = "float16"
BFLOAT16 = "bfloat16"
COMPLEX = "complex"
RANDOM = "random"
CONTROL_FLOW = "control-flow"
AUTOCAST = "autocast"
CUSTOM_OPS = "custom-ops"
TENSOR_SUBCLASSES = "tensor-subclasses"
DISTRIBUTED = "distributed"

CATALOGUE = {capability.name: capability for capability in (
    Capability(TRAINING, "a graph whose outputs need gradients: the backend's code must be differentiable "
                         "(a backward graph, for AOTAutograd backends)",
               "a value the graph computes requires grad", r"train|backward|grad|autograd|differentiab"),
    Capability(DOUBLE_BACKWARD, "a backward that is itself differentiated (create_graph=True)",
               "declared by the scenario", r"double.?backward|create_graph|second.?order|higher.?order grad"),
    Capability(DYNAMIC_SHAPES, "a graph over symbolic sizes, compiled once for many shapes",
               "a size or an input of the graph is symbolic", r"dynamic|symbolic|Sym(Int|Float|Bool)|unbacked"),
    Capability(INPUT_MUTATION, "a graph that writes into its inputs, parameters or buffers",
               "an in-place call on the storage of a graph input (a trailing-underscore method or function, "
               "item assignment, out=, batch norm's running statistics)",
               r"mutat|in-?place|aliased input|writes? (in)?to (an? |its )?input"),
    Capability(FLOAT64, "float64 tensors", "a graph value is float64 (a Python float Dynamo passes as a tensor too)",
               r"float64|double|\bf64\b|fp64"),
    Capability(FLOAT16, "float16 tensors", "a graph value is float16",
               r"float16|\bhalf\b|\bf16\b|fp16"),
    Capability(BFLOAT16, "bfloat16 tensors", "a graph value is bfloat16",
               r"bfloat16|\bbf16\b"),
    Capability(COMPLEX, "complex tensors", "a graph value is complex",
               r"complex|\bc64\b|\bc128\b"),
    Capability(RANDOM, "random operators: draws from torch's generator, dropout in training",
               "the graph calls a random operator", r"random|\brng\b|seed|\brand|dropout|bernoulli|philox|generator"),
    Capability(CONTROL_FLOW, "control-flow operators: torch.cond, while_loop, map, scan",
               "the graph calls one of torch's control-flow operators",
               r"control.?flow|\bcond\b|while_loop|higher.?order|\bscan\b"),
    Capability(AUTOCAST, "an autocast region inside the graph", "the graph enters autocast",
               r"autocast|\bamp\b|mixed.?precision"),
    Capability(CUSTOM_OPS, "operators registered outside torch (torch.library)",
               "the graph calls an operator of a namespace other than torch's own",
               r"custom|unknown (op|operator)|unsupported (op|operator)|no (lowering|converter|kernel)"),
    Capability(TENSOR_SUBCLASSES, "tensor subclasses as inputs or outputs (wrapper subclasses: DTensor...)",
               "a graph value is a wrapper subclass", r"subclass|DTensor|__torch_dispatch__"),
    Capability(DISTRIBUTED, "graphs of a distributed run: DDP buckets, FSDP, collectives",
               "declared by the scenario, or the graph calls a collective",
               r"distributed|collective|all_?reduce|all_?gather|reduce_?scatter|process.?group|c10d|DDP|FSDP"),
)}


NOTHING = "none"  # --unsupported none: nothing, over a project file's declaration


class ScopeError(ValueError):
    """An unknown capability name; the message is one line."""


def canonical(name: str) -> str:
    return re.sub(r"[\s_]+", "-", name.strip().lower())


def declared(value: str | Iterable[str] | None = None) -> tuple[str, ...]:
    """The capabilities declared unsupported (the run's setting by default), checked."""
    if value is None:
        value = settings.current().get(UNSUPPORTED_ENV)
    names = [canonical(name) for name in (value.split(",") if isinstance(value, str) else value) if name.strip()]
    names = [name for name in names if name != NOTHING]
    unknown = [name for name in names if name not in CATALOGUE]
    if unknown:
        raise ScopeError(f"unknown capability {', '.join(map(repr, unknown))}: choose from "
                         f"{', '.join(CATALOGUE)} (docs/scope.md)")
    return tuple(name for name in CATALOGUE if name in names)


def needs(*names: str) -> Callable:
    """Declare on a test method or a scenario family what its graphs cannot show it needs."""
    for name in names:
        if name not in CATALOGUE:
            raise ScopeError(f"@needs: unknown capability {name!r}")

    def mark(target: Any) -> Any:
        setattr(target, _STATIC, tuple(sorted({*getattr(target, _STATIC, ()), *names})))
        return target

    return mark


def declared_by(*targets: Any) -> set[str]:
    """What ``@needs`` declared on these (a test method, its class)."""
    return {name for target in targets for name in getattr(target, _STATIC, ())}


def refused(message: str, out_of_scope: Iterable[str]) -> str | None:
    """The first of ``out_of_scope`` that an error's ``message`` names, if any."""
    return next((name for name in out_of_scope if CATALOGUE[name].named_in(message)), None)


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


# -- reading a graph -------------------------------------------------------------------------

_RANDOM_CALLS = frozenset({
    "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "bernoulli", "bernoulli_",
    "multinomial", "normal", "normal_", "uniform_", "exponential_", "geometric_", "cauchy_", "log_normal_",
    "random_", "poisson", "rrelu", "native_dropout", "dropout", "dropout1d", "dropout2d", "dropout3d",
    "alpha_dropout", "feature_alpha_dropout"})
_DROPOUTS = frozenset({"dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"})
_CONTROL_FLOW = frozenset({"cond", "while_loop", "map_impl", "map", "scan", "associative_scan"})
_TORCH_NAMESPACES = frozenset({"aten", "prims", "higher_order", "_c10d_functional", "c10d_functional",
                               "_c10d_functional_autograd", "_dtensor", "profiler", "inductor", "quantized",
                               "_quantized", "debugprims"})
_COLLECTIVE_NAMESPACES = frozenset({"_c10d_functional", "c10d_functional", "_c10d_functional_autograd"})
_NOT_MUTATIONS = frozenset({"requires_grad_", "retain_grad", "share_memory_"})
_AUTOCAST_CALLS = frozenset({"_enter_autocast", "_exit_autocast"})


def of_graph(gm: Any, example_inputs: list[Any]) -> set[str]:
    """The capabilities a graph Dynamo hands its backend needs (never raises: a graph it
    cannot read needs what it could read)."""
    import torch

    found: set[str] = set()
    try:
        _read_values(gm, example_inputs, found, torch)
        _read_calls(gm, found, torch)
    except Exception:  # a reading aid: never let it change a test
        pass
    return found


def _value(node: Any) -> Any:
    return node.meta.get("example_value", node.meta.get("val"))


def _tensors(value: Any, torch: Any) -> list[Any]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [tensor for item in value for tensor in _tensors(item, torch)]
    return []


_DTYPES = {"float64": FLOAT64, "float16": FLOAT16, "bfloat16": BFLOAT16, "complex32": COMPLEX,
           "complex64": COMPLEX, "complex128": COMPLEX}


def _read_values(gm: Any, example_inputs: list[Any], found: set[str], torch: Any) -> None:
    from torch.utils._python_dispatch import is_traceable_wrapper_subclass

    symbolic = (torch.SymInt, torch.SymFloat, torch.SymBool)
    values = [(node.op, _value(node)) for node in gm.graph.nodes]
    values += [("placeholder", value) for value in example_inputs]
    for op, value in values:
        if isinstance(value, symbolic):
            found.add(DYNAMIC_SHAPES)
        for tensor in _tensors(value, torch):
            if is_traceable_wrapper_subclass(tensor):
                found.add(TENSOR_SUBCLASSES)
            if any(isinstance(size, torch.SymInt) for size in tensor.shape):
                found.add(DYNAMIC_SHAPES)
            # Counted at any rank: a Python float Dynamo does not specialize (a changing
            # number, a module's momentum under dynamic shapes) reaches the backend as a
            # 0-dim float64 tensor, which a backend without float64 must refuse too.
            if str(tensor.dtype).removeprefix("torch.") in _DTYPES:
                found.add(_DTYPES[str(tensor.dtype).removeprefix("torch.")])
            if op != "placeholder" and tensor.requires_grad:
                found.add(TRAINING)


def _name(target: Any) -> str:
    if isinstance(target, str):
        return target
    return getattr(target, "__name__", "") or getattr(target, "_name", "") or str(target)


def _namespace(target: Any) -> str | None:
    from harness import compat

    if compat.is_op_overload(target) or compat.is_op_overload_packet(target):
        return target.namespace if hasattr(target, "namespace") else target.name().split("::")[0]
    return None


def _read_calls(gm: Any, found: set[str], torch: Any) -> None:
    from torch.multiprocessing.reductions import StorageWeakRef

    from harness import compat

    def storage(node: Any) -> Any:
        tensor = _value(node) if isinstance(node, torch.fx.Node) else None
        if not isinstance(tensor, torch.Tensor):
            return None
        try:
            return StorageWeakRef(tensor.untyped_storage())
        except Exception:  # a subclass or a tensor without storage
            return None

    inputs = {ref for node in gm.graph.nodes if node.op == "placeholder" and (ref := storage(node)) is not None}

    def writes_an_input(*args: Any) -> bool:
        nodes = [node for arg in args for node in (arg if isinstance(arg, (list, tuple)) else [arg])]
        return any(storage(node) in inputs for node in nodes if isinstance(node, torch.fx.Node))

    for node in gm.graph.nodes:
        if node.op not in ("call_function", "call_method"):
            continue
        name = _name(node.target)
        namespace = _namespace(node.target)
        if compat.is_higher_order_op(node.target):
            if name in _CONTROL_FLOW:
                found.add(CONTROL_FLOW)
        elif namespace is not None and namespace not in _TORCH_NAMESPACES:
            found.add(CUSTOM_OPS)
        if namespace in _COLLECTIVE_NAMESPACES:
            found.add(DISTRIBUTED)
        if name in _AUTOCAST_CALLS:
            found.add(AUTOCAST)
        base = name.split(".")[0]
        if base in _RANDOM_CALLS and not (base in _DROPOUTS and _dropout_off(node)):
            found.add(RANDOM)
        if INPUT_MUTATION not in found and _mutates_input(node, name, writes_an_input, torch):
            found.add(INPUT_MUTATION)


def _dropout_off(node: Any) -> bool:
    """A dropout call in eval mode (``training=False``) draws nothing."""
    training = node.kwargs.get("training", node.args[2] if len(node.args) > 2 else True)
    return training is False


def _mutates_input(node: Any, name: str, writes_an_input: Callable, torch: Any) -> bool:
    import operator

    from harness import compat

    if "out" in node.kwargs and writes_an_input(node.kwargs["out"]):
        return True
    if node.target is operator.setitem:
        return writes_an_input(node.args[0])
    if name == "batch_norm" and node.op == "call_function" and node.target is torch.nn.functional.batch_norm:
        training = node.kwargs.get("training", node.args[5] if len(node.args) > 5 else False)
        return bool(training) and writes_an_input(*node.args[1:3], node.kwargs.get("running_mean"),
                                                  node.kwargs.get("running_var"))
    if compat.is_op_overload(node.target):
        return node.target._schema.is_mutable and writes_an_input(*node.args)
    base = name.split(".")[-1]
    if base.endswith("_") and not base.endswith("__") and base not in _NOT_MUTATIONS and node.args:
        return writes_an_input(node.args[0])
    return False


def table() -> str:
    """The catalogue as docs/scope.md shows it (test/harness/test_capabilities.py keeps the
    page current: ``python -c "from harness.measure import capabilities; print(capabilities.table())"``)."""
    rows = ["| capability | a test needs it when | the suite knows it from "
            "| an error names it when it matches one of |",
            "| --- | --- | --- | --- |"]
    rows += [f"| `{c.name}` | {c.means} | {c.detected} | "
             + ", ".join(f"`{word.replace('|', '&#124;')}`" for word in c.words()) + " |" for c in CATALOGUE.values()]
    return "\n".join(rows)
