"""Standalone repro of a dynamo-aot-suite problem: openxla-fail-call-train-output-values-differ-from-eager-35d916

FAIL on backend openxla, 1 test(s); made from test.dynamo.test_training_loop.ModuleStateTests_openxla.test_batch_norm_trains_then_evaluates
  AssertionError: call 1 (train): output: values differ from eager

Written by dynamo-aot-suite with torch 2.9.1+cu128.

    python openxla-fail-call-train-output-values-differ-from-eager-35d916.py                      # exit 1: the problem shows; 0: it does not
    python openxla-fail-call-train-output-values-differ-from-eager-35d916.py --backend aot_eager  # the same against another backend
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

PROBLEM = 'openxla-fail-call-train-output-values-differ-from-eager-35d916'
BACKEND = 'openxla'
SEARCH_PATH = ['/work/boards/empty/openxla', '/tmp/probe_a/xla/lib/python3.11/site-packages/harness/_bundled']
SCENARIO = ['test.dynamo.test_training_loop', 'ModuleStateTests', 'test_batch_norm_trains_then_evaluates']
ENVIRONMENT = {'DYNAMO_SUITE_IMPORTS': 'torch_xla', 'DYNAMO_SUITE_DEVICE': 'xla', 'DYNAMO_SUITE_TIER': 'smoke'}
CLASS_SUFFIX = ''
COMPILE_OPTIONS = {}
TIME_LIMIT = 46.3
GRAPHS = [{'code': 'def forward(self, L_self_modules_body_modules_0_parameters_weight_ : torch.nn.parameter.Parameter, L_self_modules_body_modules_0_parameters_bias_ : torch.nn.parameter.Parameter, L_x_ : torch.Tensor, L_self_modules_body_modules_1_buffers_num_batches_tracked_ : torch.Tensor, L_self_modules_body_modules_1_buffers_running_mean_ : torch.Tensor, L_self_modules_body_modules_1_buffers_running_var_ : torch.Tensor, L_self_modules_body_modules_1_parameters_weight_ : torch.nn.parameter.Parameter, L_self_modules_body_modules_1_parameters_bias_ : torch.nn.parameter.Parameter, L_self_modules_body_modules_3_parameters_weight_ : torch.nn.parameter.Parameter, L_self_modules_body_modules_3_parameters_bias_ : torch.nn.parameter.Parameter):\n    l_self_modules_body_modules_0_parameters_weight_ = L_self_modules_body_modules_0_parameters_weight_\n    l_self_modules_body_modules_0_parameters_bias_ = L_self_modules_body_modules_0_parameters_bias_\n    l_x_ = L_x_\n    l_self_modules_body_modules_1_buffers_num_batches_tracked_ = L_self_modules_body_modules_1_buffers_num_batches_tracked_\n    l_self_modules_body_modules_1_buffers_running_mean_ = L_self_modules_body_modules_1_buffers_running_mean_\n    l_self_modules_body_modules_1_buffers_running_var_ = L_self_modules_body_modules_1_buffers_running_var_\n    l_self_modules_body_modules_1_parameters_weight_ = L_self_modules_body_modules_1_parameters_weight_\n    l_self_modules_body_modules_1_parameters_bias_ = L_self_modules_body_modules_1_parameters_bias_\n    l_self_modules_body_modules_3_parameters_weight_ = L_self_modules_body_modules_3_parameters_weight_\n    l_self_modules_body_modules_3_parameters_bias_ = L_self_modules_body_modules_3_parameters_bias_\n    input_1 = torch._C._nn.linear(l_x_, l_self_modules_body_modules_0_parameters_weight_, l_self_modules_body_modules_0_parameters_bias_);  l_x_ = l_self_modules_body_modules_0_parameters_weight_ = l_self_modules_body_modules_0_parameters_bias_ = None\n    add_ = l_self_modules_body_modules_1_buffers_num_batches_tracked_.add_(1);  l_self_modules_body_modules_1_buffers_num_batches_tracked_ = add_ = None\n    input_2 = torch.nn.functional.batch_norm(input_1, l_self_modules_body_modules_1_buffers_running_mean_, l_self_modules_body_modules_1_buffers_running_var_, l_self_modules_body_modules_1_parameters_weight_, l_self_modules_body_modules_1_parameters_bias_, True, 0.1, 1e-05);  input_1 = l_self_modules_body_modules_1_buffers_running_mean_ = l_self_modules_body_modules_1_buffers_running_var_ = l_self_modules_body_modules_1_parameters_weight_ = l_self_modules_body_modules_1_parameters_bias_ = None\n    input_3 = torch.nn.functional.relu(input_2, inplace = False);  input_2 = None\n    input_4 = torch._C._nn.linear(input_3, l_self_modules_body_modules_3_parameters_weight_, l_self_modules_body_modules_3_parameters_bias_);  input_3 = l_self_modules_body_modules_3_parameters_weight_ = l_self_modules_body_modules_3_parameters_bias_ = None\n    return (input_4,)\n', 'inputs': [{'shape': [8, 6], 'stride': [6, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [[-0.35531118512153625, -0.19359298050403595, -0.3322306275367737, 0.15224428474903107, 0.2782212793827057, 0.350986510515213], [-0.3040710985660553, 0.025750091299414635, -0.36292555928230286, -0.37721627950668335, 0.14218616485595703, -0.3063531219959259], [0.4003520607948303, -0.19695985317230225, -0.10235390067100525, 0.22548756003379822, 0.2958054840564728, 0.18442359566688538], [0.06463222950696945, 0.2880346179008484, -0.08756465464830399, 0.023091290146112442, -0.17444361746311188, 0.028876084834337234], [0.40312549471855164, -0.19059914350509644, -0.23226073384284973, -0.36614465713500977, -0.06070862337946892, 0.18004238605499268], [-0.19279642403125763, -0.3774435520172119, -0.3092395067214966, -0.17715974152088165, -0.23784223198890686, -0.120723657310009], [0.15691311657428741, 0.22576382756233215, 0.3743632137775421, -0.3021230399608612, -0.28442203998565674, 0.39947274327278137], [0.047618165612220764, 0.36823147535324097, 0.25333863496780396, 0.4004019498825073, 0.10546097159385681, -0.0036839365493506193]]}, {'shape': [8], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [-0.003334848443046212, -0.2435895949602127, 0.14918817579746246, -0.22881586849689484, 0.1458464115858078, -0.3737712502479553, 0.1560303121805191, 0.19325408339500427]}, {'shape': [5, 6], 'stride': [6, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': False, 'values': [[0.01579737290740013, 1.2622913122177124, 0.3405134975910187, -0.03594612702727318, 0.3253474831581116, 2.2663769721984863], [2.4188690185546875, -0.2946750521659851, 0.1678086221218109, 1.7942173480987549, -0.10730684548616409, 0.796169638633728], [-0.8894646763801575, 2.1761202812194824, 0.852527379989624, 1.011625051498413, 1.461839199066162, 2.053663969039917], [0.9418091773986816, 0.8951311111450195, 1.2103990316390991, 1.5135432481765747, -0.018854886293411255, 1.5398412942886353], [1.80039644241333, 1.7153483629226685, -0.21675924956798553, 0.8537526726722717, 1.224543809890747, 0.927598774433136]]}, {'shape': [], 'stride': [], 'dtype': 'torch.int64', 'device': 'xla', 'requires_grad': False, 'values': 1}, {'shape': [8], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': False, 'values': [0.028252793475985527, -0.15542584657669067, 0.08985287696123123, 0.01229365449398756, 0.0029329636599868536, -0.16214647889137268, 0.08369991928339005, 0.12413431704044342]}, {'shape': [8], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': False, 'values': [0.9180956482887268, 0.9079869985580444, 0.9276570081710815, 0.9016358256340027, 0.9231837391853333, 0.9116901159286499, 0.9095509052276611, 0.9122951626777649]}, {'shape': [8], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [1.1590653657913208, 0.8928378820419312, 1.0085606575012207, 0.953376293182373, 0.9040262699127197, 1.00616455078125, 0.9000579714775085, 1.011866569519043]}, {'shape': [8], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [0.1482817381620407, -0.1460772156715393, 0.007758104708045721, -0.043938614428043365, -0.12622496485710144, 0.005417844746261835, -0.083825021982193, 0.015940258279442787]}, {'shape': [3, 8], 'stride': [8, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [[-0.274837464094162, 0.12292983382940292, -0.02213483862578869, -0.2681605815887451, -0.04150944575667381, -0.2963173985481262, -0.06658653169870377, 0.11060645431280136], [-0.5678497552871704, -0.2735818028450012, -0.24241390824317932, 0.06815970689058304, -0.24511000514030457, -0.4157688319683075, 0.06467466801404953, -0.4990778863430023], [-0.5423556566238403, -0.022663244977593422, -0.4363122582435608, -0.21697214245796204, 0.02306440658867359, 0.0022984142415225506, -0.29432493448257446, -0.33465561270713806]]}, {'shape': [3], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [-0.18586260080337524, -0.27242735028266907, -0.5050011277198792]}]}]


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
