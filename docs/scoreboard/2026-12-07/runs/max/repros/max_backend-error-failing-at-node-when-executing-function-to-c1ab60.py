"""Standalone repro of a dynamo-aot-suite problem: max_backend-error-failing-at-node-when-executing-function-to-c1ab60

ERROR on backend max_backend, 1 test(s); made from test.dynamo.test_backend_contract.GlobalStateContractTests_max_backend.test_a_served_block_under_each_mode_3_deterministic
  the backend's compiler raised MaxCompilerError: Failing at node 48 when executing function torch._ops.aten.aten::full_like of type <class 'torch._ops.OpOverload'> . inputs of node were: args=[TensorValue(dtype=float32, shape=[Dim(2), Dim(8), Dim(8)], device=cpu:0), 0], kwargs={'pin_memory': False, 'memory_format': torch.preserve_format}. You can open an issue at https://github.com/gabrieldemarmie…

Written by dynamo-aot-suite 0.5.0 with torch 2.13.0+cpu.

    python max_backend-error-failing-at-node-when-executing-function-to-c1ab60.py                      # exit 1: the problem shows; 0: it does not
    python max_backend-error-failing-at-node-when-executing-function-to-c1ab60.py --backend aot_eager  # the same against another backend
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

PROBLEM = 'max_backend-error-failing-at-node-when-executing-function-to-c1ab60'
BACKEND = 'torch_max_backend:max_backend'
SUITE = '0.5.0'
PROJECT_DIRS = []
SCENARIO = ['test.dynamo.test_backend_contract', 'GlobalStateContractTests', 'test_a_served_block_under_each_mode_3_deterministic']
ENVIRONMENT = {}
CLASS_SUFFIX = ''
COMPILE_OPTIONS = {}
TIME_LIMIT = 176.3
GRAPHS = [{'code': 'def forward(self, L_self_modules_embed_parameters_weight_ : torch.nn.parameter.Parameter, L_tokens_ : torch.Tensor, L_x_ : torch.Tensor, L_self_modules_norm_parameters_weight_ : torch.nn.parameter.Parameter, L_self_modules_norm_parameters_bias_ : torch.nn.parameter.Parameter, L_self_modules_qkv_parameters_weight_ : torch.nn.parameter.Parameter, L_self_modules_qkv_parameters_bias_ : torch.nn.parameter.Parameter, L_self_modules_out_parameters_weight_ : torch.nn.parameter.Parameter, L_self_modules_out_parameters_bias_ : torch.nn.parameter.Parameter, L_self_modules_conv_parameters_weight_ : torch.nn.parameter.Parameter, L_self_modules_conv_parameters_bias_ : torch.nn.parameter.Parameter, L_self_modules_bn_buffers_running_mean_ : torch.Tensor, L_self_modules_bn_buffers_running_var_ : torch.Tensor, L_self_modules_bn_parameters_weight_ : torch.nn.parameter.Parameter, L_self_modules_bn_parameters_bias_ : torch.nn.parameter.Parameter, L_wide_ : torch.Tensor):\n    l_self_modules_embed_parameters_weight_ = L_self_modules_embed_parameters_weight_\n    l_tokens_ = L_tokens_\n    l_x_ = L_x_\n    l_self_modules_norm_parameters_weight_ = L_self_modules_norm_parameters_weight_\n    l_self_modules_norm_parameters_bias_ = L_self_modules_norm_parameters_bias_\n    l_self_modules_qkv_parameters_weight_ = L_self_modules_qkv_parameters_weight_\n    l_self_modules_qkv_parameters_bias_ = L_self_modules_qkv_parameters_bias_\n    l_self_modules_out_parameters_weight_ = L_self_modules_out_parameters_weight_\n    l_self_modules_out_parameters_bias_ = L_self_modules_out_parameters_bias_\n    l_self_modules_conv_parameters_weight_ = L_self_modules_conv_parameters_weight_\n    l_self_modules_conv_parameters_bias_ = L_self_modules_conv_parameters_bias_\n    l_self_modules_bn_buffers_running_mean_ = L_self_modules_bn_buffers_running_mean_\n    l_self_modules_bn_buffers_running_var_ = L_self_modules_bn_buffers_running_var_\n    l_self_modules_bn_parameters_weight_ = L_self_modules_bn_parameters_weight_\n    l_self_modules_bn_parameters_bias_ = L_self_modules_bn_parameters_bias_\n    l_wide_ = L_wide_\n    embedding = torch.nn.functional.embedding(l_tokens_, l_self_modules_embed_parameters_weight_, None, None, 2.0, False, False);  l_tokens_ = l_self_modules_embed_parameters_weight_ = None\n    h = embedding.add(l_x_);  embedding = l_x_ = None\n    layer_norm = torch.nn.functional.layer_norm(h, (16,), l_self_modules_norm_parameters_weight_, l_self_modules_norm_parameters_bias_, 1e-05);  l_self_modules_norm_parameters_weight_ = l_self_modules_norm_parameters_bias_ = None\n    linear = torch._C._nn.linear(layer_norm, l_self_modules_qkv_parameters_weight_, l_self_modules_qkv_parameters_bias_);  layer_norm = l_self_modules_qkv_parameters_weight_ = l_self_modules_qkv_parameters_bias_ = None\n    chunk = linear.chunk(3, -1);  linear = None\n    q = chunk[0]\n    k = chunk[1]\n    v = chunk[2];  chunk = None\n    scaled_dot_product_attention = torch._C._nn.scaled_dot_product_attention(q, k, v, is_causal = True);  q = k = v = None\n    linear_1 = torch._C._nn.linear(scaled_dot_product_attention, l_self_modules_out_parameters_weight_, l_self_modules_out_parameters_bias_);  scaled_dot_product_attention = l_self_modules_out_parameters_weight_ = l_self_modules_out_parameters_bias_ = None\n    h_1 = h.add(linear_1);  h = linear_1 = None\n    transpose = h_1.transpose(1, 2)\n    conv1d = torch.conv1d(transpose, l_self_modules_conv_parameters_weight_, l_self_modules_conv_parameters_bias_, (1,), (1,), (1,), 1);  transpose = l_self_modules_conv_parameters_weight_ = l_self_modules_conv_parameters_bias_ = None\n    batch_norm = torch.nn.functional.batch_norm(conv1d, l_self_modules_bn_buffers_running_mean_, l_self_modules_bn_buffers_running_var_, l_self_modules_bn_parameters_weight_, l_self_modules_bn_parameters_bias_, False, 0.1, 1e-05);  conv1d = l_self_modules_bn_buffers_running_mean_ = l_self_modules_bn_buffers_running_var_ = l_self_modules_bn_parameters_weight_ = l_self_modules_bn_parameters_bias_ = None\n    transpose_1 = batch_norm.transpose(1, 2);  batch_norm = None\n    gelu = torch._C._nn.gelu(transpose_1);  transpose_1 = None\n    h_2 = h_1.add(gelu);  h_1 = gelu = None\n    softmax = h_2.softmax(-1)\n    sum_1 = h_2.sum(1)\n    amax = h_2.amax(-1);  h_2 = None\n    mul = l_wide_.mul(256.0)\n    exp2 = mul.exp2();  mul = None\n    mul_1 = exp2.mul(0.5);  exp2 = None\n    mul_2 = l_wide_.mul(1048576.0);  l_wide_ = None\n    add_3 = mul_2.add(1.0);  mul_2 = None\n    return (softmax, sum_1, amax, mul_1, add_3)\n', 'inputs': [{'shape': [32, 16], 'stride': [16, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'range': [-3.153724431991577, 4.1014933586120605]}, {'shape': [2, 8], 'stride': [8, 1], 'dtype': 'torch.int64', 'device': 'cpu', 'requires_grad': False, 'values': [[12, 15, 21, 0, 3, 27, 3, 7], [9, 19, 21, 18, 4, 23, 6, 24]]}, {'shape': [2, 8, 16], 'stride': [128, 16, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': False, 'range': [-2.6133224964141846, 3.4105026721954346]}, {'shape': [16], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]}, {'shape': [16], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]}, {'shape': [48, 16], 'stride': [16, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'range': [-0.24996015429496765, 0.2495851218700409]}, {'shape': [48], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [-0.1867508888244629, -0.02895525097846985, 0.03650614619255066, 0.06502312421798706, 0.12855815887451172, -0.09947669506072998, -0.07538360357284546, 0.20918533205986023, -0.06709608435630798, -0.17366033792495728, 0.16950994729995728, 0.16928887367248535, -0.07839173078536987, -0.04998001456260681, -0.18446999788284302, -0.2087734341621399, 0.09401237964630127, -0.10679814219474792, 0.19902387261390686, -0.20017829537391663, -0.03455626964569092, 0.0053979456424713135, 0.1284867823123932, 0.20233267545700073, 0.1693011224269867, 0.11004900932312012, -0.11474844813346863, -0.17853692173957825, -0.22365319728851318, 0.012401163578033447, 0.24247005581855774, -0.04748561978340149, -0.010524630546569824, -0.18167349696159363, 0.0767524242401123, 0.15849584341049194, -0.24647897481918335, -0.17603054642677307, 0.18517693877220154, 0.05919113755226135, -0.015586525201797485, 0.044689565896987915, -0.038010478019714355, -0.1747412383556366, -0.2336074709892273, 0.1644269824028015, -0.029734164476394653, -0.0928468108177185]}, {'shape': [16, 16], 'stride': [16, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'range': [-0.24978458881378174, 0.24955463409423828]}, {'shape': [16], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [0.09343236684799194, -0.031358033418655396, -0.2067175805568695, 0.09999388456344604, 0.1631353795528412, -0.043726980686187744, 0.1178344190120697, 0.09266477823257446, -0.09999188780784607, -0.01735508441925049, 0.24885961413383484, 0.0011802613735198975, -0.1990283727645874, -0.018232077360153198, 0.1243731677532196, -0.08160591125488281]}, {'shape': [16, 16, 3], 'stride': [48, 3, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'range': [-0.14405587315559387, 0.14314137399196625]}, {'shape': [16], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [0.12750203907489777, -0.01673213578760624, -0.12306719273328781, -0.06561262160539627, 0.132554829120636, -0.03170942887663841, -0.06328883022069931, 0.06497016549110413, 0.017868446186184883, -0.12725947797298431, 0.12020239979028702, 0.08128006011247635, 0.1254560649394989, 0.06316201388835907, -0.048663973808288574, -0.04711860045790672]}, {'shape': [16], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': False, 'values': [0.24231106042861938, -0.09692692756652832, 0.09802675247192383, -0.48449409008026123, -0.2471611499786377, 0.18572378158569336, -0.024649441242218018, -0.2403753399848938, -0.4361337423324585, 0.3177799582481384, -0.10052943229675293, -0.49126648902893066, 0.48239219188690186, 0.24331331253051758, -0.29906952381134033, -0.364915668964386]}, {'shape': [16], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': False, 'values': [1.9747345447540283, 1.2531315088272095, 0.7989331483840942, 1.6815850734710693, 1.093775749206543, 1.301377296447754, 0.8592997789382935, 0.6147539615631104, 0.7519079446792603, 1.1676478385925293, 0.7070392370223999, 1.9892065525054932, 1.2581173181533813, 0.9628761410713196, 1.546415090560913, 0.5850734114646912]}, {'shape': [16], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]}, {'shape': [16], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]}, {'shape': [4], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': False, 'values': [0.0625, 0.078125, -0.1171875, 0.15625]}]}]
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
