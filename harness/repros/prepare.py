"""Each problem's repro for its upstream issue (``--upstream-reports``): the plain form where a
graph shows the problem, reduced first; the run's generic file where none does.

For a run's problems with graphs (their generic files, harness.repros.generic, hold them):

1. ``python -m harness.repros.reduce`` picks the graph whose plain script shows the problem and
   reduces it, a process of its own per problem, its results read back line by line (a backend
   that crashes or hangs it loses nothing kept before);
2. the reduced graph is written as ``repros/<id>.plain.py`` with a title naming its calls,
   its inputs and what it printed, and run as a maintainer would: alone, in an empty
   directory, ``python repro.py``;
3. where it shows the problem (exit 1, the behaviour the problem names) it is the issue's
   repro; where it does not, or no graph reduced, the generic file is run as before and is
   the repro, marked as the fallback.

This module does not import torch: the reducer and the scripts run in processes of their own.
"""

from __future__ import annotations

import ast
import concurrent.futures
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

from harness.repros import generic, plain
from harness.report import problems
from harness.report.formats import upstream
from harness.report.problems import Problem
from harness.settings import IMPORTS

STARTUP_S = 120  # the reducer's own start (torch and the backend imported) on a loaded machine
GRACE_S = 180  # beyond a problem's seconds: choosing its graph, a slow backend's compiles (a minute each)
WORKERS = 2  # reducer processes at once: this machine's two cores
PLAIN_SUFFIX = ".plain.py"


def settings(path: Path) -> dict[str, Any]:
    """The generic file's settings (GRAPHS, BACKEND, COMPILE_OPTIONS, ENVIRONMENT...)."""
    found = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id.isupper():
            try:
                found[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return found


def _plainable(recorded: dict[str, Any] | None) -> bool:
    """Whether a generic file holds graphs the plain form can take (and the backend's spec)."""
    graphs = (recorded or {}).get("GRAPHS") or []
    return bool(graphs) and "BACKEND" in recorded and all(isinstance(graph, dict) and {"code", "inputs"} <= graph.keys()
                                                          for graph in graphs)


def _imports(recorded: dict[str, Any]) -> list[str]:
    """The modules the run imported to register its backend (DYNAMO_SUITE_IMPORTS)."""
    return [name.strip() for name in recorded.get("ENVIRONMENT", {}).get(IMPORTS, "").split(",") if name.strip()]


def _request(problem: Problem, recorded: dict[str, Any], seconds: float) -> dict[str, Any]:
    return {"id": problem.id, "graphs": recorded["GRAPHS"], "backend": recorded["BACKEND"],
            "imports": _imports(recorded),
            "compile_options": recorded.get("COMPILE_OPTIONS") or {}, "outcome": problem.outcome,
            "signature": problem.signature, "seconds": seconds}


def reduce_all(requests: list[dict[str, Any]], log: Callable[[str], None]) -> dict[str, dict[str, Any]]:
    """problem id -> the reducer's last line for it (its smallest graph that shows the problem).

    One reducer process per problem, two at a time: what one problem's scripts leave in a
    backend's runtime (IREE's, measured: a graph that shows its problem in a fresh process
    showed nothing after twenty other problems) must not decide another's reduction."""
    best: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="dynamo-suite-reduce-") as directory:
        def one(index_and_request: tuple[int, dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
            index, request = index_and_request
            requests_path = Path(directory) / f"request-{index}.json"
            results_path = Path(directory) / f"results-{index}.jsonl"
            requests_path.write_text(json.dumps([request]), encoding="utf-8")
            results_path.write_text("", encoding="utf-8")
            command = [sys.executable, "-m", "harness.repros.reduce", str(requests_path), str(results_path)]
            return request, _watched(command, results_path, STARTUP_S + request["seconds"] + GRACE_S)

        with concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS) as pool:
            for request, lines in pool.map(one, enumerate(requests)):
                kept = [line for line in lines if line.get("graph") is not None]
                if kept:
                    best[request["id"]] = kept[-1]
                if not any(line.get("done") for line in lines):
                    log(f"{request['id']}: the reducer ended during it (a crash or a hang of the backend); its "
                        "smallest repro so far is kept")
    return best


def _watched(command: list[str], results_path: Path, allowed: float) -> list[dict[str, Any]]:
    """Run one problem's reducer, stopped past its seconds, the start and a compile's grace (a
    hang: choosing the graph is not bounded by the seconds, the process is); its lines."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        process.wait(timeout=allowed)
    except subprocess.TimeoutExpired:
        process.kill()
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
    return _lines(results_path)


def _lines(path: Path) -> list[dict[str, Any]]:
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            found.append(json.loads(line))
        except ValueError:
            break  # the line being written when it was read
    return found


def described_inputs(specs: list[Any]) -> str:
    """``float32 (4, 5, 5) and a 0-d float64``: the tensor inputs as a title names them."""
    parts = []
    for spec in specs:
        if not isinstance(spec, dict):
            continue
        dtype = spec["dtype"].removeprefix("torch.")
        shape = tuple(spec["shape"])
        text = f"a 0-d {dtype}" if not shape else f"{dtype} {shape}" if len(shape) > 1 else f"{dtype} ({shape[0]},)"
        if any(size > 1 and step == 0 for size, step in zip(shape, spec["stride"])):
            text += " expanded"
        elif not plain.contiguous(list(shape), list(spec["stride"])):
            text += " strided"
        if spec.get("view"):
            text += " view"
        parts.append(text)
    if len(parts) > 3:
        return f"{len(parts)} tensors"
    return " and ".join(parts) if len(parts) < 3 else f"{parts[0]}, {parts[1]} and {parts[2]}"


def title(graph: dict[str, Any], output: str, backend: str) -> str:
    """``pow of float32 (4, 5, 5) and a 0-d float64: AssertionError: Please convert all Tensors to
    FakeTensors first (torch.compile, backend="turbine_cpu")``."""
    names = list(dict.fromkeys(plain.operations(graph["code"])))
    inputs = described_inputs(graph["inputs"])
    if names:
        what = ", ".join(names[:3]) + (f" and {len(names) - 3} more ops" if len(names) > 3 else "")
        what += f" of {inputs}" if inputs else ""
    else:
        what = f"a graph returning its input{f' ({inputs})' if inputs else ''}"
    text = f"{what}: {upstream.said(output)}"
    if len(text) > 130:
        text = text[:129].rstrip() + "…"
    return f'{text} (torch.compile, backend="{backend}")'


def run_alone(text: str, time_limit: float, args: tuple[str, ...] = (),
              environment: dict[str, str] | None = None) -> generic.Checked:
    """``python repro.py`` as a maintainer runs it: the script alone in an empty directory."""
    with tempfile.TemporaryDirectory(prefix="dynamo-suite-repro-") as directory:
        path = Path(directory) / "repro.py"
        path.write_text(text, encoding="utf-8")
        return generic.check(path, time_limit, args, environment)


def backend_environment(spec: str) -> dict[str, str] | None:
    """Where the backend is a file (``mine.py:compiler``), its directory on PYTHONPATH: the
    script imports it by its name, as its maintainer has it installed; None for a package."""
    module = spec.split(":", 1)[0]
    if not module.endswith(".py"):
        return None
    found = os.environ.get("PYTHONPATH")
    directory = os.path.dirname(os.path.abspath(module))
    return {**os.environ, "PYTHONPATH": directory + (os.pathsep + found if found else "")}


def refresh(path: Path, problem: Problem, run: dict[str, Any]) -> None:
    """Write the generic file again as this version writes it (from the graphs and the test it
    was made from): a run of an earlier version may have written the machine's paths into it."""
    recorded = settings(path)
    module, family, method = recorded.get("SCENARIO") or ["", "", ""]
    test = next((test for test in problem.tests if test.id.startswith(f"{module}.{family}_")
                 and test.id.endswith(f".{method}")), problem.representative)
    generic.write_atomic(path, generic.render(problem, test, recorded.get("GRAPHS") or [], run))


def refresh_all(directory: Path, found: list[Problem], run: dict[str, Any]) -> None:
    """Each problem's generic file an earlier version wrote (with the machine's paths), again."""
    for problem in found:
        path = directory / "repros" / f"{problem.id}.py"
        if path.exists() and "SEARCH_PATH" in settings(path):
            refresh(path, problem, run)


def prepare(directory: Path, found: list[Problem], run: dict[str, Any], time_limit: float, seconds: float,
            log: Callable[[str], None]) -> dict[str, generic.Checked]:
    """problem id -> its issue's repro, run: plain where a reduced graph shows it, else generic."""
    recorded = {problem.id: settings(directory / "repros" / f"{problem.id}.py") for problem in found
                if (directory / "repros" / f"{problem.id}.py").exists()}
    candidates = [problem for problem in found if problem.outcome in ("FAIL", "ERROR") and _plainable(recorded.get(problem.id))]
    reduced = reduce_all([_request(problem, recorded[problem.id], seconds) for problem in candidates], log) \
        if candidates and seconds >= 0 else {}
    prepared: dict[str, generic.Checked] = {}

    def one(problem: Problem) -> tuple[str, generic.Checked | None]:
        generic_path = directory / "repros" / f"{problem.id}.py"
        if not generic_path.exists():
            return problem.id, None
        line = reduced.get(problem.id)
        environment = backend_environment(recorded[problem.id].get("BACKEND", ""))
        why = ("no graph of it shows the problem alone" if problem in candidates else
               "the problem is not in a graph the backend received")
        if line is not None:
            plain_form = _plain(problem, line, recorded[problem.id], directory, time_limit, environment)
            if plain_form is not None:
                return problem.id, plain_form
            why = "its reduced plain script did not show it when run alone"
        checked = dataclasses.replace(generic.check(generic_path, time_limit, (), environment), reduction=why)
        if checked.shows and checked.standalone:  # its graphs showed it: PyTorch's reference must not show it too
            checked.control = generic.check(generic_path, time_limit, ("--backend", plain.REFERENCE),
                                            environment).exit_code
        return problem.id, checked

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:  # each check is a process of its own
        for problem_id, result in pool.map(one, found):
            if result is not None:
                prepared[problem_id] = result
                log(f"{problem_id}: {result.form} repro, exit {result.exit_code} in {result.seconds:g} s")
    return prepared


def render_for(problem: Problem, graph: dict[str, Any], recorded: dict[str, Any], heading: str,
               backward: bool = False) -> str | None:
    return plain.render(graph, recorded["BACKEND"], heading, imports=_imports(recorded), kind=problems.kind(problem.signature),
                        backward=backward or problems.needs_backward(problem.signature),
                        compile_options=recorded.get("COMPILE_OPTIONS") or {})


def _plain(problem: Problem, line: dict[str, Any], recorded: dict[str, Any], directory: Path,
           time_limit: float, environment: dict[str, str] | None) -> generic.Checked | None:
    graph, backward = line["graph"], line.get("backward", False)
    text = render_for(problem, graph, recorded, "repro", backward)
    if text is None:
        return None
    checked = run_alone(text, time_limit, (), environment)
    if not (checked.shows and problems.shown_by(problem.outcome, problem.signature, checked.output)):
        return None
    control = run_alone(text, time_limit, ("--backend", plain.REFERENCE), environment).exit_code
    if control != 0:
        return None  # PyTorch's reference path disagrees too, alone: not the backend's problem
    heading = title(graph, checked.output, recorded["BACKEND"])
    text = render_for(problem, graph, recorded, heading, backward)
    path = directory / "repros" / f"{problem.id}{PLAIN_SUFFIX}"
    generic.write_atomic(path, text)
    steps = "; ".join(line.get("steps", []))
    reduction = f"reduced in {line.get('seconds', 0):g} s, {line.get('tried', 0)} scripts tried: {steps}"
    return generic.Checked(str(path), text, True, checked.exit_code, checked.output, checked.seconds, form="plain",
                           title=heading, reduction=reduction, control=control)


def clean(directory: Path) -> None:
    """Plain repros of an earlier time: written again by this one."""
    for stale in (directory / "repros").glob(f"*{PLAIN_SUFFIX}"):
        stale.unlink()
    shutil.rmtree(directory / "repros" / "__pycache__", ignore_errors=True)
