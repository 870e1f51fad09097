"""What a variant (harness/axes/variants.py) does to a test: the Behaviour of the variant axis.

Around each test it patches Dynamo's configuration; under ``compiled_autograd`` it captures
every backward with compiled autograd and hands those through compiled code to the backend
under test. After a passing body it checks what only the variant can show:

* ``dynamic``: each graph the backend compiled with symbolic sizes runs again at a second
  size, the backend's callable against the captured graph run eagerly (harness/axes/second_size.py);
* ``automatic_dynamic``: each compiled function's first call is replayed at a grown size
  (the recompile must give the backend symbolic sizes) and at a third size (no more
  recompiles than the change caused) (harness/axes/automatic_dynamic.py).

* ``threads``, ``caller_mutates``, ``module_hooks``, ``saved_tensor_hooks``: each compiled
  function's first call made again the way callers call (harness/axes/callers.py).

A test the variant changed nothing in (no symbolic size, no replayable call, no captured
backward) is SKIP with the variant's ``unproven`` reason rather than counted twice.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import torch

from harness import compat
from harness.checks import replay
from harness.axes import automatic_dynamic, axis, callers, export, second_size
from harness.axes.variants import VARIANTS


class _VariantBehaviour(axis.Behaviour):
    def class_attributes(self, value: str) -> dict[str, Any]:
        return {"variant": VARIANTS[value]}

    def set_up(self, test: Any, value: str) -> None:
        variant = VARIANTS[value]
        if variant.dynamo_config:
            test.enter_context(compat.dynamo_config_patch(**variant.dynamo_config))
        test._second_sizes = []
        test._recorded_calls = []
        test._backward_counter = None
        test._exported_calls = []
        if variant.export:
            refused = export.refusal(test.backend)
            if refused:
                test.skipTest(f"backend '{test.backend.spec}' cannot take an exported graph: {refused}")
        if variant.compiled_autograd:
            test._backward_counter = test.new_counter()
            test.enter_context(compat.compiled_autograd(functools.partial(_compile_captured_backward, test)))

    def counter_created(self, test: Any, value: str, counter: Any) -> None:
        if VARIANTS[value].second_size:
            counter.around_compile = functools.partial(_compile_keeping_second_size, test)

    def compiled(self, test: Any, value: str, fn: Callable, compiled: Callable, counter: Any,
                 options: dict[str, Any]) -> Callable:
        if VARIANTS[value].export:
            call = export.ExportedCall(fn, counter, strict=VARIANTS[value].export == "strict",
                                       dynamic=options.get("dynamic") is True,
                                       handed={key: options[key] for key in ("mode", "options") if key in options})
            test._exported_calls.append(call)
            return call
        if VARIANTS[value].caller:
            return automatic_dynamic.record_first_call(fn, compiled, counter, test._recorded_calls)
        if VARIANTS[value].resized_calls and options.get("dynamic") is not False:
            return automatic_dynamic.record_first_call(fn, compiled, counter, test._recorded_calls)
        return compiled

    def after_body(self, test: Any, value: str) -> str | None:
        variant = VARIANTS[value]
        second_size_runs = replayed = 0
        if variant.caller:
            with torch.random.fork_rng():
                replayed = _replay_as_callers_call(test, variant.caller)
            return None if replayed else f"nothing to test under variant '{value}': {variant.unproven}"
        if test._second_sizes or test._recorded_calls:
            with torch.random.fork_rng():  # the replays leave the scenario's RNG stream alone
                second_size_runs = _run_at_second_sizes(test)
                replayed = _replay_at_other_sizes(test)
        if variant.export:
            entries = [entry for call in test._exported_calls for entry in call.entries]
            if not entries:
                return f"nothing to test under variant '{value}': {variant.unproven}"
            broken = list(dict.fromkeys(text for entry in entries for text in entry.violations))
            if broken:
                raise AssertionError("the exported graph breaks export's contract (torch's doing, not the "
                                     "backend's): " + "; ".join(broken))
            if variant.export == "strict" and all(entry.same_as_other_mode for entry in entries):
                return f"under variant '{value}': strict export gave the same graphs as non-strict (variant 'export')"
            return None
        unchanged = ((variant.compiled_autograd and not test._backward_counter.frame_count)
                     or (variant.resized_calls and not replayed)
                     or (variant.second_size and not second_size_runs))
        return f"nothing to test under variant '{value}': {variant.unproven}" if unchanged else None


BEHAVIOUR = _VariantBehaviour()


def _compile_captured_backward(test: Any, graph: torch.fx.GraphModule) -> Callable:
    """Compiled autograd captures every backward, the eager reference's included. A backward
    through compiled code goes to the backend under test; one that is all eager autograd runs
    as captured, so eager stays the reference. (Without AOTAutograd the two cannot be told
    apart: every backward goes to the backend.)"""
    if test.uses_aot_autograd and not compat.runs_backward_of_compiled_code(graph):
        return graph
    return torch.compile(graph, backend=test._backward_counter, fullgraph=True)


def _compile_keeping_second_size(test: Any, gm: torch.fx.GraphModule, example_inputs: list[Any],
                                 compile_: Callable) -> Callable:
    reference = second_size.copy_graph(gm)
    compiled = compile_(gm, example_inputs)
    kept = second_size.capture(reference, example_inputs, compiled)
    if kept is not None:
        test._second_sizes.append(kept)
    return compiled


def _run_at_second_sizes(test: Any) -> int:
    """Each graph the backend compiled with symbolic sizes, at a second size: the backend's
    compiled callable against the captured graph run eagerly (outputs, mutated inputs,
    gradients). Returns how many ran."""
    runs = 0
    for index, kept in enumerate(test._second_sizes):
        if not kept.runs_eagerly():
            continue
        try:
            kept.check(test)
        except AssertionError as error:
            raise AssertionError(f"graph {index + 1} at a second size ({kept.describe()}): {error}") from None
        except Exception as error:
            raise AssertionError(f"graph {index + 1} at a second size ({kept.describe()}): the backend's "
                                 f"compiled graph raised {type(error).__name__}: {error}") from error
        runs += 1
    return runs


def _replay_as_callers_call(test: Any, way: str) -> int:
    """Each compiled function's first call made again the way ``way`` names
    (harness/axes/callers.py), against eager. Returns how many calls proved something; a
    replay the backend served with no graph of its own (Dynamo ran it eagerly) fails."""
    replayed = 0
    for index, call in enumerate(test._recorded_calls):
        if call.args is None or not call.returned:
            continue
        inputs, where = list(call.args), f"compiled function {index + 1} ({way})"
        eager = functools.partial(_call_with, call.eager, call.kwargs)
        compiled = functools.partial(_call_with, call.compiled, call.kwargs)
        before = call.counter.calls_run
        try:
            if way == "module_hooks":
                module = callers.hookable_module(call.eager)
                if module is None or call.kwargs:
                    continue
                test.reset_dynamo()  # hooks must be there at the compile: torch ignores later ones (pytorch#117758)
                proved = callers.with_module_hooks(
                    test, module, lambda module: torch.compile(module, backend=call.counter), inputs, call.leaves,
                    call.grad_enabled)
            elif not replay.repeats(eager, inputs, call.leaves, lambda: torch.set_grad_enabled(call.grad_enabled)):
                continue  # eager raises at the replay, or draws random numbers: no reference
            else:
                way_of_calling = {"threads": callers.from_threads, "caller_mutates": callers.after_caller_writes,
                                  "saved_tensor_hooks": callers.inside_saved_tensor_hooks}[way]
                proved = way_of_calling(test, eager, compiled, inputs, call.leaves, call.grad_enabled)
        except AssertionError as error:
            raise AssertionError(f"{where}: {error}") from None
        if not proved:
            continue
        if call.counter.calls_run == before:
            raise AssertionError(f"{where}: the backend ran no graph in the replay: Dynamo ran the call eagerly, so "
                                 "nothing of the backend was replayed")
        replayed += 1
    return replayed


def _call_with(fn: Callable, kwargs: dict, *args: Any) -> Any:
    return fn(*args, **kwargs)


def _replay_at_other_sizes(test: Any) -> int:
    """Each compiled function's first call at a grown size, then a third size: right values
    and gradients, symbolic sizes after the change, and no more recompiles at the third size
    than the change caused. Returns how many calls were replayed."""
    replayed = 0
    for index, call in enumerate(test._recorded_calls):
        try:
            recompiles = call.check(test)
        except AssertionError as error:
            raise AssertionError(f"compiled function {index + 1} at other sizes: {error}") from None
        if recompiles is None:
            continue
        replayed += 1
        grown, third = recompiles
        where = f"compiled function {index + 1}"
        # The contract: the recompile a size change causes gives the backend symbolic sizes,
        # and a third size needs no more recompiles than that (it may need as many for the
        # scenario's own state, such as a global list that grew).
        test.assertTrue(any(second_size.has_symbolic_sizes(graph) for graph in grown) or not grown,
                        f"{where}: after a size change the backend received {len(grown)} graph(s), none with "
                        "symbolic sizes: automatic dynamic shapes did not make the changed sizes dynamic")
        test.assertLessEqual(len(third), len(grown), f"{where}: a third size recompiled {len(third)} frame(s), "
                             f"more than the {len(grown)} the first size change did")
    return replayed
