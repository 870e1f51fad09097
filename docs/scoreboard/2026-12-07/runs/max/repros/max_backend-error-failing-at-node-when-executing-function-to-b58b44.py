"""Standalone repro of a dynamo-aot-suite problem: max_backend-error-failing-at-node-when-executing-function-to-b58b44

ERROR on backend max_backend, 1 test(s); made from test.dynamo.test_training_loop.ModuleStateTests_max_backend.test_big_graph_forward_and_backward
  MaxCompilerError: Failing at node 77 when executing function torch._ops.aten.aten::full of type <class 'torch._ops.OpOverload'> . inputs of node were: args=[[22, 4], 0], kwargs={'dtype': torch.float32, 'layout': torch.strided, 'device': device(type='cpu'), 'pin_memory': False}. You can open an issue at https://github.com/gabrieldemarmiesse/torch-max-backend/issues . It comes from there in your co…

Written by dynamo-aot-suite 0.5.0 with torch 2.13.0+cpu.

    python max_backend-error-failing-at-node-when-executing-function-to-b58b44.py                      # exit 1: the problem shows; 0: it does not
    python max_backend-error-failing-at-node-when-executing-function-to-b58b44.py --backend aot_eager  # the same against another backend
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

PROBLEM = 'max_backend-error-failing-at-node-when-executing-function-to-b58b44'
BACKEND = 'torch_max_backend:max_backend'
SUITE = '0.5.0'
PROJECT_DIRS = []
SCENARIO = ['test.dynamo.test_training_loop', 'ModuleStateTests', 'test_big_graph_forward_and_backward']
ENVIRONMENT = {}
CLASS_SUFFIX = ''
COMPILE_OPTIONS = {}
TIME_LIMIT = 188.3
GRAPHS = [{'code': 'def forward(self, L_self_parameters_weight_ : torch.nn.parameter.Parameter, L_x_ : torch.Tensor, L_self_parameters_bias_ : torch.nn.parameter.Parameter, L_self_buffers_readout_ : torch.Tensor):\n    l_self_parameters_weight_ = L_self_parameters_weight_\n    l_x_ = L_x_\n    l_self_parameters_bias_ = L_self_parameters_bias_\n    l_self_buffers_readout_ = L_self_buffers_readout_\n    getitem = l_self_parameters_weight_[0]\n    mul = l_x_ * getitem;  getitem = None\n    getitem_1 = l_self_parameters_bias_[0]\n    h = mul + getitem_1;  mul = getitem_1 = None\n    gelu = torch._C._nn.gelu(h);  h = None\n    mul_1 = gelu * 0.5;  gelu = None\n    x = l_x_ + mul_1;  l_x_ = mul_1 = None\n    getitem_2 = l_self_parameters_weight_[1]\n    mul_2 = x * getitem_2;  getitem_2 = None\n    getitem_3 = l_self_parameters_bias_[1]\n    h_1 = mul_2 + getitem_3;  mul_2 = getitem_3 = None\n    tanh = h_1.tanh();  h_1 = None\n    mul_3 = tanh * 0.5;  tanh = None\n    x_1 = x + mul_3;  x = mul_3 = None\n    getitem_4 = l_self_parameters_weight_[2]\n    mul_4 = x_1 * getitem_4;  getitem_4 = None\n    getitem_5 = l_self_parameters_bias_[2]\n    h_2 = mul_4 + getitem_5;  mul_4 = getitem_5 = None\n    gelu_1 = torch._C._nn.gelu(h_2);  h_2 = None\n    mul_5 = gelu_1 * 0.5;  gelu_1 = None\n    x_2 = x_1 + mul_5;  x_1 = mul_5 = None\n    getitem_6 = l_self_parameters_weight_[3]\n    mul_6 = x_2 * getitem_6;  getitem_6 = None\n    getitem_7 = l_self_parameters_bias_[3]\n    h_3 = mul_6 + getitem_7;  mul_6 = getitem_7 = None\n    tanh_1 = h_3.tanh();  h_3 = None\n    mul_7 = tanh_1 * 0.5;  tanh_1 = None\n    x_3 = x_2 + mul_7;  x_2 = mul_7 = None\n    getitem_8 = l_self_parameters_weight_[4]\n    mul_8 = x_3 * getitem_8;  getitem_8 = None\n    getitem_9 = l_self_parameters_bias_[4]\n    h_4 = mul_8 + getitem_9;  mul_8 = getitem_9 = None\n    gelu_2 = torch._C._nn.gelu(h_4);  h_4 = None\n    mul_9 = gelu_2 * 0.5;  gelu_2 = None\n    x_4 = x_3 + mul_9;  x_3 = mul_9 = None\n    getitem_10 = l_self_parameters_weight_[5]\n    mul_10 = x_4 * getitem_10;  getitem_10 = None\n    getitem_11 = l_self_parameters_bias_[5]\n    h_5 = mul_10 + getitem_11;  mul_10 = getitem_11 = None\n    tanh_2 = h_5.tanh();  h_5 = None\n    mul_11 = tanh_2 * 0.5;  tanh_2 = None\n    x_5 = x_4 + mul_11;  x_4 = mul_11 = None\n    getitem_12 = l_self_parameters_weight_[6]\n    mul_12 = x_5 * getitem_12;  getitem_12 = None\n    getitem_13 = l_self_parameters_bias_[6]\n    h_6 = mul_12 + getitem_13;  mul_12 = getitem_13 = None\n    gelu_3 = torch._C._nn.gelu(h_6);  h_6 = None\n    mul_13 = gelu_3 * 0.5;  gelu_3 = None\n    x_6 = x_5 + mul_13;  x_5 = mul_13 = None\n    getitem_14 = l_self_parameters_weight_[7]\n    mul_14 = x_6 * getitem_14;  getitem_14 = None\n    getitem_15 = l_self_parameters_bias_[7]\n    h_7 = mul_14 + getitem_15;  mul_14 = getitem_15 = None\n    tanh_3 = h_7.tanh();  h_7 = None\n    mul_15 = tanh_3 * 0.5;  tanh_3 = None\n    x_7 = x_6 + mul_15;  x_6 = mul_15 = None\n    mean = x_7.mean(-1, keepdim = True)\n    x_8 = x_7 - mean;  x_7 = mean = None\n    getitem_16 = l_self_parameters_weight_[8]\n    mul_16 = x_8 * getitem_16;  getitem_16 = None\n    getitem_17 = l_self_parameters_bias_[8]\n    h_8 = mul_16 + getitem_17;  mul_16 = getitem_17 = None\n    gelu_4 = torch._C._nn.gelu(h_8);  h_8 = None\n    mul_17 = gelu_4 * 0.5;  gelu_4 = None\n    x_9 = x_8 + mul_17;  x_8 = mul_17 = None\n    getitem_18 = l_self_parameters_weight_[9]\n    mul_18 = x_9 * getitem_18;  getitem_18 = None\n    getitem_19 = l_self_parameters_bias_[9]\n    h_9 = mul_18 + getitem_19;  mul_18 = getitem_19 = None\n    tanh_4 = h_9.tanh();  h_9 = None\n    mul_19 = tanh_4 * 0.5;  tanh_4 = None\n    x_10 = x_9 + mul_19;  x_9 = mul_19 = None\n    getitem_20 = l_self_parameters_weight_[10]\n    mul_20 = x_10 * getitem_20;  getitem_20 = None\n    getitem_21 = l_self_parameters_bias_[10]\n    h_10 = mul_20 + getitem_21;  mul_20 = getitem_21 = None\n    gelu_5 = torch._C._nn.gelu(h_10);  h_10 = None\n    mul_21 = gelu_5 * 0.5;  gelu_5 = None\n    x_11 = x_10 + mul_21;  x_10 = mul_21 = None\n    getitem_22 = l_self_parameters_weight_[11]\n    mul_22 = x_11 * getitem_22;  getitem_22 = None\n    getitem_23 = l_self_parameters_bias_[11]\n    h_11 = mul_22 + getitem_23;  mul_22 = getitem_23 = None\n    tanh_5 = h_11.tanh();  h_11 = None\n    mul_23 = tanh_5 * 0.5;  tanh_5 = None\n    x_12 = x_11 + mul_23;  x_11 = mul_23 = None\n    getitem_24 = l_self_parameters_weight_[12]\n    mul_24 = x_12 * getitem_24;  getitem_24 = None\n    getitem_25 = l_self_parameters_bias_[12]\n    h_12 = mul_24 + getitem_25;  mul_24 = getitem_25 = None\n    gelu_6 = torch._C._nn.gelu(h_12);  h_12 = None\n    mul_25 = gelu_6 * 0.5;  gelu_6 = None\n    x_13 = x_12 + mul_25;  x_12 = mul_25 = None\n    getitem_26 = l_self_parameters_weight_[13]\n    mul_26 = x_13 * getitem_26;  getitem_26 = None\n    getitem_27 = l_self_parameters_bias_[13]\n    h_13 = mul_26 + getitem_27;  mul_26 = getitem_27 = None\n    tanh_6 = h_13.tanh();  h_13 = None\n    mul_27 = tanh_6 * 0.5;  tanh_6 = None\n    x_14 = x_13 + mul_27;  x_13 = mul_27 = None\n    getitem_28 = l_self_parameters_weight_[14]\n    mul_28 = x_14 * getitem_28;  getitem_28 = None\n    getitem_29 = l_self_parameters_bias_[14]\n    h_14 = mul_28 + getitem_29;  mul_28 = getitem_29 = None\n    gelu_7 = torch._C._nn.gelu(h_14);  h_14 = None\n    mul_29 = gelu_7 * 0.5;  gelu_7 = None\n    x_15 = x_14 + mul_29;  x_14 = mul_29 = None\n    getitem_30 = l_self_parameters_weight_[15]\n    mul_30 = x_15 * getitem_30;  getitem_30 = None\n    getitem_31 = l_self_parameters_bias_[15]\n    h_15 = mul_30 + getitem_31;  mul_30 = getitem_31 = None\n    tanh_7 = h_15.tanh();  h_15 = None\n    mul_31 = tanh_7 * 0.5;  tanh_7 = None\n    x_16 = x_15 + mul_31;  x_15 = mul_31 = None\n    mean_1 = x_16.mean(-1, keepdim = True)\n    x_17 = x_16 - mean_1;  x_16 = mean_1 = None\n    getitem_32 = l_self_parameters_weight_[16]\n    mul_32 = x_17 * getitem_32;  getitem_32 = None\n    getitem_33 = l_self_parameters_bias_[16]\n    h_16 = mul_32 + getitem_33;  mul_32 = getitem_33 = None\n    gelu_8 = torch._C._nn.gelu(h_16);  h_16 = None\n    mul_33 = gelu_8 * 0.5;  gelu_8 = None\n    x_18 = x_17 + mul_33;  x_17 = mul_33 = None\n    getitem_34 = l_self_parameters_weight_[17]\n    mul_34 = x_18 * getitem_34;  getitem_34 = None\n    getitem_35 = l_self_parameters_bias_[17]\n    h_17 = mul_34 + getitem_35;  mul_34 = getitem_35 = None\n    tanh_8 = h_17.tanh();  h_17 = None\n    mul_35 = tanh_8 * 0.5;  tanh_8 = None\n    x_19 = x_18 + mul_35;  x_18 = mul_35 = None\n    getitem_36 = l_self_parameters_weight_[18]\n    mul_36 = x_19 * getitem_36;  getitem_36 = None\n    getitem_37 = l_self_parameters_bias_[18]\n    h_18 = mul_36 + getitem_37;  mul_36 = getitem_37 = None\n    gelu_9 = torch._C._nn.gelu(h_18);  h_18 = None\n    mul_37 = gelu_9 * 0.5;  gelu_9 = None\n    x_20 = x_19 + mul_37;  x_19 = mul_37 = None\n    getitem_38 = l_self_parameters_weight_[19]\n    mul_38 = x_20 * getitem_38;  getitem_38 = None\n    getitem_39 = l_self_parameters_bias_[19]\n    h_19 = mul_38 + getitem_39;  mul_38 = getitem_39 = None\n    tanh_9 = h_19.tanh();  h_19 = None\n    mul_39 = tanh_9 * 0.5;  tanh_9 = None\n    x_21 = x_20 + mul_39;  x_20 = mul_39 = None\n    getitem_40 = l_self_parameters_weight_[20]\n    mul_40 = x_21 * getitem_40;  getitem_40 = None\n    getitem_41 = l_self_parameters_bias_[20]\n    h_20 = mul_40 + getitem_41;  mul_40 = getitem_41 = None\n    gelu_10 = torch._C._nn.gelu(h_20);  h_20 = None\n    mul_41 = gelu_10 * 0.5;  gelu_10 = None\n    x_22 = x_21 + mul_41;  x_21 = mul_41 = None\n    getitem_42 = l_self_parameters_weight_[21];  l_self_parameters_weight_ = None\n    mul_42 = x_22 * getitem_42;  getitem_42 = None\n    getitem_43 = l_self_parameters_bias_[21];  l_self_parameters_bias_ = None\n    h_21 = mul_42 + getitem_43;  mul_42 = getitem_43 = None\n    tanh_10 = h_21.tanh();  h_21 = None\n    mul_43 = tanh_10 * 0.5;  tanh_10 = None\n    x_23 = x_22 + mul_43;  x_22 = mul_43 = None\n    mul_44 = x_23 * l_self_buffers_readout_;  x_23 = l_self_buffers_readout_ = None\n    sum_1 = mul_44.sum(-1);  mul_44 = None\n    return (sum_1,)\n', 'inputs': [{'shape': [22, 4], 'stride': [4, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'range': [0.47119516134262085, 1.8526256084442139]}, {'shape': [3, 4], 'stride': [4, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': False, 'values': [[0.6613521575927734, 0.266924113035202, 0.06167725846171379, 0.6213173270225525], [-0.4519059658050537, -0.16613022983074188, -1.522768497467041, 0.38168391585350037], [-1.0276086330413818, -0.563052773475647, -0.8922905325889587, -0.05825017765164375]]}, {'shape': [22, 4], 'stride': [4, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'range': [-0.5804253816604614, 0.6740691065788269]}, {'shape': [4], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': False, 'values': [0.02500000037252903, 0.0416666679084301, 0.05833332985639572, 0.07500000298023224]}]}]
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
