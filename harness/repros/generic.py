"""A standalone repro file per problem: ``<report-dir>/repros/<problem id>.py``.

What a backend author hands the compiler team. The file needs torch and the backend (by
the spec the run used), nothing of the suite, as long as the problem shows on a graph:

* **graph mode**: it holds the graphs the backend received in the problem's simplest test
  (Dynamo's FX code) and their inputs (shape, stride, dtype, requires_grad, values from a
  seed); it compiles each with ``torch.compile(..., backend=...)``, runs it beside eager,
  and prints every difference: a compile or run error, outputs (values, dtype, shape,
  requires_grad), inputs after the call, gradients.
* **scenario mode**, where the failing check is not a graph comparison (guards,
  recompiles, global state, a crash, a hang) or the graphs alone agree with eager: it runs
  the suite's scenario itself in a subprocess (where the installed suite is found when it
  runs: the file names no path of the machine that wrote it) and reports how it ended.

It exits 1 while the problem shows, 0 once it does not, and 3 where it cannot run its check
(the suite is not installed for a scenario, an import fails): never 1 for that, which would
blame the backend, or PyTorch's reference path under ``--backend aot_eager``. This is the
fallback form; ``harness.repros.plain`` writes the short one where a graph shows the problem. The functions that rebuild graphs and inputs are copied from
``harness/measure/repro.py`` (read as text: this package does not import torch).
"""

from __future__ import annotations

import ast
import io
import os
import re
import subprocess
import sys
import time
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.axes import compile_options, registry
from harness.project import extensions
from harness.report.formats import upstream
from harness.report.problems import Problem
from harness.report.results import RunResults, TestResult, write_atomic
from harness.settings import SCENARIOS

_LIBRARY = Path(__file__).resolve().parents[1] / "measure" / "repro.py"
_COPIED = ("GLOBALS", "make_input", "build")


def _copied_source() -> str:
    """harness/measure/repro.py's functions that the repro file needs, as source text."""
    text = _LIBRARY.read_text(encoding="utf-8")
    tree = ast.parse(text)
    parts = []
    for node in tree.body:
        names = [node.name] if isinstance(node, ast.FunctionDef) else [
            target.id for target in getattr(node, "targets", []) if isinstance(target, ast.Name)]
        if any(name in _COPIED for name in names):
            parts.append(ast.get_source_segment(text, node))
    return "\n\n\n".join(parts)


def _graphs(capture_dir: Path | None, test: TestResult) -> list[Any]:
    if capture_dir is None:
        return []
    path = capture_dir / f"{test.id}.graphs"
    try:
        return ast.literal_eval(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, SyntaxError):
        return []


def _subject(problem: Problem, capture_dir: Path | None) -> tuple[TestResult, list[Any]]:
    """The test the repro is made from: the simplest whose graphs were saved, if the
    problem is one a graph can show; else the problem's simplest."""
    if problem.outcome in ("FAIL", "ERROR"):
        for test in sorted(problem.tests, key=lambda test: test is not problem.representative):
            graphs = _graphs(capture_dir, test)
            if graphs:
                return test, graphs
    return problem.representative, []


def _in_docstring(text: str) -> str:
    """``text`` as it reads inside the repro's docstring: a backslash (a Windows path, a
    regex) or three quotes in a failure's reason would end it or break the file."""
    return text.replace("\\", "\\\\").replace('"""', '\\"""')


def _relative_dirs(run: dict[str, Any]) -> list[str]:
    where = Path(run.get("cwd") or os.getcwd())
    found = []
    for directory in extensions.import_dirs(run.get("environment", {}).get(SCENARIOS, "")):
        try:
            found.append(Path(directory).resolve().relative_to(where.resolve()).as_posix() or ".")
        except ValueError:
            continue  # outside the project's directory: a path of that machine only
    return found


def without_comments(code: str) -> str:
    """Python source without its comments (FX's ``# File: /path/to/test.py:12 in f``)."""
    try:
        tokens = [token for token in tokenize.generate_tokens(io.StringIO(code).readline)
                  if token.type != tokenize.COMMENT]
        return tokenize.untokenize(tokens)
    except (tokenize.TokenError, SyntaxError):
        return code


def render(problem: Problem, test: TestResult, graphs: list[Any], run: dict[str, Any]) -> str:
    module, family_backend, method = test.id.rsplit(".", 2)
    family = test.scenario.split(".")[-2]
    settings = {
        "PROBLEM": problem.id,
        "BACKEND": test.backend_spec or test.backend,
        "SUITE": run.get("suite") or "",
        # A project's own scenario folders, relative to the directory it ran from (no machine path):
        # the repro runs such a scenario from that directory.
        "PROJECT_DIRS": _relative_dirs(run),
        "SCENARIO": [module, family, method],
        "ENVIRONMENT": {**run.get("environment", {}),
                        **{axis.env: test.axis(axis.name) for axis in registry.beside_backend()
                           if test.axis(axis.name) != axis.first}},
        # What the generated class's name has after the backend's (another backend's name may differ).
        "CLASS_SUFFIX": registry.class_suffix(test.axes),
        # The run's mode= and options=, which every compile of the graphs is given as the run's were.
        "COMPILE_OPTIONS": compile_options.handed_to_backend(run.get(registry.COMPILE_OPTIONS.record_key, "")),
        "TIME_LIMIT": test.time_limit_s or run.get("timeout_s") or 600,
        # FX's comments name the source files of the machine that wrote it: left out.
        "GRAPHS": [dict(graph, code=without_comments(graph["code"])) if isinstance(graph, dict) and "code" in graph
                   else graph for graph in graphs],
    }
    header = (f'"""Standalone repro of a dynamo-aot-suite problem: {problem.id}\n\n'
              f"{problem.outcome} on backend {problem.backend}, {len(problem.tests)} test(s); made from "
              f"{test.id}\n  {_in_docstring(upstream.scrubbed(test.reason))}\n\n"
              f"Written by dynamo-aot-suite {run.get('suite', '?')} with torch {run.get('torch', '?')}.\n\n"
              f"    python {problem.id}.py                      # exit 1: the problem shows; 0: it does not\n"
              f"    python {problem.id}.py --backend aot_eager  # the same against another backend\n"
              f'"""\n')
    assignments = "\n".join(f"{name} = {value!r}" for name, value in settings.items())
    return header + _TEMPLATE.replace("{settings}", assignments).replace("{copied}", _copied_source())


def write(results: RunResults, problems: list[Problem], report_dir: Path, capture_dir: Path | None) -> dict[str, str]:
    """Write one repro per problem; problem id -> path. Old repros are replaced."""
    directory = report_dir / "repros"
    directory.mkdir(parents=True, exist_ok=True)
    written = {}
    for problem in problems:
        test, graphs = _subject(problem, capture_dir)
        path = directory / f"{problem.id}.py"
        write_atomic(path, render(problem, test, graphs, results.run))
        written[problem.id] = str(path)
    for stale in directory.glob("*.py"):
        if str(stale) not in written.values():
            stale.unlink()
    return written


TRACEBACK = "Traceback (most recent call last)"
SCENARIO_FALLBACK = "running the scenario itself"  # main() below says so when the graphs agree
EXCEPTHOOK = "sys.excepthook = "  # in a repro that exits 3 for its own errors
CRASHED = 3  # the exit code a repro that raised is reported with: not 1, which means the problem shows


@dataclass
class Checked:
    """A repro file as run when a report was written: how it ended and what it printed."""

    path: str
    text: str
    standalone: bool  # its graphs are in it: torch and the backend are all it needs
    exit_code: int | None  # None: still running at the time limit
    output: str
    seconds: float
    form: str = "generic"  # or "plain": harness.repros.plain's script, reduced (harness.repros.prepare)
    title: str | None = None  # for a plain one: its calls, inputs and what it printed
    reduction: str = ""  # what reduction achieved, or why the generic form stayed
    control: int | None = None  # its exit code under --backend aot_eager (None: not run); 1 blames the reference

    @property
    def shows(self) -> bool:
        """The problem showed: the repro's exit code for it (main() below)."""
        return self.exit_code == 1


def check(path: Path, time_limit: float, args: tuple[str, ...] = (),
          environment: dict[str, str] | None = None) -> Checked:
    """Run the repro at ``path`` here (this interpreter, this environment, where the backend
    is installed), as ``python <its name>`` in its directory, and keep what it printed: its
    standard output, then its standard error (where ``sys.exit(message)`` writes)."""
    text = path.read_text(encoding="utf-8")
    has_graphs = not re.search(r"^GRAPHS = \[\]$", text, re.MULTILINE)  # else it runs the suite's scenario
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, path.name, *args], cwd=path.parent, capture_output=True, text=True,
                              timeout=time_limit, env=environment)
        code, output = done.returncode, done.stdout + "\n" + done.stderr[-4000:]
        # A file that does not turn its own errors into exit 3 (an earlier version's) exits 1 with a
        # traceback: not the problem. (A backend's message may hold a traceback: the hook tells them apart.)
        if code not in (0, 1) or (TRACEBACK in done.stderr and EXCEPTHOOK not in text):
            code = code if code not in (0, 1) else CRASHED
    except subprocess.TimeoutExpired as error:
        printed = error.stdout or ""  # bytes, whatever text= said
        code, output = None, printed.decode(errors="replace") if isinstance(printed, bytes) else printed
    # Standalone only where its graphs showed it: graphs that agree hand over to the scenario.
    standalone = has_graphs and SCENARIO_FALLBACK not in output
    return Checked(str(path), text, standalone, code, output.strip(), round(time.monotonic() - started, 1))


_TEMPLATE = r'''
from __future__ import annotations

import argparse
import builtins
import importlib
import importlib.util
import math
import operator
import os
import re
import subprocess
import sys
import types
from typing import Any

# An error of this script's own (an import, eager itself) exits CANNOT_CHECK, not 1.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), sys.stderr.flush(), os._exit(3))

import torch

{settings}
CANNOT_CHECK = 3  # exit code where the check could not run: 1 would say the problem shows


{copied}


def resolve(spec):
    """A backend spec as run_tests.py takes it: a registered name, module:attr or file.py:attr,
    ``attr()`` called (a compiler class: thunder.dynamo:ThunderCompiler()); first the modules the
    run imported (DYNAMO_SUITE_IMPORTS: they register a backend or a device, torch_xla's)."""
    for name in filter(None, ENVIRONMENT.get("DYNAMO_SUITE_IMPORTS", "").split(",")):
        importlib.import_module(name.strip())
    if ":" not in spec:
        return spec
    where, attr = spec.rsplit(":", 1)
    called = attr.endswith("()")
    attr = attr.removesuffix("()")
    path = where if os.path.isabs(where) else os.path.join(os.getcwd(), where)
    if where.endswith(".py") and os.path.isfile(path):
        loaded = importlib.util.spec_from_file_location("repro_backend", path)
        module = importlib.util.module_from_spec(loaded)
        loaded.loader.exec_module(module)
    elif where.endswith(".py"):  # not beside it: by its name, where Python finds it (installed, PYTHONPATH)
        module = importlib.import_module(os.path.basename(where).removesuffix(".py"))
    else:
        sys.path.insert(0, os.getcwd())
        module = importlib.import_module(where)
    for part in attr.split("."):
        module = getattr(module, part)
    return module() if called else module


def differences(name, expected, actual):
    """What tells ``actual`` (compiled) apart from ``expected`` (eager)."""
    if isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple)):
        if len(expected) != len(actual):
            return [f"{name}: {len(actual)} values, eager gives {len(expected)}"]
        return [line for index, pair in enumerate(zip(expected, actual))
                for line in differences(f"{name}[{index}]", *pair)]
    if not isinstance(expected, torch.Tensor) or not isinstance(actual, torch.Tensor):
        return [] if expected == actual else [f"{name}: {actual!r}, eager gives {expected!r}"]
    for attribute in ("shape", "dtype", "requires_grad"):
        if getattr(expected, attribute) != getattr(actual, attribute):
            return [f"{name}: {attribute} {getattr(actual, attribute)}, eager gives {getattr(expected, attribute)}"]
    try:
        torch.testing.assert_close(actual.detach(), expected.detach(), equal_nan=True)
    except AssertionError as error:
        detail = " ".join(line.strip() for line in str(error).splitlines()[1:3])
        return [f"{name}: values differ from eager ({detail}){first_difference(expected, actual)}"]
    return []


def first_difference(expected, actual):
    """Where the compiled value first differs from eager's, and both values there."""
    try:
        want, got = expected.detach().cpu(), actual.detach().cpu()
        common = torch.promote_types(want.dtype, got.dtype)
        apart = (~torch.isclose(got.to(common), want.to(common), equal_nan=True)).nonzero()
        if not len(apart):
            return ""
        index = tuple(apart[0].tolist())
        return f"; first at index {index}: compiled {got[index].item()!r}, eager {want[index].item()!r}"
    except Exception:  # a dtype isclose does not take: the summary above says enough
        return ""


def described(error):
    """The innermost error as its type and first line, and what it came through (Dynamo wraps
    a backend's own in BackendCompilerFailed)."""
    chain = []
    while error is not None and len(chain) < 4:
        chain.append(error)
        error = error.__cause__ or getattr(error, "inner_exception", None)
    lines = [line for line in str(chain[-1]).strip().splitlines() if line.strip()]
    through = ", ".join(type(outer).__name__ for outer in chain[:-1])
    return f"{type(chain[-1]).__name__}: {lines[0] if lines else ''}" + (f" (through {through})" if through else "")


def replay(graph, backend):
    forward = build(graph["code"])

    def program(*args):
        return forward(None, *args)

    eager_inputs = [make_input(spec, torch.Generator().manual_seed(0)) for spec in graph["inputs"]]
    compiled_inputs = [make_input(spec, torch.Generator().manual_seed(0)) for spec in graph["inputs"]]
    torch.manual_seed(0)  # random ops draw the same numbers in both
    expected = program(*eager_inputs)
    torch._dynamo.reset()
    try:
        torch.manual_seed(0)
        actual = torch.compile(program, backend=backend, fullgraph=True, **COMPILE_OPTIONS)(*compiled_inputs)
    except Exception as error:
        return [f"compiled call raised {described(error)}"]
    found = differences("output", expected, actual)
    found += differences("inputs after the call", eager_inputs, compiled_inputs)
    leaves = [index for index, value in enumerate(eager_inputs)
              if isinstance(value, torch.Tensor) and value.requires_grad and value.is_leaf]
    outputs = [(want, got) for want, got in zip(*(v if isinstance(v, (list, tuple)) else [v] for v in (expected, actual)))
               if isinstance(want, torch.Tensor) and want.requires_grad and want.dtype.is_floating_point]
    if leaves and outputs and not found:
        try:
            sum(want.sum() for want, _ in outputs).backward()
            sum(got.sum() for _, got in outputs).backward()
        except Exception as error:
            return [f"backward raised {described(error)}"]
        found += differences("gradients", [eager_inputs[i].grad for i in leaves],
                             [compiled_inputs[i].grad for i in leaves])
    return found


def suite_root():
    """Where the installed suite keeps its scenarios (None: it is not installed here)."""
    found = importlib.util.find_spec("harness")
    if found is None or not found.submodule_search_locations:
        return None
    package = os.path.dirname(os.path.abspath(found.origin))
    bundled = os.path.join(package, "_bundled")  # pip's install; a clone has test/ beside harness/
    return bundled if os.path.isdir(bundled) else os.path.dirname(package)


def run_scenario(spec):
    """Run the suite's own scenario on ``spec`` in a subprocess: 0 if it passes, 1 if it fails,
    CANNOT_CHECK if it could not run (the suite not installed, the test not found)."""
    module, family, method = SCENARIO
    root = suite_root()
    if root is None:
        print(f"the graphs cannot show this problem alone: `pip install dynamo-aot-suite=={SUITE}` runs "
              "the suite's scenario")
        return CANNOT_CHECK
    extra = [os.path.join(os.getcwd(), directory) for directory in PROJECT_DIRS]
    env = dict(os.environ, DYNAMO_SUITE_BACKENDS=spec, **ENVIRONMENT)
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), root, *extra, env.get("PYTHONPATH", "")])
    name = subprocess.run([sys.executable, "-c", "import sys; from harness.axes.backends import resolve_backend; "
                           "print(resolve_backend(sys.argv[1]).name)", spec],
                          env=env, cwd=root, capture_output=True, text=True)
    if name.returncode != 0:
        print(name.stderr.strip().splitlines()[-1:])
        return CANNOT_CHECK
    test_class = f"{family}_{name.stdout.strip()}{CLASS_SUFFIX}"
    # Under pytest, as the run did: some behaviour (a backend's, a plugin's) depends on it.
    relative = module.replace(".", "/") + ".py"
    where = next((directory for directory in [root, *extra] if os.path.isfile(os.path.join(directory, relative))), root)
    node = f"{os.path.join(where, relative)}::{test_class}::{method}"
    has_pytest = subprocess.run([sys.executable, "-c", "import pytest"], capture_output=True).returncode == 0
    # unittest's own exit code is 1 for a test that could not even load: this one says 3 then.
    loaded = ("import sys, unittest; test = unittest.defaultTestLoader.loadTestsFromName(sys.argv[1]); "
              "broken = unittest.defaultTestLoader.errors; result = unittest.TextTestRunner().run(test); "
              "sys.exit(3 if broken else int(not result.wasSuccessful()))")
    command = (["-m", "pytest", "-q", "-p", "no:cacheprovider", node] if has_pytest
               else ["-c", loaded, f"{module}.{test_class}.{method}"])
    print(f"running the suite's scenario: {module}.{test_class}.{method}", flush=True)
    try:
        done = subprocess.run([sys.executable, *command], env=env, cwd=root, timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        print(f"still running after {TIME_LIMIT} s")
        return 1
    # pytest: 1 tests failed; 2 and more, it could not collect or run them.
    return done.returncode if done.returncode in (0, 1) else CANNOT_CHECK


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default=BACKEND, help=f"backend spec (default: {BACKEND})")
    spec = parser.parse_args().backend
    if GRAPHS:
        backend = resolve(spec)
        found = [f"graph {index}: {line}" for index, graph in enumerate(GRAPHS) for line in replay(graph, backend)]
        if found:
            print(f"{len(found)} difference(s) from eager on {spec}:")
            print("\n".join(f"  {line}" for line in found))
            return 1
        print(f"the {len(GRAPHS)} graph(s) agree with eager on {spec}; running the scenario itself", flush=True)
    code = run_scenario(spec)
    print({0: f"the problem does not show on {spec}", 1: f"the problem shows on {spec}"}.get(
        code, "the check could not run: neither the problem nor its absence is shown"))
    return code


if __name__ == "__main__":
    sys.exit(main())
'''
