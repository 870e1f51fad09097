"""The ways callers call: a compiled function's call again, called the way real callers do.

A scenario calls its compiled function from the main thread, keeps what it returned as it
was, and calls plain functions and modules. Callers also: serve from a pool of threads,
write into a returned tensor before calling again, register hooks on the module they
compiled, and run forward and backward inside ``saved_tensors_hooks`` (activation
offloading). Each way here takes one call (the function run eagerly, the compiled one, the
arguments: a RecordedCall of harness/axes/automatic_dynamic.py, or a scenario's own) and
compares the compiled call made that way with eager (outputs, inputs after the call,
gradients: harness/checks/replay.py). Each returns whether it proved anything (False: the
call gives that way nothing to show, such as no output to write into, no saved tensor).

The variants ``threads``, ``caller_mutates``, ``module_hooks`` and ``saved_tensor_hooks``
(harness/axes/variants.py) replay every scenario's first calls this way; the family
CallerTests of test/dynamo/test_backend_contract.py applies each way to one small function
in the default run.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from typing import Any, Callable, Iterator

import torch
from torch.utils import _pytree as pytree

from harness.checks import accuracy, compare, replay

THREADS = 4  # a small serving pool
CALLS_PER_THREAD = 3
# Each thread's inputs: the call's floating values scaled by its own factor (signs and
# integers kept, so domains and indices stay valid), so a result handed to the wrong
# thread differs from that thread's eager result.
_THREAD_SCALES = (1.0, 0.75, 0.5, 0.25)
_JUNK = -1234.5  # what a caller writes into a returned tensor: far from any result


def _state(grad_enabled: bool) -> Callable[[], Any]:
    return lambda: torch.set_grad_enabled(grad_enabled)


def _scaled(inputs: list[Any], factor: float) -> list[Any]:
    def scale(value: Any) -> Any:
        if type(value) not in (torch.Tensor, torch.nn.Parameter) or not value.is_floating_point() or factor == 1.0:
            return value
        with torch.no_grad():
            copy = value.detach() * factor
        return copy.requires_grad_(value.requires_grad)

    scaled: dict[int, Any] = {}  # an input given twice stays one object
    return [scaled.setdefault(id(value), scale(value)) for value in inputs]


def _callers_device() -> Callable[[], Any]:
    """The default device the test set for its thread (a thread-local torch function mode, as
    harness/axes/device.py enters it), for a serving thread to set for itself: a thread
    starts without the modes of the thread that made it, as a server's threads do."""
    from torch.utils._device import DeviceContext

    modes = torch.overrides._get_current_function_mode_stack()
    if not any(isinstance(mode, DeviceContext) for mode in modes):
        return contextlib.nullcontext
    device = torch.get_default_device()
    return lambda: torch.device(device)


def _truth(reference: Callable, inputs: list[Any], leaves: list[bool], state: Callable[[], Any]) -> Callable[[], tuple]:
    return functools.cache(lambda: replay.run(reference, accuracy.in_float64(inputs), leaves, state))


def from_threads(testcase, eager: Callable, compiled: Callable, inputs: list[Any], leaves: list[bool],
                 grad_enabled: bool, threads: int = THREADS, calls: int = CALLS_PER_THREAD) -> bool:
    """The compiled function called from ``threads`` threads released at once, ``calls``
    times each, every thread on its own copies of its own inputs; every result against
    eager's for that thread's inputs. (Once compiled, this is a serving pool; on a function
    never called, the first calls race to compile it.)"""
    state = _state(grad_enabled)
    per_thread = [_scaled(inputs, scale) for scale in _THREAD_SCALES[:threads]]
    expected = [replay.run(eager, own, leaves, state) for own in per_thread]
    results: list[list[tuple]] = [[] for _ in per_thread]
    errors: list[tuple[int, BaseException]] = []
    start = threading.Barrier(len(per_thread))
    around = _callers_device()

    def serve(index: int) -> None:
        try:
            start.wait(timeout=60)
            with around():
                for _ in range(calls):
                    results[index].append(replay.run(compiled, per_thread[index], leaves, state))
        except BaseException as error:  # reported from the main thread, which owns the test
            errors.append((index, error))

    pool = [threading.Thread(target=serve, args=(index,), name=f"caller-{index}") for index in range(len(per_thread))]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    if errors:
        index, error = errors[0]
        raise AssertionError(f"called from {len(pool)} threads at once, thread {index}'s compiled call raised "
                             f"{type(error).__name__}: {error}") from error
    for index, (want, got_all) in enumerate(zip(expected, results)):
        truth = _truth(eager, per_thread[index], leaves, state)
        for call, got in enumerate(got_all):
            replay.assert_same_results(testcase, want, got, truth,
                                       where=f"called from {len(pool)} threads at once, thread {index}'s call "
                                             f"{call + 1} (its own inputs, scaled by {_THREAD_SCALES[index]}): ")
    return True


def _written(outputs: list[Any], keep_out: set[int]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Junk written into each returned tensor a caller can write into (not one sharing memory
    with ``keep_out``: a module's parameters and buffers); (tensor, what it must still hold)."""
    written = []
    with torch.no_grad():
        for value in pytree.tree_leaves(outputs):
            if type(value) is not torch.Tensor or value.numel() == 0 or value.is_inference():
                continue
            if value.untyped_storage().data_ptr() in keep_out or value.dtype == torch.bool:
                continue
            try:
                value.fill_(_JUNK if value.is_floating_point() or value.is_complex() else -77)
            except RuntimeError:
                continue  # a view autograd forbids writing into (of a multi-output op): not a caller's write
            written.append((value, value.detach().clone()))
    return written


def module_state_storages(fn: Callable) -> set[int]:
    """The storages of the parameters and buffers of the module ``fn`` is (or is a method of)."""
    module = fn if isinstance(fn, torch.nn.Module) else getattr(fn, "__self__", None)
    if not isinstance(module, torch.nn.Module):
        return set()
    return {tensor.untyped_storage().data_ptr() for tensor in (*module.parameters(), *module.buffers())}


def after_caller_writes(testcase, eager: Callable, compiled: Callable, inputs: list[Any], leaves: list[bool],
                        grad_enabled: bool) -> bool:
    """The caller fills every tensor a compiled call returned with junk (under no_grad), then
    calls again with the same values: that call must still be eager's, and the junk the
    caller wrote must still be there after it (neither side shares memory with the other)."""
    state = _state(grad_enabled)
    first = replay.run(compiled, inputs, leaves, state)
    written = _written(first[0], module_state_storages(eager))
    if not written:
        return False
    with _prefixed("after the caller wrote into the previous call's outputs: "):
        replay.compare_runs(testcase, eager, compiled, inputs, leaves, state)
    for index, (tensor, junk) in enumerate(written):
        if not torch.equal(tensor, junk):
            testcase.fail(f"a tensor the caller kept from a compiled call and wrote into (output {index}) changed "
                          "when the function ran again: the backend returned memory it reuses")
    return True


@contextlib.contextmanager
def _prefixed(prefix: str) -> Iterator[None]:
    """A failure inside says first which way of calling it came from."""
    try:
        yield
    except AssertionError as error:
        raise AssertionError(prefix + str(error)) from None


def hookable_module(fn: Callable) -> torch.nn.Module | None:
    """The module a compiled call went through, where module hooks apply to it: a module, or
    a module's bound ``forward`` (compiled anew as the module)."""
    if isinstance(fn, torch.nn.Module):
        return fn
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, torch.nn.Module) and getattr(fn, "__name__", "") == "forward":
        return owner
    return None


class ModuleHooks:
    """A forward pre-hook that halves the floating inputs, a forward hook that doubles the
    floating outputs, and a full backward hook that triples the gradients w.r.t. the
    module's inputs, each recording what it saw per run (``start_run``)."""

    def __init__(self) -> None:
        self.runs: list[dict[str, list]] = []

    def start_run(self) -> None:
        self.runs.append({"pre": [], "forward": [], "backward": []})

    def _seen(self, kind: str, values: Any) -> None:
        if self.runs:
            self.runs[-1][kind].append([value.detach().clone() if isinstance(value, torch.Tensor) else value
                                        for value in pytree.tree_leaves(values)])

    @staticmethod
    def _times(values: Any, factor: float) -> Any:
        return pytree.tree_map(lambda value: value * factor if isinstance(value, torch.Tensor)
                               and value.is_floating_point() else value, values)

    def register(self, module: torch.nn.Module) -> list[Any]:
        def pre(module, args, kwargs):
            self._seen("pre", args)
            return self._times(args, 0.5), kwargs

        def forward(module, args, output):
            self._seen("forward", output)
            return self._times(output, 2.0)

        def backward(module, grad_input, grad_output):
            self._seen("backward", grad_output)
            return self._times(grad_input, 3.0)

        return [module.register_forward_pre_hook(pre, with_kwargs=True), module.register_forward_hook(forward),
                module.register_full_backward_hook(backward)]

    def assert_same_runs(self, testcase, eager_run: int, compiled_run: int) -> None:
        for kind in ("pre", "forward", "backward"):
            want, got = self.runs[eager_run][kind], self.runs[compiled_run][kind]
            testcase.assertEqual(len(want), len(got), f"module hooks: the {kind} hook ran {len(got)} time(s) for the "
                                                      f"compiled module, {len(want)} for eager")
            compare.assert_close(testcase, want, got, what=f"what the {kind} hook saw")


def with_module_hooks(testcase, module: torch.nn.Module, compile_module: Callable[[torch.nn.Module], Callable],
                      inputs: list[Any], leaves: list[bool], grad_enabled: bool) -> bool:
    """``module`` with a forward pre-hook, a forward hook and a full backward hook registered
    before ``compile_module(module)`` compiles it (hooks present from the start: torch
    ignores hooks registered after a compiled module's first call, pytorch#117758), the
    compiled module against the module with the same hooks: results, and what each hook saw."""
    state = _state(grad_enabled)
    hooks = ModuleHooks()
    handles = hooks.register(module)
    try:
        def run(target: Callable) -> Callable:
            def call(*args: Any) -> Any:
                hooks.start_run()
                return target(*args)
            return call

        if not replay.repeats(run(module), inputs, leaves, state):
            return False  # the hooks' values break the module, or it draws random numbers
        first = len(hooks.runs)
        compiled = compile_module(module)
        with _prefixed("a module with forward and backward hooks: "):
            replay.compare_runs(testcase, run(module), run(compiled), inputs, leaves, state)
            hooks.assert_same_runs(testcase, first, first + 1)
    finally:
        for handle in handles:
            handle.remove()
    return True


class Offload:
    """Saved-tensor hooks that offload: pack keeps a copy in a store of its own and hands
    autograd an index; unpack returns the copy. Counts per run (``start_run``)."""

    def __init__(self) -> None:
        self.store: list[torch.Tensor] = []
        self.runs: list[dict[str, int]] = []

    def pack(self, tensor: torch.Tensor) -> tuple[int, int, bool]:
        self.store.append(tensor.detach().clone())
        # Only a real tensor counts: a compile inside the hooks traces autograd on fake and
        # functional tensors, which pass through them too.
        counted = type(tensor) in (torch.Tensor, torch.nn.Parameter)
        self.runs[-1]["packed"] += counted
        return len(self.runs) - 1, len(self.store) - 1, counted

    def unpack(self, packed: tuple[int, int, bool]) -> torch.Tensor:
        run, index, counted = packed
        self.runs[run]["unpacked"] += counted
        return self.store[index]

    @contextlib.contextmanager
    def around(self, grad_enabled: bool) -> Iterator[None]:
        self.runs.append({"packed": 0, "unpacked": 0})
        with torch.set_grad_enabled(grad_enabled), torch.autograd.graph.saved_tensors_hooks(self.pack, self.unpack):
            yield


def inside_saved_tensor_hooks(testcase, eager: Callable, compiled: Callable, inputs: list[Any], leaves: list[bool],
                              grad_enabled: bool) -> bool:
    """Forward (and the backward of its weighted loss) inside ``saved_tensors_hooks`` that
    offload what autograd saves: results as eager's, and, where eager saved a tensor for
    the backward, the compiled call's saved tensors went through the hooks too."""
    offload = Offload()
    state = functools.partial(offload.around, grad_enabled)
    if not replay.repeats(eager, inputs, leaves, state):
        return False
    # Compiled outside the hooks first: what a compile runs (tracing, the harness's own
    # measures on example inputs) is not the compiled call's saving.
    replay.run(compiled, inputs, leaves, _state(grad_enabled))
    first = len(offload.runs)
    with _prefixed("inside saved_tensors_hooks: "):
        replay.compare_runs(testcase, eager, compiled, inputs, leaves, state)
    eager_run, compiled_run = offload.runs[first], offload.runs[first + 1]
    if not eager_run["unpacked"]:
        return False  # eager's backward read no saved tensor: nothing the hooks could see
    if not (compiled_run["packed"] and compiled_run["unpacked"]):
        testcase.fail(f"inside saved_tensors_hooks: eager's call packed {eager_run['packed']} and its backward "
                      f"unpacked {eager_run['unpacked']} saved tensor(s) through the hooks; the compiled call "
                      f"packed {compiled_run['packed']} and unpacked {compiled_run['unpacked']}: the backend "
                      "saved its tensors around the caller's hooks (activation offloading would not happen)")
    return True
