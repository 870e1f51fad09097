"""Standalone repro of a dynamo-aot-suite problem: max_backend-error-failing-at-node-when-executing-function-to-705ad6

ERROR on backend max_backend, 1 test(s); made from test.dynamo.test_perf.PerfTests_max_backend.test_graph_conv_block
  the backend's compiler raised MaxCompilerError: Failing at node 10 when executing function torch._ops.aten.aten::_native_batch_norm_legit_no_training of type <class 'torch._ops.OpOverload'> . inputs of node were: args=[TensorValue(dtype=float32, shape=[Dim(4), Dim(32), Dim(32), Dim(32)], device=cpu:0), TensorValue(dtype=float32, shape=[Dim(32)], device=cpu:0), TensorValue(dtype=float32, shape=[Di…

Written by dynamo-aot-suite 0.5.0 with torch 2.13.0+cpu.

    python max_backend-error-failing-at-node-when-executing-function-to-705ad6.py                      # exit 1: the problem shows; 0: it does not
    python max_backend-error-failing-at-node-when-executing-function-to-705ad6.py --backend aot_eager  # the same against another backend
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

PROBLEM = 'max_backend-error-failing-at-node-when-executing-function-to-705ad6'
BACKEND = 'torch_max_backend:max_backend'
SUITE = '0.5.0'
PROJECT_DIRS = []
SCENARIO = ['test.dynamo.test_perf', 'PerfTests', 'test_graph_conv_block']
ENVIRONMENT = {'DYNAMO_SUITE_TIER': 'perf'}
CLASS_SUFFIX = ''
COMPILE_OPTIONS = {}
TIME_LIMIT = 169.9
GRAPHS = [{'code': 'def forward(self, L_block_modules_0_parameters_weight_ : torch.nn.parameter.Parameter, L_block_modules_0_parameters_bias_ : torch.nn.parameter.Parameter, L_x_ : torch.Tensor, L_block_modules_1_buffers_running_mean_ : torch.Tensor, L_block_modules_1_buffers_running_var_ : torch.Tensor, L_block_modules_1_parameters_weight_ : torch.nn.parameter.Parameter, L_block_modules_1_parameters_bias_ : torch.nn.parameter.Parameter, L_block_modules_3_parameters_weight_ : torch.nn.parameter.Parameter, L_block_modules_3_parameters_bias_ : torch.nn.parameter.Parameter):\n    l_block_modules_0_parameters_weight_ = L_block_modules_0_parameters_weight_\n    l_block_modules_0_parameters_bias_ = L_block_modules_0_parameters_bias_\n    l_x_ = L_x_\n    l_block_modules_1_buffers_running_mean_ = L_block_modules_1_buffers_running_mean_\n    l_block_modules_1_buffers_running_var_ = L_block_modules_1_buffers_running_var_\n    l_block_modules_1_parameters_weight_ = L_block_modules_1_parameters_weight_\n    l_block_modules_1_parameters_bias_ = L_block_modules_1_parameters_bias_\n    l_block_modules_3_parameters_weight_ = L_block_modules_3_parameters_weight_\n    l_block_modules_3_parameters_bias_ = L_block_modules_3_parameters_bias_\n    _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None\n    input_1 = torch.conv2d(l_x_, l_block_modules_0_parameters_weight_, l_block_modules_0_parameters_bias_, (1, 1), (1, 1), (1, 1), 1);  l_x_ = l_block_modules_0_parameters_weight_ = l_block_modules_0_parameters_bias_ = None\n    input_2 = torch.nn.functional.batch_norm(input_1, l_block_modules_1_buffers_running_mean_, l_block_modules_1_buffers_running_var_, l_block_modules_1_parameters_weight_, l_block_modules_1_parameters_bias_, False, 0.1, 1e-05);  input_1 = l_block_modules_1_buffers_running_mean_ = l_block_modules_1_buffers_running_var_ = l_block_modules_1_parameters_weight_ = l_block_modules_1_parameters_bias_ = None\n    input_3 = torch.nn.functional.relu(input_2, inplace = False);  input_2 = None\n    input_4 = torch.conv2d(input_3, l_block_modules_3_parameters_weight_, l_block_modules_3_parameters_bias_, (1, 1), (1, 1), (1, 1), 1);  input_3 = l_block_modules_3_parameters_weight_ = l_block_modules_3_parameters_bias_ = None\n    _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None\n    return (input_4,)\n', 'inputs': [{'shape': [32, 16, 3, 3], 'stride': [144, 9, 3, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'range': [-0.08332005143165588, 0.08330636471509933]}, {'shape': [32], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [0.0746484249830246, 0.06731967628002167, 0.007255177013576031, 0.06692882627248764, 0.0404888316988945, -0.05979663133621216, -0.04392310231924057, 0.0015672247391194105, -0.05905663222074509, -0.027440160512924194, 0.06718680262565613, 0.038798294961452484, 0.07257327437400818, 0.0006388525362126529, -0.04249173402786255, 0.055153995752334595, 0.006143520586192608, 0.014033645391464233, -0.03530816361308098, 0.03423091024160385, -0.06154552102088928, 0.0664980411529541, 0.07290356606245041, 0.03006850741803646, 0.06489384174346924, 0.05058068037033081, -0.0318264476954937, -0.07227778434753418, 0.010965844616293907, 0.05232301354408264, -0.008525123819708824, 0.007011771202087402]}, {'shape': [4, 16, 32, 32], 'stride': [16384, 1024, 32, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': False, 'range': [-4.074481964111328, 4.562695503234863]}, {'shape': [32], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': False, 'values': [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]}, {'shape': [32], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': False, 'values': [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]}, {'shape': [32], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]}, {'shape': [32], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]}, {'shape': [32, 32, 3, 3], 'stride': [288, 9, 3, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'range': [-0.058911606669425964, 0.05891887843608856]}, {'shape': [32], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [-0.0536532886326313, -0.053961627185344696, -0.045112259685993195, 0.04124487191438675, 0.025034785270690918, 0.054038744419813156, 0.04062661901116371, 0.04104277119040489, 0.012195183895528316, 0.029812587425112724, 0.021142713725566864, -0.04685381427407265, -0.04670918360352516, 0.047259557992219925, 0.03694498538970947, -0.015224579721689224, -0.033628057688474655, -0.04134400561451912, -0.045231420546770096, -0.018841510638594627, 0.004932811018079519, 0.0017159738345071673, 0.021700745448470116, 0.00717304227873683, 0.015188663266599178, 0.04417026415467262, 0.013182396069169044, -0.003838994773104787, 0.029027391225099564, 0.02040780708193779, 0.025314176455140114, -0.015905609354376793]}]}]
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
