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
GRAPHS = [{'code': 'def forward(self, L_self_modules_body_modules_0_parameters_weight_ : torch.nn.parameter.Parameter, L_self_modules_body_modules_0_parameters_bias_ : torch.nn.parameter.Parameter, L_x_ : torch.Tensor, L_self_modules_body_modules_1_buffers_num_batches_tracked_ : torch.Tensor, L_self_modules_body_modules_1_buffers_running_mean_ : torch.Tensor, L_self_modules_body_modules_1_buffers_running_var_ : torch.Tensor, L_self_modules_body_modules_1_parameters_weight_ : torch.nn.parameter.Parameter, L_self_modules_body_modules_1_parameters_bias_ : torch.nn.parameter.Parameter, L_self_modules_body_modules_3_parameters_weight_ : torch.nn.parameter.Parameter, L_self_modules_body_modules_3_parameters_bias_ : torch.nn.parameter.Parameter):\n    l_self_modules_body_modules_0_parameters_weight_ = L_self_modules_body_modules_0_parameters_weight_\n    l_self_modules_body_modules_0_parameters_bias_ = L_self_modules_body_modules_0_parameters_bias_\n    l_x_ = L_x_\n    l_self_modules_body_modules_1_buffers_num_batches_tracked_ = L_self_modules_body_modules_1_buffers_num_batches_tracked_\n    l_self_modules_body_modules_1_buffers_running_mean_ = L_self_modules_body_modules_1_buffers_running_mean_\n    l_self_modules_body_modules_1_buffers_running_var_ = L_self_modules_body_modules_1_buffers_running_var_\n    l_self_modules_body_modules_1_parameters_weight_ = L_self_modules_body_modules_1_parameters_weight_\n    l_self_modules_body_modules_1_parameters_bias_ = L_self_modules_body_modules_1_parameters_bias_\n    l_self_modules_body_modules_3_parameters_weight_ = L_self_modules_body_modules_3_parameters_weight_\n    l_self_modules_body_modules_3_parameters_bias_ = L_self_modules_body_modules_3_parameters_bias_\n    input_1 = torch._C._nn.linear(l_x_, l_self_modules_body_modules_0_parameters_weight_, l_self_modules_body_modules_0_parameters_bias_);  l_x_ = l_self_modules_body_modules_0_parameters_weight_ = l_self_modules_body_modules_0_parameters_bias_ = None\n    add_ = l_self_modules_body_modules_1_buffers_num_batches_tracked_.add_(1);  l_self_modules_body_modules_1_buffers_num_batches_tracked_ = add_ = None\n    input_2 = torch.nn.functional.batch_norm(input_1, l_self_modules_body_modules_1_buffers_running_mean_, l_self_modules_body_modules_1_buffers_running_var_, l_self_modules_body_modules_1_parameters_weight_, l_self_modules_body_modules_1_parameters_bias_, True, 0.1, 1e-05);  input_1 = l_self_modules_body_modules_1_buffers_running_mean_ = l_self_modules_body_modules_1_buffers_running_var_ = l_self_modules_body_modules_1_parameters_weight_ = l_self_modules_body_modules_1_parameters_bias_ = None\n    input_3 = torch.nn.functional.relu(input_2, inplace = False);  input_2 = None\n    input_4 = torch._C._nn.linear(input_3, l_self_modules_body_modules_3_parameters_weight_, l_self_modules_body_modules_3_parameters_bias_);  input_3 = l_self_modules_body_modules_3_parameters_weight_ = l_self_modules_body_modules_3_parameters_bias_ = None\n    return (input_4,)\n', 'inputs': [{'shape': [8, 6], 'stride': [6, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [[-0.029141925275325775, 0.14996282756328583, 0.036029987037181854, 0.0836992934346199, 0.24542905390262604, -0.3096417784690857], [0.18939143419265747, -0.26961275935173035, 0.009377442300319672, 0.13346286118030548, 0.20486348867416382, -0.009192856028676033], [0.021748008206486702, -0.39347559213638306, 0.028103455901145935, -0.04986738786101341, 0.18961277604103088, -0.0575605183839798], [-0.007197959814220667, 0.34780433773994446, 0.3664725720882416, 0.37139779329299927, -0.242888405919075, 0.06937486678361893], [0.08816435933113098, 0.06618031859397888, -0.1972275674343109, 0.12361449003219604, -0.39772653579711914, 0.10477292537689209], [-0.003514764131978154, -0.08310855180025101, -0.4044289290904999, 0.36051857471466064, -0.12475540488958359, -0.19540968537330627], [0.3279002606868744, 0.0002480339026078582, -0.03566276654601097, 0.12922514975070953, -0.27679815888404846, 0.2696448266506195], [-0.23319268226623535, 0.13499492406845093, -0.0943557545542717, -0.3728347718715668, 0.11096964031457901, -0.29784536361694336]]}, {'shape': [8], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [0.28261807560920715, -0.03639229014515877, 0.14147359132766724, 0.20665708184242249, 0.27450284361839294, -0.22543883323669434, -0.09990593791007996, 0.351262629032135]}, {'shape': [5, 6], 'stride': [6, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': False, 'values': [[1.0248039960861206, 2.082725763320923, -1.3575537204742432, 1.000422716140747, 0.993713915348053, -1.0568697452545166], [2.8856678009033203, 2.8595616817474365, 0.9972308874130249, 0.5789837837219238, 0.22107788920402527, 2.478022813796997], [1.3098738193511963, 0.08536188304424286, 0.4665311872959137, 1.5754214525222778, 1.6781494617462158, 1.864152431488037], [0.7904537320137024, -0.5000912547111511, 0.4523327946662903, 2.1873579025268555, 0.7808430790901184, 1.2489057779312134], [0.03960166871547699, 1.2196823358535767, 0.5061298608779907, 2.173710584640503, 1.0166527032852173, 2.2930655479431152]]}, {'shape': [], 'stride': [], 'dtype': 'torch.int64', 'device': 'xla', 'requires_grad': False, 'values': 1}, {'shape': [8], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': False, 'values': [0.033814266324043274, 0.01478872075676918, -0.033719323575496674, 0.1107562780380249, 0.031729090958833694, -0.02419591322541237, 0.05128096789121628, -0.05903276428580284]}, {'shape': [8], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': False, 'values': [0.9162756204605103, 0.9092891812324524, 0.918487548828125, 0.9283875823020935, 0.902910053730011, 0.9348224401473999, 0.9228659272193909, 0.9370068311691284]}, {'shape': [8], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [1.0334949493408203, 0.932908833026886, 0.9080028533935547, 1.0324628353118896, 0.9674335718154907, 1.0290883779525757, 0.9521706104278564, 1.1333568096160889]}, {'shape': [8], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [0.01814364455640316, -0.08802711218595505, -0.12284597009420395, 0.028402959927916527, -0.03072921745479107, 0.029563067480921745, -0.07939337939023972, 0.06755856424570084]}, {'shape': [3, 8], 'stride': [8, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [[-0.4018790125846863, -0.34311431646347046, -0.08740934729576111, -0.3230288624763489, -0.059916336089372635, -0.2490900754928589, 0.05150492861866951, -0.4383271038532257], [-0.43833082914352417, -0.14763419330120087, -0.23723414540290833, -0.160584956407547, 0.11342000961303711, 0.04813597723841667, 0.011791054159402847, -0.3212697207927704], [0.10494363307952881, 0.09822354465723038, 0.060135986655950546, -0.3441649079322815, -0.5357300043106079, -0.5372276306152344, -0.34084320068359375, -0.508171796798706]]}, {'shape': [3], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [-0.5903030037879944, -0.19987753033638, -0.3061116933822632]}]}]


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
        path = where if os.path.isabs(where) else os.path.join(SEARCH_PATH[0], where)
        loaded = importlib.util.spec_from_file_location("repro_backend", path)
        module = importlib.util.module_from_spec(loaded)
        loaded.loader.exec_module(module)
    else:
        sys.path[:0] = [entry for entry in SEARCH_PATH if entry not in sys.path]
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
