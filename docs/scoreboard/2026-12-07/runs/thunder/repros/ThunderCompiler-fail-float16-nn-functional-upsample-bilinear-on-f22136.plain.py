"""conv_transpose2d of float16 (3, 2, 2), float16 (3, 3, 3, 3) and float16 (3,): output: values differ from eager (torch.compile, backend="thunder.dynamo:ThunderCompiler()")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch
from thunder.dynamo import ThunderCompiler

def f(tensors_18, tensors_19, tensors_20):
    conv_transpose2d = torch.conv_transpose2d(tensors_18, tensors_19, tensors_20, stride=(2, 2), padding=2, output_padding=(1, 1))
    return conv_transpose2d

torch.manual_seed(0)
args = [
    torch.rand((3, 2, 2), dtype=torch.float16), torch.empty((3, 3, 3, 3), dtype=torch.float16).uniform_(-8.8, 8.6),
    torch.rand((3,), dtype=torch.float16),
]
backend = sys.argv[2] if sys.argv[1:2] == ["--backend"] else ThunderCompiler()
compiled = torch.compile(f, backend=backend, fullgraph=True)
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
