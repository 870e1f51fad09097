"""``run_tests.py --minify TEST_ID``: shrink a test's value or gradient mismatch to the
smallest graph that still disagrees with eager, and write it as a standalone repro.

Runs in its own process (it imports torch; the runner does not):

1. runs the test, with the backend the test id names, and keeps the graphs it compiled;
2. finds the first graph that, compiled alone with ``torch.compile(..., backend=...)``,
   disagrees with eager on the inputs it was compiled for (values, dtype, shape,
   requires_grad, inputs after the call, gradients);
3. shrinks it with PyTorch's own FX minifier (``torch._functorch.fx_minifier``: it cuts the
   graph's tail and replaces halves, quarters... of it by inputs holding the values they
   computed, as long as the rest still disagrees);
4. writes the result as a repro file (harness.repros.generic) and prints its path.

Exit codes: 0 minimized (or the test passes: nothing to minimize), 1 no graph of the test
disagrees on its own (the problem is not in one graph: use the problem's repro), 2 bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import unittest
from pathlib import Path
from typing import Any, Callable

import torch

from harness import compat, settings
from harness.measure import repro
from harness.project import run_settings
from harness.report.problems import Problem
from harness.repros.generic import render
from harness.report.results import TestResult, write_atomic
from harness.run.collection import flatten


def _clone(values: list[Any]) -> list[Any]:
    return [value.detach().clone().requires_grad_(value.requires_grad) if isinstance(value, torch.Tensor) else value
            for value in values]


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _compile_options() -> dict[str, Any]:
    """The run's mode= and options= (harness/axes/compile_options.py), as its compiles had them."""
    from harness.axes import compile_options, registry

    return compile_options.handed_to_backend(registry.selected(registry.COMPILE_OPTIONS)[0])


def disagreement(gm: torch.fx.GraphModule, inputs: list[Any], backend: Any) -> str:
    """How ``gm`` compiled with ``backend`` differs from eager on ``inputs`` ("" if not)."""
    eager_inputs, compiled_inputs = _clone(inputs), _clone(inputs)
    # Rebuilt from its code, as the repro file does: Dynamo does not trace into the
    # GraphModule machinery (it is on its skip list).
    forward = repro.build(gm.code.strip() + "\n")

    def program(*args):
        return forward(gm, *args)

    try:
        torch.manual_seed(0)
        expected = _as_list(program(*eager_inputs))
    except Exception:
        return ""  # not a program eager runs: not a candidate
    compat.reset_dynamo()
    try:
        torch.manual_seed(0)
        actual = _as_list(torch.compile(program, backend=backend, fullgraph=True, **_compile_options())(*compiled_inputs))
    except Exception as error:
        return f"compiled call raised {type(error).__name__}"
    for kind, wanted, got in (("output", expected, actual), ("input after the call", eager_inputs, compiled_inputs)):
        for index, (want, have) in enumerate(zip(wanted, got)):
            text = _tensor_difference(want, have)
            if text:
                return f"{kind} {index}: {text}"
    return _gradient_difference(expected, actual, eager_inputs, compiled_inputs)


def _tensor_difference(want: Any, have: Any) -> str:
    if not isinstance(want, torch.Tensor) or not isinstance(have, torch.Tensor):
        return "" if type(want) is type(have) else "different kinds of value"
    for attribute in ("shape", "dtype", "requires_grad"):
        if getattr(want, attribute) != getattr(have, attribute):
            return f"{attribute} differs"
    try:
        torch.testing.assert_close(have.detach(), want.detach(), equal_nan=True)
    except AssertionError:
        return "values differ"
    return ""


def _gradient_difference(expected, actual, eager_inputs, compiled_inputs) -> str:
    leaves = [index for index, value in enumerate(eager_inputs)
              if isinstance(value, torch.Tensor) and value.requires_grad and value.is_leaf]
    pairs = [(want, have) for want, have in zip(expected, actual) if isinstance(want, torch.Tensor)
             and want.requires_grad and want.dtype.is_floating_point and isinstance(have, torch.Tensor)
             and have.requires_grad]
    if not leaves or not pairs:
        return ""
    try:
        sum(want.sum() for want, _ in pairs).backward()
        sum(have.sum() for _, have in pairs).backward()
    except Exception as error:
        return f"backward raised {type(error).__name__}"
    for index in leaves:
        text = _tensor_difference(eager_inputs[index].grad, compiled_inputs[index].grad)
        if text and eager_inputs[index].grad is not None:
            return f"gradient of input {index}: {text}"
    return ""


def _kind(found: str) -> str:
    """``values differ`` of ``output 3: values differ``: what differs, not where."""
    return found.split(": ", 1)[-1] if found else ""


def _ops(gm: torch.fx.GraphModule) -> int:
    return sum(node.op.startswith("call_") for node in gm.graph.nodes)


def shrink(gm: torch.fx.GraphModule, inputs: list[Any], fails: Callable[[torch.fx.GraphModule, list[Any]], bool]):
    """PyTorch's FX minifier, quiet; (smallest failing graph, its inputs)."""
    minifier = compat.fx_minifier()

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return minifier(gm, inputs, lambda graph, values: fails(graph, list(values)),
                        dump_state=lambda graph, values: None, skip_offload=True)


def _run_test(test_id: str) -> unittest.TestCase:
    try:
        cases = list(flatten(unittest.defaultTestLoader.loadTestsFromName(test_id)))
    except (ImportError, AttributeError):
        cases = []
    # A name the loader cannot find comes back as a stand-in test that fails with the error.
    if len(cases) != 1 or getattr(type(cases[0]), "backend", None) is None:
        print(f"run_tests.py: error: --minify {test_id}: not one test of the backends under test; give a test id "
              "from python run_tests.py --backend SPEC --list, with the same --backend", file=sys.stderr)
        raise SystemExit(2)
    case = cases[0]
    outcome = unittest.TestResult()
    case.run(outcome)
    case.minify_failed = bool(outcome.failures or outcome.errors or outcome.unexpectedSuccesses)
    return case


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="run_tests.py --minify")
    parser.add_argument("test_id")
    parser.add_argument("--out", required=True, help="directory for the minimized repro")
    parser.add_argument("--settings", help="the run's settings file (harness.settings; default: the environment)")
    args = parser.parse_args(argv)
    if args.settings:
        settings.use(settings.Settings.read(args.settings))
    case = _run_test(args.test_id)
    if not case.minify_failed:
        print(f"{args.test_id} passes: nothing to minimize")
        return 0
    compiler = case.backend  # a harness Backend: callable as a torch.compile backend
    pairs = [(gm, list(inputs)) for counter in getattr(case, "_counters", ())
             for gm, inputs in zip(counter.graphs, counter.example_inputs)]
    for number, (gm, inputs) in enumerate(pairs):
        if not all(isinstance(value, torch.Tensor) for value in inputs):
            continue  # the FX minifier takes tensor inputs only
        found = disagreement(gm, inputs, compiler)
        if not found:
            continue
        print(f"graph {number} of {len(pairs)} ({_ops(gm)} operations) disagrees with eager: {found}; minimizing")
        kind = _kind(found)
        # Only the same kind of disagreement counts: a smaller graph the backend merely fails
        # to compile is another problem.
        small, small_inputs = shrink(gm, inputs, lambda graph, values: _kind(disagreement(graph, values, compiler)) == kind)
        small.recompile()
        graph = repro.replayable(small, list(small_inputs))
        print(f"minimized to {_ops(small)} operation(s): {disagreement(small, list(small_inputs), compiler)}")
        print(small.code.strip())
        if graph is None:
            print("the minimized graph cannot be written as a standalone repro: "
                  + repro.why_not_replayable(small, list(small_inputs)))
            return 1
        return _write(args, case, graph, found, _ops(gm), _ops(small))
    print(f"no graph of {args.test_id} disagrees with eager on its own ({len(pairs)} compiled); "
          "the problem is between graphs or in the scenario's check: use its repro from the run")
    return 1


def _write(args: argparse.Namespace, case: unittest.TestCase, graph: dict, found: str, before: int, after: int) -> int:
    backend = case.backend
    test = TestResult(id=args.test_id, scenario="", backend=backend.name, backend_spec=backend.spec,
                      outcome="FAIL", reason=f"minimized from {before} to {after} operations: {found}")
    name = f"minified-{args.test_id.rsplit('.', 2)[-2]}-{args.test_id.rsplit('.', 1)[-1]}"
    problem = Problem(id=name, backend=backend.name, outcome="FAIL", signature=found, where="", tests=[test])
    path = Path(args.out) / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    test.scenario = type(case).expectation_key(args.test_id.rsplit(".", 1)[-1])
    run = {"torch": torch.__version__, "cwd": os.getcwd(), "environment": settings.current().environment(run_settings.repro_names())}
    write_atomic(path, render(problem, test, [graph], run))
    print(f"repro: python {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
