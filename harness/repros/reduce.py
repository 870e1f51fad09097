"""Reduce a problem's plain repro while it still shows the problem (issue 69: "minimal").

``python -m harness.repros.reduce REQUESTS RESULTS``, run where the backend is installed
(harness.repros.prepare starts one per problem). REQUESTS is a JSON list, one request per
problem: its graphs as harness.measure.repro records them, the backend's spec, the
problem's outcome and signature, and the seconds it may take. For each, in order:

1. each graph is rendered as a plain script (harness.repros.plain) and run here, in this
   process, until one *shows* the problem: it exits 1 on the backend, printing the behaviour
   the problem names (harness.report.problems.shown_by), and exits 0 under ``--backend aot_eager``;
2. a graph of many outputs is cut to the one the comparison named, else halved;
3. that graph is cut by PyTorch's FX minifier (``torch._functorch.fx_minifier``: the graph's
   tail, then halves, quarters... of it replaced by inputs holding what they computed), and
   statements nothing reads are dropped;
4. then its inputs: a tensor of its own rather than a view, requires_grad dropped, fewer
   dimensions, smaller sizes, plain strides, values drawn from [0, 1);
5. then each call's own arguments: keywords and trailing constants left to their defaults.

A smaller graph is kept only while its script still shows the problem, so every step is
optional and the request's seconds bound them all. RESULTS gets a JSON line each time a
problem's repro gets smaller (the last one for a problem is its best): a backend that crashes
or hangs this process loses nothing kept before.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import io
import json
import re
import sys
import time
import traceback
from typing import Any, Callable

import torch

from harness import compat, state
from harness.measure import repro
from harness.repros import plain
from harness.report import problems

REFERENCE = plain.REFERENCE


class _OutOfTime(Exception):
    pass


def run(script: str, backend: str | None = None) -> tuple[int, str]:
    """``python repro.py [--backend backend]`` in this process: its exit code and what it printed."""
    compat.reset_dynamo()
    printed = io.StringIO()
    argv, hook = sys.argv, sys.excepthook
    sys.argv = ["repro.py", *(["--backend", backend] if backend else [])]
    before = state.snapshot()
    try:
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            exec(compile(script, "repro.py", "exec"), {"__name__": "__main__"})
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
        if isinstance(stop.code, str):
            printed.write(stop.code)  # sys.exit("...") prints it and exits 1
    except Exception:
        code = plain.CANNOT_CHECK
        printed.write(traceback.format_exc(limit=-3))
    finally:
        sys.argv, sys.excepthook = argv, hook
        if state.leaked(before, state.snapshot()):
            state.restore(before)
    return code, printed.getvalue()


def ops(graph: dict[str, Any]) -> int:
    """Operations in the graph's code (calls, and operators such as ``*``): what the minifier
    makes fewer."""
    return len(plain.operations(graph["code"]))


def _size(graph: dict[str, Any]) -> tuple[int, int, int]:
    elements = sum(_numel(spec["shape"]) for spec in graph["inputs"] if isinstance(spec, dict))
    return ops(graph), len(graph["inputs"]), elements


def _numel(shape: list[int]) -> int:
    count = 1
    for size in shape:
        count *= size
    return count


class Reduction:
    """One problem's request, reduced: ``best`` is the smallest graph whose script shows it."""

    def __init__(self, request: dict[str, Any], emit: Callable[[dict[str, Any]], None]):
        self.request, self.emit = request, emit
        self.deadline = time.monotonic() + request.get("seconds", 60)
        self.started = time.monotonic()
        self.best: dict[str, Any] | None = None
        self.steps: list[str] = []
        self.tried = 0
        self.printed = ""  # by the last script run: which output differed, if one did
        self.backward = problems.needs_backward(request["signature"])  # gradients compared too

    def script(self, graph: dict[str, Any]) -> str | None:
        request = self.request
        return plain.render(graph, request["backend"], "repro", imports=request.get("imports", []),
                            kind=problems.kind(request["signature"]),
                            backward=self.backward,
                            compile_options=request.get("compile_options"))

    def shows(self, graph: dict[str, Any]) -> bool:
        if self.best is not None and time.monotonic() > self.deadline:  # choosing the graph is not bounded
            raise _OutOfTime
        text = self.script(graph)
        if text is None:
            return False
        self.tried += 1
        code, printed = run(text)
        self.printed = printed
        if code != plain.SHOWS or not problems.shown_by(self.request["outcome"], self.request["signature"], printed):
            return False
        return run(text, REFERENCE)[0] == 0  # the reference agrees: the script blames the backend alone

    def keep(self, graph: dict[str, Any], step: str) -> None:
        self.best = graph
        if step.startswith("inputs: ") and self.steps and self.steps[-1].startswith("inputs: "):
            self.steps[-1] = step  # one line for the inputs, however many of them changed
        elif step and (not self.steps or self.steps[-1] != step):
            self.steps.append(step)
        self.emit({"id": self.request["id"], "graph": graph, "backward": self.backward, "steps": self.steps,
                   "tried": self.tried, "seconds": round(time.monotonic() - self.started, 1)})

    def choose(self) -> bool:
        """The first graph that shows it as recorded (its values exact), forward alone, then with
        the gradients where an input requires them: a problem may be in the backward whatever
        the check named."""
        graphs = self.request["graphs"]
        for index, graph in enumerate(graphs):
            exact = dict(graph, inputs=[dict(spec, literal=True) if isinstance(spec, dict) and "values" in spec
                                        else spec for spec in graph["inputs"]])
            forms = [exact]
            if any(isinstance(spec, dict) and "view" not in spec for spec in graph["inputs"]):
                # An earlier version's record does not say which inputs were views: its generic
                # replay made every input one, so that form too.
                forms.append(dict(exact, inputs=[dict(spec, view=True) if isinstance(spec, dict) else spec
                                                 for spec in exact["inputs"]]))
            needs = any(isinstance(spec, dict) and spec.get("requires_grad") for spec in graph["inputs"])
            for self.backward in dict.fromkeys([self.backward, *([True] if needs else [])]):
                for form in forms:
                    if self.shows(form):
                        self.keep(form, f"graph {index + 1} of the {len(graphs)} the backend received"
                                        f" ({ops(graph)} operations, {len(graph['inputs'])} inputs"
                                        + (", gradients compared" if self.backward else "") + ")")
                        return True
        return False

    def attempt(self, candidate: dict[str, Any], step: str) -> bool:
        if candidate == self.best or not self.shows(candidate):
            return False
        self.keep(candidate, step)
        return True

    def fewer_outputs(self) -> None:
        """A graph of many outputs (an op sweep's sample batch: sixteen ops side by side) cut to
        the one the comparison named, else halved while it shows: a few compiles where the
        minifier's cuts take many, on a backend that takes seconds to a minute per compile."""
        count = _output_count(self.best["code"])
        if count <= 1:
            return
        hinted = re.search(r"^output: .*?The failure occurred for item \[(\d+)\]", self.printed, re.S | re.M)
        left = count  # the outputs of the best graph so far
        if hinted and int(hinted.group(1)) < count and self._outputs([int(hinted.group(1))]):
            left = 1
        while left > 1:
            half = left // 2
            if self._outputs(list(range(half))):
                left = half
            elif self._outputs(list(range(half, left))):
                left -= half
            else:
                break
        if left < count:
            self.keep(self.best, f"outputs: {count} to {left}")

    def _outputs(self, keep: list[int]) -> bool:
        candidate = _with_outputs(self.best, keep)
        return candidate is not None and self.attempt(candidate, "")

    def minify(self) -> None:
        before = ops(self.best)
        if before <= 1:
            return
        found = _graph_module(self.best)
        if found is None:
            return
        gm, inputs = found
        smallest = [self.best]

        def fails(module: torch.fx.GraphModule, values: list[Any]) -> bool:
            candidate = repro.replayable(module, list(values))
            if candidate is None or not self.shows(candidate):
                return False
            if _size(candidate) < _size(smallest[0]):
                smallest[0] = candidate
            return True

        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                compat.fx_minifier()(gm, inputs, lambda module, values: fails(module, list(values)),
                                     dump_state=lambda *_: None, skip_offload=True, skip_sanity=True)
        except _OutOfTime:
            pass
        except Exception:  # the minifier's own limits (a node it cannot cut): keep what it found
            pass
        if smallest[0] is not self.best and _size(smallest[0]) < _size(self.best):
            self.keep(smallest[0], f"PyTorch's FX minifier: {before} operations to {ops(smallest[0])}")

    def shrink_inputs(self) -> None:
        before = list(self.best["inputs"])
        changes: list[str] = []
        for index in range(len(before)):
            simpler = True
            while simpler:  # each simplification kept is tried on again: (2, 3) to (1, 3) to (3,)
                simpler = False
                for change, spec in _smaller_inputs(self.best["inputs"][index], self.request["signature"]):
                    inputs = list(self.best["inputs"])
                    inputs[index] = spec
                    if self.attempt(dict(self.best, inputs=inputs), ""):
                        changes.append(change)
                        simpler = True
                        break
            if changes:  # said as it goes: the time limit may stop it at any input
                self.keep(self.best, _inputs_step(before, self.best["inputs"], changes))

    def drop_statements(self) -> None:
        dropped = 0
        # Last first: what a later statement read is then free to go too, and the earlier
        # statements keep their places.
        for index in reversed(range(len(ast.parse(self.best["code"]).body[0].body))):
            candidate = _without_statement(self.best["code"], index)
            if candidate is not None and self.attempt(dict(self.best, code=candidate), ""):
                dropped += 1
        if dropped:
            self.keep(self.best, f"{dropped} statement{'s' if dropped > 1 else ''} whose value nothing needs dropped")

    def drop_arguments(self) -> None:
        for candidate, change in _fewer_arguments(self.best["code"]):
            self.attempt(dict(self.best, code=candidate), f"arguments: {change}")

    def reduce(self) -> None:
        try:
            if not self.choose():
                return
            for step in (self.fewer_outputs, self.minify, self.drop_statements, self.shrink_inputs,
                         self.drop_arguments):
                step()
        except _OutOfTime:
            if self.best is not None:
                self.steps.append("stopped at the time limit")
                self.keep(self.best, "")


def _graph_module(graph: dict[str, Any]) -> tuple[torch.fx.GraphModule, list[torch.Tensor]] | None:
    """Dynamo's own graph of the rebuilt code, and fresh inputs for it: what the minifier cuts."""
    if not all(isinstance(spec, dict) for spec in graph["inputs"]):
        return None  # the minifier takes tensor inputs only
    forward = repro.build(graph["code"])
    tree = ast.parse(graph["code"]).body[0]
    taken: set[str] = set()
    names = [plain.parameter_name(arg.arg, taken) for arg in tree.args.args[1:]]
    namespace = {"forward": forward}
    exec(f"def program({', '.join(names)}):\n    return forward(None, {', '.join(names)})\n", namespace)
    captured = []

    def keep(gm, example_inputs):
        captured.append(gm)
        return gm.forward

    def fresh() -> list[Any]:
        return [repro.make_input(spec, torch.Generator().manual_seed(0)) for spec in graph["inputs"]]

    compat.reset_dynamo()
    try:
        torch.compile(namespace["program"], backend=keep, fullgraph=True)(*fresh())
    except Exception:
        return None
    placeholders = [node for node in captured[0].graph.nodes if node.op == "placeholder"] if captured else []
    if len(captured) != 1 or len(placeholders) != len(names):
        return None  # Dynamo left an input out or split the graph: the names would not line up
    return captured[0], fresh()


def _inputs_step(before: list[Any], after: list[Any], changes: list[str]) -> str:
    """``inputs: sizes (5, 5), (5,) to (), (); requires_grad dropped, ...``."""
    shapes = [(tuple(old["shape"]), tuple(new["shape"])) for old, new in zip(before, after)
              if isinstance(old, dict) and old["shape"] != new["shape"]]
    sizes = (f"sizes {', '.join(str(old) for old, _ in shapes)} to {', '.join(str(new) for _, new in shapes)}; "
             if shapes else "")
    others = [change for change in dict.fromkeys(changes) if change not in ("smaller sizes", "a dimension of size 1 dropped")]
    return f"inputs: {sizes}{', '.join(others)}".rstrip("; ")


def _contiguous_stride(shape: list[int], order: list[int]) -> list[int]:
    """Strides laying ``shape`` out in ``order`` (outermost dim first), as the original was."""
    stride, step = [0] * len(shape), 1
    for dim in reversed(order):
        stride[dim] = step if shape[dim] != 0 else 1
        step *= max(shape[dim], 1)
    return stride


def _reshaped(spec: dict[str, Any], shape: list[int], keep_dims: list[int]) -> dict[str, Any]:
    stride = [spec["stride"][dim] for dim in keep_dims]
    order = sorted(range(len(shape)), key=lambda dim: -stride[dim])
    expanded = [dim for dim in range(len(shape)) if stride[dim] == 0 and shape[dim] > 1]
    new_stride = _contiguous_stride(shape, order)
    for dim in expanded:
        new_stride[dim] = 0
    changed = dict(spec, shape=shape, stride=new_stride)
    values = changed.pop("values", None)
    if values is not None and "range" not in changed:
        bounds = plain.bounds(values)
        if bounds is not None:
            changed["range"] = bounds
    return changed


def _smaller_inputs(spec: Any, signature: str):
    """(what changed, the simpler spec) for one input, simplest first."""
    if not isinstance(spec, dict):
        return
    if spec.get("view"):
        yield "a tensor of its own, not a view", dict(spec, view=False)
    if spec.get("requires_grad") and problems.kind(signature) != "requires_grad" \
            and not problems.needs_backward(signature):
        yield "requires_grad dropped", dict(spec, requires_grad=False)
    shape = list(spec["shape"])
    for dim in range(len(shape)):
        if shape[dim] == 1:
            keep = [each for each in range(len(shape)) if each != dim]
            yield "a dimension of size 1 dropped", _reshaped(spec, [shape[each] for each in keep], keep)
    for dim in range(len(shape)):
        for size in sorted({1, 2, shape[dim] // 2} - {0}):
            if size < shape[dim]:
                smaller = list(shape)
                smaller[dim] = size
                yield "smaller sizes", _reshaped(spec, smaller, list(range(len(shape))))
    contiguous = _contiguous_stride(shape, list(range(len(shape))))
    if list(spec["stride"]) != contiguous:
        yield "a contiguous layout", dict(spec, stride=contiguous)
    if spec.get("literal"):
        yield "values drawn from their range", {key: value for key, value in spec.items() if key != "literal"}
    if "values" in spec or spec.get("range") not in (None, [0, 1]):
        if spec["dtype"].removeprefix("torch.").startswith(("float", "bfloat")):
            simple = {key: value for key, value in spec.items() if key != "values"}
            yield "values drawn from [0, 1)", dict(simple, range=[0, 1])


def _read(statements: list[ast.stmt]) -> set[str]:
    """The names ``statements`` read."""
    return {node.id for statement in statements for node in ast.walk(statement)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


def _output_count(code: str) -> int:
    returned = [node for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Return)]
    return len(returned[-1].value.elts) if returned and isinstance(returned[-1].value, ast.Tuple) else 1


def _writes(value: ast.expr) -> bool:
    """Whether a statement's value may change something: it writes into an argument, or a
    private call (torch._C._set_grad_enabled) changes a mode; kept though nothing reads it."""
    return any(plain.writes_into(node) or isinstance(node, ast.Call) and plain.call_name(node).startswith("_")
               for node in ast.walk(value))


def _with_outputs(graph: dict[str, Any], keep: list[int]) -> dict[str, Any] | None:
    """The graph returning only its outputs ``keep``, without what only the others needed
    (statements and inputs)."""
    tree = ast.parse(graph["code"])
    forward = tree.body[0]
    returned = forward.body[-1]
    if not (isinstance(returned, ast.Return) and isinstance(returned.value, ast.Tuple)):
        return None
    returned.value.elts = [returned.value.elts[index] for index in keep]
    changed = True
    while changed:  # what nothing reads any more, and what only that read
        changed = False
        for index in reversed(range(len(forward.body) - 1)):
            statement = forward.body[index]
            if not (isinstance(statement, ast.Assign) and all(isinstance(t, ast.Name) for t in statement.targets)):
                continue
            if isinstance(statement.value, ast.Constant) or _writes(statement.value):
                continue  # FX's releases (x = None) stay: they read nothing
            if not {target.id for target in statement.targets} & _read(forward.body[index + 1:]):
                del forward.body[index]
                changed = True
    parameters = [arg.arg for arg in forward.args.args[1:]]
    aliases = {index: statement for index, statement in enumerate(forward.body)  # Dynamo's l_x_ = L_x_
               if isinstance(statement, ast.Assign) and len(statement.targets) == 1
               and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Name)
               and statement.value.id in parameters}
    read = _read([statement for index, statement in enumerate(forward.body) if index not in aliases])
    names = {name: {name} | {alias.targets[0].id for alias in aliases.values() if alias.value.id == name}
             for name in parameters}
    used = [index for index, name in enumerate(parameters) if names[name] & read]
    forward.args.args = forward.args.args[:1] + [forward.args.args[1 + index] for index in used]
    forward.body = [statement for index, statement in enumerate(forward.body)
                    if index not in aliases or aliases[index].value.id in {parameters[each] for each in used}]
    inputs = [graph["inputs"][index] for index in used]
    return dict(graph, code=ast.unparse(tree) + "\n", inputs=inputs)


def _without_statement(code: str, index: int) -> str | None:
    """The code without its ``index``th statement where nothing reads what it computes (a
    runtime assertion Dynamo added, a comparison only that assertion read, an in-place call the
    problem may not need); None for any other statement."""
    tree = ast.parse(code)
    body = tree.body[0].body
    statement = body[index]
    if isinstance(statement, ast.Assign) and all(isinstance(target, ast.Name) for target in statement.targets):
        if {target.id for target in statement.targets} & _read(body[index + 1:]):
            return None
    elif not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return None
    del body[index]
    return ast.unparse(tree) + "\n"


def _fewer_arguments(code: str):
    """(the code with one argument of one call left to its default, what was dropped)."""
    tree = ast.parse(code)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    for number, call in enumerate(calls):
        for position in range(len(call.keywords)):
            changed = copy.deepcopy(tree)
            target = [node for node in ast.walk(changed) if isinstance(node, ast.Call)][number]
            dropped = target.keywords.pop(position)
            yield ast.unparse(changed) + "\n", f"{dropped.arg}= left to its default"
        if len(call.args) > 1 and isinstance(call.args[-1], ast.Constant):
            changed = copy.deepcopy(tree)
            target = [node for node in ast.walk(changed) if isinstance(node, ast.Call)][number]
            dropped = target.args.pop()
            yield ast.unparse(changed) + "\n", f"a trailing {dropped.value!r} left to its default"


def main(argv: list[str]) -> int:
    requests_path, results_path = argv
    requests = json.loads(open(requests_path, encoding="utf-8").read())
    for name in filter(None, {module for request in requests for module in request.get("imports", [])}):
        __import__(name)  # the modules that register the backend, as the run imported them
    with open(results_path, "a", encoding="utf-8") as results:
        def emit(line: dict[str, Any]) -> None:
            results.write(json.dumps(line) + "\n")
            results.flush()

        for request in requests:
            emit({"id": request["id"], "started": True})
            Reduction(request, emit).reduce()
            emit({"id": request["id"], "done": True})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
