"""max_pool2d of uint8 (1, 2, 2): IndexError: list index out of range (torch.compile, backend="openvino")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch

def f(tensors_7):
    max_pool2d = torch.nn.functional.max_pool2d(tensors_7, kernel_size=3, stride=2, ceil_mode=True, padding=0, dilation=1)
    return max_pool2d

torch.manual_seed(0)
args = [torch.randint(0, 256, (1, 2, 2), dtype=torch.uint8)]
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
