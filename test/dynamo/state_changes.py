"""What a user changes around a compiled callable between two calls, declared once.

Each entry of ``STATE_CHANGES`` builds a small world (a function or module and the state it
reads), names the kinds of Dynamo guard that state is protected by (``GuardBuilder``'s
methods in ``torch/_dynamo/guards.py``) and puts the world into version 0 or 1 of that state
the way users do: a config value edited, a module switched to ``eval()``, a hook registered,
a parameter updated by an eager optimizer, a global mode entered. The family in
``test_state_changes.py`` visits versions 0, 1, 0 and requires eager's result at every call,
and the number of graphs the backend received: two where the change needs a new graph, one
where the compiled graph is correctly reused (the state reaches it as an input).

``NOT_COVERED`` names every other kind of guard the installed torch has, with the reason no
user-level change reaches it here; a kind torch adds later is in neither, and the self-test
(test/harness/test_state_changes.py) says so. ``guard_coverage.py`` in scripts/ writes the
table in docs/state-changes.md from both.
"""

from __future__ import annotations

import contextlib
import types
from dataclasses import dataclass
from typing import Any, Callable, ContextManager

import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode


@dataclass
class World:
    """``program`` (what is compiled: a function of one tensor, or a module) and ``at``:
    ``at(version)`` puts the state into version 0 or 1 and may return a context manager
    that the call runs inside (for global modes, which end with the call)."""

    program: Callable[[torch.Tensor], Any]
    at: Callable[[int], ContextManager | None]
    observed: Callable[[], dict[str, torch.Tensor]] = dict  # state a call may write, compared after it


@dataclass(frozen=True)
class StateChange:
    name: str
    what: str  # the user's change, in words
    # The kinds of guard (GuardBuilder's) that protect this state: without all of them the
    # change goes unnoticed (test/proofs/test_state_change_faults.py disables them to see).
    guards: tuple[str, ...]
    build: Callable[[], World]
    recompiles: bool  # whether version 1 needs graphs of its own (else the first ones are reused)
    compile_in_place: bool = False  # module.compile() instead of torch.compile(module)
    under_no_grad: bool = True  # False where the change is grad mode itself, or needs it (a gradient hook)


STATE_CHANGES: list[StateChange] = []


def state_change(what: str, guards: tuple[str, ...], *, recompiles: bool = True, compile_in_place: bool = False,
                 under_no_grad: bool = True) -> Callable[[Callable[[], World]], Callable[[], World]]:
    def declare(build: Callable[[], World]) -> Callable[[], World]:
        STATE_CHANGES.append(StateChange(build.__name__, what, guards, build, recompiles, compile_in_place,
                                         under_no_grad))
        return build
    return declare


def _setter(target: Any, attribute: str, *values: Any) -> Callable[[int], None]:
    def at(version: int) -> None:
        setattr(target, attribute, values[version])
    return at


class Block(nn.Module):
    """A small module whose forward reads the attributes the scenarios change."""

    scale = 2.0  # a class attribute an instance may shadow

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.act: nn.Module = nn.ReLU()
        self.use_residual = True
        self.mode = "sum"
        self.extra: torch.Tensor | None = None
        self.factors = [1.0, 0.5]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.act(self.linear(x)) * self.scale
        if self.use_residual:
            y = y + x
        if self.extra is not None:
            y = y * self.extra
        for factor in self.factors:
            y = y + factor * x.sin()
        return y.sum(-1) if self.mode == "sum" else y.amax(-1)


def _block() -> Block:
    torch.manual_seed(0)
    return Block()


# -- Python values a program reads ---------------------------------------------------------

@state_change("a float in a config object edited", ("CONSTANT_MATCH", "EQUALS_MATCH"))
def config_float():
    config = types.SimpleNamespace(scale=2.0)
    return World(lambda x: x * config.scale + 1, _setter(config, "scale", 2.0, 3.5))


GLOBAL_STEPS = 2


@state_change("a module-level int reassigned", ("CONSTANT_MATCH", "EQUALS_MATCH"))
def global_int():
    def program(x):
        for _ in range(GLOBAL_STEPS):
            x = x.cos() + 1
        return x

    def at(version):
        global GLOBAL_STEPS
        GLOBAL_STEPS = (2, 3)[version]
    return World(program, at)


@state_change("a string attribute picking a branch changed", ("EQUALS_MATCH", "CONSTANT_MATCH"))
def module_string():
    block = _block()
    return World(block, _setter(block, "mode", "sum", "max"))


@state_change("a bool flag of a module flipped", ("CONSTANT_MATCH", "BOOL_MATCH"))
def module_flag():
    block = _block()
    return World(block, _setter(block, "use_residual", True, False))


@state_change("an optional tensor attribute set where it was None", ("NONE_MATCH",))
def optional_attribute():
    block = _block()
    return World(block, _setter(block, "extra", None, torch.linspace(0.5, 2.0, 4)))


@state_change("a list attribute appended to", ("SEQUENCE_LENGTH", "CONSTANT_MATCH"))
def list_appended():
    block = _block()
    return World(block, lambda version: setattr(block, "factors", [1.0, 0.5] + [3.0] * version))


@state_change("a key added to a settings dict", ("DICT_NOT_CONTAINS",))
def dict_key_added():
    settings: dict[str, float] = {"scale": 2.0}

    def program(x):
        return x * settings["scale"] + settings.get("shift", 0.0)

    def at(version):
        settings.pop("shift", None)
        if version:
            settings["shift"] = 4.0
    return World(program, at)


@state_change("a key removed from a settings dict", ("DICT_CONTAINS", "DICT_NOT_CONTAINS"))
def dict_key_removed():
    settings: dict[str, float] = {"scale": 2.0}

    def program(x):
        return x * settings["scale"] if "scale" in settings else x.neg()

    def at(version):
        settings.pop("scale", None)
        if not version:
            settings["scale"] = 2.0
    return World(program, at)


@state_change("a key added to a dict the program iterates",
              ("DICT_KEYS_MATCH", "NOT_PRESENT_IN_GENERIC_DICT", "TYPE_MATCH", "TENSOR_MATCH"))
def dict_keys_iterated():
    torch.manual_seed(0)
    heads = nn.ModuleDict({"first": nn.Linear(4, 2)})
    second = nn.Linear(4, 2)

    def program(x):
        return sum(head(x).sum() for head in heads.values())

    def at(version):
        if "second" in heads:
            del heads["second"]
        if version:
            heads["second"] = second
    return World(program, at)


@state_change("a value in a settings dict edited", ("CONSTANT_MATCH", "EQUALS_MATCH"))
def dict_value_edited():
    settings = {"scale": 2.0}

    def at(version):
        settings["scale"] = (2.0, -1.0)[version]
    return World(lambda x: (x * settings["scale"]).exp(), at)


ENABLED_FEATURES: set[str] = set()


@state_change("a feature name added to a global set", ("SET_CONTAINS", "SET_NOT_CONTAINS", "EQUALS_MATCH"))
def set_membership():
    def program(x):
        return x.tanh() * 3 if "scaled" in ENABLED_FEATURES else x.tanh()

    def at(version):
        ENABLED_FEATURES.discard("scaled")
        if version:
            ENABLED_FEATURES.add("scaled")
    return World(program, at)


@state_change("an attribute added to a config object", ("HASATTR",))
def attribute_added():
    config = types.SimpleNamespace()

    def program(x):
        return x + config.bias if hasattr(config, "bias") else x - 1

    def at(version):
        if hasattr(config, "bias"):
            del config.bias
        if version:
            config.bias = 10.0
    return World(program, at)


@state_change("a class attribute shadowed by an instance attribute", ("NOT_PRESENT_IN_GENERIC_DICT", "CONSTANT_MATCH"))
def instance_shadows_class():
    block = _block()

    def at(version):
        block.__dict__.pop("scale", None)
        if version:
            block.scale = -3.0
    return World(block, at)


@state_change("a class attribute reassigned", ("CONSTANT_MATCH", "EQUALS_MATCH"))
def class_attribute():
    class Scaled(Block):
        pass
    torch.manual_seed(0)
    block = Scaled()
    return World(block, _setter(Scaled, "scale", 2.0, 0.25))


# -- Functions, closures and objects a program calls ---------------------------------------

@state_change("a torch builtin held in a config swapped", ("BUILTIN_MATCH",))
def torch_function_swapped():
    config = types.SimpleNamespace(activation=torch.tanh)
    return World(lambda x: config.activation(x) * 2, _setter(config, "activation", torch.tanh, torch.sigmoid))


@state_change("a Tensor method held in a config swapped", ("BUILTIN_MATCH",))
def tensor_method_swapped():
    # A method of torch.Tensor (a C method descriptor: Tensor.add, Tensor.__radd__) is a
    # callable of its own kind to Dynamo; code that picks an operation from a table holds one.
    config = types.SimpleNamespace(combine=torch.Tensor.add)
    return World(lambda x: config.combine(x, 2.0) * 2, _setter(config, "combine", torch.Tensor.add, torch.Tensor.sub))


@state_change("a torch.nn.functional function held in a config swapped", ("CLOSURE_MATCH",))
def functional_swapped():
    config = types.SimpleNamespace(normalize=F.softmax)
    return World(lambda x: config.normalize(x, dim=0) * 2, _setter(config, "normalize", F.softmax, F.log_softmax))


def _gelu_like(x):
    return x * torch.sigmoid(1.702 * x)


def _softplus_like(x):
    return torch.log1p(x.exp())


activation = _gelu_like


@state_change("a global Python function reassigned", ("CLOSURE_MATCH", "ID_MATCH"))
def global_function():
    def at(version):
        global activation
        activation = (_gelu_like, _softplus_like)[version]
    return World(lambda x: activation(x) + 1, at)


@state_change("a variable captured by a closure rebound", ("CONSTANT_MATCH", "EQUALS_MATCH"))
def closure_cell():
    threshold = 0.0

    def program(x):
        return torch.where(x > threshold, x, x * 0.1)

    def at(version):
        nonlocal threshold
        threshold = (0.0, 0.5)[version]
    return World(program, at)


@state_change("a submodule replaced by one of another type", ("TYPE_MATCH", "EQUALS_MATCH"))
def submodule_type():
    block = _block()
    return World(block, _setter(block, "act", nn.ReLU(), nn.GELU()))


@state_change("a submodule replaced by a new one of the same type", ("TYPE_MATCH", "TENSOR_MATCH"), recompiles=False)
def submodule_same_type():
    block = _block()
    torch.manual_seed(1)
    other = nn.Linear(4, 4)
    return World(block, _setter(block, "linear", block.linear, other))


# -- Tensors a program reads ---------------------------------------------------------------

@state_change("parameters updated in place (an eager optimizer step)", ("TENSOR_MATCH",), recompiles=False)
def parameters_updated():
    block = _block()
    weights = [block.linear.weight.detach().clone(), block.linear.weight.detach() * 0.5 - 0.1]

    def at(version):
        with torch.no_grad():
            block.linear.weight.copy_(weights[version])
    return World(block, at)


@state_change("a parameter's .data replaced by new values (as weight loading does)", ("TENSOR_MATCH",),
              recompiles=False)
def parameter_data_swapped():
    block = _block()
    weights = [block.linear.weight.data, block.linear.weight.detach() * -2 + 0.3]

    def at(version):
        block.linear.weight.data = weights[version]
    return World(block, at)


@state_change("a tensor attribute replaced by another of the same shape", ("TENSOR_MATCH",), recompiles=False)
def tensor_attribute_replaced():
    block = _block()
    masks = [torch.ones(4), torch.tensor([1.0, 0.0, -1.0, 2.0])]
    return World(block, _setter(block, "extra", *masks))


@state_change("a parameter frozen (requires_grad turned off)", ("TENSOR_MATCH",))
def parameter_frozen():
    block = _block()

    def at(version):
        block.linear.weight.requires_grad_(version == 0)
    return World(block, at)


@state_change("a module moved to another dtype", ("TENSOR_MATCH",))
def module_dtype():
    block = _block()

    def program(x):
        return block(x.to(block.linear.weight.dtype))

    def at(version):
        block.to((torch.float32, torch.float64)[version])
    return World(program, at)


GLOBAL_OFFSET = torch.zeros(4)


@state_change("a global tensor changed in place", ("TENSOR_MATCH",), recompiles=False)
def global_tensor():
    def at(version):
        GLOBAL_OFFSET.fill_((0.0, 2.5)[version])
    return World(lambda x: (x + GLOBAL_OFFSET).sin(), at)


@state_change("weights tied (one parameter shared by two layers)", ("TENSOR_MATCH",), recompiles=False)
def weights_tied():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4, bias=False), nn.Tanh(), nn.Linear(4, 4, bias=False))
    weights = (model[2].weight, model[0].weight)
    return World(model, _setter(model[2], "weight", *weights))


@state_change("two state tensors made one, which the program writes", ("DUPLICATE_INPUT",))
def state_aliased():
    state = types.SimpleNamespace(counts=torch.zeros(4), totals=torch.ones(4))
    totals = (state.totals, state.counts)

    def program(x):
        state.counts.add_(1)
        return x * state.totals

    def at(version):
        state.totals = totals[version]
    return World(program, at, lambda: {"counts": state.counts, "totals": state.totals})


@state_change("a cache buffer grown (a new size each version)", ("TENSOR_MATCH", "SHAPE_ENV"))
def buffer_grows():
    torch.manual_seed(0)
    cache = types.SimpleNamespace(values=torch.randn(3, 4))
    grown = torch.cat([cache.values, torch.randn(2, 4)])
    return World(lambda x: (cache.values @ x.unsqueeze(-1)).softmax(0).sum() * x,
                 _setter(cache, "values", cache.values, grown))


@state_change("a parameter left without a gradient before a compiled optimizer step", ("NOT_NONE_MATCH",))
def optimizer_grad_none():
    torch.manual_seed(0)
    params = [nn.Parameter(torch.randn(4)), nn.Parameter(torch.randn(3))]
    optimizer = torch.optim.SGD(params, lr=0.1, momentum=0.9)

    def program(x):
        optimizer.step()
        return x * 2

    def at(version):
        for index, param in enumerate(params):
            param.grad = None if version and index else torch.full_like(param, 0.5 + index)

    at(0)
    optimizer.step()  # an eager first step creates the momentum buffers a compiled step then reuses

    def observed():
        named = {f"parameter {index}": param.detach() for index, param in enumerate(params)}
        named.update({f"momentum of parameter {index}": optimizer.state[param]["momentum_buffer"]
                      for index, param in enumerate(params) if param in optimizer.state})
        return named
    return World(program, at, observed)


# -- Module state ----------------------------------------------------------------------------

@state_change("a module switched from train() to eval()", ("CONSTANT_MATCH", "BOOL_MATCH"))
def train_to_eval():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 4))

    def program(x):
        return model(x.unsqueeze(0).expand(3, -1) * torch.tensor([[1.0], [2.0], [-1.0]]))

    def at(version):
        model.train(version == 0)
    return World(program, at)


def _hooked(submodule: bool, compile_in_place: bool = False):
    block = _block()
    target = block.linear if submodule else block
    handles: list[Any] = []

    def hook(_module, _inputs, output):
        return output * 3 if isinstance(output, torch.Tensor) else output

    def at(version):
        while handles:
            handles.pop().remove()
        if version:
            handles.append(target.register_forward_hook(hook))
    return World(block, at)


# The hooks of the module torch.compile wraps run around the compiled forward: no guard is
# involved, the hook itself is compiled as a frame of its own.
@state_change("a forward hook registered on a module after its first call", ())
def forward_hook_added():
    return _hooked(submodule=False)


@state_change("a forward hook registered on a submodule after the first call", ("EMPTY_NN_MODULE_HOOKS_DICT",))
def submodule_hook_added():
    return _hooked(submodule=True)


@state_change("a forward hook registered after the first call of module.compile()", (),
              compile_in_place=True)
def forward_hook_added_in_place():
    return _hooked(submodule=False)


# A backward hook changes only gradients: the forward graph is the same, so nothing but a guard
# on the submodule's hook dicts sends the next call to a forward that registers it.
@state_change("a full backward pre-hook registered on a submodule after the first call (its gradient tripled)",
              ("EMPTY_NN_MODULE_HOOKS_DICT",), under_no_grad=False)
def submodule_backward_pre_hook_added():
    block = _block()
    handles: list[Any] = []

    def hook(_module, grad_output):
        return tuple(grad * 3 for grad in grad_output)

    def at(version):
        while handles:
            handles.pop().remove()
        if version:
            handles.append(block.linear.register_full_backward_pre_hook(hook))
    return World(block, at)


# -- Tensor hooks the program registers, defaults of the functions it calls ------------------
# A hook registered inside compiled code is Dynamo's to keep: on an intermediate it becomes
# part of the graph (the gradient flowing back through that tensor is the hook's result), on
# an input it is registered again after the graph runs. A default a called function reads is
# guarded where Dynamo binds the call's arguments (``fn.__defaults__[i]``,
# ``fn.__kwdefaults__[name]``); the compiled function's own defaults are bound by Python
# before Dynamo sees the frame. test/proofs/test_hook_and_default_faults.py drops each.
# A gradient hook cannot be registered under no_grad (eager refuses): those run with grad only.

def _flag() -> tuple[types.SimpleNamespace, Callable[[int], None]]:
    """A switch the program reads: version 1 turns on what version 0 leaves out."""
    switch = types.SimpleNamespace(on=False)
    return switch, _setter(switch, "on", False, True)


@state_change("a gradient hook registered on an intermediate (the gradient tripled)", ("CONSTANT_MATCH", "BOOL_MATCH"),
              under_no_grad=False)
def intermediate_hook():
    switch, at = _flag()

    def program(x):
        y = x * 2
        if switch.on:
            y.register_hook(lambda grad: grad * 3)
        return y.sin()
    return World(program, at)


@state_change("the value a hook on an intermediate closes over rebound", ("CONSTANT_MATCH", "EQUALS_MATCH"),
              under_no_grad=False)
def hook_closure():
    factor = 3.0

    def program(x):
        y = x.exp()
        y.register_hook(lambda grad: grad * factor)
        return (y * x).cos()

    def at(version):
        nonlocal factor
        factor = (3.0, -0.5)[version]
    return World(program, at)


@state_change("a hook that records the gradient it saw into a list, returning None", ("CONSTANT_MATCH", "BOOL_MATCH"),
              under_no_grad=False)
def recording_hook():
    # A hook with a Python side effect is not traced: the program breaks its graph there and
    # the hook runs eagerly on the tensor the first graph returned.
    seen: list[torch.Tensor] = []
    switch, flip = _flag()

    def program(x):
        y = x.tanh()
        if switch.on:
            y.register_hook(lambda grad: seen.append(grad.detach().clone()))
        return y * y

    def at(version):
        seen.clear()
        flip(version)

    def observed():
        return {"gradients the hook saw": torch.stack(seen) if seen else torch.zeros(0, 4)}
    return World(program, at, observed)


@state_change("a gradient hook registered on the input inside the call", ("CONSTANT_MATCH", "BOOL_MATCH"),
              under_no_grad=False)
def input_hook():
    switch, at = _flag()

    def program(x):
        if switch.on:
            x.register_hook(lambda grad: grad - 1)
        return (x * 3).sigmoid()
    return World(program, at)


@state_change("a default argument of a called function rebound (fn.__defaults__)", ("CONSTANT_MATCH", "EQUALS_MATCH"))
def default_rebound():
    def helper(x, scale=2.0):
        return x * scale

    def at(version):
        helper.__defaults__ = ((2.0,), (-1.5,))[version]
    return World(lambda x: helper(x).cos(), at)


@state_change("a keyword-only default of a called function rebound (fn.__kwdefaults__)",
              ("CONSTANT_MATCH", "EQUALS_MATCH"))
def keyword_default_rebound():
    def helper(x, *, shift=1.0):
        return x.sin() + shift

    def at(version):
        helper.__kwdefaults__ = ({"shift": 1.0}, {"shift": 4.0})[version]
    return World(lambda x: helper(x) * 2, at)


@state_change("a tensor default of a called function replaced by another tensor", ("TENSOR_MATCH",),
              recompiles=False)
def tensor_default_replaced():
    weights = (torch.ones(4), torch.tensor([1.0, 0.0, -1.0, 2.0]))

    def helper(x, weight=weights[0]):
        return x * weight

    def at(version):
        helper.__defaults__ = (weights[version],)
    return World(lambda x: helper(x).sin(), at)


@state_change("a list default of a called function, appended to inside the call", ("SEQUENCE_LENGTH",))
def mutable_default():
    def helper(x, calls=[]):  # noqa: B006 - the shared default is the point
        calls.append(1.0)
        return x * len(calls)

    def at(version):
        helper.__defaults__[0][:] = [1.0] * version  # the list as a version-th call left it

    def observed():
        return {"the default list": torch.tensor(helper.__defaults__[0])}
    return World(lambda x: helper(x).exp(), at, observed)


@state_change("a default argument of the compiled function itself rebound", ("CONSTANT_MATCH", "EQUALS_MATCH"))
def own_default_rebound():
    # A float: Dynamo specializes it. An int default turns into a symbolic int at its second
    # value (automatic dynamic), and ``x.abs() ** n``'s backward then fails in AOTAutograd on
    # torch 2.13 ("NYI SymInt equality", pytorch#185715), which is not what this change is about.
    def program(x, power=2.0):
        return x.abs() ** power

    def at(version):
        program.__defaults__ = ((2.0,), (3.0,))[version]
    return World(program, at)


# -- Global torch state ----------------------------------------------------------------------

@state_change("the call made under torch.no_grad()", ("GRAD_MODE", "GLOBAL_STATE"), under_no_grad=False)
def grad_mode():
    return World(lambda x: x.cos() * 2, lambda version: torch.no_grad() if version else None)


@state_change("deterministic algorithms switched on", ("DETERMINISTIC_ALGORITHMS", "GLOBAL_STATE"))
def deterministic_algorithms():
    def program(x):
        return x * 2 if torch.are_deterministic_algorithms_enabled() else x + 2

    @contextlib.contextmanager
    def deterministic():
        torch.use_deterministic_algorithms(True)
        try:
            yield
        finally:
            torch.use_deterministic_algorithms(False)
    return World(program, lambda version: deterministic() if version else None)


@state_change("the call made under autocast to bfloat16", ("GLOBAL_STATE", "TENSOR_MATCH"))
def autocast_entered():
    torch.manual_seed(0)
    weight = torch.randn(4, 4)
    return World(lambda x: x.unsqueeze(0) @ weight,
                 lambda version: torch.autocast("cpu", dtype=torch.bfloat16) if version else None)


@state_change("the default dtype set to float64", ("GLOBAL_STATE",))
def default_dtype():
    @contextlib.contextmanager
    def float64():
        previous = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            yield
        finally:
            torch.set_default_dtype(previous)
    return World(lambda x: x + torch.arange(4) / 3, lambda version: float64() if version else None)


# The default device is kept as a torch function mode, whose guard protects it too.
@state_change("a default device set", ("DEFAULT_DEVICE", "TORCH_FUNCTION_STATE"))
def default_device():
    return World(lambda x: x * torch.ones(4), lambda version: torch.device("cpu") if version else None)


class _DoublingAdds(TorchFunctionMode):
    """A user's torch function mode: every ``torch.add`` adds its second operand twice."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.add:
            return func(args[0], args[1] * 2, **kwargs)
        return func(*args, **kwargs)


@state_change("a torch function mode entered", ("TORCH_FUNCTION_STATE",))
def torch_function_mode():
    return World(lambda x: torch.add(x, 1.5).relu(), lambda version: _DoublingAdds() if version else None)


@state_change("saved-tensor hooks entered (as activation offloading does)", ("AUTOGRAD_SAVED_TENSORS_HOOKS",),
              recompiles=False)
def saved_tensors_hooks():
    packed: list[int] = []

    def pack(tensor):
        packed.append(1)
        return tensor

    def at(version):
        packed.clear()
        return torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor) if version else None
    return World(lambda x: (x * x).sin(), at, lambda: {"whether the hooks ran": torch.tensor(bool(packed))})


# Guard kinds no change of user-level state reaches in this family, each with the reason.
NOT_COVERED: dict[str, str] = {
    "FAKE_SCRIPT_TYPE_MATCH": "TorchScript custom classes (torchbind objects) as inputs",
    "OPAQUE_OBJ_GUARD_FN_MATCH": "opaque objects of custom operators, which a program does not change",
    "DISPATCH_KEY_SET_MATCH": "a tensor's dispatch keys, which change with its device or subclass "
                              "(the device and subclass families)",
    "DUAL_LEVEL": "forward-mode AD levels (torch.autograd.forward_ad), which the suite does not compile",
    "FUNCTORCH_STACK_MATCH": "functorch transforms (vmap, grad) wrapping the compiled call: the tracing "
                             "transforms family",
    "TENSOR_SUBCLASS_METADATA_MATCH": "tensor subclass metadata: the subclass scenarios",
    "DTENSOR_SPEC_MATCH": "DTensor placements: the distributed family",
    "FSDP_TRAINING_STATE": "FSDP2's training state: the distributed family",
    "CONSTANT_SUBCLASS_MATCH": "instances of subclasses of int, float or str used as constants",
    "CLASS_MATCH": "a class object read as a constant (its identity), which users do not rebind",
    "MODULE_MATCH": "a Python module object read as a constant, which users do not rebind",
    "TUPLE_ITERATOR_LEN": "a tuple iterator passed in and advanced between calls",
    "RANGE_ITERATOR_MATCH": "a range iterator passed in and advanced between calls",
    "COUNT_ITERATOR_MATCH": "an itertools.count passed in and advanced between calls",
    "WEAKREF_ALIVE": "a weak reference read by the program dying between calls",
    "MAPPING_KEYS_CHECK": "the keys of a mapping proxy (a class __dict__), which users do not edit",
    "FUNCTION_MATCH": "torch callables that are neither Python functions, builtins nor classes; the "
                      "functions users swap are guarded by CLOSURE_MATCH and BUILTIN_MATCH (above)",
    "DICT_VERSION": "a dict guarded by its version tag, where this torch guards the dicts users edit by "
                    "their keys and values (the dict changes above)",
    "NN_MODULE": "a module's identity when Dynamo does not inline modules (inline_inbuilt_nn_modules off)",
}


def coverage_rows(kinds: list[str]) -> list[tuple[str, str]]:
    """For each kind of guard of ``kinds`` (the installed torch's, harness.compat.guard_kinds):
    the state changes that depend on it, or why none does, or that nothing covers it yet."""
    rows = []
    for kind in kinds:
        changes = [change.name for change in STATE_CHANGES if kind in change.guards]
        if changes:
            rows.append((kind, ", ".join(f"`{name}`" for name in changes)))
        else:
            rows.append((kind, f"not covered: {NOT_COVERED[kind]}" if kind in NOT_COVERED else "UNCOVERED"))
    return rows


def coverage_table(kinds: list[str], torch_version: str) -> str:
    """The markdown table docs/state-changes.md shows (scripts/guard_coverage.py writes it)."""
    lines = [f"Kinds of guard in torch {torch_version} (`GuardBuilder` in torch/_dynamo/guards.py): {len(kinds)}; "
             f"covered by a state change: {sum(any(kind in c.guards for c in STATE_CHANGES) for kind in kinds)}.",
             "", "| kind of guard | state changes it guards |", "|---|---|"]
    lines += [f"| `{kind}` | {covered} |" for kind, covered in coverage_rows(kinds)]
    return "\n".join(lines) + "\n"
