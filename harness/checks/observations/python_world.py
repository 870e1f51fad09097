"""The Python world a compiled call can reach, changed as eager changes it.

Dynamo traces a function's Python side effects (an append to a list it closes over, a key
set in a dict argument, ``self.steps += 1`` in a module's forward, a global or a closure cell
rebound) and replays them after the graph runs. A replay lost or done differently changes
what the caller sees, and no scenario compares it. So before every compiled call this
watcher finds what the call can reach of the Python world: the arguments and what they
hold, the eager function's closure cells and defaults, the module globals its code names
(and those of the plain-Python helpers of its module it names), and the instance of a bound
method or a module. Where any of it is mutable Python (a container, an object's attributes,
a cell or a global the code rebinds), it copies that world (one memo: aliasing kept; tensors
as detached copies keeping requires_grad and leafness), runs the eager function over the
copy with the RNG states put back after, lets the compiled call run on the real world, and
compares the two worlds afterwards: the same containers with the same contents in the same
order, the same attributes and values, the same objects where eager keeps the same ones
(new ones structurally), tensors by the usual comparison (harness/checks/compare.py). A
world with nothing mutable but tensors (most operator scenarios) costs one walk.

What cannot be copied (locks, generators, objects of C types), a world that reaches compiled
code, an eager run that raises, and calls from other threads are not observed: counted in
``unobserved``, never a failure. A call that drew random numbers is compared with its tensors'
values left out (the compiled call draws its own from torch's generators). Python's and NumPy's
generators are the caller's world, not the backend's: a ``random.Random`` or NumPy generator
the call reaches is compared by its state, and where the code names the ``random`` module or
NumPy, their global generators must be left where eager leaves them (pytorch#145445: a
``Random`` argument drawn from once and never again). docs/checks.md, "The Python world".
"""

from __future__ import annotations

import collections
import contextlib
import copy
import dis
import functools
import hashlib
import math
import os
import pickle
import random
import sys
import sysconfig
import threading
import time
import types
import unittest
from typing import Any, Callable, Iterator

import torch

from harness import compat
from harness.checks import compare
from harness.checks.observations import watched_calls

# Code under these directories is torch's or Python's own: its functions are shared by eager
# and the copy, not rebuilt (what they change is tensors or torch's state, which other
# checks compare).
_LIBRARY_DIRS = tuple(os.path.realpath(path) + os.sep for path in {
    os.path.dirname(torch.__file__), sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"],
    sysconfig.get_paths()["purelib"]})
_WATCHED_CALLS_FILE = os.path.realpath(watched_calls.__file__)
_HARNESS_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep
# Values whose identity is all there is to them: shared by eager and the copy.
_ATOMIC = (type(None), bool, int, float, complex, str, bytes, range, slice, type(Ellipsis), torch.dtype,
           torch.device, torch.layout, torch.memory_format, torch.Size, types.ModuleType, type, types.CodeType,
           types.BuiltinFunctionType, types.MethodWrapperType, types.WrapperDescriptorType,
           types.MethodDescriptorType, types.GetSetDescriptorType, types.MemberDescriptorType, property,
           staticmethod, classmethod, *compat.operator_types(), unittest.TestCase)
_TORCH_STATEFUL = (torch.Tensor, torch.Generator, torch.nn.Module, torch.optim.Optimizer,
                   torch.optim.lr_scheduler.LRScheduler)
_SEQUENCES = (list, tuple, collections.deque)
_STORES = frozenset({"STORE_GLOBAL", "DELETE_GLOBAL"})
_CELL_STORES = frozenset({"STORE_DEREF", "DELETE_DEREF"})
SHOWN = 4  # differences named in one failure
_MISSING = object()  # an empty cell, a global deleted, a slot unset
_RANDOM_MODULES = frozenset({"random", "numpy", "numpy.random"})  # a code naming one draws from its generator


class Unobservable(Exception):
    """The world cannot be copied or run eagerly: the call is not observed."""


@functools.lru_cache(maxsize=4096)
def _code_facts(code: types.CodeType) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The global names ``code`` (with the code nested in it) reads, those it rebinds, and the
    cell names it rebinds."""
    names, stored, cells = set(code.co_names), set(), set()
    for instruction in dis.get_instructions(code):
        if instruction.opname in _STORES:
            stored.add(instruction.argval)
        elif instruction.opname in _CELL_STORES:
            cells.add(instruction.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            inner = _code_facts(const)
            names |= inner[0]
            stored |= inner[1]
            cells |= inner[2]
    return frozenset(names), frozenset(stored), frozenset(cells)


@functools.lru_cache(maxsize=4096)
def _library_code(filename: str) -> bool:
    path = os.path.realpath(filename)
    return path.startswith(_LIBRARY_DIRS) or path == _WATCHED_CALLS_FILE or filename.startswith("<frozen")


def _user_function(value: Any) -> bool:
    return isinstance(value, types.FunctionType) and not _library_code(value.__code__.co_filename)


def _compiled(value: Any) -> bool:
    """Compiled code: calling it from the eager run would compile or count it again."""
    if compat.is_compiled_module(value):
        return True
    if isinstance(value, types.FunctionType):
        return (hasattr(value, "_torchdynamo_orig_callable")
                or os.path.realpath(value.__code__.co_filename) == _WATCHED_CALLS_FILE)
    return False


def _stateful_class(value: Any) -> bool:
    """A class of the caller's whose methods close over state, or that holds mutable class
    attributes (pytorch#197896: a method appending to a list it closes over): copied with
    the world, its methods rebuilt over the copy."""
    if not isinstance(value, type) or _library_code(getattr(sys.modules.get(value.__module__), "__file__", None)
                                                    or "<frozen>"):
        return False
    return any(_user_function(member) and member.__closure__ and any(
        name != "__class__" for name in member.__code__.co_freevars)
        or not name.startswith("__") and isinstance(member, (list, dict, set, collections.deque))
        for name, member in vars(value).items())


def _class_members(value: type) -> Iterator[tuple[str, Any]]:
    for name, member in vars(value).items():
        if not (name.startswith("__") and name.endswith("__")):
            yield name, member


def _opaque(value: Any) -> bool:
    """Shared by eager and the copy and not looked into."""
    if value is _MISSING:
        return True
    if isinstance(value, type):
        return not _stateful_class(value)
    if isinstance(value, _ATOMIC) or isinstance(value, types.FunctionType) and not _user_function(value):
        return True
    # torch's own objects (a custom op's library, streams, graph nodes) are torch's state, not
    # the caller's, but for those a caller keeps its own state in: modules and optimizers.
    module = getattr(type(value), "__module__", "") or ""
    return (module.startswith("torch") and not isinstance(value, _TORCH_STATEFUL)
            or isinstance(value, (types.BuiltinMethodType, types.MethodType)) and _opaque(value.__self__)
            and not _user_function(getattr(value, "__func__", None)))


class World:
    """What one call can reach, found before it: roots by label, each object reached once."""

    def __init__(self, call: watched_calls.Call) -> None:
        self.roots: list[tuple[str, Any]] = []
        self.order: list[Any] = []  # every object reached, kept alive so their ids stay theirs
        self.index: dict[int, int] = {}  # id -> position in order
        self.tensors: list[torch.Tensor] = []
        self.functions: list[types.FunctionType] = []  # user functions, rebuilt over the copy
        self.globals: dict[int, tuple[dict, set[str]]] = {}  # id(globals) -> (globals, names named)
        self.mutable = False
        self.draws_globally = False  # the code names Python's random module or NumPy
        self._named: set[types.CodeType] = set()
        self.instance: Any = None
        function = call.eager
        if isinstance(call.eager, torch.nn.Module):
            self.instance, function = call.eager, getattr(type(call.eager).forward, "__func__",
                                                          type(call.eager).forward)
        elif isinstance(call.eager, types.MethodType):
            self.instance, function = call.eager.__self__, call.eager.__func__
        self.function = function if _user_function(function) else None
        if _compiled(call.eager) or _compiled(self.instance):
            raise Unobservable("it is compiled code")
        if self.function is not None:
            # Rebuilt over the copy like every function reached; its cells and defaults are roots.
            self.index[id(self.function)] = len(self.order)
            self.order.append(self.function)
            self.functions.append(self.function)
            self._name_globals(self.function)
            for name, cell in zip(self.function.__code__.co_freevars, self.function.__closure__ or ()):
                self.roots.append((f"closure '{name}'", cell))
            if self.function.__defaults__:
                self.roots.append(("default arguments", self.function.__defaults__))
            if self.function.__kwdefaults__:
                self.roots.append(("keyword defaults", self.function.__kwdefaults__))
        if self.instance is not None and not _opaque(self.instance):
            for method in vars(type(self.instance)).values():
                if _user_function(method):
                    self._name_globals(method)
            self.roots.append(("self", self.instance))
        self.roots.extend((f"argument {index}", value) for index, value in enumerate(call.args))
        self.roots.extend((f"argument '{name}'", value) for name, value in call.kwargs.items())
        reached = 0
        rooted: set[tuple[int, str]] = set()
        while True:
            # A function reached names globals of its own: roots too, reached in turn.
            for key, (globals_, names) in list(self.globals.items()):
                for name in sorted(names - {name for owner, name in rooted if owner == key}):
                    if name in globals_:
                        rooted.add((key, name))
                        self.roots.append((f"global '{name}'", _GlobalSlot(globals_, name)))
            if reached == len(self.roots):
                break
            pending, reached = self.roots[reached:], len(self.roots)
            for _, value in pending:
                self._reach(value)

    def _name_globals(self, function: types.FunctionType) -> None:
        """The globals ``function``'s code names that the copy must hold its own of: mutable
        values, names it rebinds, and the plain-Python functions of the same module (rebuilt
        over the copy's globals, and reached in turn)."""
        if function.__code__ in self._named:
            return
        self._named.add(function.__code__)
        globals_ = function.__globals__
        named, stored, cells = _code_facts(function.__code__)
        if stored or cells & set(function.__code__.co_freevars):
            self.mutable = True  # a global or a cell it rebinds
        entry = self.globals.setdefault(id(globals_), (globals_, set()))
        if any(isinstance(globals_.get(name), types.ModuleType) and globals_[name].__name__ in _RANDOM_MODULES
               for name in named):
            self.draws_globally = self.mutable = True
        for name in named:
            if name in globals_ and (not _opaque(globals_[name]) or name in stored):
                entry[1].add(name)

    def _reach(self, value: Any) -> None:
        stack = [value]
        while stack:
            value = stack.pop()
            if _opaque(value) and not isinstance(value, _GlobalSlot) or id(value) in self.index:
                continue
            if _compiled(value):
                raise Unobservable("it reaches compiled code")
            self.index[id(value)] = len(self.order)
            self.order.append(value)
            if isinstance(value, torch.Tensor):
                self.tensors.append(value)
            elif isinstance(value, types.FunctionType):
                self.functions.append(value)
                self._name_globals(value)
            elif not isinstance(value, (tuple, frozenset, _GlobalSlot, types.MethodType, functools.partial,
                                        types.CellType, type(None), type)):
                self.mutable = True
            stack.extend(reversed([child for _, child in _children(value)]))


class _GlobalSlot:
    """A module global, as a root: its value is read at each look."""

    __slots__ = ("globals", "name")

    def __init__(self, globals_: dict, name: str) -> None:
        self.globals, self.name = globals_, name


def _attributes(value: Any) -> dict[str, Any]:
    found = dict(getattr(value, "__dict__", None) or {})
    for klass in type(value).__mro__:
        for slot in getattr(klass, "__slots__", ()) if klass is not _GlobalSlot else ():
            if isinstance(slot, str) and slot not in ("__dict__", "__weakref__"):
                found[slot] = getattr(value, slot, _MISSING)
    return found


def _children(value: Any) -> Iterator[tuple[str, Any]]:
    """(label suffix, child) of everything ``value`` holds that the world includes."""
    if isinstance(value, _GlobalSlot):
        yield "", value.globals.get(value.name, _MISSING)
    elif isinstance(value, torch.Tensor):
        if value.grad is not None:
            yield ".grad", value.grad
    elif isinstance(value, types.CellType):
        try:
            yield "", value.cell_contents
        except ValueError:
            yield "", _MISSING
    elif isinstance(value, _SEQUENCES):
        for index, item in enumerate(value):
            yield f"[{index}]", item
    elif isinstance(value, dict):
        for key, item in value.items():
            yield "{key}", key
            yield f"[{_key_label(key)}]", item
    elif isinstance(value, (set, frozenset)):
        for item in sorted(value, key=repr):
            yield "{item}", item
    elif isinstance(value, types.FunctionType):
        for name, cell in zip(value.__code__.co_freevars, value.__closure__ or ()):
            yield f".<closure '{name}'>", cell
        yield ".__defaults__", value.__defaults__
        yield ".__kwdefaults__", value.__kwdefaults__
    elif isinstance(value, types.MethodType):
        yield ".__self__", value.__self__
        yield ".__func__", value.__func__
    elif isinstance(value, functools.partial):
        yield ".func", value.func
        yield ".args", value.args
        yield ".keywords", value.keywords
    elif value is _MISSING or isinstance(value, torch.Generator):
        return
    elif isinstance(value, type):
        for name, member in _class_members(value):
            yield f".{name}", member
    else:
        hidden = _generator_state(value)
        if hidden is not None:
            yield ".<generator state>", hidden
        for name, item in _attributes(value).items():
            yield f".{name}", item


def _generator_state(value: Any) -> str | None:
    """What a Python or NumPy random generator keeps in C, out of its attributes: a digest of
    its state, equal where two generators will draw the same numbers."""
    if isinstance(value, random.Random):
        state: Any = value.getstate()
    else:
        numpy = sys.modules.get("numpy")
        if numpy is None or not isinstance(value, (numpy.random.RandomState, numpy.random.Generator)):
            return None
        state = value.get_state(legacy=False) if isinstance(value, numpy.random.RandomState) \
            else value.bit_generator.state
    return "state " + hashlib.sha1(pickle.dumps(state)).hexdigest()[:12]


def _key_label(key: Any) -> str:
    return repr(key) if isinstance(key, (str, int, float, bool, type(None), tuple)) else f"<{type(key).__qualname__}>"


# -- the copy ------------------------------------------------------------------------------

def _tensor_copy(tensor: torch.Tensor, storages: dict[int, Any]) -> torch.Tensor:
    """A detached copy keeping requires_grad and leafness; tensors sharing a storage share
    the copy of it."""
    if type(tensor) not in (torch.Tensor, torch.nn.Parameter) or tensor.layout != torch.strided:
        if tensor.is_leaf:
            return copy.deepcopy(tensor)
        raise Unobservable(f"a {type(tensor).__name__} that is no leaf")
    with torch.no_grad():
        key = tensor.untyped_storage().data_ptr() if tensor.untyped_storage().nbytes() else None
        storage = storages.get(key) if key is not None else None
        if storage is None:
            storage = tensor.untyped_storage().clone()
            if key is not None:
                storages[key] = storage
        copied = torch.empty(0, dtype=tensor.dtype, device=tensor.device).set_(
            storage, tensor.storage_offset(), tensor.size(), tensor.stride())
    if isinstance(tensor, torch.nn.Parameter):
        return torch.nn.Parameter(copied, requires_grad=tensor.requires_grad)
    if tensor.requires_grad and not tensor.is_leaf:
        return copied.requires_grad_().clone()  # a non-leaf, as the caller's was
    return copied.requires_grad_(tensor.requires_grad)


class Shadow:
    """The copy of a world: its roots, the map from each reached object to its copy, and the
    eager callable over it."""

    def __init__(self, world: World, call: watched_calls.Call) -> None:
        memo: dict[int, Any] = {}
        storages: dict[int, Any] = {}
        for tensor in world.tensors:
            memo[id(tensor)] = _tensor_copy(tensor, storages)
        for tensor in world.tensors:
            if tensor.grad is not None and memo[id(tensor)].is_leaf:
                memo[id(tensor)].grad = memo[id(tensor.grad)]
        cells: list[tuple[types.CellType, types.CellType]] = []
        for value in world.order:
            if isinstance(value, types.CellType):
                memo[id(value)] = types.CellType()
                cells.append((value, memo[id(value)]))
            elif isinstance(value, torch.Generator):
                twin = torch.Generator(device=value.device)
                twin.set_state(value.get_state())
                memo[id(value)] = twin
        classes = [value for value in world.order if isinstance(value, type)]
        shadow_globals: dict[int, dict] = {}
        for key, (globals_, _) in world.globals.items():
            shadow_globals[key] = dict(globals_)
        for function in world.functions:
            closure = tuple(memo.setdefault(id(cell), types.CellType()) for cell in function.__closure__ or ())
            rebuilt = types.FunctionType(function.__code__, shadow_globals.get(id(function.__globals__),
                                                                                function.__globals__),
                                         function.__name__, None, closure)
            rebuilt.__qualname__ = function.__qualname__
            memo[id(function)] = rebuilt
        try:
            for klass in classes:  # after its methods, before any instance of it is copied
                namespace = {name: memo.get(id(member), member) for name, member in vars(klass).items()
                             if name not in ("__dict__", "__weakref__")}
                twin = type(klass)(klass.__name__, klass.__bases__, namespace)
                twin.__qualname__ = klass.__qualname__
                memo[id(klass)] = twin
            for klass in classes:
                for name, member in _class_members(klass):
                    if not isinstance(member, types.FunctionType):
                        setattr(memo[id(klass)], name, copy.deepcopy(member, memo))
            for real, twin in cells:
                try:
                    twin.cell_contents = copy.deepcopy(real.cell_contents, memo)
                except ValueError:
                    pass  # an empty cell stays empty
            for function in world.functions:
                rebuilt = memo[id(function)]
                rebuilt.__defaults__ = copy.deepcopy(function.__defaults__, memo)
                rebuilt.__kwdefaults__ = copy.deepcopy(function.__kwdefaults__, memo)
                rebuilt.__dict__.update(copy.deepcopy(function.__dict__, memo))
            for key, (globals_, names) in world.globals.items():
                for name in names:
                    if name in globals_:
                        shadow_globals[key][name] = copy.deepcopy(globals_[name], memo)
            self.args = copy.deepcopy(call.args, memo)
            self.kwargs = copy.deepcopy(call.kwargs, memo)
            instance = copy.deepcopy(world.instance, memo) if world.instance is not None else None
            for value in world.order:  # what the roots did not hold (a global's own dict), copied alike
                if id(value) not in memo and not isinstance(value, _GlobalSlot):
                    copy.deepcopy(value, memo)
        except Unobservable:
            raise
        except Exception as error:
            raise Unobservable(f"its world cannot be copied ({type(error).__name__}: {str(error)[:80]})") from None
        self.memo = memo
        self.globals = shadow_globals
        # The copy's objects, by the position of the real object each copies.
        self.index = {id(memo[id(value)]): position for position, value in enumerate(world.order)
                      if id(value) in memo}
        self.roots = []
        for label, value in world.roots:
            if isinstance(value, _GlobalSlot):
                value = _GlobalSlot(shadow_globals[id(value.globals)], value.name)
            elif label == "self":
                value = instance
            elif id(value) in memo:
                value = memo[id(value)]
            self.roots.append((label, value))
        self.callable = self._callable(world, call, instance)
        self.versions = {id(memo[id(tensor)]): _version(memo[id(tensor)]) for tensor in world.tensors}

    def _callable(self, world: World, call: watched_calls.Call, instance: Any) -> Callable:
        if isinstance(call.eager, torch.nn.Module):
            return instance
        if isinstance(call.eager, types.MethodType):
            # A library method (an optimizer's step) runs as it is, on the copy of its instance.
            function = self.memo.get(id(call.eager.__func__), call.eager.__func__)
            return types.MethodType(function, instance if instance is not None else call.eager.__self__)
        return self.memo.get(id(world.function), call.eager)


# -- describing and comparing --------------------------------------------------------------

def describe(roots: list[tuple[str, Any]], index: dict[int, int]) -> dict[str, Any]:
    """Path -> what is there: a container's kind, identity and size, an object's attributes,
    a scalar's value, a tensor itself. ``index`` names the objects that existed before the
    call (by their position), so eager's and the compiled call's worlds are told apart only
    where they differ; an object met a second time is an alias of its first path."""
    found: dict[str, Any] = {}
    first: dict[int, str] = {}
    stack = [(label, value) for label, value in reversed(roots)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _GlobalSlot):
            stack.append((path, value.globals.get(value.name, _MISSING)))
            continue
        identity = id(value)
        if not _opaque(value) and identity in first and not isinstance(value, (tuple, frozenset)):
            found[path] = ("alias of", first[identity])
            continue
        if not _opaque(value):
            first[identity] = path
        found[path] = _leaf(value, index)
        if isinstance(value, torch.Tensor) or _opaque(value):
            if isinstance(value, torch.Tensor) and value.grad is not None:
                stack.append((path + ".grad", value.grad))
            continue
        children = [(path + suffix, child) for suffix, child in _children(value) if suffix not in ("{key}", "{item}")]
        stack.extend(reversed(children))
    return found


def _leaf(value: Any, index: dict[int, int]) -> Any:
    origin = index.get(id(value), "new")
    if value is _MISSING:
        return ("missing",)
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (bool, int, float, complex, str, bytes, type(None))):
        return value
    if isinstance(value, types.FunctionType):
        return ("function", value.__qualname__, origin if _user_function(value) else id(value))
    if _opaque(value):
        return ("shared", type(value).__qualname__, getattr(value, "__qualname__", None), id(value))
    kind = type(value).__qualname__
    if isinstance(value, (tuple, frozenset)):
        origin = "-"  # immutable: which object it is tells nothing (a copy may keep the same)
    if isinstance(value, _SEQUENCES):
        return (kind, origin, len(value))
    if isinstance(value, dict):
        return (kind, origin, tuple(_key_label(key) for key in value))
    if isinstance(value, (set, frozenset)):
        return (kind, origin, tuple(sorted(repr(item) for item in value)))
    if isinstance(value, types.CellType):
        return ("cell", origin)
    return (kind, origin)  # its attributes are its children, each at a path of its own


def _say(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"tensor of shape {tuple(value.shape)} ({value.dtype})"
    if isinstance(value, tuple) and value and value[0] == "missing":
        return "nothing"
    if isinstance(value, tuple) and len(value) == 3 and isinstance(value[2], int) and value[0] in ("list", "deque", "tuple"):
        return f"{value[0]} of {value[2]} items"
    if isinstance(value, tuple) and len(value) == 3 and value[0] not in ("function", "shared") and isinstance(value[2], tuple):
        return f"{value[0]} with {list(value[2])}"
    if isinstance(value, tuple) and value and value[0] == "alias of":
        return f"the same object as {value[1]}"
    if isinstance(value, tuple) and value and value[0] == "function":
        return f"function {value[1]}"
    if isinstance(value, tuple) and value and value[0] == "shared":
        return f"{value[2] or value[1]}"
    if isinstance(value, tuple) and len(value) == 2 and value[0] != "alias of":
        return f"a {value[0]} object" + (" made in the call" if value[1] == "new" else "")
    return repr(value)


def _same_scalar(real: Any, eager: Any, rtol: float, atol: float) -> bool:
    if type(real) is not type(eager):
        return False
    if isinstance(real, float):
        return real == eager or math.isnan(real) and math.isnan(eager) or math.isclose(real, eager, rel_tol=rtol,
                                                                                        abs_tol=atol)
    return real == eager


def _under(path: str, parents: Any) -> bool:
    """``path`` is one of ``parents`` or inside one."""
    return any(path == parent or path.startswith(parent) and path[len(parent)] in ".[" for parent in parents)


def differences(test: Any, real: dict[str, Any], eager: dict[str, Any], *, versions: dict[int, int],
                values: bool, ignored: Any = ()) -> list[tuple[str, str]]:
    """What differs between the compiled call's world (``real``) and eager's, parents first
    (a list one item short is said once, not again for its last index). ``versions``: the
    version each tensor had before the call (a tensor neither call wrote to is not compared
    again); ``values``: compare tensors' values (not where the call drew random numbers);
    ``ignored``: paths not compared, nor what is inside them."""
    said: list[tuple[str, str]] = []
    reported: list[str] = []
    rtol, atol = compare.tolerance(getattr(test, "dtype", torch.float32))
    rtol, atol = max(rtol, 1.3e-6), max(atol, 1e-5)  # Python floats are mostly tensors' .item()
    for path in list(real) + [path for path in eager if path not in real]:
        if _under(path, reported) or _under(path, ignored):
            continue
        want, got = eager.get(path, ("missing",)), real.get(path, ("missing",))
        if isinstance(want, torch.Tensor) and isinstance(got, torch.Tensor):
            message = _tensor_difference(test, path, want, got, versions, values)
        elif isinstance(want, torch.Tensor) or isinstance(got, torch.Tensor):
            message = f"{path}: {_say(got)}, eager {_say(want)}"
        elif isinstance(want, tuple) or isinstance(got, tuple):
            message = None if want == got else f"{path}: {_say(got)}, eager {_say(want)}"
            if message and _lengths(want, got):
                message = f"{path}: {_say(got)}, eager {_lengths(want, got)}"
        else:
            message = None if _same_scalar(got, want, rtol, atol) else f"{path}: {got!r}, eager {want!r}"
        if message:
            reported.append(path)
            said.append((path, message))
    return said


def _lengths(want: Any, got: Any) -> str | None:
    if (isinstance(want, tuple) and isinstance(got, tuple) and len(want) == len(got) == 3 and want[0] == got[0]
            and want[1] == got[1] and isinstance(want[2], int)):
        return str(want[2])
    return None


def _tensor_difference(test: Any, path: str, want: torch.Tensor, got: torch.Tensor, versions: dict[int, int],
                       values: bool) -> str | None:
    if want is got:  # the real world before and after eager's run over the copy: untouched?
        changed = _version(got) is not None and versions.get(id(got)) != _version(got)
        return f"{path}: written to" if changed else None
    if (tuple(want.shape), want.dtype, want.requires_grad) != (tuple(got.shape), got.dtype, got.requires_grad):
        return f"{path}: {_say(got)} requires_grad={got.requires_grad}, eager {_say(want)} " \
               f"requires_grad={want.requires_grad}"
    untouched = _version(got) is not None and versions.get(id(got)) == _version(got) \
        and versions.get(id(want)) == _version(want)
    if not values or untouched or not _judged_here(path, got, versions):
        return None
    try:
        compare.assert_close(test, want, got, what=path)
    except AssertionError as error:
        return str(error).splitlines()[0][:300]
    return None


# Where a tensor's values are a module's state or a gradient: the scenarios judge those
# themselves, the way fit for them (a model's parameters after a step against a float64
# reference, gradients by a weighted loss); a fixed tolerance here would call a reordered sum
# of a deep model's wrong.
_JUDGED_BY_THE_SCENARIO = ("._parameters[", "._buffers[", ".grad")


def _judged_here(path: str, tensor: torch.Tensor, versions: dict[int, int]) -> bool:
    """Whether the watcher compares this tensor's values: one the call made and left in the
    Python world (appended to a list, set as an attribute), not one that was there before
    (a write into it is an input mutation, which every scenario compares), nor a module's
    state or a gradient."""
    return id(tensor) not in versions and not any(part in path for part in _JUDGED_BY_THE_SCENARIO)


def _version(tensor: torch.Tensor) -> int | None:
    """Its version counter (None for an inference tensor, which keeps none)."""
    try:
        return tensor._version
    except RuntimeError:
        return None


# -- the watcher ---------------------------------------------------------------------------

def _rng_states() -> tuple:
    states = [torch.get_rng_state(), random.getstate()]
    kind = torch.get_default_device().type  # the test's device (harness.axes.device sets it)
    if kind != "cpu" and hasattr(torch, kind) and getattr(torch, kind).is_available():
        states.append(getattr(torch, kind).get_rng_state())
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        states.append(numpy.random.get_state())
    return tuple(states)


def _set_rng_states(states: tuple) -> None:
    torch.set_rng_state(states[0])
    random.setstate(states[1])
    position = 2
    kind = torch.get_default_device().type  # the test's device (harness.axes.device sets it)
    if kind != "cpu" and hasattr(torch, kind) and getattr(torch, kind).is_available():
        getattr(torch, kind).set_rng_state(states[position])
        position += 1
    numpy = sys.modules.get("numpy")
    if numpy is not None and position < len(states):
        numpy.random.set_state(states[position])


def _global_generators() -> tuple:
    """Python's and NumPy's global generators' states (torch's are the backend's to draw from)."""
    numpy = sys.modules.get("numpy")
    return (random.getstate(),) + ((numpy.random.get_state(),) if numpy is not None else ())


def _same_rng(first: tuple, second: tuple) -> bool:
    for a, b in zip(first, second):
        if isinstance(a, torch.Tensor):
            if not torch.equal(a, b):
                return False
        elif isinstance(a, tuple) and len(a) and hasattr(a[1], "shape"):  # numpy's state
            if a[0] != b[0] or not (a[1] == b[1]).all() or a[2:] != b[2:]:
                return False
        elif a != b:
            return False
    return True


def _shallow_state(value: Any) -> Any:
    """What ``value`` holds one level down, to put back (``_restore``) if an eager run wrote
    into it: every object the world reaches has its own, so one level is all of it."""
    if isinstance(value, _GlobalSlot):
        return value.globals.get(value.name, _MISSING)
    if isinstance(value, types.CellType):
        try:
            return value.cell_contents
        except ValueError:
            return _MISSING
    if isinstance(value, torch.Tensor):
        return value.grad
    if isinstance(value, (list, collections.deque, set)):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, (tuple, frozenset, type, types.FunctionType, types.MethodType, functools.partial)):
        return None
    own = getattr(value, "__dict__", None)
    return (dict(own) if isinstance(own, dict) else None), _attributes(value)


def _restore(value: Any, state: Any) -> None:
    if isinstance(value, _GlobalSlot):
        if state is _MISSING:
            value.globals.pop(value.name, None)
        else:
            value.globals[value.name] = state
    elif isinstance(value, types.CellType):
        if state is not _MISSING:
            value.cell_contents = state
    elif isinstance(value, torch.Tensor):
        if value.grad is not state:
            value.grad = state
    elif isinstance(value, (list, collections.deque, set)):
        value.clear()
        value.extend(state) if not isinstance(value, set) else value.update(state)
    elif isinstance(value, dict):
        value.clear()
        value.update(state)
    elif state is not None:
        own, attributes = state
        if own is not None:  # put back as it was, past any __setattr__ of the class's
            value.__dict__.clear()
            value.__dict__.update(own)
        for name, item in attributes.items():  # slots
            if (own is None or name not in own) and item is not _MISSING:
                with contextlib.suppress(AttributeError, TypeError):
                    setattr(value, name, item)


def _failure(index: int, said: list[tuple[str, str]]) -> str:
    more = f" (and {len(said) - SHOWN} more)" if len(said) > SHOWN else ""
    return (f"the Python world after compiled call #{index} differs from eager's: "
            + "; ".join(message for _, message in said[:SHOWN]) + more)


class PythonWorldWatcher(watched_calls.Watcher):
    def __init__(self, test: Any) -> None:
        super().__init__(test)
        self.observed = 0
        self.seconds = 0.0  # its own cost: walks, copies, eager runs, comparisons
        self.unfaithful = 0  # paths the copy could not hold as they were
        self.unobserved: collections.Counter[str] = collections.Counter()
        self._pending: tuple | None = None
        self._deferred: str | None = None  # the first call's tensor values that differ
        self._busy = False

    def before(self, call: watched_calls.Call) -> None:
        started = time.perf_counter()
        try:
            self._before(call)
        finally:
            self.seconds += time.perf_counter() - started

    def _before(self, call: watched_calls.Call) -> None:
        self._pending = None
        if self._busy:
            return
        if threading.current_thread() is not threading.main_thread():
            self.unobserved["called from another thread"] += 1
            return
        try:
            world = World(call)
        except Unobservable as error:
            self.unobserved[str(error)] += 1
            return
        if not world.mutable:
            return  # nothing but tensors and values: the scenario compares those
        self._busy = True
        try:
            self._pending = self._run_eagerly(world, call)
        except Unobservable as error:
            self.unobserved[str(error)] += 1
        finally:
            self._busy = False

    def _run_eagerly(self, world: World, call: watched_calls.Call) -> tuple:
        versions = {id(tensor): _version(tensor) for tensor in world.tensors}
        before = describe(world.roots, world.index)
        saved = [(value, _shallow_state(value)) for value in world.order]
        shadow = Shadow(world, call)
        versions.update(shadow.versions)
        # What the copy does not hold as the real world does (an attribute an object's
        # __getstate__ leaves out) is not compared: the copy, not the backend, made it differ.
        unfaithful = [path for path, _ in differences(self.test, describe(shadow.roots, shadow.index), before,
                                                      versions=versions, values=True)]
        states = _rng_states()
        try:
            shadow.callable(*shadow.args, **shadow.kwargs)
        except Exception as error:
            raise Unobservable(f"eager raised {type(error).__name__}") from None
        finally:
            drew = not _same_rng(states, _rng_states())
            generators = _global_generators() if world.draws_globally else None
            _set_rng_states(states)
        touched = differences(self.test, describe(world.roots, world.index), before, versions=versions, values=True)
        if touched:
            # Code the copy could not rebuild (a method of a class of the module, writing into
            # one of the module's globals) ran eagerly on the real world: what it changed there
            # is put back, and this call is not observed rather than judged on half a world.
            for value, state in saved:
                _restore(value, state)
            raise Unobservable("the eager run reached past the copy (a class's method writing into a global)")
        return call, world, shadow, versions, drew, unfaithful, generators

    def after(self, call: watched_calls.Call, result: Any) -> None:
        started = time.perf_counter()
        try:
            self._after(call)
        finally:
            self.seconds += time.perf_counter() - started

    def _after(self, call: watched_calls.Call) -> None:
        pending, self._pending = self._pending, None
        if pending is None or pending[0] is not call:
            return
        _, world, shadow, versions, drew, unfaithful, generators = pending
        self.observed += 1
        self.unfaithful += len(unfaithful)
        real, eager = describe(world.roots, world.index), describe(shadow.roots, shadow.index)
        said = differences(self.test, real, eager, versions=versions, values=False, ignored=unfaithful)
        if generators is not None and not _same_rng(generators, _global_generators()):
            said.append(("<global generators>", "Python's or NumPy's global random generator is not where eager's "
                                                "draws leave it"))
        if said:
            self.test.fail(_failure(call.index, said))
        # Tensors' values are what the scenario compares itself (its outputs, its inputs after
        # the call, its model's parameters, by the judging fit for them): a value only the
        # world shows (a tensor kept in a list, on an object) is reported once the scenario's
        # own checks passed, so theirs speak first.
        valued = differences(self.test, real, eager, versions=versions, values=not drew, ignored=unfaithful)
        if valued and self._deferred is None:
            self._deferred = _failure(call.index, valued)

    def finish(self) -> None:
        self._pending = None
        deferred, self._deferred = self._deferred, None
        record = getattr(self.test, "record_metric", None)
        if record is not None:
            record("python_world_s", round(self.seconds, 4))
        if record is not None and (self.observed or self.unobserved):
            record("python_world_observed", self.observed)
            record("python_world_unobserved", sum(self.unobserved.values()))
            record("python_world_unfaithful", self.unfaithful)
        if deferred:
            self.test.fail(deferred)


WATCHER = PythonWorldWatcher
