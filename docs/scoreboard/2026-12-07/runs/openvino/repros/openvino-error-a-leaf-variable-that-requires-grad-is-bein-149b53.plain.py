"""add_ of float32 (4,) and a 0-d float32: RuntimeError: a leaf Variable that requires grad is being used in an in-place operation (torch.compile, backend="openvino")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch

def f(param, y):
    torch._C._set_grad_enabled(False)
    param.add_(y)
    torch._C._set_grad_enabled(True)
    return y

def inputs():
    torch.manual_seed(0)
    return [torch.rand((4,)).requires_grad_(), torch.rand(())]

eager_args, compiled_args = inputs(), inputs()
compiled = torch.compile(f, backend=sys.argv[2] if sys.argv[1:2] == ["--backend"] else "openvino", fullgraph=True)
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
