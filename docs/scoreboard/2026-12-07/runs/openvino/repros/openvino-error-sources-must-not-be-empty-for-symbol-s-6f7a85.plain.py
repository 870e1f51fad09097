"""getitem, squeeze_, slice of float32 (2, 2): AssertionError: sources must not be empty for symbol s75 (torch.compile, backend="openvino")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch

def f(x):
    return x[:1].squeeze_(0)

def inputs():
    torch.manual_seed(0)
    return [torch.rand((4,)).view(2, 2)]

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
