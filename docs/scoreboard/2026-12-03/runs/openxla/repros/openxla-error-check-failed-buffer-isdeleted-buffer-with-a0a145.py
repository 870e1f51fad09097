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
GRAPHS = [{'code': 'def forward(self, L_fn_modules_0_parameters_weight_ : torch.nn.parameter.Parameter, L_fn_modules_0_parameters_bias_ : torch.nn.parameter.Parameter, L_args_0_ : torch.Tensor, L_fn_modules_2_parameters_weight_ : torch.nn.parameter.Parameter, L_fn_modules_2_parameters_bias_ : torch.nn.parameter.Parameter, L_fn_modules_4_parameters_weight_ : torch.nn.parameter.Parameter, L_fn_modules_4_parameters_bias_ : torch.nn.parameter.Parameter):\n    l_fn_modules_0_parameters_weight_ = L_fn_modules_0_parameters_weight_\n    l_fn_modules_0_parameters_bias_ = L_fn_modules_0_parameters_bias_\n    l_args_0_ = L_args_0_\n    l_fn_modules_2_parameters_weight_ = L_fn_modules_2_parameters_weight_\n    l_fn_modules_2_parameters_bias_ = L_fn_modules_2_parameters_bias_\n    l_fn_modules_4_parameters_weight_ = L_fn_modules_4_parameters_weight_\n    l_fn_modules_4_parameters_bias_ = L_fn_modules_4_parameters_bias_\n    input_1 = torch._C._nn.linear(l_args_0_, l_fn_modules_0_parameters_weight_, l_fn_modules_0_parameters_bias_);  l_args_0_ = l_fn_modules_0_parameters_weight_ = l_fn_modules_0_parameters_bias_ = None\n    input_2 = torch.tanh(input_1);  input_1 = None\n    input_3 = torch._C._nn.linear(input_2, l_fn_modules_2_parameters_weight_, l_fn_modules_2_parameters_bias_);  input_2 = l_fn_modules_2_parameters_weight_ = l_fn_modules_2_parameters_bias_ = None\n    input_4 = torch.nn.functional.relu(input_3, inplace = False);  input_3 = None\n    input_5 = torch._C._nn.linear(input_4, l_fn_modules_4_parameters_weight_, l_fn_modules_4_parameters_bias_);  input_4 = l_fn_modules_4_parameters_weight_ = l_fn_modules_4_parameters_bias_ = None\n    return (input_5,)\n', 'inputs': [{'shape': [8, 6], 'stride': [6, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [[-0.4119180738925934, -0.09686170518398285, 0.013606208376586437, -0.37184107303619385, -0.208212211728096, 0.29454344511032104], [-0.15847191214561462, 0.35415732860565186, -0.38588201999664307, -0.2677401602268219, -0.4199594259262085, -0.21924038231372833], [0.06532412767410278, 0.12650549411773682, 0.3887350559234619, -0.18218976259231567, 0.23037093877792358, -0.38205602765083313], [0.3528186082839966, -0.2183457314968109, 0.12128196656703949, 0.061877042055130005, 0.3662528097629547, -0.04261072352528572], [-0.40590083599090576, 0.1948946714401245, 0.2230938971042633, 0.0763290673494339, 0.11705528944730759, 0.11196072399616241], [0.09607413411140442, 0.03059016540646553, 0.18348172307014465, -0.200309619307518, 0.12381725013256073, 0.22329066693782806], [0.3022092282772064, -0.3007761538028717, -0.2211717963218689, 0.3880935609340668, -0.19555659592151642, -0.170693039894104], [0.36932191252708435, 0.01801423169672489, -0.25524741411209106, -0.3762843906879425, 0.39956459403038025, 0.21288737654685974]]}, {'shape': [8], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [-0.021013252437114716, 0.06859373301267624, 0.27082857489585876, 0.0022978230845183134, 0.4218251407146454, 0.045503370463848114, -0.20890533924102783, -0.07566685974597931]}, {'shape': [5, 6], 'stride': [6, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': False, 'values': [[-0.817333996295929, -0.555568516254425, -0.8266895413398743, -1.2969543933868408, -0.19737878441810608, -0.9643335342407227], [-0.5132989287376404, 2.6277847290039062, -0.74649578332901, 1.0050938129425049, -0.25683921575546265, 0.47649285197257996], [-0.6652101278305054, -0.3626655638217926, 1.6471320390701294, -1.0891081094741821, 1.3290292024612427, 1.1973766088485718], [-1.2645164728164673, -0.43443864583969116, -2.1805989742279053, -1.1093748807907104, -0.7574429512023926, -1.5660330057144165], [-1.080498218536377, -0.8832487463951111, 0.9741045832633972, 0.5631665587425232, -1.1151163578033447, 0.1490076184272766]]}, {'shape': [8, 8], 'stride': [8, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [[0.1343030035495758, -0.33943986892700195, 0.20220190286636353, 0.20615985989570618, 0.20305289328098297, 0.21622434258460999, 0.2900964617729187, 0.32714641094207764], [-0.25926077365875244, -0.2518416941165924, -0.03519105911254883, 0.2718952000141144, -0.2013702392578125, 0.0744560956954956, 0.17048531770706177, 0.12684760987758636], [-0.31227466464042664, -0.17665714025497437, 0.19918300211429596, -0.1610429733991623, -0.3534291386604309, -0.052100833505392075, 0.33579230308532715, -0.19586190581321716], [0.19513703882694244, -0.22487838566303253, -0.2198581099510193, -0.33348971605300903, -0.03365198150277138, 0.07373473048210144, 0.2450948804616928, 0.09105969965457916], [-0.31831470131874084, 0.12809988856315613, -0.1354202926158905, -0.28228405117988586, 0.16050121188163757, -0.07542547583580017, -0.3056517243385315, 0.07016389071941376], [0.2697490155696869, 0.1356850266456604, 0.12574546039104462, -0.0971129983663559, -0.24498116970062256, 0.29480573534965515, 0.04298700392246246, 0.05623426288366318], [-0.1730586439371109, -0.04142437130212784, 0.22095239162445068, -0.34406593441963196, 0.08905868232250214, 0.21951450407505035, -0.08143356442451477, -0.05560799688100815], [-0.09496304392814636, 0.24898940324783325, 0.2618888318538666, 0.3639572858810425, 0.2864874303340912, -0.04536575824022293, -0.2704044282436371, 0.3456631600856781]]}, {'shape': [8], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [0.11274939030408859, 0.06717167049646378, 0.18661068379878998, -0.16456666588783264, 0.33160704374313354, -0.32297053933143616, 0.14026287198066711, -0.27096304297447205]}, {'shape': [3, 8], 'stride': [8, 1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [[-0.08824962377548218, 0.12645836174488068, 0.2324332445859909, 0.09371882677078247, 0.1616014689207077, 0.23370663821697235, -0.0017106711165979505, -0.04937415197491646], [-0.029996827244758606, 0.08603670448064804, -0.14493057131767273, 0.135635644197464, 0.15945136547088623, 0.26336124539375305, -0.01625983417034149, -0.06217183917760849], [0.14350047707557678, 0.032831791788339615, -0.26154825091362, -0.2858772575855255, -0.31775030493736267, -0.1504841446876526, -0.009575454518198967, 0.026820108294487]]}, {'shape': [3], 'stride': [1], 'dtype': 'torch.float32', 'device': 'xla', 'requires_grad': True, 'values': [0.17983810603618622, 0.11713613569736481, 0.11311444640159607]}]}]


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
