"""linear, view, permute and 4 more ops of float32 (768, 256), a 0-d float32 and float32 (4, 128, 256): MaxCompilerError: Failing at… (torch.compile, backend="torch_max_backend:max_backend")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch
from torch_max_backend import max_backend

def f(weight, bias, x):
    linear = torch._C._nn.linear(x, weight, bias)
    permute = linear.view(4, 128, 3, 8, 32).permute(2, 0, 3, 1, 4)
    q = permute[0]
    k = permute[1]
    transpose = torch._C._nn.scaled_dot_product_attention(q, k, permute[2]).transpose(1, 2)
    return transpose.reshape(4, 128, 256)

torch.manual_seed(0)
args = [torch.rand((768, 256)), torch.rand(()), torch.rand((4, 128, 256))]
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
