"""copy_ of a 0-d float32 and a 0-d float32: MaxCompilerError: The aten function is not supported by the Max backend yet. Failing at… (torch.compile, backend="torch_max_backend:max_backend")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch
from torch_max_backend import max_backend

def f(running, t):
    return running.copy_(t)

torch.manual_seed(0)
eager_args = [torch.rand(()), torch.rand(())]
compiled_args = [t.clone() if isinstance(t, torch.Tensor) else t for t in eager_args]
compiled = torch.compile(f, backend=sys.argv[2] if sys.argv[1:2] == ["--backend"] else max_backend, fullgraph=True)
expected = f(*eager_args)
try:
    actual = compiled(*compiled_args)
except Exception as error:  # Dynamo wraps the backend's own error
    sys.exit(f"the compiled call raised {getattr(error, 'inner_exception', error)!r}")
for what, want, got in [("output", expected, actual), ("inputs after the call", eager_args, compiled_args)]:
    try:
        torch.testing.assert_close(got, want, equal_nan=True)
    except AssertionError as error:
        sys.exit(f"{what}: values differ from eager: {error}")
print("torch.compile agrees with eager")
