"""Standalone repro of a dynamo-aot-suite problem: max_backend-error-the-aten-function-is-not-supported-by-the-600332

ERROR on backend max_backend, 1 test(s); made from test.dynamo.test_backend_contract.CallIndependenceTests_max_backend.test_identical_calls_agree_bit_for_bit_under_deterministic_algorithms
  the backend's compiler raised MaxCompilerError: The aten function is not supported by the Max backend yet. Failing at node 7 when executing function torch._ops.aten.aten::var.correction of type <class 'torch._ops.OpOverload'> . inputs of node were: args=[TensorValue(dtype=float32, shape=[Dim(6), Dim(8)], device=cpu:0), [0]], kwargs={'correction': 1}. You can open an issue at https://github.com/ga…

Written by dynamo-aot-suite with torch 2.13.0+cpu.

    python max_backend-error-the-aten-function-is-not-supported-by-the-600332.py                      # exit 1: the problem shows; 0: it does not
    python max_backend-error-the-aten-function-is-not-supported-by-the-600332.py --backend aot_eager  # the same against another backend
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

import torch

PROBLEM = 'max_backend-error-the-aten-function-is-not-supported-by-the-600332'
BACKEND = 'torch_max_backend:max_backend'
SEARCH_PATH = ['/work/boards/empty/max', '/work/boards/venv-max/lib/python3.11/site-packages/harness/_bundled']
SCENARIO = ['test.dynamo.test_backend_contract', 'CallIndependenceTests', 'test_identical_calls_agree_bit_for_bit_under_deterministic_algorithms']
ENVIRONMENT = {}
CLASS_SUFFIX = ''
COMPILE_OPTIONS = {}
TIME_LIMIT = 173.1
GRAPHS = [{'code': 'def forward(self, L_x_ : torch.Tensor, L_w_ : torch.Tensor, L_index_ : torch.Tensor, L_long_ : torch.Tensor):\n    l_x_ = L_x_\n    l_w_ = L_w_\n    l_index_ = L_index_\n    l_long_ = L_long_\n    matmul = l_x_ @ l_w_;  l_w_ = None\n    sum_1 = matmul.sum(0);  matmul = None\n    cumsum = l_x_.cumsum(1)\n    var = cumsum.var(0);  cumsum = None\n    zeros = torch.zeros(6, 8)\n    index_add = zeros.index_add(0, l_index_, l_x_);  zeros = l_index_ = l_x_ = None\n    sum_2 = l_long_.sum()\n    softmax = l_long_.softmax(-1);  l_long_ = None\n    amax = softmax.amax();  softmax = None\n    return (sum_1, var, index_add, sum_2, amax)\n', 'inputs': [{'shape': [6, 8], 'stride': [8, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': False, 'values': [[-1.1258398294448853, -1.152360200881958, -0.2505785822868347, -0.4338788092136383, 0.8487103581428528, 0.6920091509819031, -0.31601276993751526, -2.1152193546295166], [0.32227492332458496, -1.2633347511291504, 0.34998318552970886, 0.30813392996788025, 0.11984150856733322, 1.237657904624939, 1.1167771816253662, -0.2472781538963318], [-1.3526537418365479, -1.6959311962127686, 0.5666506290435791, 0.7935083508491516, 0.5988394618034363, -1.5550950765609741, -0.3413603901863098, 1.85300612449646], [0.750189483165741, -0.5854975581169128, -0.1733967512845993, 0.18347793817520142, 1.3893661499023438, 1.586334228515625, 0.946298360824585, -0.843676745891571], [-0.6135830879211426, 0.03159274160861969, -0.4926769733428955, 0.2484147548675537, 0.4396958351135254, 0.11241118609905243, 0.6407923698425293, 0.441156268119812], [-0.10230965167284012, 0.7924439907073975, -0.28966769576072693, 0.05250748619437218, 0.5228604674339294, 2.3022053241729736, -1.4688938856124878, -1.586688756942749]]}, {'shape': [8, 8], 'stride': [8, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': False, 'values': [[-0.6730899214744568, 0.8728312253952026, 1.0553574562072754, 0.17784371972084045, -0.23033547401428223, -0.3917543888092041, 0.5432947278022766, -0.3951575458049774], [-0.4462171792984009, 0.7440207004547119, 1.5209795236587524, 3.4105026721954346, -1.5311843156814575, -1.2341350317001343, 1.8197252750396729, -0.5515286922454834], [-0.5692480802536011, 0.9199714064598083, 1.1108161211013794, 1.2898740768432617, -1.4781739711761475, 2.567232847213745, -0.4731197953224182, 0.3355507552623749], [-1.6293259859085083, -0.54974365234375, -0.47983425855636597, -0.4996815323829651, -1.0669803619384766, 1.114939570426941, -0.14067143201828003, 0.8057535886764526], [-0.09334823489189148, 0.6870502233505249, -0.8383153676986694, 0.0008918217499740422, 0.8418940901756287, -0.4000341594219208, 1.0394619703292847, 0.3581531047821045], [-0.24600094556808472, 2.302516460418701, -1.881689190864563, -0.049727022647857666, -1.0449786186218262, -0.9565008282661438, 0.03353185951709747, 0.7100865840911865], [1.6458669900894165, -1.3601689338684082, 0.34456542134284973, 0.5198677182197571, -2.6133224964141846, -1.6964744329452515, -0.22824178636074066, 0.2799549996852875], [0.24692639708518982, 0.07688700407743454, 0.33800581097602844, 0.45440176129341125, 0.4569401443004608, -0.8653713464736938, 0.7813079357147217, -0.926789402961731]]}, {'shape': [6], 'stride': [1], 'dtype': 'torch.int64', 'device': 'cpu', 'requires_grad': False, 'values': [0, 2, 2, 5, 0, 2]}, {'shape': [5000], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': False, 'range': [-4.0937371253967285, 4.1014933586120605]}]}]


GLOBALS = {"torch": torch, "operator": operator, "math": math, "builtins": builtins, "inf": math.inf,
           "nan": math.nan}


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
    storage = 1 + sum((size - 1) * step for size, step in zip(spec["shape"], spec["stride"]))
    flat = torch.zeros(storage if dense.numel() else 0, dtype=dtype, device=spec["device"])
    tensor = flat.as_strided(spec["shape"], spec["stride"])
    tensor.copy_(dense.to(spec["device"]))
    return tensor.requires_grad_(spec["requires_grad"])


def build(code: str) -> types.FunctionType:
    namespace = dict(GLOBALS)
    exec(compile(code, "<graph>", "exec"), namespace)
    return namespace["forward"]


def resolve(spec):
    """A backend spec as run_tests.py takes it: a registered name, module:attr or file.py:attr."""
    if ":" not in spec:
        return spec
    where, attr = spec.rsplit(":", 1)
    if where.endswith(".py"):
        path = where if os.path.isabs(where) else os.path.join(SEARCH_PATH[0], where)
        loaded = importlib.util.spec_from_file_location("repro_backend", path)
        module = importlib.util.module_from_spec(loaded)
        loaded.loader.exec_module(module)
    else:
        sys.path[:0] = [entry for entry in SEARCH_PATH if entry not in sys.path]
        module = importlib.import_module(where)
    for part in attr.split("."):
        module = getattr(module, part)
    return module


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


def run_scenario(spec):
    """Run the suite's own scenario on ``spec`` in a subprocess; 0 if it passes."""
    module, family, method = SCENARIO
    env = dict(os.environ, DYNAMO_SUITE_BACKENDS=spec, **ENVIRONMENT)
    env["PYTHONPATH"] = os.pathsep.join(SEARCH_PATH + [env.get("PYTHONPATH", "")])
    name = subprocess.run([sys.executable, "-c", "import sys; from harness.axes.backends import resolve_backend; "
                           "print(resolve_backend(sys.argv[1]).name)", spec],
                          env=env, cwd=SEARCH_PATH[1], capture_output=True, text=True)
    if name.returncode != 0:
        print(name.stderr.strip().splitlines()[-1:])
        return 1
    test_class = f"{family}_{name.stdout.strip()}{CLASS_SUFFIX}"
    # Under pytest, as the run did: some behaviour (a backend's, a plugin's) depends on it.
    node = f"{module.replace('.', '/')}.py::{test_class}::{method}"
    has_pytest = subprocess.run([sys.executable, "-c", "import pytest"], capture_output=True).returncode == 0
    command = (["-m", "pytest", "-q", "-p", "no:cacheprovider", node] if has_pytest
               else ["-m", "unittest", f"{module}.{test_class}.{method}"])
    print(f"running the scenario: python {' '.join(command)}", flush=True)
    try:
        done = subprocess.run([sys.executable, *command], env=env, cwd=SEARCH_PATH[1], timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        print(f"still running after {TIME_LIMIT} s")
        return 1
    return 0 if done.returncode == 0 else 1


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
    print(f"the problem shows on {spec}" if code else f"the problem does not show on {spec}")
    return code


if __name__ == "__main__":
    sys.exit(main())
