"""Faulty backends that are right in every result and cost more than they should: the perf
tier (harness.testcase.perf, harness.report.metric_changes) must flag them against
``aot_eager``'s figures, which they are built on (test/proofs/test_perf_faults.py).

Their docstrings start with ``Costs:``, not ``Breaks:``: no correctness check can see them.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import torch
from torch._dynamo.backends.debugging import boxed_nop

SLEEP_S = 0.002


def _aot_eager_with(wrap_forward: Callable[[Callable], Callable]) -> Callable:
    """aot_eager itself, its forward (and inference) graph's runner wrapped. (Its runner
    frees each value at its last use: a runner of one's own that does not would already
    cost memory, and the fault would not be the only difference from aot_eager.)"""

    def compile_forward(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
        run = wrap_forward(boxed_nop(gm, example_inputs))
        run._boxed_call = True  # it takes its inputs as one list, which it may empty
        return run

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
        return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs, fw_compiler=compile_forward)

    return backend


def _sleeping(run: Callable) -> Callable:
    def run_after_a_nap(args: list[Any]) -> Any:
        time.sleep(SLEEP_S)
        return run(args)

    return run_after_a_nap


def _keeping_copies(run: Callable) -> Callable:
    kept: list[list[torch.Tensor]] = [[]]

    def run_and_keep(args: list[Any]) -> Any:
        outputs = run(args)
        # The forward graph's outputs are the user's results and the activations saved for
        # backward: a copy of each, held until the next call replaces it.
        kept[0] = [value.detach().clone() for value in outputs if isinstance(value, torch.Tensor)]
        return outputs

    return run_and_keep


sleeps_per_call = _aot_eager_with(_sleeping)
sleeps_per_call.__doc__ = f"""Costs: *time*. aot_eager that sleeps {SLEEP_S * 1e3:g} ms before each forward
call, as a runtime that waits on a device queue or a lock each call would."""

keeps_activation_copies = _aot_eager_with(_keeping_copies)
keeps_activation_copies.__doc__ = """Costs: *memory*. aot_eager whose forward keeps a copy of
everything it returns (results and saved activations) until its next call: a runtime that
stages outputs through buffers of its own and never lets go."""


def runs_forward_twice(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Costs: *time*. aot_eager that first runs the graph it received on copies of the inputs,
    without autograd, and throws that away: a runtime that does a warm-up or validation run
    on every call. Inputs, results and gradients are as aot_eager's."""
    compiled = torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)

    def run(*args: Any) -> Any:
        with torch.no_grad():
            gm(*[arg.clone() if isinstance(arg, torch.Tensor) else arg for arg in args])
        return compiled(*args)

    return run
