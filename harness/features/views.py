"""What the feature rules read: a graph's operator calls as ``Site``s, the graph as a
``GraphView``, a compiled call as a ``CallView``, each built from a Dynamo graph (the graph
a backend receives: ``torch.add``, the method ``sum``) or an ATen graph (what AOTAutograd
hands a backend's compilers: ``aten.add.Tensor``) alike, so that one rule reads both.

Shapes and strides are read as plain integers: a symbolic size is unknown (None) to every
rule, never compared, since comparing it would add a guard to the graph being read.
"""

from __future__ import annotations

import threading

import math
import operator
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch.multiprocessing.reductions import StorageWeakRef

from harness import compat
from harness.features import families

# Operators that only make a view: no kernel reads the memory, so a layout is not a
# condition on them.
VIEW_OPS = frozenset({
    "view", "reshape", "permute", "transpose", "t", "expand", "expand_as", "squeeze", "unsqueeze", "slice", "select",
    "narrow", "diagonal", "as_strided", "alias", "detach", "unfold", "split", "split_with_sizes", "chunk", "unbind",
    "getitem", "view_as", "_unsafe_view", "flatten", "unflatten", "movedim", "moveaxis", "swapaxes", "swapdims",
    "real", "imag", "view_as_real", "view_as_complex", "_reshape_alias", "lift_fresh", "broadcast_to", "contiguous",
    "sym_size", "sym_stride", "sym_numel", "size", "stride", "dim", "numel", "_assert_tensor_metadata",
})
_NUMBER = (int, float, complex)


@dataclass(frozen=True)
class TensorMeta:
    """A tensor's shape, strides, offset and dtype as plain values (None where symbolic)."""

    shape: tuple[int | None, ...]
    stride: tuple[int | None, ...]
    offset: int | None
    dtype: str  # "float32"
    requires_grad: bool = False
    subclass: bool = False
    storage: Any = None  # a StorageWeakRef, for aliasing between values of one graph

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def known(self) -> bool:
        return None not in self.shape and None not in self.stride

    @property
    def symbolic(self) -> bool:
        return None in self.shape

    @property
    def numel(self) -> int | None:
        return None if self.symbolic else math.prod(self.shape)  # type: ignore[arg-type]

    def contiguous(self) -> bool | None:
        if not self.known:
            return None
        expected = 1
        for size, stride in reversed(list(zip(self.shape, self.stride))):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    def permuted(self) -> bool | None:
        """Whether its dimensions are laid out in memory in another order than their own."""
        if not self.known:
            return None
        strides = [stride for size, stride in zip(self.shape, self.stride) if size != 1 and stride != 0]
        return any(later > earlier for earlier, later in zip(strides, strides[1:]))

    def channels_last(self) -> bool:
        if not self.known or self.ndim != 4:
            return False
        n, c, h, w = self.shape
        return c > 1 and (h > 1 or w > 1) and self.stride[1] == 1 and self.stride[3] == c and self.stride[2] == w * c

    def is_floating(self) -> bool:
        return self.dtype in ("float16", "bfloat16", "float32", "float64") or self.dtype.startswith("float8")


def meta_of(value: Any) -> TensorMeta | None:
    """A tensor's (or fake tensor's) metadata, or None for anything else."""
    if not isinstance(value, torch.Tensor):
        return None
    from torch.utils._python_dispatch import is_traceable_wrapper_subclass

    subclass = is_traceable_wrapper_subclass(value)

    def plain(numbers: Any) -> tuple[int | None, ...]:
        return tuple(number if type(number) is int else None for number in numbers)

    try:
        stride = plain(value.stride())
        offset = value.storage_offset()
        offset = offset if type(offset) is int else None
    except Exception:  # sparse and other layouts have no strides
        stride, offset = tuple(None for _ in value.shape), None
    try:
        storage = None if subclass else StorageWeakRef(value.untyped_storage())
    except Exception:
        storage = None
    return TensorMeta(plain(value.shape), stride, offset, str(value.dtype).removeprefix("torch."),
                      bool(value.requires_grad), subclass, storage)


def value_of(node: Any) -> Any:
    """The (fake) value a graph node holds: Dynamo's example value, or AOTAutograd's."""
    if not isinstance(node, torch.fx.Node):
        return node
    return node.meta.get("example_value", node.meta.get("val"))


def metas(value: Any) -> list[TensorMeta]:
    if isinstance(value, (list, tuple)):
        return [meta for item in value for meta in metas(item)]
    meta = meta_of(value)
    return [meta] if meta is not None else []


def target_name(target: Any) -> str:
    """``add`` for ``torch.add``, ``operator.add``, the method ``add`` and ``aten.add.Tensor``."""
    if isinstance(target, str):
        return target
    if compat.is_op_overload(target):
        return target._opname
    if compat.is_op_overload_packet(target):
        return target._qualified_op_name.split("::")[-1]
    name = getattr(target, "__name__", "") or getattr(target, "_name", "") or str(target)
    return families.base_name(name)


def namespace_of(target: Any) -> str | None:
    if compat.is_op_overload(target):
        return target.namespace
    if compat.is_op_overload_packet(target):
        return target._qualified_op_name.split("::")[0]
    return None


@dataclass
class Site:
    """One operator call of a graph: what a kernel is asked to do."""

    node: Any  # the torch.fx.Node (None for a pseudo-site, and for a call read off its values)
    name: str
    family: str
    operands: list[TensorMeta]  # positional tensor arguments, each a whole operand
    tensors: list[TensorMeta]  # every tensor it reads (operands and lists of tensors)
    scalars: list[Any]  # positional Python numbers
    outputs: list[TensorMeta]
    dim: int | None = None  # its dim argument, when it has a single one
    higher_order: bool = False

    @property
    def is_view(self) -> bool:
        return self.name in VIEW_OPS

    def reduced(self) -> int | None:
        """How many elements a reduction folds into each of its results."""
        if not self.tensors or not self.outputs:
            return None
        size_in, size_out = self.tensors[0].numel, self.outputs[0].numel
        if size_in is None or size_out is None:
            return None
        if size_out and size_out < size_in:
            return size_in // size_out
        if size_out == 0 and size_in:
            return None
        shape = self.tensors[0].shape
        if self.dim is not None and shape and -len(shape) <= self.dim < len(shape):
            return shape[self.dim]  # softmax and its kin: one result per element, along dim
        return size_in if size_out == 1 else 1


def _dim_argument(node: Any) -> int | None:
    dim = node.kwargs.get("dim")
    if dim is None:
        ints = [arg for arg in node.args[1:] if type(arg) is int]
        dim = ints[0] if len(ints) == 1 else None
    return dim if type(dim) is int else None


def site_of(node: Any) -> Site | None:
    """The site of a call node (function, method or module call), or None for other nodes."""
    if node.op not in ("call_function", "call_method", "call_module"):
        return None
    target = node.target
    higher_order = compat.is_higher_order_op(target)
    name = target_name(target) if node.op != "call_module" else type(_submodule(node)).__name__.lower()
    family = families.family_of(name, namespace_of(target), higher_order)
    if name in ("getitem", "setitem") and any(meta.dtype in ("int64", "int32", "bool") for meta in _nested(node.args[1:2])):
        family = families.INDEXING  # x[indices], x[mask]: advanced indexing, not a view
    operands, scalars = [], []
    for arg in node.args:
        if isinstance(arg, torch.fx.Node):
            meta = meta_of(value_of(arg))
            if meta is not None:
                operands.append(meta)
        elif type(arg) in _NUMBER:
            scalars.append(arg)
    tensors = [meta for arg in (*node.args, *node.kwargs.values()) for meta in _nested(arg)]
    if node.target is operator.getitem and not isinstance(value_of(node.args[0]), torch.Tensor):
        return None  # taking one result of a multi-output call: no kernel
    return Site(node, name, family, operands, tensors, scalars, metas(value_of(node)), _dim_argument(node),
                higher_order)


def site_of_values(target: Any, args: tuple, kwargs: dict, result: Any) -> Site:
    """The site an eager call of ``target`` on these values would be as a graph's node: the
    same rules read an input before it is compiled (which of an op's inputs show a feature
    its others do not)."""
    name = target_name(target)
    tensors = [meta for value in (*args, *kwargs.values()) for meta in metas(value)]
    dim = kwargs.get("dim", next(iter(arg for arg in args[1:] if type(arg) is int), None))
    return Site(None, name, families.family_of(name, namespace_of(target), False),
                [meta for arg in args if (meta := meta_of(arg)) is not None], tensors,
                [arg for arg in args if type(arg) in _NUMBER], metas(result), dim if type(dim) is int else None)


# An operator's options: the arguments that choose which variant of its kernel runs
# (``approximate``, ``keepdim``, ``include_self``, ``count_include_pad``, ``correction``,
# ``reduction``): a flag or a mode, or a number its schema gives a default (not the sizes a
# decomposition passes on, group_norm's N and HxW). Not the tensors it reads, nor the lists
# that size them; a ScalarType prints as int.
FLAG_TYPES = frozenset({"bool", "str"})  # a flag or a mode
_NUMBER_TYPES = frozenset({"int", "float", "number"})
# Where a result is placed, or what a failed assertion says: not which kernel computes it.
_NO_KERNEL_OPTIONS = frozenset({"pin_memory", "non_blocking", "sparse", "sparse_grad", "layout", "device",
                                "assert_msg"})
# Operators whose options pick no computation: views, copies, new tensors.
_NO_VARIANTS = frozenset({families.SHAPE, families.COPY, families.CREATION})


def option_arguments(target: Any) -> list[tuple[int, Any, str]]:
    """(position, schema argument, its type without Optional) of each option of an ATen
    operator's schema; [] for a call that is not an ATen operator's, a view's or one whose
    options pick no computation."""
    schema = getattr(target, "_schema", None)
    if schema is None or not compat.is_op_overload(target) or target._opname in VIEW_OPS \
            or families.family_of(target._opname) in _NO_VARIANTS:
        return []
    found = []
    for position, argument in enumerate(schema.arguments):
        kind = str(argument.type)
        if kind.startswith("Optional[") and kind.endswith("]"):
            kind = kind[len("Optional["):-1]
        if argument.name in _NO_KERNEL_OPTIONS:
            continue
        if kind in FLAG_TYPES or kind in _NUMBER_TYPES and argument.has_default_value():
            found.append((position, argument, kind))
    return found


def argument_variants(target: Any, args: tuple, kwargs: dict) -> list[str]:
    """``name=value`` for each option an ATen call's schema has (option_arguments), as the
    call (a graph's node's target and arguments, or an eager call's) sets it or as its default
    leaves it: a backend implements each variant of a kernel apart (avg_pool2d not counting
    padding, gelu's tanh approximation) and gets one wrong alone. Numbers other than 0, 1 and
    -1 read as ``other``; [] for a call that is not an ATen operator's."""
    options = option_arguments(target)
    given = {argument.name: value for argument, value in zip(target._schema.arguments, args)} if options else {}
    given.update(kwargs)
    found = []
    for _, argument, kind in options:
        if argument.name in given:
            value = given[argument.name]
        elif argument.has_default_value():
            value = argument.default_value
        else:
            continue
        found.append(f"{argument.name}={_option_value(value, kind == 'bool')}")
    return found


def _option_value(value: Any, flag: bool) -> str:
    if value is None or isinstance(value, str) or (flag and isinstance(value, bool)):
        return str(value)
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    if isinstance(value, (int, float)):
        return str(int(value)) if value in (0, 1, -1) else "other"
    return "symbolic" if isinstance(value, torch.fx.Node) else type(value).__name__


def _nested(arg: Any) -> list[TensorMeta]:
    if isinstance(arg, torch.fx.Node):
        return metas(value_of(arg))
    if isinstance(arg, (list, tuple)):
        return [meta for item in arg for meta in _nested(item)]
    if isinstance(arg, dict):
        return [meta for item in arg.values() for meta in _nested(item)]
    return []


def _submodule(node: Any) -> Any:
    try:
        return node.graph.owning_module.get_submodule(node.target)
    except Exception:
        return None


@dataclass
class GraphView:
    """A whole graph: its sites, its inputs and outputs, and how values flow between calls."""

    graph: Any  # torch.fx.Graph
    sites: list[Site]
    inputs: list[TensorMeta]
    outputs: list[TensorMeta]
    input_names: list[str]  # the placeholders' names (a module's state: "..._parameters_...", "..._buffers_...")
    example_inputs: list[Any] = field(default_factory=list)
    attributes: list[TensorMeta] = field(default_factory=list)  # values the graph holds (get_attr)

    @property
    def calls(self) -> int:
        return len(self.sites)

    def pseudo_site(self) -> Site:
        """The graph's inputs and outputs as one site: a condition of a value the graph takes
        or gives (a float64 input returned as it is) that no operator call shows."""
        return Site(None, "graph", "", self.inputs, self.inputs, [], self.outputs)

    def fan_in(self) -> int:
        computed = {site.node for site in self.sites}
        return max((len({arg for arg in site.node.all_input_nodes if arg in computed})
                    for site in self.sites), default=0)

    def fan_out(self) -> int:
        return max((len([user for user in site.node.users if user.op != "output"]) for site in self.sites), default=0)

    def aliasing(self) -> tuple[bool, bool]:
        """Whether an output shares memory with an input, and two outputs with each other."""
        inputs = {meta.storage for meta in self.inputs if meta.storage is not None}
        seen: list[Any] = []
        to_input = between = False
        for meta in self.outputs:
            if meta.storage is None:
                continue
            to_input |= meta.storage in inputs
            between |= meta.storage in seen
            seen.append(meta.storage)
        return to_input, between


def graph_view(gm: Any, example_inputs: list[Any] | None = None) -> GraphView:
    graph = gm.graph
    placeholders = [node for node in graph.nodes if node.op == "placeholder"]
    inputs = [meta for node in placeholders for meta in metas(value_of(node))]
    if not inputs and example_inputs:
        inputs = [meta for value in example_inputs for meta in metas(value)]
    output = next((node for node in reversed(graph.nodes) if node.op == "output"), None)
    outputs = _nested(output.args[0]) if output is not None and output.args else []
    sites = [site for node in graph.nodes if (site := site_of(node)) is not None]
    attributes = [meta for node in graph.nodes if node.op == "get_attr" for meta in metas(value_of(node))]
    return GraphView(graph, sites, inputs, outputs, [str(node.target) for node in placeholders],
                     list(example_inputs or []), attributes)


@dataclass
class CallView:
    """One call of a compiled graph: the caller's global state, and the graph's inputs."""

    index: int  # 0 for the graph's first call
    grad_enabled: bool
    inference_mode: bool
    deterministic: bool
    autocast: bool
    modules: list[Any] = field(default_factory=list)  # the compiled modules, alive at the call
    other_thread: bool = False  # called from a thread other than the main one

    @classmethod
    def now(cls, index: int, modules: list[Any]) -> "CallView":
        return cls(index, torch.is_grad_enabled(), torch.is_inference_mode_enabled(),
                   torch.are_deterministic_algorithms_enabled(), compat.autocast_enabled(), modules,
                   threading.current_thread() is not threading.main_thread())

    def has_hooks(self) -> bool:
        global_hooks = torch.nn.modules.module
        if any(getattr(global_hooks, name, None) for name in (
                "_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
                "_global_backward_pre_hooks")):
            return True
        return any(getattr(module, name, None) for root in self.modules for module in root.modules()
                   for name in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks"))


@dataclass
class BackwardView:
    """A backward pass through one compiled call's outputs."""

    count: int  # 1 for the first backward through that call
    grad_enabled: bool  # create_graph=True: the backward is itself recorded


def plain_values(tensor: Any) -> torch.Tensor | None:
    """A plain, detached view of a tensor's values (complex: its real numbers), or None for
    anything else (a subclass, an empty or meta tensor, not a tensor)."""
    if not isinstance(tensor, torch.Tensor) or type(tensor) not in (torch.Tensor, torch.nn.Parameter):
        return None
    if tensor.numel() == 0 or tensor.device.type == "meta" or not _backed(tensor):
        return None
    return torch.view_as_real(tensor.detach()) if tensor.is_complex() else tensor.detach()


def _backed(tensor: torch.Tensor) -> bool:
    """Whether a tensor's storage holds its elements. A placeholder does not: Dynamo hands a
    compiled graph a parameter it constructs as one whose storage has 0 bytes, filled by the
    call; reading its values would read freed memory."""
    try:
        extent = tensor.storage_offset() + sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride()))
        return tensor.untyped_storage().nbytes() >= (extent + 1) * tensor.element_size()
    except Exception:  # no storage to read (a sparse or nested layout)
        return False


def integer_values(tensor: torch.Tensor) -> torch.Tensor | None:
    if not isinstance(tensor, torch.Tensor) or type(tensor) not in (torch.Tensor, torch.nn.Parameter):
        return None
    if tensor.dtype.is_floating_point or tensor.is_complex() or tensor.dtype == torch.bool or tensor.numel() == 0 \
            or not _backed(tensor):
        return None
    return tensor.detach() if tensor.device.type != "meta" else None


def any_true(check: Callable[[], torch.Tensor]) -> bool:
    try:
        with torch.no_grad():
            return bool(check().any())
    except Exception:  # a reading aid: never let it change a test
        return False


# -- writes into inputs -------------------------------------------------------------------------

_NOT_MUTATIONS = frozenset({"requires_grad_", "retain_grad", "share_memory_"})


def writes_an_input(graph: Any) -> bool:
    """Whether a call of the graph writes into the storage of one of its inputs: an in-place
    operator or method (a trailing underscore, or a mutable ATen schema), item assignment,
    ``out=``, batch norm's running statistics in training."""
    def storage(node: Any) -> Any:
        meta = meta_of(value_of(node)) if isinstance(node, torch.fx.Node) else None
        return meta.storage if meta is not None else None

    inputs = {ref for node in graph.nodes if node.op == "placeholder" and (ref := storage(node)) is not None}

    def writes(*args: Any) -> bool:
        nodes = [node for arg in args for node in (arg if isinstance(arg, (list, tuple)) else [arg])]
        return any(storage(node) in inputs for node in nodes if isinstance(node, torch.fx.Node))

    for node in graph.nodes:
        if node.op not in ("call_function", "call_method"):
            continue
        if "out" in node.kwargs and writes(node.kwargs["out"]):
            return True
        if node.target is operator.setitem:
            if writes(node.args[0]):
                return True
            continue
        if node.op == "call_function" and node.target is torch.nn.functional.batch_norm:
            training = node.kwargs.get("training", node.args[5] if len(node.args) > 5 else False)
            if training and writes(*node.args[1:3], node.kwargs.get("running_mean"), node.kwargs.get("running_var")):
                return True
            continue
        if compat.is_op_overload(node.target):
            if node.target._schema.is_mutable and writes(*node.args):
                return True
            continue
        name = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", "")
        if name.endswith("_") and not name.endswith("__") and name not in _NOT_MUTATIONS and node.args \
                and writes(node.args[0]):
            return True
    return False
