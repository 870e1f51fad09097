"""Standalone repro of a dynamo-aot-suite problem: openxla-error-check-failed-buffer-isdeleted-buffer-with-a0a145

ERROR on backend openxla, 1 test(s); made from test.dynamo.test_training_loop.TrainingLoopTests_openxla.test_eager_optimizer_updates_the_compiled_model
  RuntimeError: Check failed: !buffer->IsDeleted(): buffer with shape f32[8,6] on device CPU:0 is deleted

Written by dynamo-aot-suite with torch 2.9.1+cu128.

    python openxla-error-check-failed-buffer-isdeleted-buffer-with-a0a145.py                      # exit 1: the problem shows; 0: it does not
    python openxla-error-check-failed-buffer-isdeleted-buffer-with-a0a145.py --backend aot_eager  # the same against another backend
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

PROBLEM = 'openxla-error-check-failed-buffer-isdeleted-buffer-with-a0a145'
BACKEND = 'openxla'
SEARCH_PATH = ['/work/boards/empty/openxla', '/tmp/probe_a/xla/lib/python3.11/site-packages/harness/_bundled']
SCENARIO = ['test.dynamo.test_training_loop', 'TrainingLoopTests', 'test_eager_optimizer_updates_the_compiled_model']
ENVIRONMENT = {'DYNAMO_SUITE_IMPORTS': 'torch_xla', 'DYNAMO_SUITE_DEVICE': 'xla', 'DYNAMO_SUITE_TIER': 'smoke'}
CLASS_SUFFIX = ''
COMPILE_OPTIONS = {}
TIME_LIMIT = 44.9
GRAPHS = [{'code': 'def forward(self, L_fn_modules_0_parameters_weight_ : torch.nn.parameter.Parameter, L_fn_modules_0_parameters_bias_ : torch.nn.parameter.Parameter, L_args_0_ : torch.Tensor, L_fn_modules_2_parameters_weight_ : torch.nn.parameter.Parameter, L_fn_modules_2_parameters_bias_ : torch.nn.parameter.Parameter, L_fn_modules_4_parameters_weight_ : torch.nn.parameter.Parameter, L_fn_modules_4_parameters_bias_ : torch.nn.parameter.Parameter):\n    l_fn_modules_0_parameters_weight_ = L_fn_modules_0_parameters_weight_\n    l_fn_modules_0_parameters_bias_ = L_fn_modules_0_parameters_bias_\n    l_args_0_ = L_args_0_\n    l_fn_modules_2_parameters_weight_ = L_fn_modules_2_parameters_weight_\n    l_fn_modules_2_parameters_bias_ = L_fn_modules_2_parameters_bias_\n    l_fn_modules_4_parameters_weight_ = L_fn_modules_4_parameters_weight_\n    l_fn_modules_4_parameters_bias_ = L_fn_modules_4_parameters_bias_\n    input_1 = torch._C._nn.linear(l_args_0_, l_fn_modules_0_parameters_weight_, l_fn_modules_0_parameters_bias_);  l_args_0_ = l_fn_modules_0_parameters_weight_ = l_fn_modules_0_parameters_bias_ = None\n    input_2 = torch.tanh(input_1);  input_1 = None\n    input_3 = torch._C._nn.linear(input_2, l_fn_modules_2_parameters_weight_, l_fn_modules_2_parameters_bias_);  input_2 = l_fn_modules_2_parameters_weight_ = l_fn_modules_2_parameters_bias_ = None\n    input_4 = torch.nn.functional.relu(input_3, inplace = False);  input_3 = None\n    input_5 = torch._C._nn.linear(input_4, l_fn_modules_4_parameters_weight_, l_fn_modules_4_parameters_bias_);  input_4 = l_fn_modules_4_parameters_weight_ = l_fn_modules_4_parameters_bias_ = None\n    return (input_5,)\n', 'inputs': [{'shape': [8, 6], 'stride': [6, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [[0.2651583254337311, -0.10388265550136566, -0.21096253395080566, -0.06466448307037354, -0.3742610812187195, 0.22151586413383484], [0.2282123565673828, 0.18777142465114594, 0.2902012765407562, 0.01795879937708378, -0.08613702654838562, -0.31386008858680725], [0.31760671734809875, -0.36145147681236267, 0.0496821403503418, 0.10990418493747711, -0.12322594970464706, 0.008229346945881844], [0.1745484322309494, -0.22067216038703918, -0.30179038643836975, -0.09021101146936417, 0.1397205889225006, -0.3361950218677521], [-0.32274511456489563, 0.3129866421222687, 0.3038046956062317, -0.01929984614253044, -0.042544156312942505, -0.17862965166568756], [0.2818084955215454, 0.009287579916417599, 0.028439082205295563, 0.1001209020614624, 0.26170268654823303, -0.3323071599006653], [-0.1599918007850647, 0.38911154866218567, 0.11136958748102188, -0.29944080114364624, 0.18966466188430786, -0.14142581820487976], [0.22465960681438446, -0.22877325117588043, 0.21859577298164368, 0.15439879894256592, -0.27974602580070496, 0.08972445130348206]]}, {'shape': [8], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [-0.009941568598151207, -0.3075348138809204, -0.13481532037258148, -0.10199875384569168, 0.18693922460079193, -0.4129364788532257, 0.28879284858703613, 0.3214634358882904]}, {'shape': [5, 6], 'stride': [6, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': False, 'values': [[-0.817333996295929, -0.555568516254425, -0.8266895413398743, -1.2969543933868408, -0.19737878441810608, -0.9643335342407227], [-0.5132989287376404, 2.6277847290039062, -0.74649578332901, 1.0050938129425049, -0.25683921575546265, 0.47649285197257996], [-0.6652101278305054, -0.3626655638217926, 1.6471320390701294, -1.0891081094741821, 1.3290292024612427, 1.1973766088485718], [-1.2645164728164673, -0.43443864583969116, -2.1805989742279053, -1.1093748807907104, -0.7574429512023926, -1.5660330057144165], [-1.080498218536377, -0.8832487463951111, 0.9741045832633972, 0.5631665587425232, -1.1151163578033447, 0.1490076184272766]]}, {'shape': [8, 8], 'stride': [8, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [[0.36464381217956543, -0.029148055240511894, -0.29463693499565125, 0.2896585762500763, 0.21835210919380188, -0.11381412297487259, 0.2514222264289856, -0.01005746889859438], [0.3155735433101654, 0.11032751947641373, 0.2246561497449875, 0.18752695620059967, -0.26837748289108276, 0.1406397819519043, 0.11090802401304245, -0.15917038917541504], [0.3127777576446533, -0.2419068068265915, 0.13200785219669342, 0.32489725947380066, 0.08770810067653656, 0.23458713293075562, 0.04303576052188873, 0.2657238245010376], [-0.08665889501571655, 0.3532305359840393, 0.19612184166908264, 0.25771617889404297, -0.28228408098220825, -0.1315644234418869, -0.3043552041053772, -0.05788692459464073], [-0.12685570120811462, 0.045030202716588974, -0.285184383392334, 0.3544672131538391, 0.2977313995361328, 0.3589927852153778, 0.3397931754589081, 0.1468883454799652], [-0.1160157173871994, 0.3454589545726776, -0.053612370043992996, 0.06435603648424149, -0.1309315264225006, -0.21062150597572327, 0.18935148417949677, 0.12357856333255768], [0.3393595814704895, 0.16583208739757538, 0.09989999979734421, -0.19586576521396637, 0.08380327373743057, 0.09919058531522751, 0.024625306949019432, -0.2313612401485443], [0.20326675474643707, -0.2419680505990982, -0.21134157478809357, 0.09311214089393616, -0.23906433582305908, -0.008624722249805927, 0.21048486232757568, -0.13059385120868683]]}, {'shape': [8], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [0.2854408919811249, -0.1565188616514206, -0.06586259603500366, -0.17781755328178406, -0.3166603147983551, -0.008352814242243767, -0.0877021998167038, 0.29584553837776184]}, {'shape': [3, 8], 'stride': [8, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [[0.17246006429195404, 0.06441815197467804, 0.21528778970241547, 0.0071076443418860435, -0.24556615948677063, 0.2061944156885147, -0.23935775458812714, 0.2355603128671646], [0.2763890326023102, -0.07130244374275208, 0.16092972457408905, -0.004102068487554789, 0.09218797832727432, -0.3532812297344208, -0.2128903865814209, -0.3200490176677704], [-0.2069183588027954, 0.23773379623889923, 0.1707119643688202, 0.1911456435918808, -0.2925679683685303, 0.26396438479423523, 0.151713564991951, 0.1816556453704834]]}, {'shape': [3], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [0.035245124250650406, -0.021921027451753616, 0.24954389035701752]}]}]


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
