"""cross_entropy of int64 (256,) and float32 (256, 1000): MaxCompilerError: The aten function is not supported by the Max backend ye… (torch.compile, backend="torch_max_backend:max_backend")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch
from torch_max_backend import max_backend

def f(target, t):
    return torch.nn.functional.cross_entropy(t, target)

torch.manual_seed(0)
args = [torch.randint(5, 988, (256,)), torch.rand((256, 1000))]
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
