"""Probes of the compile stack's mutants (test/harness/mutation/stack_faults.py): small programs,
written apart from the suite's scenarios, that change between calls what Dynamo guards on (a
global, a default, a closure cell, a dtype, a size, a stride, requires_grad, the grad mode, a
module's training flag, a dict's keys, a list's length, an argument's type and identity,
duplicated arguments; again after a call that passes every guard), grow a size three times,
replay Python side effects of every kind, register hooks, mutate inputs (duplicated,
overlapping, saved for backward) and return aliases of them.

Each is a script ``(backend) -> results``: what a caller sees (outputs, inputs and Python
objects after the calls, gradients), and how many graphs the backend received, which is what
a dropped guard or a forgetful automatic dynamic changes first. Compared exactly, as the
kernel mutants' probes are (test/harness/mutation/probes.py).
"""

from __future__ import annotations

import collections
import functools
from typing import Any, Callable

import torch

SCALE = 2.0  # a global the probes rebind


class _Counted:
    """A backend that counts the graphs it receives, then hands each to ``backend``."""

    def __init__(self, backend: Callable) -> None:
        self.backend, self.graphs = backend, 0

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Any], **kwargs: Any) -> Callable:
        self.graphs += 1
        return self.backend(gm, example_inputs, **kwargs)


def _seen(value: Any) -> Any:
    """What a caller can compare of a value: tensors by their values, containers by contents."""
    if isinstance(value, torch.Tensor):
        return (value.detach().clone(), value.dtype, tuple(value.shape), value.requires_grad)
    if isinstance(value, (list, tuple)):
        return [_seen(item) for item in value]
    if isinstance(value, dict):
        return [(key, _seen(item)) for key, item in value.items()]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return f"<{type(value).__qualname__}>"  # an object made by the script: not the same one twice


def _x(*sizes: int, seed: int = 0, grad: bool = False) -> torch.Tensor:
    return torch.randn(sizes, generator=torch.Generator().manual_seed(seed)).requires_grad_(grad)


def _calls(backend: Callable, fn: Callable, calls: list[Callable[[], tuple]], between: list[Callable[[], None]] | None = None,
           fullgraph: bool = False, again: bool = False) -> list[Any]:
    """``fn`` compiled, called once per argument maker (``between[i]`` run before call i), each
    call's outputs; then the graphs compiled. ``again``: the first call made twice, so that every
    guard judges a call that passes it before one that should fail it."""
    if again:
        calls, between = [calls[0], *calls], [None, *(between or ())]
    counted = _Counted(backend)
    compiled = torch.compile(fn, backend=counted, fullgraph=fullgraph)
    found: list[Any] = []
    for index, arguments in enumerate(calls):
        if between and index < len(between) and between[index] is not None:
            between[index]()
        try:
            args = arguments()
            found.append(_seen(compiled(*args)))
            found.append(_seen(args))
        except Exception as error:  # noqa: BLE001 -- a raised error is what a caller sees
            found.append(("raised", type(error).__name__))
    found.append(("graphs", counted.graphs))
    return found


def _scaled(x: torch.Tensor) -> torch.Tensor:
    return x * SCALE


def _rebind(value: float) -> Callable[[], None]:
    def rebind() -> None:
        global SCALE
        SCALE = value

    return rebind


def guarded_values(backend: Callable, again: bool = False) -> list[Any]:
    """A global, a default, a keyword-only default and a closure cell, each rebound between calls;
    an int, a bool and None against a tensor as arguments."""
    run = functools.partial(_calls, again=again)
    found: list[Any] = []
    try:
        found += run(backend, _scaled, [lambda: (_x(3),)] * 2, [None, _rebind(5.0)])
    finally:
        _rebind(2.0)()

    def helper(x: torch.Tensor, y: float = 3.0, *, z: float = 1.5) -> torch.Tensor:
        return x * y + z

    def rebind_default() -> None:
        helper.__defaults__ = (7.0,)

    def rebind_keyword() -> None:
        helper.__kwdefaults__ = {"z": -4.0}

    # The defaults of a function the compiled code calls (the compiled function's own come in
    # as its arguments).
    found += run(backend, lambda x: helper(x), [lambda: (_x(3),)] * 3, [None, rebind_default, rebind_keyword])
    cell = [1.0]

    def make() -> Callable:
        factor = cell[0]

        def closed(x: torch.Tensor) -> torch.Tensor:
            return x * factor

        def change() -> None:
            nonlocal factor
            factor = 9.0

        return closed, change

    closed, change = make()
    found += run(backend, closed, [lambda: (_x(3),)] * 2, [None, change])
    found += run(backend, lambda x, n, flag, extra: (x * n if flag else x - n) + (0 if extra is None else extra),
                 [lambda: (_x(3), 2, True, None), lambda: (_x(3), 3, True, None), lambda: (_x(3), 3, False, None),
                  lambda: (_x(3), 3, False, _x(3, seed=4))])
    return found


def guarded_tensors(backend: Callable, again: bool = False) -> list[Any]:
    """One function called with another dtype, rank, size, stride and requires_grad each call,
    and one whose two arguments are first the same tensor, then distinct."""
    run = functools.partial(_calls, again=again)
    def f(x: torch.Tensor) -> torch.Tensor:
        return (x * 2 + x.sum(0, keepdim=True)).sin()

    square = _x(4, 4)
    found = run(backend, f, [lambda: (_x(4, 4),), lambda: (_x(4, 4).double(),), lambda: (_x(4, 4, 2),),
                             lambda: (_x(5, 4),), lambda: (square.t(),), lambda: (_x(4, 4, grad=True),)])

    def update(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x.add_(1)
        return x * y

    a, b = _x(3), _x(3, seed=1)
    found += run(backend, update, [lambda: (a, a), lambda: (a, b)])
    return found


def guarded_state(backend: Callable, again: bool = False) -> list[Any]:
    """Grad mode, deterministic algorithms and a module's training flag changed between calls;
    a dict's keys, a list's length, an argument's type and a function passed in, changed."""
    run = functools.partial(_calls, again=again)
    found = run(backend, lambda x, w: (x @ w).tanh(), [lambda: (_x(2, 3), _x(3, 2, grad=True))] * 2,
                [None, lambda: torch.set_grad_enabled(False)])
    torch.set_grad_enabled(True)
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    found += run(backend, module, [lambda: (_x(5, 3),)] * 2, [None, module.eval])
    found += run(backend, lambda d: sum(value * (index + 1) for index, value in enumerate(d.values())),
                 [lambda: ({"a": _x(3)},), lambda: ({"a": _x(3), "b": _x(3, seed=2)},)])
    found += run(backend, lambda items: torch.stack(list(items)).sum(0) * len(items),
                 [lambda: ([_x(3), _x(3, seed=1)],), lambda: ([_x(3), _x(3, seed=1), _x(3, seed=2)],)])

    class Doubles:
        def apply(self, x: torch.Tensor) -> torch.Tensor:
            return x * 2

    class Negates:
        def apply(self, x: torch.Tensor) -> torch.Tensor:
            return -x

    found += run(backend, lambda how, x: how.apply(x), [lambda: (Doubles(), _x(3)), lambda: (Negates(), _x(3))])
    found += run(backend, lambda op, x: op(x) + 1, [lambda: (torch.sin, _x(3)), lambda: (torch.cos, _x(3))])
    return found


def guards_judged_twice(backend: Callable) -> list[Any]:
    """The three probes of guards, each first call made twice: a guard stuck at its first answer
    lets the call that should fail it through."""
    return [*guarded_values(backend, again=True), *guarded_tensors(backend, again=True),
            *guarded_state(backend, again=True)]


def growing_sizes(backend: Callable) -> list[Any]:
    """A size that grows three times: compiled static, then dynamic once automatic dynamic
    shapes saw it change."""
    return _calls(backend, lambda x: x.cumsum(0) * x.shape[0], [lambda n=n: (_x(n),) for n in (3, 4, 5, 6)])


STORE: dict[str, Any] = {}


def side_effects(backend: Callable) -> list[Any]:
    """Every kind of Python side effect Dynamo replays: containers, attributes of an object and
    of a module, a global rebound, a closure cell rebound."""
    global STORE
    STORE = {}  # as the control found it: a run before leaves its own
    items: list[Any] = []
    table: dict[str, Any] = collections.OrderedDict(a=1, b=2)

    class Holder:
        count = 0

    holder = Holder()
    module = torch.nn.Linear(2, 2)
    module.steps = 0
    total = [0]

    def make() -> Callable:
        calls = 0

        def counted(x: torch.Tensor) -> torch.Tensor:
            nonlocal calls
            calls += 1
            return x * calls

        return counted, lambda: calls

    counted, calls_of = make()

    def effects(x: torch.Tensor) -> torch.Tensor:
        global STORE
        items.append(x.sum())
        table["c"] = x * 2
        table.move_to_end("a")
        holder.count = holder.count + 1
        module.steps += 1
        STORE = {"last": x + 1}
        total[0] += 1
        return counted(x) + 1

    found = _calls(backend, effects, [lambda: (_x(2),)] * 2)
    found.append(_seen([items, table, holder.count, module.steps, STORE, total, calls_of()]))
    return found


def hooks(backend: Callable) -> list[Any]:
    """A tensor hook registered inside compiled code, a compiled module with forward and
    backward hooks, and a call made inside saved_tensors_hooks that count what they pack."""
    def hooked(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        y.register_hook(lambda grad: grad * 3)
        return y.sin().sum()

    x = _x(4, grad=True)
    found: list[Any] = []
    try:
        torch.compile(hooked, backend=backend)(x).backward()
        found.append(_seen(x.grad))
    except Exception as error:  # noqa: BLE001
        found.append(("raised", type(error).__name__))
    torch.manual_seed(0)
    module = torch.nn.Linear(3, 2)
    seen: list[str] = []
    module.register_forward_pre_hook(lambda mod, args: seen.append("pre"))
    module.register_forward_hook(lambda mod, args, out: out * 2)
    module.register_full_backward_hook(lambda mod, grad_in, grad_out: seen.append("backward"))
    inputs = _x(2, 3, grad=True)
    try:
        torch.compile(module, backend=backend)(inputs).sum().backward()
        found += [_seen(inputs.grad), list(seen)]
    except Exception as error:  # noqa: BLE001
        found.append(("raised", type(error).__name__))
    packed: list[int] = []

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        packed.append(tensor.numel())
        return tensor * 1

    w = _x(3, 3, grad=True)
    try:
        compiled = torch.compile(lambda a: (a @ a).tanh().sum(), backend=backend)
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            loss = compiled(w)
        loss.backward()
        found += [_seen(w.grad), len(packed) > 0]
    except Exception as error:  # noqa: BLE001
        found.append(("raised", type(error).__name__))
    return found


def runtime(backend: Callable) -> list[Any]:
    """Writes into inputs (data and metadata), outputs that alias an input and each other,
    written through after the call, and the grad mode set inside a compiled function."""
    def writes(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x.mul_(2)
        y.t_()
        return x + 1

    a, b = _x(3, 3, grad=True).clone(), _x(2, 3, seed=1)
    found = _calls(backend, writes, [lambda: (a, b)])

    def views(x: torch.Tensor) -> tuple:
        y = x * 2
        return x.view(-1), y, y[0]

    x = _x(2, 3)
    try:
        flat, y, row = torch.compile(views, backend=backend)(x)
        flat.add_(10)
        row.add_(100)
        found += [_seen(x), _seen(y)]
    except Exception as error:  # noqa: BLE001
        found.append(("raised", type(error).__name__))

    def turns_grad_off(x: torch.Tensor) -> torch.Tensor:
        torch.set_grad_enabled(False)
        return x * 2

    try:
        torch.compile(turns_grad_off, backend=backend)(_x(3, grad=True))
        found.append(torch.is_grad_enabled())
    except Exception as error:  # noqa: BLE001
        found.append(("raised", type(error).__name__))
    finally:
        torch.set_grad_enabled(True)
    return found


def runtime_inputs(backend: Callable) -> list[Any]:
    """Inputs AOTAutograd's runtime treats apart: two views of one tensor, one mutated (a
    synthetic base); an input saved for backward and modified before it (eager raises); and,
    through AOTAutograd called directly, as Dynamo passes an object once and replays a
    metadata mutation itself, one tensor passed twice and mutated, and an input transposed
    in place."""
    from functorch.compile import aot_function, nop

    found: list[Any] = []

    def overlapping(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x.mul_(2)
        return x + y

    base = _x(4)
    found += _calls(backend, overlapping, [lambda: (base[0:2], base[1:3])])
    found.append(_seen(base))

    def scaled(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return (x * w).sum()

    x, w = _x(3), _x(3, seed=1, grad=True)
    try:
        loss = torch.compile(scaled, backend=backend)(x, w)
        x.mul_(3)
        loss.backward()
        found.append(_seen(w.grad))
    except Exception as error:  # noqa: BLE001
        found.append(("raised", type(error).__name__))

    def twice(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x.add_(1)
        return x * y

    def transposes(y: torch.Tensor) -> torch.Tensor:
        y.t_()
        return y + 1

    a, b = _x(3), _x(2, 3, seed=1)
    for fn, args in ((twice, (a, a)), (transposes, (b,))):
        try:
            found += [_seen(aot_function(fn, nop)(*args)), _seen(args)]
        except Exception as error:  # noqa: BLE001
            found.append(("raised", type(error).__name__))
    return found


def data_ptr(backend: Callable) -> list[Any]:
    """A custom operator whose implementation reads data_ptr, traced with no fake kernel: the
    compile must refuse it."""
    import logging

    from harness import compat

    # Fake tensor propagation logs the refusal as an error before raising it: expected here.
    quiet = logging.getLogger("torch._subclasses.fake_tensor")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    try:
        return _reads_data_ptr(backend, compat)
    finally:
        quiet.setLevel(level)


def _reads_data_ptr(backend: Callable, compat: Any) -> list[Any]:
    with compat.scoped_library("dynamo_suite_stack_probe", "FRAGMENT") as library:
        library.define("reads(Tensor x) -> Tensor")
        library.impl("reads", lambda x: x.clone() if x.data_ptr() is not None else x, "CompositeExplicitAutograd")
        op = torch.ops.dynamo_suite_stack_probe.reads.default
        try:
            with torch._functorch.config.patch(fake_tensor_allow_unsafe_data_ptr_access=False):
                result = torch.compile(lambda x: op(x) * 2, backend=backend, fullgraph=True)(_x(3))
            return [_seen(result)]
        except Exception as error:  # noqa: BLE001
            return [("raised", type(error).__name__)]


SCRIPTS: dict[str, Callable[[Callable], list[Any]]] = {
    "stack_guarded_values": guarded_values,
    "stack_guarded_tensors": guarded_tensors,
    "stack_guarded_state": guarded_state,
    "stack_guards_judged_twice": guards_judged_twice,
    "stack_growing_sizes": growing_sizes,
    "stack_side_effects": side_effects,
    "stack_hooks": hooks,
    "stack_runtime": runtime,
    "stack_runtime_inputs": runtime_inputs,
    "stack_data_ptr": data_ptr,
}
