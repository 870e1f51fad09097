"""Standalone repro of a dynamo-aot-suite problem: openxla-fail-output-values-differ-from-eager-cf8851

FAIL on backend openxla, 5 test(s); made from test.dynamo.test_real_data.RealDataTests_openxla.test_tied_values_and_repeated_indices_0_special
  AssertionError: output[0]: values differ from eager

Written by dynamo-aot-suite 0.5.0 with torch 2.9.1+cu128.

    python openxla-fail-output-values-differ-from-eager-cf8851.py                      # exit 1: the problem shows; 0: it does not
    python openxla-fail-output-values-differ-from-eager-cf8851.py --backend aot_eager  # the same against another backend
"""

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

PROBLEM = 'openxla-fail-output-values-differ-from-eager-cf8851'
BACKEND = 'openxla'
SUITE = '0.5.0'
PROJECT_DIRS = []
SCENARIO = ['test.dynamo.test_real_data', 'RealDataTests', 'test_tied_values_and_repeated_indices_0_special']
ENVIRONMENT = {'DYNAMO_SUITE_IMPORTS': 'torch_xla', 'DYNAMO_SUITE_DEVICE': 'xla', 'DYNAMO_SUITE_TIER': 'smoke'}
CLASS_SUFFIX = ''
COMPILE_OPTIONS = {}
TIME_LIMIT = 32.5
GRAPHS = [{'code': 'def forward(self, L_logits_ : torch.Tensor, L_base_ : torch.Tensor, L_index_ : torch.Tensor, L_src_ : torch.Tensor):\n    l_logits_ = L_logits_\n    l_base_ = L_base_\n    l_index_ = L_index_\n    l_src_ = L_src_\n    max_1 = l_logits_.max(-1)\n    maximum = max_1[0]\n    where_max = max_1[1];  max_1 = None\n    min_1 = l_logits_.min(0)\n    minimum = min_1[0]\n    where_min = min_1[1];  min_1 = None\n    argmax = l_logits_.argmax(-1)\n    argmin = l_logits_.argmin(0)\n    argmax_1 = l_logits_.argmax();  l_logits_ = None\n    index_add = l_base_.index_add(0, l_index_, l_src_)\n    index_put = l_base_.index_put((l_index_,), l_src_, accumulate = True)\n    unsqueeze = l_index_.unsqueeze(1);  l_index_ = None\n    expand = unsqueeze.expand(-1, 10);  unsqueeze = None\n    scatter_add = l_base_.scatter_add(0, expand, l_src_);  l_base_ = expand = l_src_ = None\n    return (argmax, argmin, maximum, where_max, minimum, where_min, argmax_1, index_add, index_put, scatter_add)\n', 'inputs': [{'shape': [6, 10], 'stride': [10, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': False, 'view': False, 'values': [[-1.0, -1.0, 1.0, 0.0, -0.0, -0.0, 1.0, 1.0, 1.0, -1.0], [-1.0, -0.0, 1.0, 0.0, 1.0, -1.0, -1.0, 1.0, 1.0, 0.0], [-0.0, 0.0, -1.0, -1.0, -1.0, -0.0, 0.0, -1.0, -1.0, 0.0], [1.0, -1.0, -1.0, 1.0, -1.0, 0.0, -0.0, 0.0, -0.0, 1.0], [-1.0, -0.0, -0.0, -0.0, -0.0, -1.0, -1.0, -1.0, 0.0, 1.0], [-1.0, -1.0, 1.0, 1.0, 0.0, -0.0, 1.0, -1.0, 0.0, 0.0]]}, {'shape': [6, 10], 'stride': [10, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': False, 'view': False, 'values': [[-0.4725304841995239, 0.0565662607550621, 2.888023853302002, 0.33838868141174316, 0.957909882068634, 0.7442041635513306, 1.7062057256698608, 2.054304361343384, -0.043586090207099915, 2.054619073867798], [-1.0512841939926147, -0.17655950784683228, 2.041710138320923, 0.38334646821022034, -0.985100269317627, 0.09433980286121368, 0.9466608762741089, 0.11286333203315735, -0.457395076751709, 0.3187354803085327], [0.5631714463233948, 0.3908757269382477, 0.13317809998989105, -1.2620974779129028, -0.12976394593715668, 0.14373338222503662, -0.8271573781967163, -1.384139060974121, -0.11106227338314056, -2.5003573894500732], [0.7456110119819641, 0.9932300448417664, -0.23454469442367554, 0.9192678332328796, 1.4907026290893555, -1.1561914682388306, -0.7178453803062439, -1.197969675064087, -0.1883402168750763, -0.6099038124084473], [0.6857280731201172, 2.23447322845459, 0.7106459140777588, 0.2009371519088745, 0.8746572732925415, -0.5442549586296082, -1.6756893396377563, 1.3683236837387085, -0.7412721514701843, 1.02011239528656], [-2.048922061920166, 0.39455363154411316, -0.7828741073608398, -0.6800413727760315, -2.6385269165039062, 0.44510418176651, 0.3295459747314453, -1.1529810428619385, 0.15554720163345337, 1.725200891494751]]}, {'shape': [6], 'stride': [1], 'dtype': 'torch.int64', 'device': 'xla', 'requires_grad': False, 'view': False, 'values': [1, 4, 1, 1, 0, 4]}, {'shape': [6, 10], 'stride': [10, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': False, 'view': False, 'values': [[2.5163769721984863, -0.39537790417671204, -0.48499375581741333, 0.056269269436597824, -0.831758439540863, 0.06182428449392319, -1.362300992012024, 0.1628514975309372, 1.215903878211975, 0.8173545002937317], [-1.1939290761947632, -0.45648714900016785, 0.31580039858818054, -0.26916640996932983, -0.23234209418296814, -0.21422849595546722, -1.1799458265304565, 1.3109720945358276, 1.1728296279907227, -1.0167536735534668], [0.15852931141853333, -1.5506107807159424, -0.4248065650463104, 0.9024323225021362, -1.1431190967559814, -1.2291179895401, -0.42230239510536194, 0.18806667625904083, -0.2577018439769745, 0.11093589663505554], [-1.1950716972351074, 0.40476128458976746, 0.10404089838266373, 0.5248517394065857, 1.6711962223052979, 0.0623118057847023, 1.4351449012756348, -0.5439040660858154, 0.05731001868844032, -0.7790396809577942], [-0.573300302028656, -1.0677577257156372, -0.1446443796157837, -0.43637049198150635, 1.6991081237792969, -0.13180990517139435, 0.06975705176591873, -0.8173942565917969, -1.852964162826538, -0.9846982955932617], [-0.11305955797433853, 1.033903956413269, -0.09321007132530212, 0.04457828029990196, 0.25739601254463196, -1.3096098899841309, 1.4576740264892578, 0.6983266472816467, -1.3206051588058472, 0.3699370324611664]]}]}]
CANNOT_CHECK = 3  # exit code where the check could not run: 1 would say the problem shows


GLOBALS = {"torch": torch, "operator": operator, "math": math, "builtins": builtins, "inf": math.inf,
           "nan": math.nan, "device": torch.device}


def make_input(spec: Any, generator: torch.Generator) -> Any:
    """The input a spec describes (the repro file carries a copy of this function)."""
    if not isinstance(spec, dict):
        return spec
    dtype = getattr(torch, spec["dtype"].removeprefix("torch."))
    broadcast = [dim for dim, (size, step) in enumerate(zip(spec["shape"], spec["stride"])) if size > 1 and not step]
    if broadcast:  # an expanded tensor: make one slice, then expand it as the original was
        shape = [1 if dim in broadcast else size for dim, size in enumerate(spec["shape"])]
        base = dict(spec, shape=shape, requires_grad=False)
        if "values" in spec:
            values = torch.tensor(spec["values"], dtype=dtype).reshape(spec["shape"])
            base["values"] = values[tuple(slice(0, 1) if dim in broadcast else slice(None)
                                          for dim in range(len(shape)))].tolist()
        return make_input(base, generator).expand(spec["shape"]).requires_grad_(spec["requires_grad"])
    if "values" in spec:
        dense = torch.tensor(spec["values"], dtype=dtype).reshape(spec["shape"])
    else:
        low, high = spec.get("range", [0, 1])
        if dtype.is_floating_point or dtype.is_complex:
            dense = torch.rand(spec["shape"], generator=generator, dtype=torch.float64) * (high - low) + low
        else:
            dense = torch.randint(int(low), int(high) + 1, spec["shape"], generator=generator)
        dense = dense.to(dtype)
    if spec.get("view", True):  # over a flat tensor of its own (a record with no "view": as it always was)
        storage = 1 + sum((size - 1) * step for size, step in zip(spec["shape"], spec["stride"]))
        flat = torch.zeros(storage if dense.numel() else 0, dtype=dtype, device=spec["device"])
        tensor = flat.as_strided(spec["shape"], spec["stride"])
    else:
        tensor = torch.empty_strided(spec["shape"], spec["stride"], dtype=dtype, device=spec["device"])
    tensor.copy_(dense.to(spec["device"]))
    return tensor.requires_grad_(spec["requires_grad"])


def build(code: str) -> types.FunctionType:
    namespace = dict(GLOBALS)
    exec(compile(code, "<graph>", "exec"), namespace)
    return namespace["forward"]


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
    if where.endswith(".py"):
        path = where if os.path.isabs(where) else os.path.join(os.getcwd(), where)
        loaded = importlib.util.spec_from_file_location("repro_backend", path)
        module = importlib.util.module_from_spec(loaded)
        loaded.loader.exec_module(module)
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
