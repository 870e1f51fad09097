"""linear, gelu, layer_norm and 2 more ops of 7 tensors: MaxCompilerError: Failing at node 20 when executing function _operator.geti… (torch.compile, backend="torch_max_backend:max_backend")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch
from torch_max_backend import max_backend

def f(weight, bias, weight_2, bias_2, weight_3, bias_3, x):
    input_1 = torch._C._nn.linear(x, weight, bias)
    input_2 = torch._C._nn.gelu(input_1, approximate='none')
    input_3 = torch._C._nn.linear(input_2, weight_2, bias_2)
    input_4 = torch.nn.functional.layer_norm(input_3, (256,), weight_3, bias_3)
    return input_4.pow(2).mean()

torch.manual_seed(0)
args = [
    torch.rand((512, 256)), torch.rand(()), torch.rand((256, 512)), torch.rand(()),
    torch.rand((256,)).requires_grad_(), torch.rand((256,)), torch.rand((256,)),
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
