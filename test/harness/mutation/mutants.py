"""Conditional mutants: faulty backends made by rule, each a fault (test/harness/mutation/faults.py)
that fires only where a feature's condition holds (harness.features.catalogue), as real backend
bugs do: a kernel that reads the wrong row when an operand broadcasts along a middle
dimension, a reduction accumulated in bfloat16 when it folds 4096 elements or more, results
replayed from the first call on later calls, a write into an input lost under no_grad.

A mutant is ``(fault, condition, seed)``, named ``<fault>__<condition>__s<seed>`` with the
condition's dashes as underscores (``wrong_row__broadcast_middle__s0``). It compiles like
``aot_eager``, after rewriting, in every ATen graph AOTAutograd hands it (forward, backward
and inference graphs alike), each operator call the fault can change where the condition
holds:

* a condition on an operator call (a ``site`` rule) is read on that call, at compile time;
* a condition on the graph is read on the graph Dynamo handed the backend (its inputs'
  names, its writes into inputs...), at compile time;
* a condition on the call (grad mode, inference mode, the call's index...), on the values
  of a call's tensors or on its indices is read when the call runs: the rewritten call
  checks it each time and computes the right result while it does not hold.

Seed 0 rewrites every call the fault can change; seed s > 0 those of about half of the
operators, chosen by the operator's name and the seed (a bug in some kernels, not in all).
Faults of the graph's calls as a whole (faults.CALL_FAULTS: references kept, outputs
detached, writes into inputs lost, output buffers reused; gradient buffers reused, on a
backward graph's calls) and of the graph Dynamo hands the backend, rewritten before
AOTAutograd traces it (faults.GRAPH_FAULTS: a tensor hook's node dropped, where the graph's
condition holds), have seed 0 only.

The compile stack's own faults (stack_faults.py: Dynamo's guards, recompiles, automatic
dynamic shapes, side effects and hooks; AOTAutograd's runtime) are mutants here too, named
``<fault>__<piece>__s0``, their group their layer: patches of torch a backend cannot express,
in force while ``use`` names them, or, as a backend of their own, for what is compiled for it.

``unmutated`` is the same pipeline with nothing rewritten: the control. ``MUTANTS`` lists
every mutant; ``mutant(name)`` is one, and this module's ``__getattr__`` makes
``test.harness.mutation.mutants:<name>`` a backend spec like any other. ``switch`` is one
backend that is each mutant in turn (``use(name)``), and the control while none is in use,
recording which mutants would have rewritten something (``reached``): what
scripts/mutation_score.py runs a test with, once per mutant that reaches it, in one process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import torch
import torch.utils._pytree as pytree

from harness.features import catalogue
from harness.features import recorder
from harness.features.recorder import holds
from harness.features.views import BackwardView, CallView, argument_variants, graph_view, integer_values, plain_values
from test.harness.mutation import faults, stack_faults

CONTROL = "unmutated"
SWITCH = "switch"
SEEDS = (0, 1, 2)
# When set, each rewritten call that changed a result appends "test id<TAB>mutant<TAB>site" here.
FIRED_LOG_ENV = "DYNAMO_SUITE_MUTATION_LOG"


@dataclass(frozen=True)
class MutantSpec:
    fault: str
    condition: str
    seed: int

    @property
    def name(self) -> str:
        return f"{self.fault}__{self.condition.replace('-', '_')}__s{self.seed}"

    @property
    def stack(self) -> stack_faults.StackFault | None:
        """The patch of Dynamo or AOTAutograd this mutant is (None: a backend's fault)."""
        return stack_faults.FAULTS.get(self.name)

    @property
    def group(self) -> str:
        return self.stack.layer if self.stack else catalogue.CATALOGUE[self.condition].group

    @property
    def layer(self) -> str:
        """Whose fault it stands for: the backend's kernels and runtime ("kernel"), "dynamo" or
        "aot_autograd"."""
        return self.stack.layer if self.stack else "kernel"

    @property
    def means(self) -> str:
        if self.stack:
            return f"{self.stack.means}, where the control met it"
        fault = faults.FAULTS.get(self.fault) or faults.CALL_FAULTS.get(self.fault) or faults.GRAPH_FAULTS[self.fault]
        scope = "in every kernel" if self.seed == 0 else f"in about half of the kernels (seed {self.seed})"
        if self.fault in faults.GRAPH_FAULTS:
            scope = "in Dynamo's graph"
        return f"{fault.means}, {scope}, when: {catalogue.CATALOGUE[self.condition].means}"


def _specs() -> list[MutantSpec]:
    found = [MutantSpec(name, condition, seed) for name, fault in faults.FAULTS.items()
             for condition in fault.conditions for seed in SEEDS]
    found += [MutantSpec(name, condition, 0) for name, fault in {**faults.CALL_FAULTS, **faults.GRAPH_FAULTS}.items()
              for condition in fault.conditions]
    found += [MutantSpec(fault.fault, fault.piece, 0) for fault in stack_faults.FAULTS.values()]
    return found


MUTANTS: dict[str, MutantSpec] = {spec.name: spec for spec in _specs()}


def selects(seed: int, operator: str) -> bool:
    """Whether a mutant of this seed rewrites calls of this operator."""
    if seed == 0:
        return True
    return hashlib.sha256(f"{operator}#{seed}".encode()).digest()[0] % 2 == 0


# -- the run-time context ------------------------------------------------------------------------

_LOCAL = threading.local()


def _calls() -> list[CallView]:
    if not hasattr(_LOCAL, "calls"):
        _LOCAL.calls = []
    return _LOCAL.calls


@contextlib.contextmanager
def _in_call(view: CallView) -> Iterator[None]:
    _calls().append(view)
    try:
        yield
    finally:
        _calls().pop()


def current_call() -> CallView | None:
    calls = _calls()
    return calls[-1] if calls else None


def current_backward() -> BackwardView | None:
    return getattr(_LOCAL, "backward", None)


# -- conditions ------------------------------------------------------------------------------------


def _runtime_values(feature: catalogue.Feature) -> Callable[[tuple, dict], bool]:
    def fires(args: tuple, kwargs: dict) -> bool:
        for leaf in pytree.tree_leaves((args, kwargs)):
            values = plain_values(leaf)
            if values is not None and holds(feature.value, values):
                return True
        return False

    return fires


def _runtime_indices(feature: catalogue.Feature) -> Callable[[tuple, dict], bool]:
    def fires(args: tuple, kwargs: dict) -> bool:
        tensors = [leaf for leaf in pytree.tree_leaves((args, kwargs)) if isinstance(leaf, torch.Tensor)]
        data = next((tensor for tensor in tensors if tensor.dtype.is_floating_point), None)
        length = data.shape[0] if data is not None and data.dim() else None
        return any(holds(feature.index, indices, length) for tensor in tensors
                   if (indices := integer_values(tensor)) is not None)

    return fires


def _runtime_call(feature: catalogue.Feature) -> Callable[[tuple, dict], bool]:
    def fires(args: tuple, kwargs: dict) -> bool:
        call = current_call()
        return call is not None and holds(feature.call, call)

    return fires


def _runtime_backward(feature: catalogue.Feature) -> Callable[[tuple, dict], bool]:
    def fires(args: tuple, kwargs: dict) -> bool:
        backward = current_backward()
        return backward is not None and holds(feature.backward, backward)

    return fires


@dataclass(frozen=True)
class Placement:
    """Whether a mutant's condition can hold at a site, and what must still hold at run time
    (None: nothing, it holds already)."""

    possible: bool
    runtime: Callable[[tuple, dict], bool] | None = None


def place(condition: str, site_features: set[str], dynamo_features: set[str], kind: str) -> Placement:
    """Where ``condition`` stands for one site of an ATen graph of ``kind`` ("forward" or
    "backward"): ``site_features`` are the site's own, ``dynamo_features`` the graph's that
    Dynamo handed the backend (compile-time features only)."""
    feature = catalogue.CATALOGUE[condition]
    if feature.site is not None and condition in site_features:
        return Placement(True)
    if feature.graph is not None and condition in dynamo_features:
        return Placement(True)
    if feature.backward is not None:
        if kind != "backward":
            return Placement(False)
        return Placement(True, None if condition == "backward" else _runtime_backward(feature))
    if feature.call is not None:
        return Placement(True, _runtime_call(feature))
    if feature.value is not None:
        return Placement(True, _runtime_values(feature))
    if feature.index is not None:
        return Placement(True, _runtime_indices(feature))
    return Placement(False)


# -- rewriting a graph ------------------------------------------------------------------------------

_FIRED: set[str] = set()  # the mutants whose rewrites changed a result since the last clear
_REACHED: set[str] = set()  # the mutants that would have rewritten a call of the control's graphs
# "<operator>: <condition>" for each condition an ATen operator of the control's graphs met
# (and "<operator>" alone): a real bug is one kernel's, under one condition (``where`` with a
# 0-d operand, ``addmm`` under inference mode), which a mutant firing in every kernel under
# that condition does not tell apart; the default tier covers these pairs too.
_KERNELS: set[str] = set()
# The conditions of a call or of its values a kernel is read for at run time.
_KERNEL_CALL = ("grad-disabled", "inference-mode", "deterministic", catalogue.AUTOCAST, "later-call")
_KERNEL_VALUES = ("nan", "infinity", "negative-zero", "subnormal", "large-values")
_KERNEL_RUNTIME = tuple((name, _runtime_call(catalogue.CATALOGUE[name])) for name in _KERNEL_CALL) + tuple(
    (name, _runtime_values(catalogue.CATALOGUE[name])) for name in _KERNEL_VALUES)


def _log_fired(name: str, where: str) -> None:
    if name in _FIRED:
        return
    _FIRED.add(name)
    path = os.environ.get(FIRED_LOG_ENV)
    if path:
        test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
        with open(path, "a") as log:
            log.write(f"{test}\t{name}\t{where}\n")


def _changed(before: Any, after: Any) -> bool:
    old, new = pytree.tree_leaves(before), pytree.tree_leaves(after)
    if len(old) != len(new):
        return True
    for a, b in zip(old, new):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            if a.shape != b.shape or a.dtype != b.dtype or a.requires_grad != b.requires_grad:
                return True
            if not faults._same(a.detach(), b.detach()):
                return True
        elif a is not b and a != b:
            return True
    return False


def _gated(name: str, where: str, target: Callable, apply: faults.Apply,
           runtime: Callable[[tuple, dict], bool] | None, remembers: bool = False) -> Callable:
    """The call of ``target`` as the mutant makes it: right while the run-time condition does
    not hold, else the fault's result (computed even where the right call would raise: a
    fault may be the very check a backend forgot). A fault that ``remembers`` sees every call."""
    def mutated(args: tuple, kwargs: dict) -> Any:
        if runtime is not None and not runtime(args, kwargs):
            result = target(*args, **kwargs)
            if remembers:
                apply(result, args, kwargs)
            return result
        try:
            result, raised = target(*args, **kwargs), None
        except Exception as error:  # noqa: BLE001 -- the fault decides what to do with it
            result, raised = None, error
        wrong = apply(result, args, kwargs)
        if raised is not None and wrong is None:
            raise raised
        if raised is not None or _changed(result, wrong):
            _log_fired(name, where)
        return wrong

    mutated.__name__ = f"mutated_{name.split('__')[0]}"
    return mutated


def rewrite(gm: torch.fx.GraphModule, spec: MutantSpec, dynamo_features: set[str], kind: str) -> int:
    """Rewrite the calls of an ATen graph ``spec``'s fault can change where its condition
    can hold; returns how many."""
    fault = faults.FAULTS[spec.fault]
    if fault.graphs not in ("any", kind):
        return 0
    view = graph_view(gm)
    count = 0
    for site in view.sites:
        if not selects(spec.seed, site.name) or not holds(fault.eligible, site):
            continue
        placement = place(spec.condition, recorder.of_site(site), dynamo_features, kind)
        if not placement.possible:
            continue
        node = site.node
        with gm.graph.inserting_after(node):
            wrong = gm.graph.call_function(_gated(spec.name, f"{node.name} = {node.target}", node.target,
                                                  fault.build(site), placement.runtime, fault.remembers),
                                           (node.args, node.kwargs))
        wrong.meta.update(node.meta)
        node.replace_all_uses_with(wrong)
        gm.graph.erase_node(node)
        count += 1
    if count:
        gm.graph.lint()
        gm.recompile()
    return count


def observe(gm: torch.fx.GraphModule, dynamo_features: set[str], kind: str) -> None:
    """Record in ``_REACHED`` the mutants that would rewrite a call of this ATen graph: at
    once where their condition holds at compile time, else from an observer put after the
    call, which reads the run-time condition each time the call runs and changes nothing."""
    view = graph_view(gm)
    for site in view.sites:
        features = recorder.of_site(site)
        variants = argument_variants(site.node.target, site.node.args, site.node.kwargs)
        _KERNELS.update((site.name, *(f"{site.name}: {name}" for name in (*features, *variants))))
        if kind == "backward":
            _KERNELS.add(f"{site.name}: backward")
        waiting: list[tuple[list[str], Callable[[tuple, dict], bool]]] = [
            ([f"{site.name}: {name}"], holds_now) for name, holds_now in _KERNEL_RUNTIME]
        for fault in faults.FAULTS.values():
            if fault.graphs not in ("any", kind) or not holds(fault.eligible, site):
                continue
            for condition in fault.conditions:
                placement = place(condition, features, dynamo_features, kind)
                if not placement.possible:
                    continue
                names = [MutantSpec(fault.name, condition, seed).name for seed in SEEDS if selects(seed, site.name)]
                if placement.runtime is None:
                    _REACHED.update(names)
                elif names:
                    waiting.append((names, placement.runtime))
        if waiting:
            with gm.graph.inserting_after(site.node):
                gm.graph.call_function(_observer(waiting), (site.node.args, site.node.kwargs))
    gm.graph.lint()
    gm.recompile()


def _observer(waiting: list[tuple[list[str], Callable[[tuple, dict], bool]]]) -> Callable:
    calls = [0]

    def observe_conditions(args: tuple, kwargs: dict) -> None:
        calls[0] += 1
        for names, holds_now in waiting:
            # Mutants' names, or a kernel's condition ("<operator>: <condition>"): those are
            # read on a kernel's first calls only (a value rule reads every element; an LSTM
            # calls its kernels hundreds of times).
            kernel = ": " in names[0]
            if kernel and calls[0] > recorder.READ_CALLS:
                continue
            found = _KERNELS if kernel else _REACHED
            if not found.issuperset(names) and holds_now(args, kwargs):
                found.update(names)

    return observe_conditions


def _call_fault_placement(condition: str, dynamo_features: set[str]) -> Callable[[], bool] | None:
    """When a call fault fires on a graph's calls: always (a compile-time condition that holds),
    at run time (a call condition), or never (None)."""
    feature = catalogue.CATALOGUE[condition]
    if condition in dynamo_features:
        return lambda: True
    if feature.call is not None:
        return lambda: (call := current_call()) is not None and holds(feature.call, call)
    if feature.backward is not None:  # read inside a backward graph's call (a fault of those)
        return lambda: (backward := current_backward()) is not None and holds(feature.backward, backward)
    return None


def _backward_call_fault(compiled: Callable, spec: MutantSpec | None, recording: bool,
                         dynamo_features: set[str]) -> Callable:
    """A backward graph's call, as the call faults of backward graphs make it: ``spec``'s
    wrapping it, or while recording, an observer of the mutants that would fire on it."""
    if spec is not None and spec.fault in faults.CALL_FAULTS:
        fault = faults.CALL_FAULTS[spec.fault]
        fires = _call_fault_placement(spec.condition, dynamo_features)
        if fault.graphs != "backward" or fires is None:
            return compiled
        return fault.wrap(compiled, fires, lambda name=spec.name: _log_fired(name, "the backward graph's call"))
    if not recording:
        return compiled
    observers = [(each.name, fires) for each in MUTANTS.values() if each.fault in faults.CALL_FAULTS
                 and faults.CALL_FAULTS[each.fault].graphs == "backward"
                 and (fires := _call_fault_placement(each.condition, dynamo_features)) is not None]

    def observed(args: list) -> Any:
        _REACHED.update(name for name, fires in observers if name not in _REACHED and fires())
        return compiled(args)

    observed._boxed_call = True  # type: ignore[attr-defined]
    return observed


# -- the backend ---------------------------------------------------------------------------------------


def _rewrite_dynamo_graph(gm: torch.fx.GraphModule, spec: MutantSpec, dynamo_features: set[str]) -> None:
    """Rewrite each site of ``spec``'s graph fault in the graph Dynamo handed the backend,
    where its condition holds there."""
    fault = faults.GRAPH_FAULTS[spec.fault]
    if spec.condition not in dynamo_features:
        return
    sites = fault.sites(gm)
    for node in sites:
        fault.rewrite(gm, node)
    if sites:
        # Fired at compile time: what a dropped node changes (a gradient) is only computed later.
        _log_fired(spec.name, f"{len(sites)} node(s) of Dynamo's graph")
        gm.graph.lint()
        gm.recompile()


class Mutant:
    """A backend that compiles like aot_eager, rewritten as ``spec`` says (None: the control).

    As ``switch``, it is whichever mutant ``use`` names, and records what it reaches while
    it is the control."""

    def __init__(self, name: str, spec: MutantSpec | None, switch: bool = False) -> None:
        self.__name__ = self.name = name
        self.spec = spec
        self.switch = switch
        # A stack mutant standing alone: what Dynamo compiles for this backend is patched
        # (stack_faults.fault_of finds it behind the wrappers); the switch is patched by ``use``.
        self.stack_fault = spec.name if spec is not None and spec.stack and not switch else None

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list[Any], **kwargs: Any) -> Callable:
        from torch._dynamo.backends.debugging import aot_eager, boxed_nop

        spec = self.spec
        dynamo_features = recorder.of_graph(graph_view(gm, example_inputs))
        recording = spec is None and self.switch
        if recording:  # the faults of Dynamo's graph: each reached where it has a site and its condition holds
            _REACHED.update(spec_.name for spec_ in MUTANTS.values() if spec_.fault in faults.GRAPH_FAULTS
                            and spec_.condition in dynamo_features and faults.GRAPH_FAULTS[spec_.fault].sites(gm))
        elif spec is not None and spec.fault in faults.GRAPH_FAULTS:
            _rewrite_dynamo_graph(gm, spec, dynamo_features)

        def compiler(kind: str) -> Callable:
            def compile_graph(aten: torch.fx.GraphModule, inputs: list[Any], **options: Any) -> Callable:
                if recording:
                    observe(aten, dynamo_features, kind)
                elif spec is not None and spec.fault in faults.FAULTS:
                    rewrite(aten, spec, dynamo_features, kind)
                compiled = boxed_nop(aten, inputs, **options)
                if kind != "backward":
                    return compiled
                return _as_backward(_backward_call_fault(compiled, spec, recording, dynamo_features))

            return compile_graph

        compiled = aot_eager(gm, example_inputs, fw_compiler=compiler("forward"), bw_compiler=compiler("backward"),
                             **kwargs)
        observers: list[tuple[str, Callable[[], bool]]] = []
        if recording:  # the call faults: each reached on a call where its condition holds
            observers = [(spec.name, fires) for spec in MUTANTS.values() if spec.fault in faults.CALL_FAULTS
                         and faults.CALL_FAULTS[spec.fault].graphs == "forward"
                         and (fires := _call_fault_placement(spec.condition, dynamo_features)) is not None]
        run = compiled
        if spec is not None and spec.fault in faults.CALL_FAULTS and faults.CALL_FAULTS[spec.fault].graphs == "forward":
            fires = _call_fault_placement(spec.condition, dynamo_features)
            if fires is not None:
                run = faults.CALL_FAULTS[spec.fault].wrap(
                    compiled, fires, lambda name=spec.name: _log_fired(name, "the graph's call"))
        return _with_call_context(run, compiled, observers)

    def __repr__(self) -> str:
        return f"<mutant {self.name}>"


def _with_call_context(run: Callable, compiled: Callable, observers: list[tuple[str, Callable[[], bool]]]) -> Callable:
    """``run``, inside a context naming this call of the graph (its index, the caller's modes);
    ``observers``: the call faults that reach this call when their condition holds."""
    calls = [0]

    def call(*args: Any, **kwargs: Any) -> Any:
        view = CallView.now(calls[0], [])
        calls[0] += 1
        _LOCAL.forwards = getattr(_LOCAL, "forwards", 0) + 1
        with _in_call(view):
            _REACHED.update(name for name, fires in observers if name not in _REACHED and fires())
            return run(*args, **kwargs)

    if getattr(compiled, "_boxed_call", False):
        call._boxed_call = True  # type: ignore[attr-defined]
    return call


def _as_backward(compiled: Callable) -> Callable:
    """A backward graph, inside a context naming this backward pass: a call (its index, the
    modes now) and how many backward passes ran through it since a forward call last ran (a
    second one: retain_graph)."""
    calls = [0]
    passes = {"count": 0, "after forward": -1}

    def run(args: list) -> Any:
        forwards = getattr(_LOCAL, "forwards", 0)
        passes["count"] = passes["count"] + 1 if passes["after forward"] == forwards else 1
        passes["after forward"] = forwards
        before = getattr(_LOCAL, "backward", None)
        _LOCAL.backward = BackwardView(passes["count"], torch.is_grad_enabled())
        # A backward pass belongs to a call made with grad enabled, whatever mode autograd
        # runs the pass in.
        view = dataclasses.replace(CallView.now(calls[0], []), grad_enabled=True, inference_mode=False)
        calls[0] += 1
        try:
            with _in_call(view):
                return compiled(args)
        finally:
            _LOCAL.backward = before

    run._boxed_call = True  # type: ignore[attr-defined]
    return run


_BACKENDS: dict[str, Mutant] = {}


def mutant(name: str) -> Mutant:
    """The mutant called ``name`` (``unmutated``, ``switch`` included), the same object each time."""
    if name not in _BACKENDS:
        if name == CONTROL:
            _BACKENDS[name] = Mutant(name, None)
        elif name == SWITCH:
            _install_stack_faults()
            _BACKENDS[name] = Mutant(name, None, switch=True)
        elif name in MUTANTS:
            if MUTANTS[name].stack:  # torch patched for what is compiled for it; it compiles as the control
                _install_stack_faults()
            _BACKENDS[name] = Mutant(name, MUTANTS[name])
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r} (mutants are named "
                                 "<fault>__<condition>__s<seed>: python scripts/mutation_score.py --list)")
    return _BACKENDS[name]


def _install_stack_faults() -> None:
    stack_faults.install(reach=_REACHED.add, fire=_log_fired)


def use(name: str | None) -> None:
    """Make ``switch`` the mutant ``name`` (None: the control, recording what it reaches)."""
    spec = MUTANTS[name] if name is not None else None
    mutant(SWITCH).spec = spec
    stack_faults.activate(name if spec is not None and spec.stack else None, recording=spec is None)


def start_test() -> None:
    stack_faults.start_test()
    _FIRED.clear()
    _REACHED.clear()
    _KERNELS.clear()
    faults._KEPT.clear()


def fired() -> set[str]:
    return set(_FIRED)


def reached_mutants() -> set[str]:
    return set(_REACHED)


def kernels_met() -> set[str]:
    """The ATen operators the control's graphs called, and the conditions each met."""
    return set(_KERNELS)


def spec(name: str) -> str:
    """The backend spec of a mutant, for --backend."""
    return f"{__name__}:{name}"


def __getattr__(name: str) -> Mutant:
    # How a backend spec (harness/axes/backends.py: getattr on the module) reaches a mutant.
    if name.startswith("__"):
        raise AttributeError(name)
    return mutant(name)
