"""linear, relu, mul and 4 more ops of float32 (4, 4), a 0-d float32 and float32 (4,): output: values differ from eager: Scalars are… (torch.compile, backend="openvino")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch

def f(weight, bias, x):
    linear = torch._C._nn.linear(x, weight, bias)
    y_2 = torch.nn.functional.relu(linear).mul(2.0).add(x).add(x.sin().mul(1.0))
    return y_2.add(x.sin().mul(0.5)).sum(-1)

torch.manual_seed(0)
args = [torch.rand((4, 4)), torch.rand(()), torch.rand((4,))]
compiled = torch.compile(f, backend=sys.argv[2] if sys.argv[1:2] == ["--backend"] else "openvino", fullgraph=True)
expected = f(*args)
try:
    actual = compiled(*args)
except Exception as error:  # Dynamo wraps the backend's own error
    sys.exit(f"the compiled call raised {getattr(error, 'inner_exception', error)!r}")
try:
    torch.testing.assert_close(actual, expected, equal_nan=True)
except AssertionError as error:
    sys.exit(f"output: values differ from eager: {error}")
print("torch.compile agrees with eager")
