"""The catalogue of features: every condition a backend's input can meet that the suite
knows how to see, each entry with its own rule.

A feature is read from the graphs a backend receives and the calls it serves, never listed
by hand on a test: an operand broadcast along a middle dimension, a channels_last input, a
reduction over 4096 elements, a graph called a second time, a call under inference mode.
Three things read the same entries:

* coverage (``harness.features.coverage``): which features a run exercised, per backend
  and operator family, and which none did;
* declared scope (``harness.features.scope``): the features a backend project may declare
  unsupported (those with refusal words, ``named_by``) are its capabilities;
* conditional mutants (test/harness/mutation): a fault that fires only where a feature's
  rule holds, as real backend bugs do.

Each feature has rules at one or more levels, and is seen when any of them holds:

* ``site``: one operator call of a graph (``views.Site``), read at compile time; such a
  feature is also reported per operator family (``name@family``);
* ``graph``: the whole graph (``views.GraphView``), at compile time;
* ``call``: a call of a compiled graph (``views.CallView``): the caller's grad mode,
  inference mode, deterministic algorithms, autocast, the call's index, compiled modules;
* ``value``: a tensor a call gave the graph, plain and detached (NaN, negative zero...);
* ``index``: an integer tensor a call gave the graph that an indexing operator reads as
  indices, with the length of the dimension it indexes (None: unknown);
* ``backward``: a backward pass through a call's outputs (``views.BackwardView``).

A feature no graph can show (a backward of a backward in another process) is declared on
the scenario with ``@needs`` (harness.features.scope).

Importing this module imports no torch: the rules receive views and only call them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from harness.features import families

SHAPE, DTYPE, LAYOUT, VALUES, GRAPH, CALL, MODULE = "shape", "dtype", "layout", "values", "graph", "call", "module"
GROUPS = (SHAPE, DTYPE, LAYOUT, VALUES, GRAPH, CALL, MODULE)

LONG_REDUCTION = 4096
LARGE_TENSOR = 2 ** 16
LARGE_GRAPH = 100
# A graph past which a backend wrong only on big graphs (a register allocator, a scheduler
# that breaks past some size) is seen: the default tier keeps a test of each size (the
# kernel mutants fire at LARGE_GRAPH, which an optimizer's step of 114 calls meets; a backend
# wrong past 150 ATen operators of a forward graph passed every test of aot_eager's default
# tier then, 2026-12-06).
VERY_LARGE_GRAPH = 150
# A floating value past this magnitude is large: past half precision's range, near where a
# float32 accumulation of a few thousand such values overflows. An integer past 2^31 is: it
# needs 64 bits.
LARGE_VALUE = 6.5e4
LARGE_INTEGER = 2 ** 31


@dataclass(frozen=True)
class Feature:
    name: str
    group: str
    means: str  # one line: what the backend meets (docs/coverage.md's table)
    site: Callable[[Any], bool] | None = None
    graph: Callable[[Any], bool] | None = None
    call: Callable[[Any], bool] | None = None
    value: Callable[[Any], bool] | None = None
    index: Callable[[Any, int | None], bool] | None = None
    backward: Callable[[Any], bool] | None = None
    # A capability a backend project may declare unsupported: its words, regexes ("|"-separated,
    # any case, matched whole), one of which a refusal names it by (harness.features.scope).
    named_by: str = ""
    # Only declared on scenarios (@needs), or also read from graphs and calls.
    declared_only: bool = False

    @property
    def capability(self) -> bool:
        return bool(self.named_by)

    @property
    def per_family(self) -> bool:
        return self.site is not None

    def levels(self) -> list[str]:
        return [level for level in ("site", "graph", "call", "value", "index", "backward")
                if getattr(self, level) is not None] or ["declared"]


# -- rules -------------------------------------------------------------------------------------


def _broadcast_positions(site: Any) -> set[str]:
    """Where a pointwise call's operands broadcast: "first", "middle", "last" (an operand of
    size 1 where the result is wider), "rank" (an operand of fewer dimensions, not 0-d)."""
    if site.family != families.POINTWISE and site.name not in ("masked_fill", "where"):
        return set()
    if len(site.operands) < 2 or not site.outputs:
        return set()
    result = site.outputs[0].shape
    found = set()
    for operand in site.operands:
        if operand.ndim == 0 or operand.ndim > len(result):
            continue
        if operand.ndim < len(result):
            found.add("rank")
        for index, size in enumerate(operand.shape):
            position = len(result) - operand.ndim + index
            wide = result[position]
            if size == 1 and wide is not None and wide > 1:
                found.add("first" if position == 0 else "last" if position == len(result) - 1 else "middle")
    return found


def _pointwise_operands(site: Any) -> bool:
    return site.family == families.POINTWISE and len(site.operands) + len(site.scalars) >= 2


def _zero_dim_operand(site: Any) -> bool:
    return _pointwise_operands(site) and any(meta.ndim == 0 for meta in site.operands) and \
        any(meta.ndim > 0 for meta in site.operands)


def _scalar_operand(site: Any) -> bool:
    return site.family == families.POINTWISE and bool(site.operands) and any(
        not isinstance(value, bool) for value in site.scalars)


_NOT_PROMOTING = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
                            "logical_not", "isnan", "isinf", "isfinite", "isneginf", "isposinf", "signbit",
                            "isclose", "where", "masked_fill"})


def _mixed_dtypes(site: Any) -> bool:
    return site.family == families.POINTWISE and len({meta.dtype for meta in site.operands}) > 1


def _promotes(site: Any) -> bool:
    """A pointwise call whose result's dtype is not its first operand's (an integer tensor
    times a float, a half tensor with a float32 one...)."""
    if site.family != families.POINTWISE or site.name in _NOT_PROMOTING or not site.operands or not site.outputs:
        return False
    return site.outputs[0].dtype != site.operands[0].dtype and site.outputs[0].dtype != "bool"


def _reads(site: Any) -> list[Any]:
    """The tensors a kernel reads where a layout matters: not those of view operators, which
    read no memory, nor the graph's own inputs and outputs (its pseudo-site has no family)."""
    return [] if site.is_view or not site.family else site.tensors


def _dtype(*names: str) -> Callable[[Any], bool]:
    def rule(site: Any) -> bool:
        return any(meta.dtype in names for meta in (*site.tensors, *site.outputs))

    return rule


def _any_tensor(predicate: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def rule(site: Any) -> bool:
        return any(predicate(meta) for meta in (*site.tensors, *site.outputs))

    return rule


_CONTROL_FLOW = frozenset({"cond", "while_loop", "map_impl", "map", "scan", "associative_scan"})
_COLLECTIVE_NAMESPACES = ("_c10d_functional", "c10d_functional", "_c10d_functional_autograd")
_AUTOCAST_CALLS = frozenset({"_enter_autocast", "_exit_autocast"})


def _random(site: Any) -> bool:
    if site.family != families.RANDOM:
        return False
    if site.name.removeprefix("native_") in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                                             "feature_alpha_dropout") and site.node is not None:
        node = site.node
        training = node.kwargs.get("training", node.args[2] if len(node.args) > 2 else True)
        return training is not False  # dropout in eval mode draws nothing
    return True


def _distributed(site: Any) -> bool:
    from harness.features.views import namespace_of

    return site.node is not None and namespace_of(site.node.target) in _COLLECTIVE_NAMESPACES


def _training(view: Any) -> bool:
    return any(meta.requires_grad for site in view.sites for meta in site.outputs) or \
        any(meta.requires_grad for meta in view.attributes)


def _input_mutation(view: Any) -> bool:
    from harness.features.views import writes_an_input

    return writes_an_input(view.graph)


def _nan(values: Any) -> bool:
    return values.dtype.is_floating_point and bool(values.isnan().any())


def _infinity(values: Any) -> bool:
    return values.dtype.is_floating_point and bool(values.isinf().any())


def _negative_zero(values: Any) -> bool:
    return values.dtype.is_floating_point and bool(((values == 0) & values.signbit()).any())


def _subnormal(values: Any) -> bool:
    import torch

    if not values.dtype.is_floating_point:
        return False
    smallest = torch.finfo(values.dtype).smallest_normal
    return bool(((values != 0) & (values.abs() < smallest)).any())


def _large_values(values: Any) -> bool:
    if values.dtype.is_floating_point:
        return bool((values.abs() > LARGE_VALUE).logical_and(~values.isinf()).any())
    return values.dtype.itemsize >= 8 and bool((values.abs() >= LARGE_INTEGER).any())


def _ties(values: Any) -> bool:
    """A non-zero value three times or more among the first 1024 (what sorting, ranking and
    arg-reductions must order as eager does; two equal random floats are not rare enough)."""
    if not values.dtype.is_floating_point:
        return False
    flat = values.reshape(-1)[:1024]
    flat = flat[(flat != 0) & ~flat.isnan()]
    if flat.numel() < 3:
        return False
    _, counts = flat.unique(return_counts=True)
    return bool((counts >= 3).any())


def _exact_halves(values: Any) -> bool:
    """A finite value halfway between two whole numbers (a tie of rounding)."""
    if not values.dtype.is_floating_point or values.dtype.itemsize == 1:
        return False
    doubled = values.double() * 2
    return bool(((doubled.remainder(2) == 1) & doubled.isfinite()).any())


def _fully_masked_row(values: Any) -> bool:
    """A row (along the last dimension, of two entries or more) masked everywhere: -inf in a
    floating tensor, False in a boolean mask."""
    if values.dim() == 0 or values.shape[-1] < 2:
        return False
    if str(values.dtype) == "torch.bool":
        return bool((~values).all(-1).any())
    if not values.dtype.is_floating_point or values.dtype.itemsize == 1:
        return False
    return bool((values == -float("inf")).all(-1).any())


def _padding_index(site: Any) -> bool:
    """An embedding, or its backward, told a padding index (-1 is none to ATen)."""
    if site.node is None or site.name not in ("embedding", "embedding_dense_backward"):
        return False
    position = 2 if site.name == "embedding" else 3
    args, kwargs = site.node.args, site.node.kwargs
    index = args[position] if len(args) > position else kwargs.get("padding_idx", -1)
    return type(index) is int and index != -1


def _repeated(indices: Any, length: int | None) -> bool:
    flat = indices.reshape(-1)
    return flat.numel() > 1 and flat.unique().numel() < flat.numel()


def _negative(indices: Any, length: int | None) -> bool:
    return bool((indices < 0).any())


def _out_of_range(indices: Any, length: int | None) -> bool:
    return length is not None and bool(((indices >= length) | (indices < -length)).any())


def _placeholder_named(*words: str) -> Callable[[Any], bool]:
    def rule(view: Any) -> bool:
        return any(word in name.lower() for name in view.input_names for word in words)

    return rule


def _modules(predicate: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def rule(call: Any) -> bool:
        return any(predicate(module) for module in call.modules)

    return rule


def _has_buffers(module: Any) -> bool:
    return next(iter(module.buffers()), None) is not None


def _feature(name: str, group: str, means: str, **rules: Any) -> Feature:
    return Feature(name, group, means, **rules)


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

CATALOGUE: dict[str, Feature] = {feature.name: feature for feature in (
    # -- shape --------------------------------------------------------------------------------
    _feature("broadcast-first", SHAPE, "an operand of size 1 along the first dimension of a wider result",
             site=lambda site: "first" in _broadcast_positions(site)),
    _feature("broadcast-middle", SHAPE, "an operand of size 1 along a middle dimension of a wider result",
             site=lambda site: "middle" in _broadcast_positions(site)),
    _feature("broadcast-last", SHAPE, "an operand of size 1 along the last dimension of a wider result",
             site=lambda site: "last" in _broadcast_positions(site)),
    _feature("broadcast-rank", SHAPE, "an operand of fewer dimensions than the result (not 0-d)",
             site=lambda site: "rank" in _broadcast_positions(site)),
    _feature("zero-dim-operand", SHAPE, "a 0-d tensor operand beside tensors of higher rank", site=_zero_dim_operand),
    _feature("scalar-operand", SHAPE, "a Python number as an operand of a tensor", site=_scalar_operand),
    _feature("size-one-dim", SHAPE, "a tensor with a dimension of size 1",
             site=lambda site: any(1 in meta.shape for meta in _reads(site))),
    _feature("empty", SHAPE, "a tensor with no elements", site=_any_tensor(lambda meta: meta.numel == 0)),
    _feature("long-reduction", SHAPE, f"a reduction of {LONG_REDUCTION} elements or more into each result",
             site=lambda site: site.family == families.REDUCTION and (site.reduced() or 0) >= LONG_REDUCTION),
    _feature("large-tensor", SHAPE, f"a tensor of {LARGE_TENSOR} elements or more (2^16)",
             site=_any_tensor(lambda meta: (meta.numel or 0) >= LARGE_TENSOR)),
    Feature(DYNAMIC_SHAPES, SHAPE, "a graph over symbolic sizes, compiled once for many shapes",
            site=_any_tensor(lambda meta: meta.symbolic), graph=lambda view: _symbolic_scalars(view),
            named_by=r"dynamic(ally)?|symbolic|Sym(Int|Float|Bool)s?|unbacked"),
    # -- dtype --------------------------------------------------------------------------------
    _feature("float32", DTYPE, "float32 tensors", site=_dtype("float32")),
    Feature(FLOAT64, DTYPE, "float64 tensors (a Python float Dynamo passes as a 0-d tensor too)",
            site=_dtype("float64"), named_by=r"float64|double(?!\s*-?backward)|f64|fp64"),
    Feature(FLOAT16, DTYPE, "float16 tensors", site=_dtype("float16"), named_by=r"float16|half|f16|fp16"),
    Feature(BFLOAT16, DTYPE, "bfloat16 tensors", site=_dtype("bfloat16"), named_by=r"bfloat16|bf16"),
    Feature(COMPLEX, DTYPE, "complex tensors", site=_dtype("complex32", "complex64", "complex128"),
            named_by=r"complex(32|64|128)?|c64|c128"),
    _feature("int64", DTYPE, "int64 tensors", site=_dtype("int64")),
    _feature("int32", DTYPE, "int32 tensors", site=_dtype("int32")),
    _feature("int16", DTYPE, "int16 tensors", site=_dtype("int16")),
    _feature("int8", DTYPE, "int8 tensors", site=_dtype("int8")),
    _feature("uint8", DTYPE, "uint8 tensors", site=_dtype("uint8")),
    _feature("bool", DTYPE, "bool tensors", site=_dtype("bool")),
    _feature("float8", DTYPE, "float8_e4m3fn or float8_e5m2 tensors",
             site=_dtype("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")),
    _feature("wide-unsigned", DTYPE, "uint16, uint32 or uint64 tensors", site=_dtype("uint16", "uint32", "uint64")),
    _feature("mixed-dtypes", DTYPE, "tensor operands of different dtypes in one pointwise call", site=_mixed_dtypes),
    _feature("type-promotion", DTYPE, "a pointwise result of another dtype than its first operand's "
             "(an integer tensor and a float, half with float32)", site=_promotes),
    # -- layout -------------------------------------------------------------------------------
    _feature("non-contiguous", LAYOUT, "a kernel reads a tensor that is not contiguous",
             site=lambda site: any(meta.contiguous() is False for meta in _reads(site))),
    _feature("transposed", LAYOUT, "a kernel reads a tensor whose dimensions lie in memory in another order",
             site=lambda site: any(meta.permuted() for meta in _reads(site))),
    _feature("channels-last", LAYOUT, "a kernel reads a 4-d tensor in channels_last memory format",
             site=lambda site: any(meta.channels_last() for meta in _reads(site))),
    _feature("storage-offset", LAYOUT, "a kernel reads a tensor that starts past its storage's first element",
             site=lambda site: any((meta.offset or 0) > 0 for meta in _reads(site))),
    _feature("stride-zero", LAYOUT, "a kernel reads an expanded tensor: a stride of 0 along a dimension wider than 1",
             site=lambda site: any(stride == 0 and size is not None and size > 1 for meta in _reads(site)
                                   for size, stride in zip(meta.shape, meta.stride))),
    # -- values (what a call's tensors hold) ----------------------------------------------------
    _feature("nan", VALUES, "NaN among a call's floating inputs", value=_nan),
    _feature("infinity", VALUES, "an infinity among a call's floating inputs", value=_infinity),
    _feature("negative-zero", VALUES, "-0.0 among a call's floating inputs", value=_negative_zero),
    _feature("subnormal", VALUES, "a number below its dtype's smallest normal one among a call's inputs",
             value=_subnormal),
    _feature("large-values", VALUES, f"a finite float past {LARGE_VALUE:g} or an integer past 2^31 in magnitude "
             "among a call's inputs",
             value=_large_values),
    _feature("ties", VALUES, "a non-zero value repeated in a floating input (ties to order or pick between)",
             value=_ties),
    _feature("exact-halves", VALUES, "a value halfway between two whole numbers (a tie of rounding)",
             value=_exact_halves),
    _feature("fully-masked-row", VALUES, "a row -inf everywhere, or a boolean mask False along a whole row",
             value=_fully_masked_row),
    _feature("padding-index", VALUES, "an embedding (or its backward) with a padding index", site=_padding_index),
    _feature("max-norm", VALUES, "an embedding renormalizing the rows it reads (max_norm)",
             site=lambda site: site.name in ("embedding_renorm", "embedding_renorm_")),
    _feature("repeated-indices", VALUES, "an index tensor naming one place more than once", index=_repeated),
    _feature("negative-indices", VALUES, "a negative index (counted from the end)", index=_negative),
    _feature("index-out-of-range", VALUES, "an index past the dimension it indexes (eager raises)",
             index=_out_of_range),
    # -- graph --------------------------------------------------------------------------------
    _feature("large-graph", GRAPH, f"a graph of {LARGE_GRAPH} operator calls or more",
             graph=lambda view: view.calls >= LARGE_GRAPH),
    _feature("very-large-graph", GRAPH, f"a graph of {VERY_LARGE_GRAPH} operator calls or more",
             graph=lambda view: view.calls >= VERY_LARGE_GRAPH),
    _feature("fan-in", GRAPH, "an operator call reading three or more values the graph computed",
             graph=lambda view: view.fan_in() >= 3),
    _feature("fan-out", GRAPH, "a value the graph computed read by three or more operator calls",
             graph=lambda view: view.fan_out() >= 3),
    _feature("several-outputs", GRAPH, "a graph returning two tensors or more",
             graph=lambda view: len(view.outputs) >= 2),
    _feature("output-aliases-input", GRAPH, "a graph returning a view of one of its inputs",
             graph=lambda view: view.aliasing()[0]),
    _feature("outputs-alias", GRAPH, "a graph returning two outputs that share memory",
             graph=lambda view: view.aliasing()[1]),
    Feature(INPUT_MUTATION, GRAPH, "a graph that writes into its inputs, parameters or buffers "
            "(in-place calls, item assignment, out=, batch norm's running statistics)", graph=_input_mutation,
            named_by=r"mutat\w*|in-?place|aliased inputs?|writes? (in)?to (an? |its )?inputs?"),
    Feature(TRAINING, GRAPH, "a graph whose outputs need gradients: the backend's code must be differentiable "
            "(a backward graph, for AOTAutograd backends)", graph=_training,
            named_by=r"train\w*|backwards?|grads?|gradients?|autograd|differentiab\w*"),
    Feature(RANDOM, GRAPH, "random operators: draws from torch's generator, dropout in training", site=_random,
            named_by=r"rand\w*|rng|seed\w*|dropout|bernoulli|philox"),
    Feature(CUSTOM_OPS, GRAPH, "operators registered outside torch (torch.library)",
            site=lambda site: site.family == families.CUSTOM,
            named_by=r"custom"),
    _feature("higher-order-ops", GRAPH, "higher-order operators (cond, checkpoint, autograd.Function, wrap...)",
             site=lambda site: site.higher_order),
    Feature(CONTROL_FLOW, GRAPH, "control-flow operators: torch.cond, while_loop, map, scan",
            site=lambda site: site.higher_order and site.name in _CONTROL_FLOW,
            named_by=r"control.?flow|cond|while_loop|higher.?order|scan"),
    Feature(TENSOR_SUBCLASSES, GRAPH, "tensor subclasses as inputs or outputs (wrapper subclasses: DTensor...)",
            site=_any_tensor(lambda meta: meta.subclass), named_by=r"subclass(es)?|DTensor|__torch_dispatch__"),
    Feature(DISTRIBUTED, GRAPH, "graphs of a distributed run: DDP buckets, FSDP, collectives", site=_distributed,
            named_by=r"distributed|collective|all_?reduce|all_?gather|reduce_?scatter|process.?group|c10d|DDP|FSDP"),
    # -- call ---------------------------------------------------------------------------------
    _feature("later-call", CALL, "a compiled graph called again after its first call",
             call=lambda call: call.index >= 1),
    _feature("other-thread", CALL, "a compiled graph called from a thread other than the main one (a serving pool)",
             call=lambda call: call.other_thread),
    _feature("grad-disabled", CALL, "a call with grad mode off (torch.no_grad)",
             call=lambda call: not call.grad_enabled and not call.inference_mode),
    _feature("inference-mode", CALL, "a call under torch.inference_mode", call=lambda call: call.inference_mode),
    _feature("deterministic", CALL, "a call under torch.use_deterministic_algorithms(True)",
             call=lambda call: call.deterministic),
    Feature(AUTOCAST, CALL, "an autocast region in the graph, or a call under autocast",
            site=lambda site: site.name in _AUTOCAST_CALLS, call=lambda call: call.autocast,
            named_by=r"autocast|amp|mixed.?precision"),
    _feature("backward", CALL, "a backward pass through a compiled call's outputs",
             backward=lambda backward: True),
    _feature("backward-twice", CALL, "a second backward pass through the same call's outputs (retain_graph)",
             backward=lambda backward: backward.count >= 2),
    Feature(DOUBLE_BACKWARD, CALL, "a backward that is itself differentiated (create_graph=True)",
            backward=lambda backward: backward.grad_enabled,
            named_by=r"double.?backwards?|create_graph|second.?order|higher.?order grad(ient)?s?"),
    # -- module -------------------------------------------------------------------------------
    _feature("module-training", MODULE, "a compiled module called in training mode",
             call=_modules(lambda module: module.training)),
    _feature("module-eval", MODULE, "a compiled module called in eval mode",
             call=_modules(lambda module: not module.training)),
    _feature("parameters", MODULE, "a graph reading a module's parameters",
             graph=_placeholder_named("_parameters_", "parameters")),
    _feature("buffers", MODULE, "a graph reading a module's buffers (running statistics, masks...)",
             graph=_placeholder_named("_buffers_"), call=_modules(_has_buffers)),
    _feature("hooks", MODULE, "a call of a compiled module that has hooks registered",
             call=lambda call: call.has_hooks() if call.modules else False),
)}


def _symbolic_scalars(view: Any) -> bool:
    from harness.features.views import value_of

    return any(type(value_of(node)).__name__ in ("SymInt", "SymFloat", "SymBool") for node in view.graph.nodes)


def named(name: str) -> Feature:
    return CATALOGUE[name]


def in_group(group: str) -> list[Feature]:
    return [feature for feature in CATALOGUE.values() if feature.group == group]


def capabilities() -> dict[str, Feature]:
    """The features a project may declare unsupported (harness.features.scope)."""
    return {name: feature for name, feature in CATALOGUE.items() if feature.capability}


def split(entry: str) -> tuple[str, str | None]:
    """``broadcast-middle@pointwise`` -> (``broadcast-middle``, ``pointwise``)."""
    name, _, family = entry.partition("@")
    return name, family or None
