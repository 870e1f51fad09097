"""Standalone repro of a dynamo-aot-suite problem: turbine_cpu-error-please-convert-all-tensors-to-faketensors-2fb9bc

ERROR on backend turbine_cpu, 2 test(s); made from test.dynamo.test_training_loop.TrainingLoopTests_turbine_cpu.test_whole_step_compiled
  AssertionError: Please convert all Tensors to FakeTensors first or instantiate FakeTensorMode with 'allow_non_fake_inputs'. Found in aten.where.self(FakeTensor(..., size=(5, 1), dtype=torch.bool), FakeTensor(..., size=(5, 1), dtype=torch.int64), tensor(0, size=()))

Written by dynamo-aot-suite 0.5.0 with torch 2.13.0+cpu.

    python turbine_cpu-error-please-convert-all-tensors-to-faketensors-2fb9bc.py                      # exit 1: the problem shows; 0: it does not
    python turbine_cpu-error-please-convert-all-tensors-to-faketensors-2fb9bc.py --backend aot_eager  # the same against another backend
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

PROBLEM = 'turbine_cpu-error-please-convert-all-tensors-to-faketensors-2fb9bc'
BACKEND = 'turbine_cpu'
SUITE = '0.5.0'
PROJECT_DIRS = []
SCENARIO = ['test.dynamo.test_training_loop', 'TrainingLoopTests', 'test_whole_step_compiled']
ENVIRONMENT = {}
CLASS_SUFFIX = ''
COMPILE_OPTIONS = {}
TIME_LIMIT = 51.9
GRAPHS = [{'code': 'def forward(self, L_model_modules_0_parameters_weight_ : torch.nn.parameter.Parameter, L_model_modules_0_parameters_bias_ : torch.nn.parameter.Parameter, L_inputs_ : torch.Tensor, L_model_modules_2_parameters_weight_ : torch.nn.parameter.Parameter, L_model_modules_2_parameters_bias_ : torch.nn.parameter.Parameter, L_model_modules_4_parameters_weight_ : torch.nn.parameter.Parameter, L_model_modules_4_parameters_bias_ : torch.nn.parameter.Parameter, L_target_ : torch.Tensor):\n    l_model_modules_0_parameters_weight_ = L_model_modules_0_parameters_weight_\n    l_model_modules_0_parameters_bias_ = L_model_modules_0_parameters_bias_\n    l_inputs_ = L_inputs_\n    l_model_modules_2_parameters_weight_ = L_model_modules_2_parameters_weight_\n    l_model_modules_2_parameters_bias_ = L_model_modules_2_parameters_bias_\n    l_model_modules_4_parameters_weight_ = L_model_modules_4_parameters_weight_\n    l_model_modules_4_parameters_bias_ = L_model_modules_4_parameters_bias_\n    l_target_ = L_target_\n    input_1 = torch._C._nn.linear(l_inputs_, l_model_modules_0_parameters_weight_, l_model_modules_0_parameters_bias_);  l_inputs_ = l_model_modules_0_parameters_weight_ = l_model_modules_0_parameters_bias_ = None\n    input_2 = torch.tanh(input_1);  input_1 = None\n    input_3 = torch._C._nn.linear(input_2, l_model_modules_2_parameters_weight_, l_model_modules_2_parameters_bias_);  input_2 = l_model_modules_2_parameters_weight_ = l_model_modules_2_parameters_bias_ = None\n    input_4 = torch.nn.functional.relu(input_3, inplace = False);  input_3 = None\n    input_5 = torch._C._nn.linear(input_4, l_model_modules_4_parameters_weight_, l_model_modules_4_parameters_bias_);  input_4 = l_model_modules_4_parameters_weight_ = l_model_modules_4_parameters_bias_ = None\n    loss = torch.nn.functional.cross_entropy(input_5, l_target_);  input_5 = l_target_ = None\n    return (loss,)\n', 'inputs': [{'shape': [8, 6], 'stride': [6, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[-0.0030564817134290934, 0.21900218725204468, -0.3360067903995514, -0.3004458546638489, -0.15723861753940582, 0.1094747856259346], [-0.008088696748018265, 0.3236957788467407, -0.036229606717824936, 0.1080276295542717, -0.1233779713511467, -0.08024748414754868], [-0.39001941680908203, -0.2703755497932434, -0.16828937828540802, 0.0151229752227664, 0.16139492392539978, 0.2449582815170288], [-0.276768296957016, -0.17777696251869202, 0.14828276634216309, 0.3390044867992401, -0.08401757478713989, 0.30549702048301697], [-0.06580283492803574, 0.04319842532277107, 0.3696591258049011, -0.37871986627578735, -0.25700780749320984, -0.10335428267717361], [-0.15913516283035278, 0.35272684693336487, -0.26461824774742126, -0.18793010711669922, -0.2852187752723694, -0.38234943151474], [-0.2383110523223877, 0.3509294390678406, 0.1821678876876831, 0.197866752743721, 0.021470416337251663, -0.2093021720647812], [0.06906936317682266, -0.3811792731285095, -0.29498645663261414, -0.2104642391204834, 0.25757935643196106, 0.2393646538257599]]}, {'shape': [8], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [-0.18105609714984894, -0.014730573631823063, 0.26109957695007324, 0.40585315227508545, 0.16202647984027863, 0.055151429027318954, 0.27372491359710693, -0.24037756025791168]}, {'shape': [5, 6], 'stride': [6, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': False, 'values': [[-1.5255959033966064, -0.7502318024635315, -0.6539809107780457, -1.6094847917556763, -0.1001671776175499, -0.6091889142990112], [-0.9797722697257996, -1.6090962886810303, -0.7121446132659912, 0.30372199416160583, -0.777314305305481, -0.25145524740219116], [-0.22227048873901367, 1.6871134042739868, -0.3206208348274231, -0.29934605956077576, 1.8793457746505737, -0.07213178277015686], [0.15777060389518738, -0.7734549045562744, 0.1990565061569214, 0.04570277780294418, -1.3923858404159546, 2.6890869140625], [-0.11101982742547989, 0.2927352488040924, -0.1578451544046402, -0.028787139803171158, 2.3571109771728516, -1.0373387336730957]]}, {'shape': [8, 8], 'stride': [8, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[0.06588256359100342, -0.27411189675331116, -0.24504294991493225, -0.18263986706733704, 0.1599733829498291, 0.14218516647815704, -0.20942823588848114, 0.10681098699569702], [0.19409091770648956, -0.04462457820773125, 0.013499214313924313, 0.08191998302936554, 0.21933624148368835, 0.33947986364364624, -0.272456556558609, -0.12956660985946655], [0.13894997537136078, 0.29293644428253174, 0.30766475200653076, 0.31196022033691406, 0.07036226242780685, -0.30744388699531555, 0.03252425789833069, -0.2211848944425583], [-0.32949554920196533, 0.3141295313835144, 0.26882776618003845, -0.35267937183380127, 0.06617531180381775, -0.05955960601568222, -0.05818115174770355, -0.1618414968252182], [0.1359611302614212, -0.2094109058380127, 0.1296095997095108, 0.17879481613636017, 0.25309881567955017, 0.1321975439786911, -0.349924236536026, -0.22934898734092712], [0.1765345185995102, 0.07399920374155045, -0.27580133080482483, -0.20358292758464813, 0.3326050937175751, 0.23823058605194092, -0.15415816009044647, -0.08898400515317917], [-0.33679428696632385, -0.006354817189276218, -0.2662465274333954, -0.2727157771587372, -0.01948065310716629, 0.05308429151773453, -0.14479081332683563, 0.2097906619310379], [-0.21515105664730072, 0.32080376148223877, 0.24229009449481964, -0.2981455326080322, -0.08799389749765396, 0.01595325581729412, 0.051583822816610336, 0.08385376632213593]]}, {'shape': [8], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [0.13874433934688568, 0.021177906543016434, -0.1725088655948639, 0.1672975718975067, -0.339145690202713, -0.20955345034599304, -0.08850497007369995, -0.17222057282924652]}, {'shape': [3, 8], 'stride': [8, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[-0.12368477135896683, -0.28978002071380615, -0.07520616054534912, 0.07557431608438492, -0.23032793402671814, -0.018144134432077408, 0.2530914843082428, -0.03634537756443024], [0.009826031513512135, -0.030500661581754684, 0.07155261933803558, 0.22480319440364838, 0.3349021077156067, 0.22452616691589355, 0.3356683552265167, -0.02556956559419632], [-0.31760460138320923, -0.16761161386966705, 0.24073635041713715, -0.0022919033654034138, -0.17573241889476776, -0.2709321081638336, -0.33087366819381714, -0.29840195178985596]]}, {'shape': [3], 'stride': [1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [-0.07171361893415451, 0.1938907951116562, 0.19114547967910767]}, {'shape': [5], 'stride': [1], 'dtype': 'torch.int64', 'device': 'cpu', 'requires_grad': False, 'values': [0, 0, 2, 1, 0]}]}]
CANNOT_CHECK = 3  # exit code where the check could not run: 1 would say the problem shows


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
