"""conv2d, batch_norm, relu of 9 tensors: MaxCompilerError: Failing at node 10 when executing function torch._ops.aten.aten::_native… (torch.compile, backend="torch_max_backend:max_backend")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch
from torch_max_backend import max_backend

def f(weight, bias, x, running_mean, running_var, weight_2, bias_2, weight_3, bias_3):
    input_1 = torch.conv2d(x, weight, bias, (1, 1), (1, 1), (1, 1), 1)
    input_2 = torch.nn.functional.batch_norm(input_1, running_mean, running_var, weight_2, bias_2, False, 0.1, 1e-05)
    input_3 = torch.nn.functional.relu(input_2, inplace=False)
    input_4 = torch.conv2d(input_3, weight_3, bias_3, (1, 1), (1, 1), (1, 1))
    return input_4

torch.manual_seed(0)
args = [
    torch.rand((32, 16, 1, 1)), torch.rand((32,)), torch.rand((1, 16, 1, 1)), torch.rand((32,)), torch.rand((32,)),
    torch.rand((32,)), torch.rand((32,)), torch.rand((32, 32, 1, 1)), torch.rand((32,)),
]
compiled = torch.compile(f, backend=sys.argv[2] if sys.argv[1:2] == ["--backend"] else max_backend, fullgraph=True)
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
